#!/usr/bin/env bash
# Usage: scripts/start.sh                 set up, build everything, serve the web calculator (dist/) locally
#        scripts/start.sh [prenet args]   set up, build the native CLI and run it, e.g. `npm start -- zoo`
# The server listens on 127.0.0.1:${PORT:-8080} (the next free port if that one is taken); HOST=0.0.0.0
# serves other machines too. The page computes the default prediction (GPT-2 on every accelerator) on load.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
if (($#)); then
  bash scripts/build.sh native
  exec ./build/prenet "$@"
fi
bash scripts/build.sh all
exec node web/serve.mjs dist "${PORT:-8080}"

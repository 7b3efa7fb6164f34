#!/usr/bin/env bash
# Usage: scripts/start.sh [prenet arguments...]
# Sets up, builds the native CLI and runs it: by default a prediction for GPT-2 on every hardware entry.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh
bash scripts/build.sh native
if (($#)); then
  exec ./build/prenet "$@"
fi
exec ./build/prenet predict --model gpt2 --hardware all

#!/usr/bin/env bash
# Checks the toolchain (see docs/toolchain.md) and installs what is missing; fast and silent-ish when all
# is present. On Debian/Ubuntu as root it runs `apt-get update` once and installs the missing packages;
# elsewhere it prints what to install and exits 1. Then `npm ci` when node_modules is missing or stale.
#   --browser   also Chromium, for the browser tests and benchmarks (scripts/test.sh passes it); set
#               PRENET_CHROMIUM to use a browser elsewhere than /usr/bin/chromium
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

browser=0
for arg in "$@"; do
  case "$arg" in
    --browser) browser=1 ;;
    *) echo "usage: $0 [--browser]" >&2; exit 2 ;;
  esac
done

# Debian package -> how to tell it is present (a command on PATH, or a file).
missing=()
need_cmd() { command -v "$2" >/dev/null 2>&1 || missing+=("$1"); }
need_file() { [[ -e "$2" ]] || missing+=("$1"); }

need_cmd cmake cmake
need_cmd g++ g++
need_cmd ninja-build ninja
need_cmd clang clang++   # the ASan + UBSan build and the fuzz targets (build-sanitize/, docs/robustness.md)
compgen -G '/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a' >/dev/null ||
  missing+=(libclang-rt-14-dev)   # libFuzzer and the sanitizer runtimes for clang 14 (Debian bookworm)
need_cmd emscripten em++
need_file libeigen3-dev /usr/include/eigen3/Eigen/Core
need_file nlohmann-json3-dev /usr/include/nlohmann/json.hpp
need_file libprotozero-dev /usr/include/protozero/pbf_reader.hpp   # the ONNX importer (docs/importers.md)
need_file libgtest-dev /usr/src/googletest/CMakeLists.txt   # sources, built with em++ for the wasm tests
need_cmd python3 python3   # the build compiles models/kernels.json with it; emscripten's em++ is Python; the measurement harness's tests run python3 too
need_cmd nodejs node
need_cmd npm npm
if ((browser)) && [[ ! -x ${PRENET_CHROMIUM:-/usr/bin/chromium} ]]; then
  missing+=(chromium)
fi

if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing missing packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y "${missing[@]}"
  else
    echo "setup: missing packages: ${missing[*]}" >&2
    echo "setup: install them, e.g. on Debian/Ubuntu:  sudo apt-get install -y ${missing[*]}" >&2
    echo "setup: (macOS, Fedora: see docs/toolchain.md)" >&2
    exit 1
  fi
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
if ((node_major < 18)); then
  echo "setup: Node.js >= 18 is needed (node:test, fetch); found $(node --version)" >&2
  exit 1
fi

# npm ci writes nothing into node_modules while there are no dependencies, so a stamp marks the last run.
stamp=node_modules/.prenet-npm-ci
if [[ -f package-lock.json && ( ! -f $stamp || package-lock.json -nt $stamp ) ]]; then
  echo "setup: npm ci"
  npm ci --no-audit --no-fund
  mkdir -p node_modules
  touch "$stamp"
fi
echo "setup: toolchain OK (cmake $(cmake --version | head -1 | awk '{print $3}'), node $(node --version))"

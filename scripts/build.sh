#!/usr/bin/env bash
# Usage: scripts/build.sh [native|wasm|web|all|sanitize]   (default: all = native, wasm, then web)
#   native   -> build/          (prenet CLI, prenet_tests)
#   sanitize -> build-sanitize/ (the same with clang, ASan + UBSan, plus the libFuzzer targets of fuzz/; not in
#                                `all`: scripts/test.sh builds it; see docs/robustness.md)
#   wasm   -> build-wasm/  (prenet.mjs + prenet.wasm, prenet_node.mjs, tests/prenet_tests.js)
#   web    -> dist/        (the static web calculator: web/ + the wasm module + vendored npm packages;
#                           needs build-wasm/ and node_modules/, see docs/web.md)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

what=${1:-all}
case "$what" in
  native | wasm | web | all | sanitize) ;;
  *) echo "usage: $0 [native|wasm|web|all|sanitize]" >&2; exit 2 ;;
esac

run() { echo "+ $*"; "$@"; }
# Unity builds: a clean build compiles its sources eight to a file, in about half the time (CMakeLists.txt
# names the few sources kept apart). Set PRENET_UNITY=OFF for one file a source (a quicker rebuild of one edit).
unity="-DCMAKE_UNITY_BUILD=${PRENET_UNITY:-ON}"

if [[ $what == native || $what == all ]]; then
  echo "build: native (build/)"
  run cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release "$unity"
  run cmake --build build
fi

if [[ $what == wasm || $what == all ]]; then
  echo "build: wasm (build-wasm/)"
  # Debian's emscripten finds acorn only through NODE_PATH; emcmake's default test emulator passes
  # --experimental-wasm-threads, which Node 20 rejects.
  export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
  node_bin=$(command -v node)
  run emcmake cmake -S . -B build-wasm -G Ninja -DCMAKE_BUILD_TYPE=Release "$unity" \
    "-DCMAKE_CROSSCOMPILING_EMULATOR=$node_bin"
  run cmake --build build-wasm
fi

if [[ $what == web || $what == all ]]; then
  echo "build: web (dist/)"
  run node web/build.mjs
fi

if [[ $what == sanitize ]]; then
  echo "build: native with ASan + UBSan and the fuzz targets (build-sanitize/)"
  # -O1 with line tables: the quickest build whose tests still run fast, with file:line in the reports.
  # scripts/fuzz.sh configures the same folder the same way.
  run cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" \
    -DCMAKE_CXX_COMPILER=clang++ -DPRENET_FUZZ=ON "$unity"
  run cmake --build build-sanitize
fi

#!/usr/bin/env bash
# Everything CI runs: setup (with Chromium), build native + wasm + the web page, then
#   1. ctest on the native build (GoogleTest suite + CLI contract tests),
#   2. the same GoogleTest suite compiled to wasm, under Node,
#   3. the JS tests (node:test) against the Node build of the wasm module,
#   4. the browser tests: dist/ served locally, driven in headless Chromium (tests/browser),
#   5. the GoogleTest suite and the CLI contract tests again on a clang build with ASan + UBSan (build-sanitize/),
#   6. each libFuzzer target of fuzz/ for a short budget (scripts/fuzz.sh; PRENET_FUZZ_SECONDS, default 15).
# (docs/robustness.md: the sanitizer build and the fuzzers.)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/setup.sh --browser
bash scripts/build.sh all
bash scripts/build.sh sanitize

# Every suite runs even if an earlier one fails; the script fails at the end if any did.
failed=()
suite() {
  local name=$1
  shift
  echo "test: $name"
  echo "+ $*"
  "$@" || failed+=("$name")
}

suite "native (ctest)" ctest --test-dir build --output-on-failure
suite "wasm GoogleTest suite under Node" node build-wasm/tests/prenet_tests.js
shopt -s nullglob
js_tests=(tests/js/*.test.mjs)
if ((${#js_tests[@]})); then
  suite "JS (node --test)" node --test "${js_tests[@]}"
fi

browser_tests=(tests/browser/*.test.mjs)
if ((${#browser_tests[@]})); then
  suite "browser (headless Chromium)" node --test --test-concurrency=1 "${browser_tests[@]}"
fi

# Any UB aborts (-fno-sanitize-recover); ASan reports leaks too.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
suite "native under ASan+UBSan (ctest on build-sanitize)" ctest --test-dir build-sanitize --output-on-failure
suite "fuzz targets, ${PRENET_FUZZ_SECONDS:-15}s each" bash scripts/fuzz.sh "${PRENET_FUZZ_SECONDS:-15}"

if ((${#failed[@]})); then
  printf 'test: FAILED: %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "test: all passed"

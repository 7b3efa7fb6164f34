#!/usr/bin/env bash
# Usage: scripts/fuzz.sh [seconds-per-target] [target...]     (default: 15 s each, every target)
# Builds the libFuzzer targets (fuzz/, PRENET_FUZZ=ON with clang, in build-sanitize/, the same build as the
# sanitizer test suite) and runs each for the given time on a working corpus seeded from the repository's
# fixtures (hardware/*.json, tests/fixtures/hf/, tests/fixtures/onnx/, examples/, fuzz/seeds/, and the past
# findings in tests/fixtures/fuzz/<target>/). `npm test` runs it with a short
# budget; for long runs see docs/robustness.md.
#   PRENET_FUZZ_CORPUS=DIR     keep the working corpus in DIR/<target> (default: a temporary folder, removed)
#   PRENET_FUZZ_ARTIFACTS=DIR  where crashing inputs go (default: build-sanitize/fuzz-artifacts)
#   PRENET_FUZZ_FLAGS="..."    more libFuzzer flags (e.g. -jobs=4 -workers=4)
# Fails if any target finds a crash, a leak, a timeout or an out-of-memory input; its input is kept as
# <artifacts>/<target>-crash-<sha1> (or -timeout-, -oom-, -leak-), and the report says how to replay it;
# <artifacts>/<target>.log holds each target's last libFuzzer output. An input is a finding when it runs past the
# 25 s timeout (-timeout; under ASan, several times slower than a release build; issue #27: super-linear paths
# must show up here): libFuzzer kills the run and writes <target>-timeout-<sha1>. Below that, libFuzzer's
# slow-unit report (-report_slow_units, 1 s) tracks the slowest input: it is moved to <artifacts>/slow/ (not a
# finding) and its time is reported.
# Per target the report prints the executions, the coverage of libFuzzer's final stats line (cov: edges, ft:
# features), the slowest unit's time in whole seconds (0: every input took under a second) and the peak RSS.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

seconds=${1:-15}
shift || true
all_targets=(layers_json hf_config keras_json hardware_spec api_request cli_args onnx)
all_targets+=(cluster_args)
targets=("$@")
((${#targets[@]})) || targets=("${all_targets[@]}")
[[ $seconds =~ ^[0-9]+$ ]] || { echo "usage: $0 [seconds-per-target] [target...]" >&2; exit 2; }

build=build-sanitize
echo "+ cmake -S . -B $build (PRENET_FUZZ=ON, clang)"
cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" \
  -DCMAKE_CXX_COMPILER=clang++ -DPRENET_FUZZ=ON >/dev/null
cmake --build $build --target "${targets[@]/%/_fuzz}"

artifacts=${PRENET_FUZZ_ARTIFACTS:-$root/$build/fuzz-artifacts}
mkdir -p "$artifacts"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Seeds per target: copied into the working corpus (libFuzzer adds what it finds there). Every target's past
# findings (tests/fixtures/fuzz/<target>/, where the regression tests read them) seed it too.
seeds() {
  ls tests/fixtures/fuzz/"$1"/*
  case $1 in
    layers_json) ls examples/*.json fuzz/seeds/layers_json/* ;;
    hf_config) ls tests/fixtures/hf/*.json fuzz/seeds/hf_config/* ;;
    keras_json) ls tests/fixtures/keras/*.json fuzz/seeds/keras_json/* ;;
    hardware_spec) ls hardware/*.json | grep -v 'schema\.json$' ;;
    api_request) ls fuzz/seeds/api_request/* ;;
    cli_args) ls fuzz/seeds/cli_args/* ;;
    cluster_args) ls fuzz/seeds/cluster_args/* ;;
    onnx) find tests/fixtures/onnx -name '*.onnx' -size -100k; ls fuzz/seeds/onnx/* ;;
  esac
}

# One line per target from its libFuzzer log: executions, coverage (the last stats line's cov and ft), the slowest
# unit (stat::slowest_unit_time_sec, whole seconds, kept from -report_slow_units) and the peak RSS.
report() {
  local t=$1 log=$2 stats execs slowest rss cov ft
  stats=$(grep -oE '#[0-9]+:?[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED|RELOAD)?[[:space:]]*cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  cov=$(sed -nE 's/.*cov: ([0-9]+).*/\1/p' <<<"$stats")
  ft=$(sed -nE 's/.*ft: ([0-9]+).*/\1/p' <<<"$stats")
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$log" | tail -1)
  slowest=$(sed -nE 's/^stat::slowest_unit_time_sec: *([0-9]+).*/\1/p' "$log" | tail -1)
  rss=$(sed -nE 's/^stat::peak_rss_mb: *([0-9]+).*/\1/p' "$log" | tail -1)
  local slow_note=""
  [[ -n $slowest && $slowest != 0 ]] && slow_note=" (input: $(ls -t "$artifacts"/slow/"$t"-slow-unit-* 2>/dev/null | head -1))"
  echo "fuzz: $t: ${execs:-?} executions, cov ${cov:-?}, ft ${ft:-?}, slowest unit ${slowest:-?} s${slow_note}, peak RSS ${rss:-?} MB"
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for t in "${targets[@]}"; do
  corpus=${PRENET_FUZZ_CORPUS:+$PRENET_FUZZ_CORPUS/$t}
  corpus=${corpus:-$tmp/corpus/$t}
  mkdir -p "$corpus" "$tmp/run-$t"
  seeds "$t" | while read -r f; do cp "$f" "$corpus/seed-$(basename "$f")"; done
  log=$artifacts/$t.log   # libFuzzer's whole output, kept until the next run
  max_len=8192
  [[ $t == onnx ]] && max_len=65536   # a small exported graph is tens of kB
  echo "fuzz: $t for ${seconds}s (corpus $corpus)"
  found_before=$(find "$artifacts" -maxdepth 1 -name "$t-*" | wc -l)
  # The working directory is an empty folder: the CLI target must find no file to read.
  # (In fork mode with -ignore_crashes libFuzzer exits 0 after findings: new artifacts count as failures too.)
  # shellcheck disable=SC2086
  if (cd "$tmp/run-$t" && "$root/$build/fuzz/${t}_fuzz" -max_total_time="$seconds" -timeout=25 -report_slow_units=1 -rss_limit_mb=2048 \
        -malloc_limit_mb=1024 -max_len=$max_len -print_final_stats=1 -artifact_prefix="$artifacts/$t-" \
        ${PRENET_FUZZ_FLAGS:-} "$corpus") >"$log" 2>&1; then status=0; else status=$?; fi
  # Slow units under the timeout are kept aside, not counted: only timeouts, crashes, leaks and OOMs are findings.
  mkdir -p "$artifacts/slow"
  find "$artifacts" -maxdepth 1 -name "$t-slow-unit-*" -exec mv -f {} "$artifacts/slow/" \;
  report "$t" "$log"
  if ((status == 0)) && (($(find "$artifacts" -maxdepth 1 -name "$t-*" | wc -l) == found_before)); then
    :
  else
    failed+=("$t")
    tail -60 "$log" >&2
    echo "fuzz: $t FAILED; replay: $build/fuzz/${t}_fuzz <the artifact named above>; once fixed, copy it to" \
      "tests/fixtures/fuzz/$t/ (docs/robustness.md)" >&2
  fi
done

if ((${#failed[@]})); then
  echo "fuzz: FAILED: ${failed[*]} (inputs in $artifacts)" >&2
  exit 1
fi
echo "fuzz: all targets ran ${seconds}s without a finding"

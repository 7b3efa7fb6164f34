#!/usr/bin/env bash
# The one prepared script for a GPU session (docs/measurements.md): kernel timings, then whole training steps,
# each within its own budget so that the whole run ends inside a 10-minute command. Results are packed into
# one archive, OUT/measurements.tar.gz (the device tool brings back at most 8 files), after each stage, so a
# cut run still returns what was measured.
#   bash tools/measure/run_on_device.sh OUT [--quick] [--dry-run]
# --dry-run writes the plans without a GPU or torch (the CLI tests run it).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out=${1:?usage: run_on_device.sh OUT [--quick] [--dry-run]}
shift
flags=()       # for the kernels
step_flags=()  # for the steps
dry=0
for arg in "$@"; do
  case "$arg" in
    --quick) flags+=(--quick) ;;
    --dry-run) flags+=(--dry-run); step_flags+=(--dry-run); dry=1 ;;
    *) echo "run_on_device.sh: unknown option $arg" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
work=$(mktemp -d)
export PYTHONUNBUFFERED=1
pack() { tar czf "$out/measurements.tar.gz" -C "$work" . && echo "packed $(tar tzf "$out/measurements.tar.gz" | wc -l) entries"; }
((dry)) || nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv | tee "$work/nvidia-smi.txt"
python3 "$here/measure_kernels.py" --out "$work" --budget-s "${KERNEL_BUDGET_S:-300}" "${flags[@]}" 2>&1 | tee "$work/kernels.log"
pack
python3 "$here/measure_steps.py" --out "$work" --budget-s "${STEP_BUDGET_S:-140}" "${step_flags[@]}" 2>&1 | tee "$work/steps.log"
pack

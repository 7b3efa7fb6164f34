#!/usr/bin/env bash
# Writes `prenet predict --hardware all --json` for every zoo model under a few training settings into
# OUT_DIR, one file each, so a refactor can be checked byte for byte:
#   tools/prediction_snapshot.sh build/prenet /tmp/before   # before the change (a saved binary)
#   tools/prediction_snapshot.sh build/prenet /tmp/after    # after it
#   diff -r /tmp/before /tmp/after && echo identical
# The settings cover every code path of a step: precisions and both mixed recipes, checkpointing, gradient
# accumulation, optimizers and their implementations, flash attention, a run budget, an input pipeline limit,
# the per-layer breakdown and the roofline predictor.
set -euo pipefail
prenet=${1:?usage: $0 PRENET_BINARY OUT_DIR}
out=${2:?usage: $0 PRENET_BINARY OUT_DIR}
mkdir -p "$out"

settings=(
  "fp32:--precision fp32 --batch 2"
  "bf16:--precision bf16 --batch 4 --samples 1e6"
  "fp16-half-ckpt:--precision fp16 --mixed half --checkpointing --batch 8 --grad-accum 4 --optimizer adam"
  "fp8-flash:--precision fp8 --attention flash --optimizer lion --optimizer-impl foreach --batch 2"
  "tf32-sgd-input:--precision tf32 --optimizer sgd --input-samples-per-s 100 --price-per-hour 2.5 --batch 16"
  "adafactor-breakdown:--precision bf16 --optimizer adafactor --breakdown --batch 1"
  "roofline:--predictor roofline --precision bf16 --batch 4 --samples 5e5 --epochs 3"
)

models=$("$prenet" zoo --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).models.map(m=>m.id).join("\n")))')
for model in $models; do
  for entry in "${settings[@]}"; do
    name=${entry%%:*}
    # shellcheck disable=SC2086  # the settings are words
    "$prenet" predict --model "$model" --hardware all ${entry#*:} --json >"$out/$model.$name.json" 2>&1 || true
  done
done
# Language models with a token budget too.
for model in gpt2 llama2-7b bert-base-pretraining; do
  "$prenet" predict --model "$model" --hardware all --precision bf16 --tokens 2e12 --grad-accum 2 --json \
    >"$out/$model.tokens.json" 2>&1 || true
done
# Fine-tuning modes on a few language models.
for model in llama2-7b qwen2.5-0.5b; do
  "$prenet" predict --model "$model" --hardware all --precision bf16 --finetune lora --lora-rank 8 --lora-targets q,v \
    --tokens 1e8 --json >"$out/$model.lora.json" 2>&1 || true
  "$prenet" predict --model "$model" --hardware all --precision bf16 --finetune qlora --checkpointing --json \
    >"$out/$model.qlora.json" 2>&1 || true
done
# Cluster questions: a plan search, a pinned layout, nodes that some sheets cannot form, an MoE with experts.
cluster=(
  "gpt2:plan16:--gpus 16 --precision bf16 --tokens 1e9"
  "llama2-7b:gpus12:--gpus 12 --precision bf16"
  "llama2-70b:tp8pp4:--gpus 64 --tp 8 --pp 4 --vp 2 --schedule interleaved --sequence-parallel --zero 1 --precision bf16 --global-batch 256 --tokens 1e10"
  "mixtral-8x7b:ep8:--gpus 32 --ep 8 --zero 3 --precision bf16 --checkpointing"
  "llama2-13b:cluster-file:--cluster examples/cluster-2x8-ib.json --precision bf16"
)
for entry in "${cluster[@]}"; do
  model=${entry%%:*}
  rest=${entry#*:}
  name=${rest%%:*}
  # shellcheck disable=SC2086  # the settings are words
  "$prenet" predict --model "$model" --hardware all ${rest#*:} --json >"$out/$model.$name.json" 2>&1 || true
done
echo "snapshot: $(ls "$out" | wc -l) files in $out"

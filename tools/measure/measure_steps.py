#!/usr/bin/env python3
"""Times whole training steps of ResNet-50 and BERT-large on the GPU this runs on (PyTorch eager + CUDA), with
their peak memory, as rows to check PreNeT's predictions against.

    python3 tools/measure/measure_steps.py --out OUT [--budget-s 240] [--device-id ID]
    python3 tools/measure/measure_steps.py --out OUT --dry-run     # the plan only, no torch needed

Each row is a recipe PreNeT can be asked about with the same settings: `prenet predict --model M --hardware H
--batch B [--seq S] --precision P --optimizer O --attention eager`. Models are built from their architecture
alone (torchvision's resnet50, transformers' BertForPreTraining at BERT-large's sizes with eager attention;
nothing is downloaded), data are random tensors already on the GPU (no input pipeline), fp16/bf16 run under
torch.autocast (fp16 with a GradScaler), tf32 switches TF32 on for matmuls and cuDNN, and the optimizers are
torch's fused SGD with momentum (ResNet) and fused AdamW (BERT). A step is forward, backward, optimizer step and
zero_grad(set_to_none); after `--warmup` steps, `--steps` are timed between two CUDA synchronisations.

Output: OUT/steps.csv in data/published/throughput.csv's columns (role `validate`, the framework and this
script named as the source) plus `peak_allocated_bytes` and `peak_reserved_bytes`
(torch.cuda.max_memory_allocated / max_memory_reserved), and OUT/steps-provenance.json.
"""
import argparse
import csv
import json
import os
import sys
import time

from measure_kernels import provenance, resolve_device, set_tf32

# (model, batch, seq, precision, optimizer): what the published rows cover, on a large GPU.
PLAN = [
    ("resnet50", 256, None, "bf16", "sgd"),
    ("resnet50", 256, None, "fp16", "sgd"),
    ("resnet50", 256, None, "tf32", "sgd"),
    ("resnet50", 128, None, "fp32", "sgd"),
    ("bert-large-pretraining", 64, 128, "bf16", "adamw"),
    ("bert-large-pretraining", 64, 128, "fp16", "adamw"),
    ("bert-large-pretraining", 32, 128, "tf32", "adamw"),
    ("bert-large-pretraining", 16, 512, "bf16", "adamw"),
]
COLUMNS = ["model", "hardware", "precision", "batch", "seq", "image", "optimizer", "grad_accum", "samples_per_s",
           "framework", "source_url", "source_note", "role", "peak_allocated_bytes", "peak_reserved_bytes"]


def build(model, batch, seq):
    """(module, a function of the module giving the loss), on the GPU."""
    import torch
    if model == "resnet50":
        import torchvision
        net = torchvision.models.resnet50(weights=None).cuda().to(memory_format=torch.channels_last)
        x = torch.randn(batch, 3, 224, 224, device="cuda").to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (batch,), device="cuda")
        return net, lambda m: torch.nn.functional.cross_entropy(m(x), y)
    from transformers import BertConfig, BertForPreTraining
    config = BertConfig(vocab_size=30522, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                        intermediate_size=4096, max_position_embeddings=512)
    try:  # transformers >= 4.36 takes the attention implementation here; older ones run eager anyway
        net = BertForPreTraining._from_config(config, attn_implementation="eager").cuda()
    except (TypeError, AttributeError, ValueError):
        net = BertForPreTraining(config).cuda()
    ids = torch.randint(0, 30522, (batch, seq), device="cuda")
    labels = torch.randint(0, 30522, (batch, seq), device="cuda")
    nsp = torch.randint(0, 2, (batch,), device="cuda")
    return net, lambda m: m(input_ids=ids, labels=labels, next_sentence_label=nsp).loss


def measure(model, batch, seq, precision, optimizer, warmup, steps):
    import torch
    set_tf32(precision == "tf32")
    torch.backends.cudnn.benchmark = True
    net, loss_of = build(model, batch, seq)
    make = (lambda **kw: torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, **kw)) if optimizer == "sgd" else \
        (lambda **kw: torch.optim.AdamW(net.parameters(), lr=1e-4, **kw))
    try:
        opt = make(fused=True)
    except (TypeError, RuntimeError):  # a PyTorch without the fused kernel for this optimizer
        opt = make(foreach=True)
    half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")

    def step():
        with torch.autocast("cuda", dtype=half or torch.float32, enabled=half is not None):
            loss = loss_of(net)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    start = time.time()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    elapsed = time.time() - start
    result = {"rate": batch * steps / elapsed, "allocated": torch.cuda.max_memory_allocated(),
              "reserved": torch.cuda.max_memory_reserved(),
              "impl": "fused" if opt.defaults.get("fused") else "foreach",
              "attention": getattr(net.config, "_attn_implementation", None)}
    del net, opt
    torch.cuda.empty_cache()
    return result


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--budget-s", type=float, default=240)
    p.add_argument("--dry-run", action="store_true")
    p.add_argument("--device-id")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--steps", type=int, default=20)
    a = p.parse_args(argv[1:])
    device = resolve_device("measure_steps", a.device_id, a.dry_run)
    framework = "PyTorch eager (dry run)"
    if not a.dry_run:
        import torch
        framework = "PyTorch %s eager (CUDA %s)" % (torch.__version__, torch.version.cuda)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "steps-provenance.json"), "w") as f:
        json.dump(provenance(device, argv) if not a.dry_run else {"dry_run": True}, f, indent=1)
    started = time.time()
    with open(os.path.join(a.out, "steps.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for model, batch, seq, precision, optimizer in PLAN:
            if time.time() - started > a.budget_s:
                print("measure_steps: budget spent, stopping before", model, precision, file=sys.stderr)
                break
            r = {"rate": None, "allocated": None, "reserved": None, "impl": "fused", "attention": "eager"}
            if not a.dry_run:
                try:
                    r = measure(model, batch, seq, precision, optimizer, a.warmup, a.steps)
                except Exception as e:  # out of memory or a missing package: report and go on
                    print("measure_steps: %s b%d %s failed: %s" % (model, batch, precision, e), file=sys.stderr)
                    continue
            amp = {"fp16": "torch.autocast fp16 + GradScaler", "bf16": "torch.autocast bf16"}.get(
                precision, "TF32 matmuls and convolutions" if precision == "tf32" else "fp32")
            detail = "channels-last" if model == "resnet50" else "%s attention, MLM + NSP loss" % r["attention"]
            note = "synthetic data on the GPU, %d warm-up + %d timed steps, %s, %s %s, %s" % (
                a.warmup, a.steps, amp, r["impl"], optimizer, detail)
            w.writerow([model, device, precision, batch, seq or "", 224 if model == "resnet50" else "", optimizer,
                        "", "" if r["rate"] is None else "%.2f" % r["rate"], framework,
                        "tools/measure/measure_steps.py", note, "validate", r["allocated"] or "", r["reserved"] or ""])
            f.flush()
    print("measure_steps: wrote %s in %.0f s" % (os.path.join(a.out, "steps.csv"), time.time() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

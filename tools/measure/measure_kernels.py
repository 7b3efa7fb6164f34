#!/usr/bin/env python3
"""Times the kernels PreNeT fits on, at training sizes, on the GPU this runs on (PyTorch + CUDA).

    python3 tools/measure/measure_kernels.py --out OUT [--budget-s 420] [--quick] [--device-id ID]
    python3 tools/measure/measure_kernels.py --out OUT --dry-run      # the plan only, no torch needed

What it measures (every case in fp32, tf32, bf16 and fp16 where the op has a matrix path, else fp32/bf16/fp16):
- GEMMs (`gemm`: m, n, k) of transformer training: tokens x hidden -> 3 hidden, hidden, ffn and back, their
  input- and weight-gradient shapes, and a vocabulary projection, for BERT-large, GPT-2 XL and LLaMA-7B widths;
- batched attention products (`bmm`: b, m, n, k);
- ResNet-50 (v1.5) convolutions, forward, input gradient and weight gradient (`conv2d`, `conv2d_grad_input`,
  `conv2d_grad_weight`, DeepBench's dims), at batch 32 to 256, channels-last (as mixed-precision recipes run);
- element-wise ops, layer norm and softmax (`add`, `mul`, `relu`, `gelu`, `ln`, `softmax`: b rows of h).

How: `torch.backends.cudnn.benchmark = True` (the recipes' setting), TF32 switched on for `tf32` only, each
case warmed up (cuDNN's algorithm search happens then), then `--reps` launches captured in a CUDA graph and
replayed between two CUDA events, `--repeats` times; the median per launch is `latency_ms`. The graph replay
times the kernels without Python's ~10 us launch cost (a floor is fitted per `source` anyway); an op that cannot
be captured is timed as back-to-back launches instead, and the `timing` column says which (graph | loop).

Output: OUT/ops/<op>.csv in data/'s schema (`source, device, op, <dims>, precision, latency_ms`), ready to
copy to data/measured/ops/, and OUT/provenance.json (GPU, driver, CUDA, cuDNN, torch, clocks, date, command).
Cases run bf16, fp16, tf32, then fp32 (what the fitting data lacks first) and are written as they finish;
`--budget-s` stops starting new ones and keeps what was measured.
"""
import argparse
import csv
import json
import os
import statistics
import sys
import time

from harness import HarnessError, load_sheets, resolve_hardware

SOURCE = "prenet-harness"

# Column order per op, as `prenet kernels --csv` and the fit read them (src/predict/op_rows.hpp).
DIMS = {
    "gemm": ["m", "n", "k"],
    "bmm": ["b", "m", "n", "k"],
    "conv2d": ["n", "c", "h", "w", "k", "filter_h", "filter_w", "pad_h", "pad_w", "stride_h", "stride_w"],
    "ln": ["b", "h"],
    "softmax": ["b", "h"],
    "add": ["b", "h"],
    "mul": ["b", "h"],
    "relu": ["b", "h"],
    "gelu": ["b", "h"],
}
DIMS["conv2d_grad_input"] = DIMS["conv2d"]
DIMS["conv2d_grad_weight"] = DIMS["conv2d"]

MATRIX_PRECISIONS = ["fp32", "tf32", "bf16", "fp16"]
VECTOR_PRECISIONS = ["fp32", "bf16", "fp16"]


def resnet50_convs():
    """ResNet-50 v1.5's distinct convolutions at 224 px: (c, h, k, filter, stride, pad)."""
    convs = {(3, 224, 64, 7, 2, 3)}
    h, c = 56, 64
    for planes, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
        for i in range(blocks):
            s = stride if i == 0 else 1
            convs.add((c, h, planes, 1, 1, 0))              # 1x1 reduce
            convs.add((planes, h, planes, 3, s, 1))         # 3x3 (v1.5: the stride is here)
            out_h = h // s
            convs.add((planes, out_h, planes * 4, 1, 1, 0))  # 1x1 expand
            if i == 0:
                convs.add((c, h, planes * 4, 1, s, 0))      # downsample
            c, h = planes * 4, out_h
    return sorted(convs)


def plan(quick):
    """Every case as (op, dims dict, precision): bf16, fp16 and tf32 first, then fp32."""
    cases = []
    tokens = [2048, 8192] if quick else [2048, 8192, 16384]
    widths = [(1024, 4096), (4096, 11008)] if quick else [(1024, 4096), (1600, 6400), (4096, 11008)]
    for t in tokens:
        for h, ffn in widths:
            shapes = [(t, 3 * h, h), (t, h, h), (t, ffn, h), (t, h, ffn),  # forward: qkv, out, up, down
                      (h, ffn, t), (ffn, h, t), (t, ffn, h)]              # weight and input gradients
            if h == 1024:
                shapes.append((t, 30522, h))                                # BERT's vocabulary projection
            for m, n, k in dict.fromkeys(shapes):
                for p in MATRIX_PRECISIONS:
                    cases.append(("gemm", {"m": m, "n": n, "k": k}, p))
    for batch, heads, seq, d in [(8, 16, 512, 64), (4, 32, 2048, 128)] + ([] if quick else [(2, 32, 4096, 128)]):
        for m, n, k in [(seq, seq, d), (seq, d, seq)]:  # scores, context
            for p in MATRIX_PRECISIONS:
                cases.append(("bmm", {"b": batch * heads, "m": m, "n": n, "k": k}, p))
    for rows, h in [(2048, 1024), (8192, 1024), (8192, 4096), (16384, 4096)] + ([] if quick else [(65536, 4096)]):
        for op in ["add", "mul", "relu", "gelu", "ln", "softmax"]:
            for p in VECTOR_PRECISIONS:
                cases.append((op, {"b": rows, "h": h}, p))
    batches = [32, 128] if quick else [32, 64, 128, 256]
    for n in batches:
        for c, h, k, f, s, pad in resnet50_convs():
            for op in ["conv2d", "conv2d_grad_input", "conv2d_grad_weight"]:
                if op == "conv2d_grad_input" and c == 3:
                    continue  # the stem's input is data: no input gradient
                dims = {"n": n, "c": c, "h": h, "w": h, "k": k, "filter_h": f, "filter_w": f, "pad_h": pad,
                        "pad_w": pad, "stride_h": s, "stride_w": s}
                for p in MATRIX_PRECISIONS:
                    cases.append((op, dims, p))
    # The precisions the fitting data lacks come first, so that a cut budget keeps them (data/README.md).
    order = {"bf16": 0, "fp16": 1, "tf32": 2, "fp32": 3}
    return sorted(cases, key=lambda c: order[c[2]])


class CsvSink:
    """One CSV per op under OUT/ops, rows appended (and flushed) as cases finish."""

    def __init__(self, out, device):
        self.dir = os.path.join(out, "ops")
        os.makedirs(self.dir, exist_ok=True)
        self.device = device
        self.files = {}

    def write(self, op, dims, precision, latency_ms, timing=""):
        if op not in self.files:
            f = open(os.path.join(self.dir, op + ".csv"), "w", newline="")
            w = csv.writer(f)
            w.writerow(["source", "device", "op"] + DIMS[op] + ["precision", "latency_ms", "timing"])
            self.files[op] = (f, w)
        f, w = self.files[op]
        value = "" if latency_ms is None else "%.6g" % latency_ms
        w.writerow([SOURCE, self.device, op] + [dims[d] for d in DIMS[op]] + [precision, value, timing])
        f.flush()

    def close(self):
        for f, _ in self.files.values():
            f.close()


# ---- timing (torch is imported only here: --dry-run runs without it) ----

def set_tf32(on):
    """TF32 for matmuls and cuDNN on or off. PyTorch >= 2.9 has `fp32_precision` and refuses a mix of it with
    the older `allow_tf32` flags, so only one of the two is touched."""
    import torch
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        torch.backends.cuda.matmul.fp32_precision = "tf32" if on else "ieee"
        torch.backends.cudnn.conv.fp32_precision = "tf32" if on else "ieee"
    else:
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on


def torch_setup(precision):
    import torch
    set_tf32(precision == "tf32")
    torch.backends.cudnn.benchmark = True
    return {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[precision]


def make_call(op, d, precision):
    """A zero-argument function launching the case's kernel once, its inputs allocated."""
    import torch
    import torch.nn.functional as F
    dtype = torch_setup(precision)
    dev = "cuda"
    if op == "gemm":
        a = torch.randn(d["m"], d["k"], device=dev, dtype=dtype)
        b = torch.randn(d["k"], d["n"], device=dev, dtype=dtype)
        return lambda: torch.mm(a, b)
    if op == "bmm":
        a = torch.randn(d["b"], d["m"], d["k"], device=dev, dtype=dtype)
        b = torch.randn(d["b"], d["k"], d["n"], device=dev, dtype=dtype)
        return lambda: torch.bmm(a, b)
    if op in ("add", "mul", "relu", "gelu", "ln", "softmax"):
        x = torch.randn(d["b"], d["h"], device=dev, dtype=dtype)
        y = torch.randn(d["b"], d["h"], device=dev, dtype=dtype)
        if op == "ln":
            w = torch.ones(d["h"], device=dev, dtype=dtype)
            bias = torch.zeros(d["h"], device=dev, dtype=dtype)
            return lambda: F.layer_norm(x, (d["h"],), w, bias)
        return {"add": lambda: torch.add(x, y), "mul": lambda: torch.mul(x, y), "relu": lambda: F.relu(x),
                "gelu": lambda: F.gelu(x), "softmax": lambda: torch.softmax(x, dim=-1)}[op]
    # Convolutions, channels-last (NHWC) as mixed-precision recipes run them.
    fmt = torch.channels_last
    x = torch.randn(d["n"], d["c"], d["h"], d["w"], device=dev, dtype=dtype).to(memory_format=fmt)
    w = torch.randn(d["k"], d["c"], d["filter_h"], d["filter_w"], device=dev, dtype=dtype).to(memory_format=fmt)
    stride, pad = (d["stride_h"], d["stride_w"]), (d["pad_h"], d["pad_w"])
    if op == "conv2d":
        return lambda: F.conv2d(x, w, None, stride, pad)
    out = F.conv2d(x, w, None, stride, pad)
    dy = torch.randn_like(out)
    mask = [op == "conv2d_grad_input", op == "conv2d_grad_weight", False]
    return lambda: torch.ops.aten.convolution_backward(dy, x, w, None, stride, pad, (1, 1), False, (0, 0), 1, mask)


def launcher(call, reps):
    """(run, how): `run` launches the case `reps` times. Captured in a CUDA graph when PyTorch can, so that the
    replay times the kernels alone (a launch from Python costs ~10 us, longer than a small kernel); else a
    plain loop of launches."""
    import torch
    try:
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(reps):
                call()
        graph.replay()
        torch.cuda.synchronize()
        return graph.replay, "graph"
    except Exception:  # an op that cannot be captured: time the launches themselves
        try:
            torch.cuda.synchronize()
        except Exception:
            pass
        return (lambda: [call() for _ in range(reps)]), "loop"


def time_call(call, reps, repeats):
    """(median ms per launch, how it was timed)."""
    import torch
    for _ in range(3):  # warm-up: cuDNN's algorithm search happens here, outside any capture
        call()
    torch.cuda.synchronize()
    run, how = launcher(call, reps)
    per_launch = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        run()
        end.record()
        end.synchronize()
        per_launch.append(start.elapsed_time(end) / reps)
    return statistics.median(per_launch), how


def resolve_device(tool, device_id, dry_run):
    """The hardware/ id the measurements are filed under: --device-id, else the GPU's name looked up against
    hardware/'s sheets (harness.device_id_from_name: the one rule, shared with measure_steps.py)."""
    if dry_run:
        return device_id or "dry-run"
    import torch
    if not torch.cuda.is_available():
        sys.exit("%s: no CUDA device (use --dry-run for the plan)" % tool)
    try:
        return resolve_hardware(tool, "cuda", torch.cuda.get_device_name(0), device_id, load_sheets())
    except HarnessError as e:
        sys.exit(str(e))


def provenance(device, argv):
    info = {"source": SOURCE, "device": device, "command": " ".join(argv),
            "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    try:
        import subprocess
        import torch
        props = torch.cuda.get_device_properties(0)
        info.update({"gpu": torch.cuda.get_device_name(0), "multiprocessors": props.multi_processor_count,
                     "memory_bytes": props.total_memory, "torch": torch.__version__,
                     "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version()})
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,clocks.max.mem,power.limit",
                              "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        info["nvidia_smi"] = smi.stdout.strip()
    except Exception as e:  # the dry run and machines without nvidia-smi still get the rest
        info["note"] = "no GPU details: %s" % e
    return info


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--budget-s", type=float, default=420, help="stop starting new cases after this long")
    p.add_argument("--quick", action="store_true", help="fewer sizes (about a third of the cases)")
    p.add_argument("--dry-run", action="store_true", help="write the plan with empty latency_ms; no torch")
    p.add_argument("--device-id", help="the hardware/ id (default: from the GPU's name)")
    p.add_argument("--reps", type=int, default=10)
    p.add_argument("--repeats", type=int, default=5)
    a = p.parse_args(argv[1:])

    cases = plan(a.quick)
    device = resolve_device("measure_kernels", a.device_id, a.dry_run)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "provenance.json"), "w") as f:
        json.dump(provenance(device, argv) if not a.dry_run else {"source": SOURCE, "dry_run": True}, f, indent=1)

    sink = CsvSink(a.out, device)
    started, done, failed = time.time(), 0, 0
    for op, dims, precision in cases:
        if a.dry_run:
            sink.write(op, dims, precision, None)
            done += 1
            continue
        if time.time() - started > a.budget_s:
            break
        try:
            latency, how = time_call(make_call(op, dims, precision), a.reps, a.repeats)
            sink.write(op, dims, precision, latency, how)
            done += 1
        except Exception as e:  # an unsupported case (out of memory, no kernel) is reported, not fatal
            failed += 1
            print("measure_kernels: %s %s %s failed: %s" % (op, dims, precision, e), file=sys.stderr)
        if done % 100 == 0:
            print("measure_kernels: %d of %d cases, %.0f s" % (done, len(cases), time.time() - started), flush=True)
    sink.close()
    print("measure_kernels: %d of %d cases written to %s (%d failed), %.0f s" %
          (done, len(cases), os.path.join(a.out, "ops"), failed, time.time() - started))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Copies the measurements PreNeT fits on from the shared data folder into data/, in the project's schema.

Reproducible: `python3 tools/prepare_data.py [--shared ../shared/data]` rewrites data/ from the sources.
Kept columns: the NeuSight layout (`op`, its dims, `latency_ms`) plus `device` mapped to a hardware/ id and
`source`. Dropped: launch-shape and kernel-name columns (not available when predicting unseen hardware).
"""
import argparse
import csv
import gzip
import os
import shutil

NEUSIGHT_DEVICES = {
    "Tesla P4": "p4",
    "Tesla P100-PCIE-16GB": "p100-pcie-16gb",
    "Tesla T4": "t4",
    "Tesla V100-PCIE-32GB": "v100-pcie-32gb",
    "NVIDIA A100-PCIE-40GB": "a100-pcie-40gb",
    "NVIDIA A100 80GB PCIe": "a100-pcie-80gb",
    "NVIDIA A100-SXM4-40GB": "a100-sxm4-40gb",
}
NEUSIGHT_E2E_DEVICES = {
    "Tesla_V100-PCIE-32GB": "v100-pcie-32gb",
    "NVIDIA_A100_80GB_PCIe": "a100-pcie-80gb",
    "NVIDIA_A100-SXM4-40GB": "a100-sxm4-40gb",
}
OP_DIMS = {
    "linear": ["b", "m", "n", "k"],
    "bmm": ["b", "m", "n", "k"],
    "conv": ["b", "in_channels", "out_channels", "kernel_size", "input_size", "stride", "padding"],
}
VECTOR_DIMS = ["b", "h"]


def prepare_neusight_ops(shared, out):
    root = os.path.join(shared, "neusight", "ops")
    target = os.path.join(out, "neusight", "ops")
    rows_total = 0
    for op in sorted(os.listdir(root)):
        dims = OP_DIMS.get(op, VECTOR_DIMS)
        os.makedirs(target, exist_ok=True)
        with open(os.path.join(target, op + ".csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["source", "device", "op"] + dims + ["latency_ms"])
            for name in sorted(os.listdir(os.path.join(root, op))):
                with gzip.open(os.path.join(root, op, name), "rt") as g:
                    for row in csv.DictReader(g):
                        device = NEUSIGHT_DEVICES[row["device"]]
                        w.writerow(["neusight", device, op] + [row[d] for d in dims] +
                                   ["%.6g" % float(row["latency_ms"])])
                        rows_total += 1
    return rows_total


def prepare_neusight_e2e(shared, out):
    import json
    root = os.path.join(shared, "neusight", "e2e")
    rows = []
    for folder in sorted(os.listdir(root)):
        for name in sorted(os.listdir(os.path.join(root, folder))):
            if not name.endswith(".json"):
                continue
            stem = name[:-5]
            model, _, seq, rest = stem.split("-", 3)
            parts = rest.split("-")
            batch, layout = parts[0], (parts[1] if len(parts) > 1 else "single")
            with open(os.path.join(root, folder, name)) as f:
                d = json.load(f)
            rows.append([NEUSIGHT_E2E_DEVICES[folder], model, seq, batch, layout, d["num_layer"],
                         "%.6g" % d["fw_latency"], "%.6g" % d["bwall_latency"], "%.6g" % d["e2e_latency"]])
    path = os.path.join(out, "neusight", "e2e.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["device", "model", "seq", "batch", "layout", "num_layer", "forward_ms", "backward_ms",
                    "total_ms"])
        w.writerows(rows)
    configs = os.path.join(out, "neusight", "model_configs")
    shutil.copytree(os.path.join(shared, "neusight", "model_configs"), configs, dirs_exist_ok=True)
    return len(rows)


DEEPBENCH_DEVICES = {
    "NV_M40": "m40",
    "NV_TitanX": "titan-x-maxwell",
    "NV_TitanX_Pascal": "titan-x-pascal",
    "NV_TitanXp": "titan-xp",
    "NV_1080Ti": "gtx-1080-ti",
    # DeepBench's results name the chip, not the board; its P100 and V100 numbers come from the SXM2 boards of
    # the DGX-1 generation (an assumption, stated in data/README.md).
    "NV_P100": "p100-sxm2-16gb",
    "NV_V100": "v100-sxm2-16gb",
    "NV_T4": "t4",
    "AMD_MI25": "mi25",
    "AMD_VegaFE": "vega-fe",
}
# fp16_mixed: fp16 inputs on tensor cores with fp32 accumulation; fp16_pseudo: fp16 storage and arithmetic on
# P100's packed-half units. Both are the device's fp16 rate.
DEEPBENCH_PRECISION = {"fp32": "fp32", "fp16_mixed": "fp16", "fp16_pseudo": "fp16"}


def prepare_deepbench(shared, out):
    src = os.path.join(shared, "deepbench")
    target = os.path.join(out, "deepbench", "ops")
    os.makedirs(target, exist_ok=True)
    counts = {}
    with open(os.path.join(src, "gemm.csv")) as f, open(os.path.join(target, "gemm.csv"), "w", newline="") as g:
        w = csv.writer(g)
        w.writerow(["source", "device", "op", "precision", "m", "n", "k", "a_transpose", "b_transpose", "latency_ms"])
        n = 0
        for r in csv.DictReader(f):
            if r["device"] not in DEEPBENCH_DEVICES:
                continue  # the Xeon Phi is a CPU
            w.writerow(["deepbench", DEEPBENCH_DEVICES[r["device"]], "gemm", DEEPBENCH_PRECISION[r["precision"]],
                        r["m"], r["n"], r["k"], r["a_transpose"], r["b_transpose"], "%.6g" % float(r["time_ms"])])
            n += 1
        counts["gemm"] = n
    dims = ["n", "c", "h", "w", "k", "filter_h", "filter_w", "pad_h", "pad_w", "stride_h", "stride_w"]
    with open(os.path.join(src, "conv.csv")) as f, open(os.path.join(target, "conv2d.csv"), "w", newline="") as g:
        w = csv.writer(g)
        w.writerow(["source", "device", "op", "precision"] + dims + ["latency_ms"])
        n = 0
        for r in csv.DictReader(f):
            if r["device"] not in DEEPBENCH_DEVICES:
                continue
            for op, col in (("conv2d", "fwd_ms"), ("conv2d_grad_input", "bwd_inputs_ms"),
                            ("conv2d_grad_weight", "bwd_weights_ms")):
                if not r[col]:
                    continue
                w.writerow(["deepbench", DEEPBENCH_DEVICES[r["device"]], op, DEEPBENCH_PRECISION[r["precision"]]] +
                           [r[d] for d in dims] + ["%.6g" % float(r[col])])
                n += 1
        counts["conv"] = n
    shutil.copy(os.path.join(src, "LICENSE"), os.path.join(out, "deepbench", "LICENSE"))
    return counts


XLA_PRECISION = {"bf16": "bf16", "tf32": "tf32", "fp8": "fp8"}


def prepare_xla(shared, out):
    """XLA's batched-matmul tables (B200, MI300X; TF32, BF16, FP8) as bmm rows; collectives and elementwise cycle
    counts are copied as they are for the distributed and elementwise work."""
    src = os.path.join(shared, "xla")
    target = os.path.join(out, "xla", "ops")
    os.makedirs(target, exist_ok=True)
    n = 0
    excluded_dir = os.path.join(out, "xla", "excluded")
    os.makedirs(excluded_dir, exist_ok=True)
    header = ["source", "device", "op", "precision", "dtype", "b", "m", "n", "k", "latency_ms"]
    with open(os.path.join(src, "matmul.csv")) as f, \
            open(os.path.join(target, "bmm.csv"), "w", newline="") as g, \
            open(os.path.join(excluded_dir, "bmm.csv"), "w", newline="") as x:
        w, wx = csv.writer(g), csv.writer(x)
        w.writerow(header)
        wx.writerow(header)
        for r in csv.DictReader(f):
            row = ["xla", r["device"], "bmm", XLA_PRECISION[r["precision"]], r["dtype"], r["b"], r["m"], r["n"], r["k"],
                   "%.6g" % float(r["time_ms"])]
            # MI300X fp8 runs 25-50x slower than its fp8 bound in these tables (XLA's ROCm fp8 path, not the
            # chip): software behaviour no spec sheet can predict. Kept aside, reported, not fitted.
            if r["device"] == "mi300x" and r["precision"] == "fp8":
                wx.writerow(row)
                continue
            w.writerow(row)
            n += 1
    for name in ("collectives.csv", "op_profiles.csv", "LICENSE"):
        shutil.copy(os.path.join(src, name), os.path.join(out, "xla", name))
    return n


# aiconfigurator's system names as hardware/ ids. H100 SXM rows are fitted (added to the shared copy on 2026-12-01);
# the other Hopper systems (h200, h20, h800) are left out on purpose: their rows are held back to check predictions
# on a part the fitted models never saw (../shared/data/README.md).
AICONFIGURATOR_SYSTEMS = {
    "a100_sxm": "a100-sxm4-80gb",
    "b200_sxm": "b200",
    "b300_sxm": "b300",
    "gb200": "gb200",
    "gb300": "gb300",
    "h100_sxm": "h100-sxm5-80gb",
    "l40s": "l40s",
    "rtx_pro_6000_server": "rtx-pro-6000-server",
    "b60": "arc-pro-b60",
}
HELD_BACK_SYSTEMS = ("h200", "h20", "h800")


def read_aiconfigurator(shared, name):
    """The rows of one aiconfigurator table and the commit its `#` first line names."""
    with gzip.open(os.path.join(shared, "aiconfigurator", name), "rt") as f:
        first = f.readline()
        if not first.startswith("#"):
            raise SystemExit("aiconfigurator/%s: expected a '#' line naming the upstream commit" % name)
        return first[1:].strip(), list(csv.DictReader(f))


def prepare_aiconfigurator_attention(shared, out):
    """aiconfigurator's fused causal attention forward (context/prefill attention, bf16) as flash_attention rows.
    All ~20,000 rows are kept (about 1 MB): no subsampling. Sorted, so that reruns write the same bytes."""
    _, rows = read_aiconfigurator(shared, "context_attention.csv.gz")
    target = os.path.join(out, "aiconfigurator", "ops")
    os.makedirs(target, exist_ok=True)
    kept = []
    for r in rows:
        system = r["system"]
        if system.startswith(HELD_BACK_SYSTEMS):
            continue
        if system not in AICONFIGURATOR_SYSTEMS:
            raise SystemExit("aiconfigurator: no hardware id for system '%s'" % system)
        dims = [int(r[c]) for c in ("batch", "seq", "heads", "kv_heads", "head_dim")]
        kept.append((AICONFIGURATOR_SYSTEMS[system], dims, float(r["latency_ms"])))
    kept.sort()
    with open(os.path.join(target, "flash_attention.csv"), "w", newline="") as g:
        w = csv.writer(g, lineterminator="\n")
        w.writerow(["source", "device", "op", "precision", "phase", "b", "seq", "heads", "kv_heads", "head_dim",
                    "causal", "latency_ms"])
        for device, dims, ms in kept:
            w.writerow(["aiconfigurator", device, "flash_attention", "bf16", "forward"] + dims + [1, "%.6g" % ms])
    shutil.copyfile(os.path.join(shared, "aiconfigurator", "LICENSE"), os.path.join(out, "aiconfigurator", "LICENSE"))
    return len(kept)


AICONFIGURATOR_PRECISION = {"bfloat16": "bf16", "fp8": "fp8"}


def prepare_aiconfigurator_gemm(shared, out):
    """NVIDIA aiconfigurator's measured GEMMs (one (m x k)(k x n) product, BF16 and per-tensor-scaled FP8 through
    TensorRT-LLM's torch flow, locked clocks, CUDA graphs) on A100 SXM (BF16), B200, B300, GB200, GB300, H100 SXM, L40S,
    RTX PRO 6000 Server and Intel Arc Pro B60, as `gemm` rows, every shape kept."""
    commit, rows = read_aiconfigurator(shared, "gemm.csv.gz")
    target = os.path.join(out, "aiconfigurator", "ops")
    os.makedirs(target, exist_ok=True)
    shutil.copy(os.path.join(shared, "aiconfigurator", "LICENSE"), os.path.join(out, "aiconfigurator", "LICENSE"))
    n = 0
    rows = [r for r in rows if not r["system"].startswith(HELD_BACK_SYSTEMS)]
    rows.sort(key=lambda r: (AICONFIGURATOR_SYSTEMS[r["system"]], r["dtype"], int(r["m"]), int(r["n"]), int(r["k"])))
    header = ["source", "device", "op", "precision", "m", "n", "k", "latency_ms"]
    excluded_dir = os.path.join(out, "aiconfigurator", "excluded")
    os.makedirs(excluded_dir, exist_ok=True)
    n = 0
    with open(os.path.join(target, "gemm.csv"), "w", newline="") as g, \
            open(os.path.join(excluded_dir, "gemm.csv"), "w", newline="") as x:
        w, wx = csv.writer(g), csv.writer(x)
        w.writerow(header)
        wx.writerow(header)
        for r in rows:
            row = ["aiconfigurator", AICONFIGURATOR_SYSTEMS[r["system"]], "gemm", AICONFIGURATOR_PRECISION[r["dtype"]],
                   r["m"], r["n"], r["k"], "%.6g" % float(r["latency_ms"])]
            # The Arc Pro B60's GEMM calls cost ~27 us each however small (CUDA's: 2 us) and its large ones reach
            # its whole XMX peak: a software stack unlike every other device's. Fitted, it moved B200's held-out
            # BF16 error from 6% to 35%; so it is kept aside and predicted by the shipped model (the report).
            if r["system"] == "b60":
                wx.writerow(row)
                continue
            w.writerow(row)
            n += 1
    print("aiconfigurator gemm: upstream", commit)
    return n


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(here)
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--shared", default=os.path.join(repo, "..", "shared", "data"))
    p.add_argument("--out", default=os.path.join(repo, "data"))
    a = p.parse_args()
    os.makedirs(os.path.join(a.out, "neusight"), exist_ok=True)
    shutil.copy(os.path.join(a.shared, "neusight", "LICENSE"), os.path.join(a.out, "neusight", "LICENSE"))
    print("neusight kernel rows:", prepare_neusight_ops(a.shared, a.out))
    print("neusight e2e rows:", prepare_neusight_e2e(a.shared, a.out))
    print("deepbench rows:", prepare_deepbench(a.shared, a.out))
    print("xla matmul rows:", prepare_xla(a.shared, a.out))
    print("aiconfigurator gemm rows:", prepare_aiconfigurator_gemm(a.shared, a.out))
    print("aiconfigurator attention rows:", prepare_aiconfigurator_attention(a.shared, a.out))


if __name__ == "__main__":
    main()

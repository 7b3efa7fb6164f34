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


if __name__ == "__main__":
    main()

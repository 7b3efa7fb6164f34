#!/usr/bin/env python3
"""Adds what tools/measure/run_on_device.sh measured to data/measured/, with its provenance.

    python3 tools/measure/import_measurements.py measurements.tar.gz   (or the unpacked folder)
                                                 [--data data]

- ops/<op>.csv rows go to data/measured/ops/<op>.csv; a row measured again (same device, op, dims, precision)
  replaces the old one. Then `npm run fit` fits on them with everything else.
- steps.csv rows go to data/measured/steps.csv (same key: model, hardware, precision, batch, seq);
  `node tools/compare_published.mjs --csv data/measured/steps.csv --out docs/measured-steps.md` checks the
  predictions against them (with the chip held out, as for the published rows).
- provenance.json and steps-provenance.json go to data/measured/provenance/<device>-<date>.json.
Rows without a latency (a --dry-run's plan) are refused: nothing is written then.
"""
import argparse
import csv
import json
import os
import sys
import tarfile
import tempfile

OP_KEY_SKIP = {"latency_ms"}
STEP_KEY = ["model", "hardware", "precision", "batch", "seq"]


def read_csv(path):
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        return r.fieldnames, list(r)


def write_csv(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerows(rows)


def merge(path, header, new_rows, key):
    """Rows of `path` whose key no new row has, then the new rows."""
    old = read_csv(path)[1] if os.path.exists(path) else []
    if os.path.exists(path) and read_csv(path)[0] != header:
        raise SystemExit("import: %s has other columns than the new rows; not merged" % path)
    fresh = {key(r) for r in new_rows}
    kept = [r for r in old if key(r) not in fresh]
    write_csv(path, header, kept + new_rows)
    return len(kept), len(new_rows)


def check(rows, column, where):
    missing = [r for r in rows if not r.get(column)]
    if missing:
        raise SystemExit("import: %d rows of %s have no %s (a dry run's plan?); nothing imported" %
                         (len(missing), where, column))
    bad = [r for r in rows if r.get("device", r.get("hardware")) == "dry-run"]
    if bad:
        raise SystemExit("import: rows of %s name no device ('dry-run'); nothing imported" % where)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("measurements", help="measurements.tar.gz or the folder it unpacks to")
    p.add_argument("--data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data"))
    a = p.parse_args(argv[1:])
    src = a.measurements
    if os.path.isfile(src):
        tmp = tempfile.mkdtemp()
        with tarfile.open(src) as t:
            try:
                t.extractall(tmp, filter="data")  # Python >= 3.11.4: no paths outside tmp
            except TypeError:
                t.extractall(tmp)
        src = tmp
    target = os.path.join(a.data, "measured")

    # Check everything before writing anything.
    ops = {}
    ops_dir = os.path.join(src, "ops")
    for name in sorted(os.listdir(ops_dir)) if os.path.isdir(ops_dir) else []:
        header, rows = read_csv(os.path.join(ops_dir, name))
        check(rows, "latency_ms", "ops/" + name)
        ops[name] = (header, rows)
    steps = None
    if os.path.exists(os.path.join(src, "steps.csv")):
        header, rows = read_csv(os.path.join(src, "steps.csv"))
        rows = [r for r in rows if r.get("samples_per_s")]  # a failed recipe leaves no row; keep the measured
        check(rows, "samples_per_s", "steps.csv")
        steps = (header, rows)
    if not ops and not steps:
        raise SystemExit("import: no ops/*.csv or steps.csv in %s" % a.measurements)

    for name, (header, rows) in ops.items():
        kept, added = merge(os.path.join(target, "ops", name), header, rows,
                            lambda r: tuple(v for k, v in r.items() if k not in OP_KEY_SKIP and k != "source"))
        print("import: ops/%s: %d rows added, %d kept" % (name, added, kept))
    if steps:
        kept, added = merge(os.path.join(target, "steps.csv"), steps[0], steps[1],
                            lambda r: tuple(r[k] for k in STEP_KEY))
        print("import: steps.csv: %d rows added, %d kept" % (added, kept))
    for name in ["provenance.json", "steps-provenance.json"]:
        path = os.path.join(src, name)
        if not os.path.exists(path):
            continue
        with open(path) as f:
            info = json.load(f)
        stamp = info.get("date_utc", "undated").replace(":", "")
        out = os.path.join(target, "provenance", "%s-%s-%s" % (info.get("device", "unknown"), stamp, name))
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as f:
            json.dump(info, f, indent=1)
        print("import: provenance ->", os.path.relpath(out, a.data))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

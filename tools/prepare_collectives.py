#!/usr/bin/env python3
"""Rewrites data/collectives/ from the shared measurements (../shared/data): NCCL collectives inside one node
(aiconfigurator) and XLA's collective tables, in one schema, each device mapped to a hardware/ id.

Schema: source, device, op (all_reduce | all_gather | reduce_scatter | all_to_all), gpus (members of one group),
nodes (1: every row here was measured inside one node or NVLink domain), groups (groups running at once),
dtype, message_size (bytes, nccl-tests' convention), latency_ms (measured).
H100 rows are fitted (added to the shared copy on 2026-12-01). The other Hopper parts' rows (H200, H800, H20, GH200)
are held back for an independent check and never written (there are none in these files today; the filter is kept
so that a newer copy cannot leak them in)."""
import argparse, csv, gzip, os, shutil, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'data', 'collectives')
NCCL_DEVICES = {'a100_sxm': 'a100-sxm4-80gb', 'b200_sxm': 'b200', 'b300_sxm': 'b300', 'gb200': 'gb200',
                'gb300': 'gb300', 'h100_sxm': 'h100-sxm5-80gb', 'l40s': 'l40s', 'rtx_pro_6000_server': 'rtx-pro-6000-server'}
XLA_DEVICES = {'b200': 'b200', 'gb200': 'gb200', 'gb300': 'gb300', 'mi300x': 'mi300x'}
OPS = {'all_reduce': 'all_reduce', 'all_gather': 'all_gather', 'reduce_scatter': 'reduce_scatter',
       'alltoall': 'all_to_all', 'all-reduce': 'all_reduce', 'all-gather': 'all_gather',
       'reduce-scatter': 'reduce_scatter', 'all-to-all': 'all_to_all'}
HEADER = ['source', 'device', 'op', 'gpus', 'nodes', 'groups', 'dtype', 'message_size', 'latency_ms']


def held_back(name):
    return any(h in name.lower() for h in ('h200', 'h800', 'h20', 'gh200'))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument('--shared', default=os.path.join(ROOT, '..', 'shared', 'data'))
    shared = p.parse_args().shared
    os.makedirs(OUT, exist_ok=True)
    rows = []
    with gzip.open(os.path.join(shared, 'aiconfigurator', 'nccl.csv.gz'), 'rt') as f:
        for r in csv.DictReader(l for l in f if not l.startswith('#')):
            if held_back(r['system']) or held_back(r['device']):
                continue
            rows.append(['aiconfigurator', NCCL_DEVICES[r['system']], OPS[r['op']], r['gpus'], 1, 1, r['dtype'],
                         r['message_size'], r['latency_ms']])
    with open(os.path.join(OUT, 'nccl.csv'), 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(HEADER)
        w.writerows(rows)
    shutil.copy(os.path.join(shared, 'aiconfigurator', 'LICENSE'), os.path.join(OUT, 'LICENSE-aiconfigurator'))
    xla = []
    with open(os.path.join(shared, 'xla', 'collectives.csv')) as f:
        for r in csv.DictReader(f):
            if r['opcode'] not in OPS or not r['throughput_bytes_per_s'] or held_back(r['device']):
                continue
            tput = float(r['throughput_bytes_per_s'])
            if tput <= 0:
                continue
            op = OPS[r['opcode']]
            # XLA's throughput is per byte its cost model says the collective transfers (GpuHloCostAnalysis:
            # BytesTransferred), and its runtime estimate is those bytes / throughput. That is the `bytes` column
            # (the instruction's shape) for all-reduce, all-gather (the gathered output) and all-to-all, but for
            # reduce-scatter it is the operand, devices_per_group times the scattered output that `bytes` holds
            # (the table's reduce-scatter sizes run from 1 KiB / group to 1 GiB / group). nccl-tests' size of a
            # reduce-scatter is that input too.
            size = int(r['bytes']) * (int(r['devices_per_group']) if op == 'reduce_scatter' else 1)
            ms = size / tput * 1e3
            xla.append(['xla', XLA_DEVICES[r['device']], op, r['devices_per_group'], 1, r['num_groups'],
                        r['element_type'].lower(), size, '%.6g' % ms])
    with open(os.path.join(OUT, 'xla.csv'), 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(HEADER)
        w.writerows(xla)
    shutil.copy(os.path.join(shared, 'xla', 'LICENSE'), os.path.join(OUT, 'LICENSE-xla'))
    print(f'wrote {len(rows)} NCCL rows and {len(xla)} XLA rows to {OUT}', file=sys.stderr)


if __name__ == '__main__':
    main()

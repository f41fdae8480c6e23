#!/usr/bin/env python3
"""record-cost.py: what keeping the --verify-state record costs a verified write run.

For each file size and each --fdatasync-every N, runs the same verified 4 KiB random write
run without and with --verify-state, interleaved in pairs (without first in even pairs,
with first in odd ones), and prints per row the median write IOPS of each, their ratio
(the median of the pairs' ratios), and the median CPU per write of each
(cpu.workers_per_io_ns of the JSON). One table row per combination at the end, in the form
docs/performance.md quotes.

Usage: scripts/record-cost.py --new target/release/iopulse [--pairs 3] [--sizes 64m,1g]
         [--every 1,8,64] [--duration 3s] [--engine sync] [--dir /tmp]
The target and the record are made in a fresh directory under --dir and removed at the end.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--new", required=True, help="the iopulse binary")
p.add_argument("--pairs", type=int, default=3)
p.add_argument("--sizes", default="64m,1g")
p.add_argument("--every", default="1,8,64")
p.add_argument("--duration", default="3s")
p.add_argument("--engine", default="sync")
p.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp"))
a = p.parse_args()


def one(target, state, size, every, with_record):
    args = [a.new, target, "--file-size", size, "--block-size", "4k", "--write-percent", "100",
            "--random", "--verify", "--fdatasync-every", str(every), "--engine", a.engine,
            "--duration", a.duration, "--output-format", "json", "--quiet"]
    if with_record:
        args += ["--verify-state", state]
    out = subprocess.run(args, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)} exited {out.returncode}: {out.stderr.strip()}")
    doc = json.loads(out.stdout)
    iops = doc["write"]["iops"] if "write" in doc else doc["total"]["iops"]
    cpu_ns = doc["cpu"]["workers_per_io_ns"]
    if with_record:
        os.unlink(state)  # each run starts its own record
    return iops, cpu_ns


rows = []
with tempfile.TemporaryDirectory(dir=a.dir, prefix="record-cost.") as d:
    for size in a.sizes.split(","):
        target, state = os.path.join(d, f"t-{size}.dat"), os.path.join(d, f"t-{size}.state")
        for every in [int(e) for e in a.every.split(",")]:
            without, with_, ratios = [], [], []
            for pair in range(a.pairs):
                order = [False, True] if pair % 2 == 0 else [True, False]
                got = {w: one(target, state, size, every, w) for w in order}
                without.append(got[False])
                with_.append(got[True])
                ratios.append(got[True][0] / got[False][0])
            med = lambda xs, i: statistics.median(x[i] for x in xs)
            row = (size, every, med(without, 0), med(with_, 0), statistics.median(ratios),
                   med(without, 1) / 1000, med(with_, 1) / 1000)
            rows.append(row)
            print(f"{size} every {every}: IOPS {row[2]:,.0f} without, {row[3]:,.0f} with "
                  f"({row[4]:.2f}x); CPU per write {row[5]:.1f} / {row[6]:.1f} us", flush=True)
        os.unlink(target)

print("\n| file | `--fdatasync-every` | IOPS without | IOPS with | with / without | CPU per write without / with |")
print("| --- | --- | --- | --- | --- | --- |")
for size, every, wo, w, r, cwo, cw in rows:
    print(f"| {size} | {every} | {wo:,.0f} | {w:,.0f} | {r:.2f}x | {cwo:.1f} / {cw:.1f} µs |")

#!/usr/bin/env python3
"""compare-low-depth.py: 4 KiB O_DIRECT random reads at low and high queue depth, iopulse
against fio 3.x, interleaved in pairs (A B, then B A), on a fast block device.

A fast device is one whose service time is of the order of the tools' own time per I/O:
a loop device doing direct I/O on a file in tmpfs (about 10 us per read here):
  mount -t tmpfs -o size=1200m tmpfs /mnt/fast && truncate -s 1G /mnt/fast/back
  dev=$(losetup -f --show --direct-io=on /mnt/fast/back)
  dd if=/dev/urandom of=$dev bs=1M count=1024 oflag=direct     # written: no hole is read
  scripts/compare-low-depth.py --new target/release/iopulse --device $dev

For each engine and depth, prints the median IOPS of each tool, the median of the pairs'
IOPS ratios (iopulse / fio), the median p50 and p99 latency of each (iopulse: submission to
completion; fio: its `lat`, with --lat_percentiles=1, the same span), the median CPU per
I/O (iopulse: the whole process in the window; fio: (usr + sys) x runtime / I/Os),
iopulse's own time per I/O (`tool_time`) and the idle CPUs' polling during iopulse's runs
(`cpu_state.idle.poll_cpus`: what `--cpu-dma-latency 0` burns). Extra iopulse flags go
after `--`, e.g. `-- --completion-wait sleep` to compare fio's way of waiting, or
`-- --cpu-dma-latency 0` to hold idle CPUs polling during iopulse's runs. fio has no such
option: `--fio-cpu-dma-latency 0` makes the same request (/dev/cpu_dma_latency, root)
around each fio run, for the like-for-like comparison.

Usage: scripts/compare-low-depth.py --new BIN --device DEV [--pairs 6] [--duration 2]
         [--engines io_uring,libaio,sync] [--depths 1,4,32] [--fio-cpu-dma-latency USEC]
         [-- IOPULSE FLAGS...]
"""

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys


def run_iopulse(args, engine, depth, extra):
    cmd = [args.new, args.device, "--engine", engine, "--direct", "--random", "--duration", f"{args.duration}s",
           "--output-format", "json", "--quiet"]
    if engine != "sync":
        cmd += ["--queue-depth", str(depth)]
    cmd += extra
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    d = json.loads(out)
    r = d["read"]
    tool = (d.get("tool_time") or {}).get("per_io_ns", 0.0)
    poll = ((d.get("cpu_state") or {}).get("idle") or {}).get("poll_cpus", 0.0)
    return dict(iops=r["iops"], p50=r["latency_ns"]["p50"], p99=r["latency_ns"]["p99"],
                cpu=d["cpu"]["per_io_ns"], tool=tool, poll=poll)


def run_fio(args, engine, depth):
    fio_engine = {"sync": "psync", "libaio": "libaio", "io_uring": "io_uring"}[engine]
    cmd = ["fio", "--name=lowdepth", f"--filename={args.device}", f"--ioengine={fio_engine}", "--direct=1",
           "--rw=randread", "--bs=4k", f"--iodepth={depth}", f"--runtime={args.duration}", "--time_based",
           "--lat_percentiles=1", "--output-format=json"]
    request = None
    if args.fio_cpu_dma_latency is not None:
        # The kernel's CPU latency request, in force while the file is open (as iopulse's flag).
        request = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
        os.write(request, struct.pack("i", args.fio_cpu_dma_latency))
    try:
        d = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
    finally:
        if request is not None:
            os.close(request)
    j = d["jobs"][0]
    r = j["read"]
    pct = r["lat_ns"]["percentile"]
    ios = max(r["total_ios"], 1)
    cpu_ns = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * j["job_runtime"] * 1e6 / ios
    return dict(iops=r["iops"], p50=pct["50.000000"], p99=pct["99.000000"], cpu=cpu_ns)


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--new", required=True)
    p.add_argument("--device", required=True)
    p.add_argument("--pairs", type=int, default=6)
    p.add_argument("--duration", type=int, default=2)
    p.add_argument("--engines", default="io_uring,libaio,sync")
    p.add_argument("--depths", default="1,4,32")
    p.add_argument("--fio-cpu-dma-latency", type=int, default=None)
    args = p.parse_args(argv)
    us = lambda ns: f"{ns / 1000:.1f}"
    print("| engine | QD | iopulse IOPS | fio IOPS | ratio | iopulse p50 / p99 µs | fio lat p50 / p99 µs "
          "| CPU/I/O iopulse / fio µs | tool µs/I/O | idle polling, CPUs |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for engine in args.engines.split(","):
        depths = [1] if engine == "sync" else [int(d) for d in args.depths.split(",")]
        for depth in depths:
            ours, theirs, ratios = [], [], []
            for pair in range(args.pairs):
                if pair % 2 == 0:
                    a = run_iopulse(args, engine, depth, extra)
                    b = run_fio(args, engine, depth)
                else:
                    b = run_fio(args, engine, depth)
                    a = run_iopulse(args, engine, depth, extra)
                ours.append(a)
                theirs.append(b)
                ratios.append(a["iops"] / b["iops"])
            med = lambda rows, k: statistics.median(x[k] for x in rows)
            print(f"| {engine} | {depth} | {med(ours, 'iops'):,.0f} | {med(theirs, 'iops'):,.0f} | "
                  f"{statistics.median(ratios):.2f}x | {us(med(ours, 'p50'))} / {us(med(ours, 'p99'))} | "
                  f"{us(med(theirs, 'p50'))} / {us(med(theirs, 'p99'))} | "
                  f"{us(med(ours, 'cpu'))} / {us(med(theirs, 'cpu'))} | {med(ours, 'tool') / 1000:.2f} | "
                  f"{med(ours, 'poll'):.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()

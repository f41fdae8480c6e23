#!/usr/bin/env python3
"""compare-writes.py: O_DIRECT writes, iopulse against fio 3.x, interleaved.

For each workload, each repetition runs every variant once, in turn (A B C D A B C D ...):
  new        iopulse under test, default write data (unique: a fresh key per 512-byte sector)
  new-zeros  the same binary with --write-pattern zeros (what data generation costs)
  new-ones   the same with --write-pattern ones: as cheap as zeros for the tool, but no
             device or hypervisor can skip or thin-provision it, so it tells a device that
             special-cases zeros from the cost of the data
  base       another iopulse binary, default data (optional: --base PATH)
  fio        fio with its defaults for data (scramble_buffers), --rw=write --direct=1
With --controls, four more, which tell what the data costs the tool from what it costs
the device:
  new-random --write-pattern random: every byte fresh per write (cut from a pool)
  new-keyed  --write-pattern keyed: a 16-byte key per 4 KiB chunk rewritten per write, so
             the tool's CPU is about that of zeros while one cache line in 64 changes
  fio-zeros  fio --zero_buffers=1: fio's own gain from zero data
  fio-refill fio --refill_buffers=1: fio with fresh random data for every write, as new
and prints the median IOPS of each; the median over repetitions of each one's ratio to
fio's run and to its own tool's zeros run of the same repetition (new-zeros for iopulse,
fio-zeros for fio, when run); CPU time per I/O (iopulse: cpu.workers_per_io_ns; fio:
(usr_cpu + sys_cpu) x job_runtime / I/Os) and p50 latency (submission to completion: the
device's time); plus one command line per variant.

Usage: scripts/compare-writes.py --new target/release/iopulse [--base OLD] [--reps 5]
         [--duration 3s] [--size 1G] [--dir /tmp] [--workloads libaio:128k:8,sync:16m:1]
         [--cpu N] [--controls] [--device /dev/loopN] [--pairs 6] [--layout 4G]
A workload is engine:block-size:queue-depth[:rand] (engine sync, libaio or io_uring; rand:
uniform random offsets with replacement, fio --rw=randwrite --norandommap). --cpu N runs
every variant under `taskset -c N` (the same CPU for both tools: on a VM whose disk
interrupts land on one CPU, where the writer runs changes what touching its buffers costs).
--device PATH writes the first --size bytes of that block device instead of a file in --dir
(its contents are destroyed; iopulse gets --force). A loop device over a file on a tmpfs is
a device whose speed does not depend on a hypervisor's caches:
  mount -t tmpfs -o size=1200m tmpfs /mnt/rt && truncate -s 1G /mnt/rt/back
  scripts/compare-writes.py --new target/release/iopulse --controls --device "$(losetup -f --show /mnt/rt/back)"

--pairs N: the fio comparison alone, new against fio with its defaults in N interleaved
pairs, A B then B A (new first in even pairs, fio first in odd ones); prints per workload
the median IOPS of each, the median of the pairs' IOPS ratios, and the median CPU per write
of each (what docs/performance.md quotes), and one table row per workload at the end.
--layout SIZE: instead, lays out a new file of SIZE for a read run with each tool, in
--reps interleaved pairs (iopulse FILE --file-size SIZE --duration 10ms, against fio's
layout of the same file, fio --rw=read --size SIZE --runtime=10ms, whose own read run is as
short); prints wall time and system CPU of each (from wait4), the file removed after each.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("--new", required=True)
p.add_argument("--base")
p.add_argument("--reps", type=int, default=5)
p.add_argument("--duration", default="3s")
p.add_argument("--size", default="1G")
p.add_argument("--dir", default=os.environ.get("TMPDIR", "/tmp"))
p.add_argument("--cpu", help="pin every variant (both tools) to this CPU with taskset")
p.add_argument("--controls", action="store_true", help="also run new-keyed, fio-zeros and fio-refill")
p.add_argument("--device", help="write this block device (destroys its contents) instead of a file in --dir")
p.add_argument("--workloads", default="libaio:128k:8,io_uring:128k:8,libaio:1m:4,io_uring:1m:4,sync:16m:1")
p.add_argument("--pairs", type=int, help="new against fio only, in this many A B / B A pairs")
p.add_argument("--layout", help="compare laying out a new file of this size instead (wall, system CPU)")
a = p.parse_args()

if a.device:
    path = a.device
else:
    fd, path = tempfile.mkstemp(prefix="compare-writes.", suffix=".dat", dir=a.dir)
    os.close(fd)
    os.unlink(path)


def iopulse(binary, engine, bs, qd, pattern=None, rand=False):
    return [binary, path, "--file-size", a.size, "--engine", engine, "--block-size", bs,
            "--queue-depth", qd, "--write-percent", "100", "--direct", "--duration", a.duration,
            "--seed", "1", "--output-format", "json", "--quiet"] + (["--write-pattern", pattern] if pattern else []) \
        + (["--random"] if rand else []) + (["--force"] if a.device else [])


def fio(engine, bs, qd, data=(), rand=False):
    rw = ["--rw=randwrite", "--norandommap"] if rand else ["--rw=write"]
    return ["fio", "--name=compare", f"--filename={path}", f"--size={a.size}", f"--bs={bs}",
            f"--ioengine={'psync' if engine == 'sync' else engine}", f"--iodepth={qd}", *rw,
            "--direct=1", "--thread", "--time_based", f"--runtime={a.duration}", "--lat_percentiles=1",
            "--percentile_list=50", "--output-format=json", *data]


def measure(cmd):
    if a.cpu is not None:
        cmd = ["taskset", "-c", a.cpu] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stderr}")
    j = json.loads(out.stdout[out.stdout.index("{"):])
    if "fio" in cmd[:4]:
        job = j["jobs"][0]
        w = job["write"]
        cpu = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] * 1e6 / max(w["total_ios"], 1)
        return w["iops"], cpu, w["lat_ns"]["percentile"]["50.000000"]
    return j["total"]["iops"], j["cpu"]["workers_per_io_ns"], j["write"]["latency_ns"]["p50"]


def timed(cmd):
    """Runs cmd; returns (wall seconds, system CPU seconds of it and its children)."""
    import resource, time
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{proc.stderr.read().decode()}")
    return wall, usage.ru_stime


def layout_pairs():
    """--layout: a new file of --layout bytes laid out by each tool, A B / B A."""
    cmds = {"iopulse": [a.new, path, "--file-size", a.layout, "--duration", "10ms", "--quiet"],
            "fio": ["fio", "--name=layout", f"--filename={path}", f"--size={a.layout}", "--rw=read",
                    "--time_based", "--runtime=10ms", "--thread", "--output-format=json"]}
    got = {k: [] for k in cmds}
    for r in range(a.reps):
        for k in (["iopulse", "fio"] if r % 2 == 0 else ["fio", "iopulse"]):
            if os.path.exists(path):
                os.unlink(path)
            subprocess.run(["sync"], check=True)
            got[k].append(timed(cmds[k]))
            os.unlink(path)
    print(f"layout of a new {a.layout} file for a read run, {a.reps} interleaved pairs (wall s, system CPU s)")
    for k, v in got.items():
        print(f"  {k:8} wall {' '.join(f'{w:6.2f}' for w, _ in v)}  median {statistics.median(w for w, _ in v):6.2f}"
              f"   sys {' '.join(f'{s:6.2f}' for _, s in v)}  median {statistics.median(s for _, s in v):6.2f}")
    for k, cmd in cmds.items():
        print(f"  $ {' '.join(cmd)}")


def pairs_run():
    """--pairs: new against fio's defaults, A B / B A, per workload."""
    rows = []
    for w in a.workloads.split(","):
        engine, bs, qd, *rest = w.split(":")
        rand = rest == ["rand"]
        cmds = {"new": iopulse(a.new, engine, bs, qd, rand=rand), "fio": fio(engine, bs, qd, rand=rand)}
        got = {"new": [], "fio": []}
        for r in range(a.pairs):
            for k in (["new", "fio"] if r % 2 == 0 else ["fio", "new"]):
                got[k].append(measure(cmds[k]))
        ratio = statistics.median(n[0] / f[0] for n, f in zip(got["new"], got["fio"]))
        med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in got.items()}
        what = f"{engine} {bs} QD {qd}{' random' if rand else ''}"
        print(f"\n== {what} ({a.pairs} pairs A B / B A)")
        for k in ("new", "fio"):
            print(f"  {k:4} IOPS {med[k][0]:9.1f} (each: {' '.join(f'{x[0]:.0f}' for x in got[k])})"
                  f"  CPU/write {med[k][1] / 1000:8.1f} us  p50 {med[k][2] / 1000:8.1f} us")
        print(f"  new / fio: {ratio:.3f} (pairs: {' '.join(f'{n[0] / f[0]:.2f}' for n, f in zip(got['new'], got['fio']))})")
        for k, cmd in cmds.items():
            print(f"  $ {' '.join(cmd)}")
        rows.append(f"| {what} | {med['new'][0]:,.0f} | {med['fio'][0]:,.0f} | {ratio:.3f} | "
                    f"{med['new'][1] / 1000:.1f} | {med['fio'][1] / 1000:.1f} |")
    print("\n| workload | IOPS iopulse | IOPS fio | iopulse / fio | CPU per write iopulse (µs) | fio (µs) |")
    print("|---|---:|---:|---:|---:|---:|")
    print("\n".join(rows))


try:
    if a.layout:
        print(f"fio: {subprocess.run(['fio', '--version'], capture_output=True, text=True).stdout.strip()}")
        layout_pairs()
        sys.exit(0)
    if not a.device:
        # Lay the file out once (full size, so no run extends it).
        subprocess.run([a.new, path, "--file-size", a.size, "--duration", "10ms", "--quiet"], check=True,
                       stdout=subprocess.DEVNULL)
    print(f"{'device' if a.device else 'file'} {path} ({a.size}), {a.pairs or a.reps} reps x {a.duration}, "
          f"interleaved; fio: {subprocess.run(['fio', '--version'], capture_output=True, text=True).stdout.strip()}")
    if a.pairs:
        pairs_run()
        sys.exit(0)
    for w in a.workloads.split(","):
        engine, bs, qd, *rest = w.split(":")
        rand = rest == ["rand"]
        variants = {"new": iopulse(a.new, engine, bs, qd, rand=rand),
                    "new-zeros": iopulse(a.new, engine, bs, qd, "zeros", rand),
                    "new-ones": iopulse(a.new, engine, bs, qd, "ones", rand)}
        if a.base:
            variants["base"] = iopulse(a.base, engine, bs, qd, rand=rand)
        variants["fio"] = fio(engine, bs, qd, rand=rand)
        if a.controls:
            variants["new-random"] = iopulse(a.new, engine, bs, qd, "random", rand)
            variants["new-keyed"] = iopulse(a.new, engine, bs, qd, "keyed", rand)
            variants["fio-zeros"] = fio(engine, bs, qd, ["--zero_buffers=1"], rand)
            variants["fio-refill"] = fio(engine, bs, qd, ["--refill_buffers=1"], rand)
        got = {k: [] for k in variants}
        for _ in range(a.reps):
            for k, cmd in variants.items():
                got[k].append(measure(cmd))
        med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in got.items()}

        def ratio(k, to):
            return statistics.median(got[k][r][0] / got[to][r][0] for r in range(a.reps))

        print(f"\n== {engine} {bs} QD {qd} (medians of {a.reps}; ratios: median of each repetition's ratio)")
        for k, (iops, cpu, p50) in med.items():
            zeros = "fio-zeros" if k.startswith("fio") else "new-zeros"
            own = f"x own zeros {ratio(k, zeros):.3f}" if zeros in got else " " * 17
            print(f"  {k:10} IOPS {iops:9.1f}  x fio {ratio(k, 'fio'):.3f}  {own}  "
                  f"CPU/write {cpu / 1000:8.1f} us  p50 {p50 / 1000:8.1f} us")
        for k, cmd in variants.items():
            print(f"  $ {' '.join(cmd)}")
finally:
    if not a.device and os.path.exists(path):
        os.unlink(path)

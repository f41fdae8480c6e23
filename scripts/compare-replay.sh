#!/usr/bin/env bash
# Trace replay against fio's read_iolog (docs/replay.md): one fio iolog v3 of S seconds (an
# I/O every millisecond, 4 KiB reads and writes at random offsets of a 64 MiB file),
# replayed N times by each tool on the null engine, interleaved. Each tool records when it
# issued each I/O: iopulse in its --write-iolog (microseconds), fio in its latency log
# (--write_lat_log with log_offset: milliseconds; fio refuses write_iolog while it replays),
# and both are judged the same way: the duration error (the span from the first I/O issued
# to the last against the trace's) and each I/O's lag (its issue time against its timestamp,
# both counted from the first I/O), p50/p99/max.
#   scripts/compare-replay.sh [SECONDS] [N]        (default: 10 s, 3 rounds)
# Set IOPULSE to the binary (default: target/release/iopulse, else target/debug/iopulse).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${IOPULSE:-target/release/iopulse}
[ -x "$bin" ] || bin=target/debug/iopulse
bin=$(realpath "$bin")
seconds=${1:-10}
n=${2:-3}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
target="$dir/t.dat"

python3 - "$dir/trace.iolog" "$target" "$seconds" <<'PY'
import random, sys
path, target, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(1)
with open(path, "w") as f:
    f.write(f"fio version 3 iolog\n0 {target} add\n0 {target} open\n")
    for i in range(seconds * 1000 + 1):
        op = "write" if rng.random() < 0.3 else "read"
        f.write(f"{i * 1000} {target} {op} {rng.randrange(16384) * 4096} 4096\n")
    f.write(f"{seconds * 1000000 + 1} {target} close\n")
PY
judge() {
    python3 - "$dir/trace.iolog" "$1" "$2" <<'PY'
import sys
def issued(path):
    times = []
    for line in open(path):
        f = line.replace(",", " ").split()
        if len(f) == 5 and f[2] in ("read", "write"):
            times.append(int(f[0]))
        elif len(f) == 6:
            # fio's latency log: completion time (ms), latency (ns), ...: the issue, to 1 ms.
            times.append(int(f[0]) * 1000 - int(f[1]) // 1000)
    return times
trace, out = issued(sys.argv[1]), issued(sys.argv[2])
assert len(trace) == len(out), f"{len(out)} I/Os issued of {len(trace)}"
span_t, span_o = trace[-1] - trace[0], out[-1] - out[0]
lags = sorted(max(0, (o - out[0]) - (t - trace[0])) for t, o in zip(trace, out))
pick = lambda q: lags[min(len(lags) - 1, int(q * len(lags)))]
print(f"{sys.argv[3]:8} duration error {100 * (span_o - span_t) / span_t:+.3f} % · lag p50 {pick(0.5)} µs · p99 {pick(0.99)} µs · max {lags[-1]} µs")
PY
}
for r in $(seq 1 "$n"); do
    "$bin" replay "$dir/trace.iolog" "$target" --engine null --file-size 64M --write-iolog "$dir/ip.iolog" -q >/dev/null 2>"$dir/err" || { cat "$dir/err" >&2; exit 1; }
    judge "$dir/ip.iolog" iopulse
    (cd "$dir" && fio --name=r --read_iolog="$dir/trace.iolog" --ioengine=null --write_lat_log="$dir/fio" \
        --log_offset=1 --output=/dev/null >/dev/null 2>&1)
    judge "$dir/fio_lat.1.log" fio
done

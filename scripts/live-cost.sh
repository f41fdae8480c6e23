#!/usr/bin/env bash
# What the time series and the live line cost, on the null engine (QD 1): interleaved
# pairs of runs of DURATION seconds, without and with --interval 1s (time series in the
# JSON), then --quiet against the live line on a pseudo-terminal (util-linux `script`).
# Prints each pair and the median ratios. Run on a quiet machine.
#   scripts/live-cost.sh [PAIRS=7] [DURATION=3]
set -euo pipefail
PAIRS=${1:-7}
DURATION=${2:-3}
IOPULSE=${IOPULSE:-$(dirname "$0")/../target/release/iopulse}
[[ -x $IOPULSE ]] || { echo "live-cost: build first (cargo build --release) or set IOPULSE" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
F=$WORK/target.dat
truncate -s 256M "$F"
iops() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['total']['iops'])" "$1"; }
: >"$WORK/pairs"
for i in $(seq 1 "$PAIRS"); do
    "$IOPULSE" "$F" --engine null --duration "$DURATION" --quiet --json "$WORK/a.json" >/dev/null
    "$IOPULSE" "$F" --engine null --duration "$DURATION" --quiet --interval 1s --json "$WORK/b.json" >/dev/null
    "$IOPULSE" "$F" --engine null --duration "$DURATION" --quiet --json "$WORK/c.json" >/dev/null
    script -q -e -c "$IOPULSE $F --engine null --duration $DURATION --json $WORK/d.json" /dev/null >/dev/null
    echo "$(iops "$WORK/a.json") $(iops "$WORK/b.json") $(iops "$WORK/c.json") $(iops "$WORK/d.json")" | tee -a "$WORK/pairs"
done
python3 - "$WORK/pairs" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1])]
for name, a, b in [("--interval 1s", 0, 1), ("live line", 2, 3)]:
    x = [r[a] for r in rows]; y = [r[b] for r in rows]
    print(f"{name}: median {statistics.median(x)/1e6:.2f} M IOPS without, {statistics.median(y)/1e6:.2f} M with, "
          f"ratio {statistics.median(y)/statistics.median(x):.3f}, pairwise median {statistics.median(b_/a_ for a_, b_ in zip(x, y)):.3f}")
PY

#!/usr/bin/env bash
# A sweep: queue depth x block size x threads, several repetitions each, one CSV
# row per run (iopulse --csv), then one chart of IOPS against queue depth per
# thread count, one line per block size (iopulse plot --sweep).
#
# Settings (environment variables); the defaults finish in about a minute:
#   TARGET        file to run on                  [$TMPDIR/iopulse-sweep.dat]
#   FILE_SIZE     its size                        [256M]
#   ENGINE        I/O engine                      [io_uring when this iopulse has it, else sync]
#   QUEUE_DEPTHS  queue depths                    ["1 4 16"]
#   BLOCK_SIZES   block sizes                     ["4k 64k"]
#   THREADS       worker counts                   ["1 2"]
#   REPS          repetitions of each point       [2]
#   DURATION      length of each run              [1s]
#   CSV           the table                       [sweep.csv]
#   PLOT_DIR      where the charts go (empty: no charts) [sweep-plots]
#   IOPULSE       the iopulse binary              [iopulse]
# Further arguments are passed on to every run, e.g. ./sweep.sh --direct --write-percent 30
#
# Repetitions are the outer loop, so that drift (a warming cache, a device
# heating up) spreads over every point instead of biasing some of them.
set -euo pipefail
IOPULSE=${IOPULSE:-iopulse}
TARGET=${TARGET:-${TMPDIR:-/tmp}/iopulse-sweep.dat}
FILE_SIZE=${FILE_SIZE:-256M}
QUEUE_DEPTHS=${QUEUE_DEPTHS:-1 4 16}
BLOCK_SIZES=${BLOCK_SIZES:-4k 64k}
THREADS=${THREADS:-1 2}
REPS=${REPS:-2}
DURATION=${DURATION:-1s}
CSV=${CSV:-sweep.csv}
PLOT_DIR=${PLOT_DIR-sweep-plots}
if [[ -z ${ENGINE:-} ]]; then
    if "$IOPULSE" --help | grep -q io_uring; then ENGINE=io_uring; else ENGINE=sync; fi
fi
if [[ $ENGINE == sync ]]; then
    echo "sweep: engine sync completes one I/O at a time: every queue depth runs at depth 1" >&2
fi

read -r -a qds <<<"$QUEUE_DEPTHS"
read -r -a bss <<<"$BLOCK_SIZES"
read -r -a ths <<<"$THREADS"
total=$((REPS * ${#ths[@]} * ${#bss[@]} * ${#qds[@]}))
n=0
for rep in $(seq "$REPS"); do
    for threads in "${ths[@]}"; do
        for bs in "${bss[@]}"; do
            for qd in "${qds[@]}"; do
                n=$((n + 1))
                echo "sweep: [$n/$total] rep $rep · $threads threads · bs $bs · QD $qd" >&2
                "$IOPULSE" "$TARGET" --file-size "$FILE_SIZE" --engine "$ENGINE" --random \
                    --threads "$threads" --block-size "$bs" --queue-depth "$qd" \
                    --duration "$DURATION" --csv "$CSV" --quiet "$@" >/dev/null
            done
        done
    done
done
echo "sweep: $total runs appended to $CSV" >&2

if [[ -n $PLOT_DIR ]]; then
    for threads in "${ths[@]}"; do
        "$IOPULSE" plot --sweep "$CSV" --x queue_depth --y iops --by block_size \
            --where "threads=$threads" --where "engine=$ENGINE" --out "$PLOT_DIR"
    done
fi

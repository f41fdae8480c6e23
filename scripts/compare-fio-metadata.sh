#!/usr/bin/env bash
# compare-fio-metadata.sh: iopulse's metadata phases beside fio's filecreate, filestat
# and filedelete engines, on the same shape of tree (FILES files of 4 KiB, or empty for
# create, in one directory), one thread and two, interleaved (fio, iopulse sync,
# iopulse io_uring at depth 32, then again) for REPS repetitions. Prints the median
# operations per second of each and the ratio iopulse sync / fio. See
# docs/performance.md for the method and the figures.
#
# Usage: scripts/compare-fio-metadata.sh DIR [FILES] [REPS]
#   DIR    a directory on the filesystem to measure (a subdirectory is made and removed)
#   FILES  files per run (default 50000)        REPS  repetitions (default 3)
# Env: IOPULSE (the binary, default target/release/iopulse), FIO (default fio),
#      THREADS (default "1 2"), OPS (default "filecreate:create filestat:stat filedelete:unlink").
#
# Equivalences (fio -> iopulse):
#   --ioengine=filecreate --filesize=4k --create_on_open=1 (open O_CREAT, close; no data)
#       -> --meta-phases create --file-size-dist 0 (openat O_CREAT|O_EXCL, close)
#   --ioengine=filestat --filesize=4k --time_based --runtime=3s (fio cycles through the files)
#       -> --meta-mix stat=1 --duration 3s (stat of a random file of the tree; set-up makes
#          4 KiB files)
#   --ioengine=filedelete --filesize=4k    -> --meta-phases unlink (set-up makes 4 KiB files)
#   --numjobs=T --thread --group_reporting, nrfiles=FILES/T each, one directory
#       -> --threads T --depth 0 (every file in one directory)
#   fio's figure: the group's iops; iopulse's: the phase's ops_per_sec (its window, from
#   the workers' common start to the last one's end).
set -euo pipefail
DIR=${1:?usage: $0 DIR [FILES] [REPS]}
FILES=${2:-50000}
REPS=${3:-3}
IOPULSE=${IOPULSE:-$(dirname "$0")/../target/release/iopulse}
FIO=${FIO:-fio}
THREADS=${THREADS:-"1 2"}
WORK="$DIR/compare-meta.$$"
trap 'rm -rf "$WORK"' EXIT

fio_run() { # engine threads -> iops
    local engine=$1 t=$2
    rm -rf "$WORK/fio" && mkdir -p "$WORK/fio"
    local extra=()
    [ "$engine" = filecreate ] && extra=(--create_on_open=1 --fallocate=none)
    [ "$engine" = filestat ] && extra=(--time_based --runtime=3s)
    "$FIO" --name=m --ioengine="$engine" --directory="$WORK/fio" --nrfiles=$((FILES / t)) --filesize=4k \
        --bs=4k --openfiles=1 --numjobs="$t" --thread --group_reporting "${extra[@]}" --output-format=json |
        python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; print("%.0f" % (j["read"]["iops"] + j["write"]["iops"]))'
    rm -rf "$WORK/fio"
}

iopulse_run() { # phase threads engine -> ops/s
    local phase=$1 t=$2 engine=$3 sizes=4k what=(--meta-phases "$1")
    [ "$phase" = create ] && sizes=0
    [ "$phase" = stat ] && what=(--meta-mix stat=1 --duration 3s)
    "$IOPULSE" "$WORK/iop" --files "$FILES" --depth 0 --file-size-dist "$sizes" --threads "$t" \
        "${what[@]}" --engine "$engine" --queue-depth 32 --output-format json --quiet |
        python3 -c 'import json,sys; p=json.load(sys.stdin)["phases"][-1]; print("%.0f" % p["ops_per_sec"])'
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

mkdir -p "$WORK"
printf "%-8s %-3s %10s %12s %14s %8s\n" op thr fio iopulse_sync iopulse_uring32 sync/fio
for pair in ${OPS:-filecreate:create filestat:stat filedelete:unlink}; do
    engine=${pair%%:*} phase=${pair#*:}
    for t in $THREADS; do
        f=() s=() u=()
        for _ in $(seq "$REPS"); do
            f+=("$(fio_run "$engine" "$t")")
            s+=("$(iopulse_run "$phase" "$t" sync)")
            u+=("$(iopulse_run "$phase" "$t" io_uring)")
        done
        mf=$(printf "%s\n" "${f[@]}" | median)
        ms=$(printf "%s\n" "${s[@]}" | median)
        mu=$(printf "%s\n" "${u[@]}" | median)
        printf "%-8s %-3s %10s %12s %14s %8.2f\n" "$phase" "$t" "$mf" "$ms" "$mu" "$(echo "$ms / $mf" | bc -l)"
    done
done

#!/usr/bin/env bash
# Instructions per I/O of the worker thread, as docs/performance.md counts them: callgrind
# (user-space instructions, repeatable whatever else the machine does), the thread with the
# most instructions, a run of 120,000 I/Os minus one of 20,000, divided by 100,000, so that
# set-up and layout cancel out.
#
#   scripts/instructions-per-io.sh BINARY FILE            # every workload of the table
#   scripts/instructions-per-io.sh BINARY FILE null 1     # one engine at one depth
#
# FILE: a 256 MiB file on a filesystem that takes O_DIRECT (created if missing).
set -euo pipefail
bin=$1
file=$2
shift 2
command -v valgrind >/dev/null || { echo "valgrind is needed (Debian: valgrind)" >&2; exit 2; }
[ -e "$file" ] || "$bin" "$file" --file-size 256M --duration 0 --quiet >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# The worker thread's instructions of one run (the thread with the most).
count() {
    local ops=$1
    shift
    rm -f "$out"/cg.*
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out/cg.%p" \
        "$bin" "$file" "$@" --random --seed 1 --ops "$ops" --quiet >/dev/null 2>"$out/log" \
        || { cat "$out/log" >&2; exit 1; }
    for f in "$out"/cg.*; do
        awk '/^summary:/ {print $2}' "$f"
    done | sort -n | tail -1
}

per_io() {
    local big small
    big=$(count 120000 "$@")
    small=$(count 20000 "$@")
    echo $(( (big - small) / 100000 ))
}

workloads=(
    "null QD 1|--engine null --queue-depth 1"
    "null QD 32|--engine null --queue-depth 32"
    "sync QD 1 (cached reads)|--engine sync --queue-depth 1"
    "io_uring QD 1, O_DIRECT|--engine io_uring --queue-depth 1 --direct"
    "io_uring QD 8, O_DIRECT|--engine io_uring --queue-depth 8 --direct"
    "libaio QD 8, O_DIRECT|--engine libaio --queue-depth 8 --direct"
    "null QD 8, 30 % writes|--engine null --queue-depth 8 --write-percent 30"
)
if [ $# -ge 2 ]; then
    workloads=("$1 QD $2|--engine $1 --queue-depth $2 ${*:3}")
fi
for w in "${workloads[@]}"; do
    name=${w%%|*}
    # shellcheck disable=SC2086
    echo "$name: $(per_io ${w#*|}) instructions per I/O"
done

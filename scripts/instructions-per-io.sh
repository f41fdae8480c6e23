#!/usr/bin/env bash
# Instructions per I/O of the worker thread, as docs/performance.md counts them: callgrind
# (user-space instructions, repeatable whatever else the machine does), per thread, a run of
# 120,000 I/Os minus one of 20,000, divided by 100,000, so that set-up and layout cancel
# out: the worker is the thread whose count grows most between the two runs (threads are
# numbered in the order they start, the same in both). Taking each run's busiest thread
# instead, as this script did until 2026-12-05, subtracted the main thread's count of the
# short run (its set-up outweighs a worker's 20,000 I/Os) from the worker's of the long one.
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

# Each thread's instructions of one run, one line per thread: "NUMBER COUNT".
count() {
    local ops=$1
    shift
    rm -f "$out"/cg.*
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out/cg.%p" \
        "$bin" "$file" "$@" --random --seed 1 --ops "$ops" --quiet >/dev/null 2>"$out/log" \
        || { cat "$out/log" >&2; exit 1; }
    for f in "$out"/cg.*-*; do
        echo "${f##*-} $(awk '/^summary:/ {print $2}' "$f")"
    done
}

per_io() {
    local big small
    big=$(count 120000 "$@")
    small=$(count 20000 "$@")
    # The thread that grew most: the worker.
    join <(echo "$big" | sort) <(echo "$small" | sort) | awk '{d = $2 - $3; if (d > m) m = d} END {printf "%d\n", m / 100000}'
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

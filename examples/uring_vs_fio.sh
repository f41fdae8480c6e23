#!/usr/bin/env bash
# iopulse --engine io_uring against fio --ioengine=io_uring, interleaved
# (A B, B A, A B, ...), same file, same size, same block size and depth, 1 thread.
# Prints one line per run and the median per case:
#   IOPS, CPU time per I/O (worker user+sys / I/Os; for fio (usr_cpu+sys_cpu)% x runtime / I/Os),
#   and the median of the per-pair ratios iopulse/fio.
#
# usage: examples/uring_vs_fio.sh [FILE] [SIZE] [PAIRS] [SECONDS] [CASE...]
#   CASE: warm32 warm32batch warm32fixed direct32 warm1 (default: all but warm32fixed)
# env:   IOPULSE=path/to/iopulse (default target/release/iopulse)
set -euo pipefail
FILE=${1:-/tmp/iopulse-vs-fio.dat}
SIZE=${2:-1G}
PAIRS=${3:-5}
SECS=${4:-5}
shift $(( $# < 4 ? $# : 4 ))
CASES=("$@")
[ ${#CASES[@]} -eq 0 ] && CASES=(warm32 warm32batch direct32 warm1)
IOPULSE=${IOPULSE:-target/release/iopulse}

"$IOPULSE" "$FILE" --file-size "$SIZE" --duration 0.1 --quiet >/dev/null   # lay the file out
cat "$FILE" >/dev/null                                                      # warm the page cache

fio_common=(--name=cmp --ioengine=io_uring --rw=randread --bs=4k --numjobs=1 --time_based
            --runtime="$SECS" --filename="$FILE" --size="$SIZE" --norandommap --output-format=json)

warm() { cat "$FILE" >/dev/null; }   # before every buffered run: a direct fio run invalidates the cache

iop() { # args... -> "iops cpu_ns_per_io"
  warm
  "$IOPULSE" "$FILE" --engine io_uring --random --duration "$SECS" --output-format json --quiet "$@" |
    python3 -c 'import json,sys; r=json.load(sys.stdin); print("%.0f %.0f" % (r["total"]["iops"], r["cpu"]["workers_per_io_ns"]))'
}
fio_run() {
  warm
  fio "${fio_common[@]}" "$@" |
    python3 -c 'import json,sys
j=json.load(sys.stdin)["jobs"][0]; r=j["read"]
print("%.0f %.0f" % (r["iops"], (j["usr_cpu"]+j["sys_cpu"])/100*r["runtime"]*1e6/r["total_ios"]))'
}

for case in "${CASES[@]}"; do
  case $case in
    warm32)      A=(--queue-depth 32 --no-invalidate); B=(--iodepth=32 --invalidate=0) ;;
    warm32batch) A=(--queue-depth 32 --no-invalidate); B=(--iodepth=32 --invalidate=0 --iodepth_batch_submit=32 --iodepth_batch_complete_min=1 --iodepth_batch_complete_max=32) ;;
    warm32fixed) A=(--queue-depth 32 --no-invalidate); B=(--iodepth=32 --invalidate=0 --iodepth_batch_submit=32 --iodepth_batch_complete_min=1 --iodepth_batch_complete_max=32 --fixedbufs --registerfiles) ;;
    direct32)    A=(--queue-depth 32 --direct);  B=(--iodepth=32 --direct=1) ;;
    warm1)       A=(--queue-depth 1 --no-invalidate);  B=(--iodepth=1 --invalidate=0) ;;
    *) echo "unknown case $case" >&2; exit 2 ;;
  esac
  echo "## $case"
  echo "#  A: $IOPULSE $FILE --engine io_uring --random --duration $SECS ${A[*]}"
  echo "#  B: fio ${fio_common[*]} ${B[*]}"
  ratios=(); cpuratios=(); ai=(); bi=(); ac=(); bc=()
  for i in $(seq "$PAIRS"); do
    # A B, then B A: neither tool always runs first.
    if (( i % 2 )); then
      read -r a_iops a_cpu < <(iop "${A[@]}")
      read -r b_iops b_cpu < <(fio_run "${B[@]}")
    else
      read -r b_iops b_cpu < <(fio_run "${B[@]}")
      read -r a_iops a_cpu < <(iop "${A[@]}")
    fi
    echo "pair $i: iopulse ${a_iops} IOPS ${a_cpu} ns/IO | fio ${b_iops} IOPS ${b_cpu} ns/IO"
    ai+=("$a_iops"); bi+=("$b_iops"); ac+=("$a_cpu"); bc+=("$b_cpu")
    ratios+=("$(python3 -c "print($a_iops/$b_iops)")")
    cpuratios+=("$(python3 -c "print($a_cpu/$b_cpu)")")
  done
  python3 - "${ai[*]}" "${bi[*]}" "${ac[*]}" "${bc[*]}" "${ratios[*]}" "${cpuratios[*]}" <<'PY'
import statistics as s, sys
ai, bi, ac, bc, r, c = ([float(x) for x in a.split()] for a in sys.argv[1:])
print("median: iopulse %.0f IOPS %.0f ns/IO | fio %.0f IOPS %.0f ns/IO | IOPS ratio %.3f (pairs %s) | CPU/IO ratio %.3f"
      % (s.median(ai), s.median(ac), s.median(bi), s.median(bc), s.median(r),
         " ".join("%.2f" % x for x in r), s.median(c)))
PY
done

#!/usr/bin/env bash
# compare-kdiskmark.sh: each test of iopulse's default profile beside fio given KDiskMark's
# own command line (KDiskMark 3.x, src/helper.cpp, its default settings), on the same file,
# interleaved (fio, iopulse, iopulse, fio, ...) for PAIRS pairs. Prints each test's median
# MB/s (10^6 bytes/s) of each tool, the ratio iopulse / fio, the CPU per I/O of each, and
# KDiskMark's own figure (fio's KiB/s ÷ 1000, which it labels MB/s). docs/usage.md has
# the method and the figures.
#
# Usage: scripts/compare-kdiskmark.sh FILE [PAIRS]
#   FILE   the test file (made 1 GiB by fio --create_only=1, as KDiskMark does; removed after)
#   PAIRS  pairs per test (default 3)
# Env: IOPULSE (default target/release/iopulse), FIO (default fio), TESTS (default every
#      test: "SEQ1M-Q8T1 SEQ1M-Q1T1 RND4K-Q32T1 RND4K-Q1T1"), DIRS (default "read write"),
#      SIZE_MIB (default 1024), RUNTIME_S (default 5).
#
# fio, as KDiskMark runs it per test and pass:
#   fio --output-format=json --ioengine=libaio --randrepeat=0 --refill_buffers=0
#       --end_fsync=1 --direct=1 --rwmixread=70 --filename=FILE --name=RW --size=1024m
#       --zero_buffers=0 --bs=BSk --runtime=5 --rw=RW --iodepth=QD --numjobs=1
#       --group_reporting
# iopulse, as the default profile's step:
#   iopulse FILE --file-size 1G --engine libaio --direct --buffer-pages base
#       --completion-wait sleep --io-limit 100% --duration 5s --block-size BS --queue-depth QD [--random]
#       [--write-percent 100 --end-fsync]
set -euo pipefail
FILE=${1:?usage: $0 FILE [PAIRS]}
PAIRS=${2:-3}
IOPULSE=${IOPULSE:-$(dirname "$0")/../target/release/iopulse}
FIO=${FIO:-fio}
TESTS=${TESTS:-"SEQ1M-Q8T1 SEQ1M-Q1T1 RND4K-Q32T1 RND4K-Q1T1"}
DIRS=${DIRS:-"read write"}
SIZE_MIB=${SIZE_MIB:-1024}
RUNTIME_S=${RUNTIME_S:-5}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"; rm -f "$FILE"' EXIT

"$FIO" --output-format=json --create_only=1 --filename="$FILE" --size="${SIZE_MIB}m" \
  --zero_buffers=0 --name=prepare >/dev/null

# fio's figures of one run: MB/s, KDiskMark's MB/s, CPU µs per I/O (usr+sys over I/Os).
fio_run() { # TEST DIR
  local bs qd rw random
  read -r bs qd random <<<"$(shape "$1")"
  rw=$2
  [[ $random == 1 ]] && rw=rand$2
  "$FIO" --output-format=json --ioengine=libaio --randrepeat=0 --refill_buffers=0 \
    --end_fsync=1 --direct=1 --rwmixread=70 --filename="$FILE" --name="$rw" \
    --size="${SIZE_MIB}m" --zero_buffers=0 --bs="${bs}k" --runtime="$RUNTIME_S" --rw="$rw" \
    --iodepth="$qd" --numjobs=1 --group_reporting >"$OUT/fio.json"
  python3 - "$OUT/fio.json" "$2" <<'EOF'
import json, sys
job = json.load(open(sys.argv[1]))["jobs"][0]
side = job[sys.argv[2]]
ios = max(side["total_ios"], 1)
cpu_s = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] / 1000
print(f'{side["bw_bytes"] / 1e6:.1f} {side["bw"] / 1000:.1f} {cpu_s / ios * 1e6:.2f}')
EOF
}

# iopulse's figures of one run: MB/s, CPU µs per I/O (its workers').
iopulse_run() { # TEST DIR
  local bs qd random args
  read -r bs qd random <<<"$(shape "$1")"
  args=("$FILE" --file-size "${SIZE_MIB}M" --engine libaio --direct --buffer-pages base
    --completion-wait sleep --io-limit 100% --duration "${RUNTIME_S}s" --block-size "${bs}k" --queue-depth "$qd"
    --json "$OUT/iopulse.json" --quiet)
  [[ $random == 1 ]] && args+=(--random)
  [[ $2 == write ]] && args+=(--write-percent 100 --end-fsync)
  "$IOPULSE" "${args[@]}" >/dev/null
  python3 - "$OUT/iopulse.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(f'{r["total"]["bw_bytes_per_sec"] / 1e6:.1f} {r["cpu"]["workers_per_io_ns"] / 1e3:.2f}')
EOF
}

shape() { # TEST -> block KiB, depth, random
  case $1 in
    SEQ1M-Q8T1) echo "1024 8 0" ;; SEQ1M-Q1T1) echo "1024 1 0" ;;
    RND4K-Q32T1) echo "4 32 1" ;; RND4K-Q1T1) echo "4 1 1" ;;
    *) echo "unknown test $1" >&2; exit 2 ;;
  esac
}

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }

printf '%-12s %-5s %10s %10s %7s %10s %10s %10s\n' test dir "fio MB/s" "iop MB/s" ratio \
  "KDM MB/s" "fio µs/IO" "iop µs/IO"
for dir in $DIRS; do
  for test in $TESTS; do
    : >"$OUT/f" && : >"$OUT/i" && : >"$OUT/r" && : >"$OUT/k" && : >"$OUT/fc" && : >"$OUT/ic"
    for ((p = 0; p < PAIRS; p++)); do
      # A B, then B A: neither tool always runs first.
      for who in $( ((p % 2 == 0)) && echo "fio iopulse" || echo "iopulse fio"); do
        if [[ $who == fio ]]; then
          read -r mb kdm cpu <<<"$(fio_run "$test" "$dir")"
          echo "$mb" >>"$OUT/f"; echo "$kdm" >>"$OUT/k"; echo "$cpu" >>"$OUT/fc"; last_fio=$mb
        else
          read -r mb cpu <<<"$(iopulse_run "$test" "$dir")"
          echo "$mb" >>"$OUT/i"; echo "$cpu" >>"$OUT/ic"; last_iop=$mb
        fi
      done
      awk -v a="$last_iop" -v b="$last_fio" 'BEGIN {printf "%.3f\n", a / b}' >>"$OUT/r"
    done
    printf '%-12s %-5s %10s %10s %7s %10s %10s %10s\n' "$test" "$dir" "$(median <"$OUT/f")" \
      "$(median <"$OUT/i")" "$(median <"$OUT/r")" "$(median <"$OUT/k")" "$(median <"$OUT/fc")" \
      "$(median <"$OUT/ic")"
  done
done

#!/usr/bin/env bash
# OLTP: small random I/O on a hot set (zipf), 70 % reads / 30 % writes, several
# workers, O_DIRECT, reproducible. Watch p99/p99.9 more than IOPS.
set -euo pipefail
target=${1:-${TMPDIR:-/tmp}/iopulse-example.dat}
shift || true
exec iopulse "$target" --file-size 1G --direct --random --distribution zipf --zipf-theta 1.2 \
    --block-size 8k --write-percent 30 --threads 4 --seed 42 --duration 30s "$@"

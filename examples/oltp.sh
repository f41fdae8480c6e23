#!/usr/bin/env bash
# OLTP: small random I/O on a hot set (zipf), 70 % reads / 30 % writes, several
# workers, O_DIRECT, reproducible. Watch p99/p99.9 more than IOPS.
# The workload is the shipped profile `oltp` (`iopulse profiles oltp` prints it).
set -euo pipefail
target=${1:-${TMPDIR:-/tmp}/iopulse-example.dat}
shift || true
exec iopulse --profile oltp "$target" "$@"

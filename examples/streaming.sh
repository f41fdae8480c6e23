#!/usr/bin/env bash
# 1 MiB sequential reads, then sequential writes: streaming bandwidth.
# The workload is the shipped profile `streaming` (`iopulse profiles streaming` prints it).
set -euo pipefail
target=${1:-${TMPDIR:-/tmp}/iopulse-example.dat}
shift || true
exec iopulse --profile streaming "$target" "$@"

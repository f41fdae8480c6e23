#!/usr/bin/env bash
# Cache / CDN: random reads of objects where 80 % of the requests go to 20 % of
# them (pareto), 64 KiB each, O_DIRECT so the device, not the page cache, serves them.
# The workload is the shipped profile `cache-cdn` (`iopulse profiles cache-cdn` prints it).
set -euo pipefail
target=${1:-${TMPDIR:-/tmp}/iopulse-example.dat}
shift || true
exec iopulse --profile cache-cdn "$target" "$@"

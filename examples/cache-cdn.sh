#!/usr/bin/env bash
# Cache / CDN: random reads of objects where 80 % of the requests go to 20 % of
# them (pareto), 64 KiB each, O_DIRECT so the device, not the page cache, serves them.
set -euo pipefail
target=${1:-${TMPDIR:-/tmp}/iopulse-example.dat}
shift || true
exec iopulse "$target" --file-size 1G --direct --random --distribution pareto --pareto-h 0.8 \
    --block-size 64k --threads 4 --duration 30s "$@"

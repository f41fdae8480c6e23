#!/usr/bin/env bash
# A 70/30 random read/write mix over 4 workers, reproducible with a fixed seed.
set -euo pipefail
target=${1:-${TMPDIR:-/tmp}/iopulse-example.dat}
shift || true
exec iopulse "$target" --file-size 1G --direct --random --write-percent 30 --threads 4 --seed 42 --duration 30s "$@"

#!/usr/bin/env bash
# Write every block of the target exactly once, in a random order, then stop.
set -euo pipefail
target=${1:-${TMPDIR:-/tmp}/iopulse-example.dat}
shift || true
exec iopulse "$target" --file-size 1G --duration 0 --random --write-percent 100 --block-size 64k "$@"

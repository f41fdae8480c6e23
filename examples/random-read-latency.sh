#!/usr/bin/env bash
# 4 KiB O_DIRECT random reads at queue depth 1: the device's latency floor.
set -euo pipefail
target=${1:-${TMPDIR:-/tmp}/iopulse-example.dat}
shift || true
exec iopulse "$target" --file-size 1G --direct --random --block-size 4k --queue-depth 1 --duration 30s "$@"

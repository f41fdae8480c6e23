#!/usr/bin/env bash
# 1 MiB sequential reads, then sequential writes: streaming bandwidth.
set -euo pipefail
target=${1:-${TMPDIR:-/tmp}/iopulse-example.dat}
shift || true
iopulse "$target" --file-size 4G --direct --block-size 1M --duration 20s "$@"
iopulse "$target" --file-size 4G --direct --block-size 1M --write-percent 100 --duration 20s "$@"

#!/usr/bin/env bash
# Integrity pass: write every block exactly once in a random order, each with a
# checksummed header (--verify), then read every block exactly once and check it
# (--duration 0 runs until the region is covered; exit 3 on a mismatch).
# The read pass must read the device, not the page cache the write pass filled:
# it uses O_DIRECT, and each pass starts with the region's cache dropped (the
# default, also if O_DIRECT is refused and the run falls back to buffered I/O;
# the report's `Cache` line says so). Do not add --no-invalidate here.
set -euo pipefail
target=${1:-${TMPDIR:-/tmp}/iopulse-example.dat}
shift || true
iopulse "$target" --file-size 1G --direct --random --write-percent 100 --duration 0 --block-size 64k --verify "$@"
iopulse "$target" --file-size 1G --direct --random --duration 0 --block-size 64k --verify "$@"

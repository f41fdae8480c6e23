#!/usr/bin/env bash
# Integrity pass: write every block exactly once in a random order, each with a
# checksummed header (--verify), then read every block exactly once and check it
# (--duration 0 runs until the region is covered; exit 3 on a mismatch).
# The read pass must read the device, not the page cache the write pass filled:
# it uses O_DIRECT, and each pass starts with the region's cache dropped (the
# default, also if O_DIRECT is refused and the run falls back to buffered I/O;
# the report's `Cache` line says so). Do not add --cache keep here.
# The two passes are the shipped profile `integrity` (`iopulse profiles integrity`
# prints it); the read pass runs only once the write pass has ended.
set -euo pipefail
target=${1:-${TMPDIR:-/tmp}/iopulse-example.dat}
shift || true
exec iopulse --profile integrity "$target" "$@"

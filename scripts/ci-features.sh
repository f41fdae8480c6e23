#!/usr/bin/env bash
# CI for the optional features, built once together (`--features hwloc,mpi`): installs
# what they need from Debian if missing, then runs the tests and clippy with both on.
#   hwloc: hwloc 2.8+ and libudev (libhwloc-dev libudev-dev pkg-config)
#   mpi:   an MPI library and headers, libclang for rsmpi's bindgen (libopenmpi-dev
#          libclang-dev), and mpirun for the cluster tests (openmpi-bin)
# The default build needs none of this (see .ci/run). One build for both features keeps
# CI time down: each feature set recompiles the crate and every test binary.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

PACKAGES=(libhwloc-dev libudev-dev pkg-config libopenmpi-dev libclang-dev openmpi-bin)
missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "== apt-get install ${missing[*]}"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq "${missing[@]}"
fi
if ! pkg-config --atleast-version=2.8 hwloc; then
    echo "hwloc 2.8+ is needed for --features hwloc (found $(pkg-config --modversion hwloc 2>/dev/null || echo none))" >&2
    exit 1
fi
echo "== hwloc $(pkg-config --modversion hwloc) · $(mpirun --version 2>/dev/null | head -n 1)"

# The MPI tests start `mpirun -np 2` as root in one VM (tests/it/mpi.rs passes
# --allow-run-as-root --oversubscribe itself).
# The whole suite already ran without features (.ci/run); here the unit tests and the
# suites whose code paths the features change: placement (hwloc topology and binding),
# the cluster runs (MPI) and runs without a launcher, and an end-to-end pass. This keeps
# CI well under 20 minutes on 2 cores; `cargo test --features hwloc,mpi` runs them all.
echo "== cargo test --features hwloc,mpi (unit tests, placement, mpi, distributed, end_to_end)"
cargo test --features hwloc,mpi --lib
cargo test --features hwloc,mpi --test it -- placement:: mpi:: distributed:: end_to_end::

echo "== cargo clippy --features hwloc,mpi --all-targets -- -D warnings"
cargo clippy --features hwloc,mpi --all-targets -- -D warnings

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
# the cluster runs (MPI) and runs without a launcher, and an end-to-end pass. The
# integration tests are compiled the same with or without features (they ask the binary
# under test what it was built with: `iopulse --version`), so the test binary the default
# build made runs here against the feature build's iopulse: compiling it again with the
# features took about 5 of CI's 12 minutes. `cargo test --features hwloc,mpi` runs them all.
echo "== cargo test --features hwloc,mpi --lib (the unit tests)"
cargo test --features hwloc,mpi --lib

# The artifact of the test target named `it` (not the last one listed: the binary's comes
# after it in a workspace, and the suite's filters were once taken for its targets).
it_binary=$(cargo test -p iopulse --test it --no-run --message-format=json 2>/dev/null \
    | grep '"kind":\["test"\]' | grep '"name":"it"' \
    | grep -o '"executable":"[^"]*"' | sed 's/"executable":"\(.*\)"/\1/' | tail -n 1)
case "$(basename "$it_binary")" in
    it-*) [ -x "$it_binary" ] ;;
    *) false ;;
esac || { echo "the integration test binary was not found (cargo test --test it --no-run): '$it_binary'" >&2; exit 1; }
echo "== cargo build --features hwloc,mpi, then $(basename "$it_binary") placement:: mpi:: distributed:: end_to_end::"
cargo build --features hwloc,mpi --bin iopulse
version=$(target/debug/iopulse --version)
case "$version" in
    *"features: hwloc, mpi"*) ;;
    *) echo "target/debug/iopulse is not the feature build: $version" >&2; exit 1 ;;
esac
"$it_binary" placement:: mpi:: distributed:: end_to_end::

# The integration tests hold no feature-dependent code, so the lints with the features
# are the library's, the binary's and the unit tests' (`--profile test`: cfg(test)).
echo "== cargo clippy --features hwloc,mpi (library, binary, unit tests, benches) -- -D warnings"
cargo clippy --features hwloc,mpi --lib --bins --benches -- -D warnings
cargo clippy --features hwloc,mpi --lib --profile test -- -D warnings

#!/usr/bin/env bash
# CI for the hwloc build (`--features hwloc`): installs hwloc 2.8+ and libudev
# from Debian, then runs the tests and clippy with the feature on. The default
# build needs none of this (see .ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

if ! pkg-config --atleast-version=2.8 hwloc 2>/dev/null || ! pkg-config --exists libudev 2>/dev/null; then
    echo "== apt-get install libhwloc-dev libudev-dev"
    SUDO=""
    if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update -qq
    $SUDO apt-get install -y -qq libhwloc-dev libudev-dev pkg-config
fi
echo "== hwloc $(pkg-config --modversion hwloc)"

echo "== cargo test --features hwloc"
cargo test --features hwloc

echo "== cargo clippy --features hwloc --all-targets -- -D warnings"
cargo clippy --features hwloc --all-targets -- -D warnings

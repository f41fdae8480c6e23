#!/usr/bin/env bash
# What the test suite must not leave behind: the mounts, loop devices and device-mapper
# devices its tests make (the power-cut rig's FUSE mounts, tmpfs and ext4 mounts under the
# tests' temporary directories, loop devices over their files, dm devices iopulse-test-*).
#
#   scripts/test-leftovers.sh snapshot FILE     # before the tests: what is there already
#   scripts/test-leftovers.sh check FILE        # after: fails naming each new one
#
# Namespaces a test makes (`unshare -m` in a child) end with the child; nothing to list.
set -euo pipefail

list() {
    # Mounts: the rig's (fsname powercut-rig) and any under a test's temporary directory.
    awk '$0 ~ / - fuse powercut-rig / || $5 ~ /\/iopulse-test-|\/\.tmp/ {print "mount " $5}' /proc/self/mountinfo
    # Loop devices whose backing file is a test's.
    if command -v losetup >/dev/null 2>&1; then
        { losetup -a 2>/dev/null || true; } | awk -F: '/iopulse-test-|\/\.tmp/ {print "loop " $1}'
    fi
    # Device-mapper devices the tests name iopulse-test-*.
    if command -v dmsetup >/dev/null 2>&1; then
        # (Without a device-mapper driver `dmsetup ls` fails: nothing to list.)
        { dmsetup ls 2>/dev/null || true; } | awk '$1 ~ /^iopulse-test-/ {print "dm " $1}'
    fi
    true
}

case "${1:-}" in
    snapshot) list | sort > "$2" ;;
    check)
        left=$(comm -13 "$2" <(list | sort))
        if [ -n "$left" ]; then
            echo "the tests left behind:" >&2
            echo "$left" >&2
            exit 1
        fi
        echo "the tests left no mount, loop device or dm device behind"
        ;;
    *) echo "usage: $0 snapshot|check FILE" >&2; exit 2 ;;
esac

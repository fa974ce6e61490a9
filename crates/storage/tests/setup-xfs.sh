#!/bin/sh
# Installs what crates/storage/tests/xfs_reflink.rs needs, on Debian/Ubuntu, as root:
# mkfs.xfs (xfsprogs), losetup (util-linux) and mount/umount (mount). Loop devices must exist (/dev/loop-control).
# The tests that need it are #[ignore]d; CI runs them with --ignored and FLASHKV_REQUIRE_XFS=1, so that a missing
# piece fails instead of skipping.
set -eu
missing=""
command -v mkfs.xfs >/dev/null 2>&1 || missing="$missing xfsprogs"
command -v losetup >/dev/null 2>&1 || missing="$missing util-linux"
command -v mount >/dev/null 2>&1 || missing="$missing mount"
if [ -n "$missing" ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
fi
[ -e /dev/loop-control ] || modprobe loop 2>/dev/null || true
[ -e /dev/loop-control ] || { echo "no /dev/loop-control: loop devices unavailable" >&2; exit 1; }

#!/usr/bin/env python3
"""reducibility.py: what storage that deduplicates or compresses could make of files.

For each FILE prints one row: the share of its 512-byte sectors (and 4 KiB chunks) that
repeat an earlier one (what a deduplicating store drops: fio-dedupe's figure), and the
ratio (bytes before / bytes after) of compressing it record by record, each record alone,
as a compressing filesystem does: zlib (level 6) in 8 KiB and 128 KiB records (ZFS's
default recordsize and btrfs's compression unit are 128 KiB), lzma (xz -6) in 1 MiB
records. 1.00x: nothing to gain. A file of N MiB takes about N/20 seconds.

Usage: scripts/reducibility.py FILE [FILE ...] [--limit 64M]
  --limit: read at most this many bytes of each file (from its start)
"""
import argparse, hashlib, lzma, sys, zlib

p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
p.add_argument("files", nargs="+")
p.add_argument("--limit", default="64M")
a = p.parse_args()
units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
limit = int(a.limit[:-1]) * units[a.limit[-1].upper()] if a.limit[-1].upper() in units else int(a.limit)


def dup_share(data, unit):
    seen, dups, n = set(), 0, 0
    for i in range(0, len(data) - unit + 1, unit):
        h = hashlib.blake2b(data[i:i + unit], digest_size=16).digest()
        dups += h in seen
        seen.add(h)
        n += 1
    return dups / max(n, 1)


def ratio(data, record, compress):
    before = after = 0
    for i in range(0, len(data), record):
        r = data[i:i + record]
        before += len(r)
        after += min(len(compress(r)), len(r))  # a store keeps a record that does not shrink as it is
    return before / max(after, 1)


print(f"{'file':40} {'dup 512 B':>9} {'dup 4 KiB':>9} {'zlib 8K':>8} {'zlib 128K':>9} {'lzma 1M':>8}")
for f in a.files:
    with open(f, "rb") as fh:
        data = fh.read(limit)
    if not data:
        print(f"{f:40} empty")
        continue
    row = [dup_share(data, 512) * 100, dup_share(data, 4096) * 100,
           ratio(data, 8 << 10, lambda r: zlib.compress(r, 6)),
           ratio(data, 128 << 10, lambda r: zlib.compress(r, 6)),
           ratio(data, 1 << 20, lambda r: lzma.compress(r, preset=6))]
    print(f"{f:40} {row[0]:8.1f}% {row[1]:8.1f}% {row[2]:7.2f}x {row[3]:8.2f}x {row[4]:7.2f}x")
    sys.stdout.flush()

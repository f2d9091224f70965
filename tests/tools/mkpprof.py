#!/usr/bin/env python3
"""Writes a small pprof heap profile (profile.proto) for the hostile-input
tests: already symbolized locations, so that no binary is needed.

  mkpprof.py OUT [--fn NAME] [--file PATH] [--line N] [--lines N]
             [--depth N] [--values OBJS,BYTES] [--gzip]

One function NAME in source file PATH.  By default one location (at line
N) and one sample of DEPTH frames, all that location, with the in-use
values OBJS and BYTES.  --lines N makes N locations instead, at lines 1
to N of the function, and one one-frame sample on each.
"""
import argparse
import gzip
import sys


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def lf(field, data):
    return varint(field << 3 | 2) + varint(len(data)) + data


def vf(field, value):
    return varint(field << 3) + varint(value & (2**64 - 1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--fn", default="fn")
    ap.add_argument("--file", default="/src/fn.c")
    ap.add_argument("--line", type=int, default=1)
    ap.add_argument("--lines", type=int, default=0)
    ap.add_argument("--depth", type=int, default=1)
    ap.add_argument("--values", default="1,4096")
    ap.add_argument("--gzip", action="store_true")
    a = ap.parse_args()
    objs, nbytes = (int(x) for x in a.values.split(","))
    strs = [b"", b"inuse_objects", b"count", b"inuse_space", b"bytes",
            a.fn.encode("utf-8", "surrogateescape"),
            a.file.encode("utf-8", "surrogateescape")]
    out = bytearray()
    out += lf(1, vf(1, 1) + vf(2, 2))
    out += lf(1, vf(1, 3) + vf(2, 4))
    vals = lf(2, varint(objs & (2**64 - 1)) + varint(nbytes & (2**64 - 1)))
    if a.lines:
        for i in range(1, a.lines + 1):
            out += lf(2, lf(1, varint(i)) + vals)
            out += lf(4, vf(1, i) + vf(3, 0x1000 + i) + lf(4, vf(1, 1) + vf(2, i)))
    else:
        # a packed run of location id 1: one byte a frame
        out += lf(2, lf(1, b"\x01" * a.depth) + vals)
        out += lf(4, vf(1, 1) + vf(3, 0x1000) + lf(4, vf(1, 1) + vf(2, a.line)))
    out += lf(5, vf(1, 1) + vf(2, 5) + vf(4, 6))
    for s in strs:
        out += lf(6, s)
    data = gzip.compress(bytes(out), 9) if a.gzip else bytes(out)
    with open(a.out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""manyobjs.py DUMP PROGRAM N DIR OUT: a copy of the jemalloc dump DUMP
whose stacks run through N copies of PROGRAM (hard links DIR/o0 ...
DIR/oN-1, mapped 16 MiB apart), one record per copy: a
profile naming N object files, for the open-files tests."""
import os
import re
import sys

dump, prog, n, d, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
text = open(dump).read()
maps = text[text.index("MAPPED_LIBRARIES:"):]
lines = maps.splitlines()
seg = [l for l in lines if l.endswith(" " + prog) and " r-xp " in l][0]
lo, hi = (int(x, 16) for x in seg.split()[0].split("-"))
stack = re.search(r"^@ (.*)$", text, re.M).group(1).split()
os.makedirs(d, exist_ok=True)
step = 1 << 24
with open(out, "w") as f:
    f.write(text.split("\n", 1)[0] + "\n")
    for i in range(n):
        off = (i + 1) * step
        shifted = ["0x%x" % (int(a, 16) + off) if lo <= int(a, 16) < hi else a for a in stack]
        f.write("@ " + " ".join(shifted) + "\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n")
    f.write("\n" + maps.rstrip("\n") + "\n")
    rest = seg.split(None, 5)
    for i in range(n):
        path = os.path.join(d, "o%d" % i)
        if not os.path.exists(path):
            os.link(prog, path)
        off = (i + 1) * step
        f.write("%x-%x %s %s %s %s %s\n" % (lo + off, hi + off, rest[1], rest[2], rest[3], rest[4],
                                            path))

#!/usr/bin/env python3
"""fdecheck.py: jheap's rows for code without names, against readelf.

Usage: fdecheck.py JHEAP DUMP [JHEAP OPTIONS...]

Runs jheap twice on DUMP (by function and --addresses, every row) and
reads the call-frame entries of each object the dump maps with
"readelf --debug-dump=frames".  Checks that
  - every --addresses row named "module+0xSTART" is a pc inside the FDE
    that starts at START in that module's file (the function that holds
    it), and that its address is shown as itself;
  - the rows by function named "module+0xSTART" are exactly one per such
    FDE, with the flat values of its addresses summed.
Prints "functions=N addresses=M" and exits 1 on the first disagreement.
"""
import re
import subprocess
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__))
from leafnames import maps_of, loads_of  # noqa: E402


def fdes_of(path, cache={}):
    if path not in cache:
        out = subprocess.run(["readelf", "--debug-dump=frames", path],
                             capture_output=True, text=True).stdout
        r = []
        for m in re.finditer(r" FDE .*pc=([0-9a-f]+)\.\.([0-9a-f]+)", out):
            lo, hi = int(m.group(1), 16), int(m.group(2), 16)
            if lo < hi:
                r.append((lo, hi))
        cache[path] = r
    return cache[path]


def rows(jheap, dump, opts):
    res = subprocess.run([jheap, "--nodecount=1000000"] + opts + [dump],
                         capture_output=True, text=True)
    out = []
    for line in res.stdout.splitlines()[1:]:
        f = line.split()
        if len(f) >= 6:
            out.append((float(f[0]), f[5:]))
    return out


UNNAMED = re.compile(r"^(.+)\+0x([0-9a-f]+)$")


def main(argv):
    jheap, dump, opts = argv[1], argv[2], argv[3:]
    maps = maps_of(dump)
    by_base = {}
    for start, end, off, path in maps:
        by_base.setdefault(path.rsplit("/", 1)[-1], path)
    want = {}   # (module, start) -> flat summed over its addresses
    naddr = 0
    for flat, f in rows(jheap, dump, opts + ["--addresses"]):
        pc, name = int(f[0], 16), " ".join(f[1:-1])
        m = UNNAMED.match(name)
        if not m:
            continue
        base, start = m.group(1), int(m.group(2), 16)
        rel = None
        for lo, hi, off, path in maps:
            if lo <= pc < hi:
                rel = pc - lo + off
                obj = path
        if rel is None or base not in by_base:
            print("no mapping for %x %s" % (pc, name))
            return 1
        # the FDE that holds the pc (link-time addresses), as a file offset
        vaddr = None
        for soff, sva, sz in loads_of(obj):
            if soff <= rel < soff + sz:
                vaddr = rel - soff + sva
                seg = (soff, sva)
        holder = [lo for lo, hi in fdes_of(obj) if lo <= vaddr < hi] if vaddr is not None else []
        if not holder:
            # no FDE holds it: it keeps its own offset
            if start != rel:
                print("%x %s: no FDE holds it, yet it is not named by its offset %x" % (pc, name, rel))
                return 1
        elif holder[0] - seg[1] + seg[0] != start:
            print("%x %s: the FDE that holds it starts at %x" % (pc, name, holder[0]))
            return 1
        naddr += 1
        want[(base, start)] = want.get((base, start), 0) + flat
    got = {}
    for flat, f in rows(jheap, dump, opts):
        m = UNNAMED.match(" ".join(f))
        if m:
            key = (m.group(1), int(m.group(2), 16))
            if key in got:
                print("two rows for %s+0x%x" % key)
                return 1
            got[key] = flat
    for key in sorted(set(want) | set(got)):
        if want.get(key) != got.get(key):
            print("%s+0x%x: by function %s, its addresses sum to %s" % (key + (got.get(key), want.get(key))))
            return 1
    print("functions=%d addresses=%d" % (len(got), naddr))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

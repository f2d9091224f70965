#!/usr/bin/env python3
"""alloccount.py: --allocator's flat values, counted again from --traces.

Usage: alloccount.py RE TRACES TEXT

TRACES is `jheap --traces --show_bytes` of a dump without --allocator
(every stack, leaf first, after the allocator's own frames are cut), TEXT
is `jheap --text --show_bytes --allocator=RE` of the same dump.  For each
stack the frames are cut through the innermost one whose name (without
" (inline)") RE matches, and the run of matching frames above it; the
stack's value goes to the frame after that (or to no row when none is
left).  Every row of TEXT must have that flat value, and no row RE
matches may keep a flat value.  An unsampled dump's values are not whole
bytes: both reports round, a stack's value in TRACES and a row's sum in
TEXT, so a row may differ by half a byte per stack in it, and one more.
Prints one line with the counts, or what differs, and exits 1 when
something does.
"""
import re
import sys


def stacks(path):
    """[(value, [frame, ...])] of a --traces report."""
    out = []
    cur = None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("-----------+"):
                cur = None
                continue
            if line.startswith(("File:", "Type:")) or not line.strip():
                continue
            m = re.match(r"^\s*(-?\d+)\s{3}(\S.*)$", line)
            if m and cur is None:
                cur = (int(m.group(1)), [m.group(2)])
                out.append(cur)
            elif cur is not None and line.startswith(" " * 13):
                cur[1].append(line.strip())
    return out


def main():
    rx = re.compile(sys.argv[1])
    name = lambda fr: fr[:-len(" (inline)")] if fr.endswith(" (inline)") else fr
    want, stacks_in = {}, {}
    moved = 0
    for value, frames in stacks(sys.argv[2]):
        hit = [i for i, fr in enumerate(frames) if rx.search(name(fr))]
        k = 0
        if hit:
            k = hit[0] + 1
            while k < len(frames) and rx.search(name(frames[k])):
                k += 1
            moved += 1
        if k < len(frames):
            want[frames[k]] = want.get(frames[k], 0) + value
            stacks_in[frames[k]] = stacks_in.get(frames[k], 0) + 1
    got = {}
    with open(sys.argv[3]) as f:
        for line in f:
            m = re.match(r"^\s*(-?\d+)\s+\S+%\s+\S+%\s+-?\d+\s+\S+%\s(.*)$", line)
            if m:
                got[m.group(2)] = int(m.group(1))
    bad = []
    for key in sorted(set(want) | set(got)):
        if abs(want.get(key, 0) - got.get(key, 0)) > stacks_in.get(key, 0) // 2 + 1:
            bad.append(f"{key}: flat {got.get(key, 0)}, counted {want.get(key, 0)}")
        if got.get(key, 0) and rx.search(name(key)):
            bad.append(f"{key}: matches the allocator pattern but keeps {got[key]}")
    print(f"stacks={len(stacks(sys.argv[2]))} moved={moved} rows={len(got)} "
          f"flat={sum(got.values())} counted={sum(want.values())} differ={len(bad)}")
    for b in bad[:20]:
        print("  " + b)
    return 1 if bad or not moved else 0


if __name__ == "__main__":
    sys.exit(main())

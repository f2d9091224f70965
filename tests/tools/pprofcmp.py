#!/usr/bin/env python3
"""pprofcmp.py: compare jheap's --traces or --tree with pprof's -traces or
-tree, for tests/t0370.

Usage: pprofcmp.py traces JHEAP_OUT PPROF_OUT
       pprofcmp.py tree JHEAP_OUT PPROF_OUT

Both outputs are in bytes or objects (jheap --show_bytes, pprof -unit=B:
a trailing "B" is dropped).  The rules (the ways jheap differs on purpose):

traces: a block's stack is its frames, leaf first; pprof prints one block
  per sample of the file and one per thread label, jheap one per distinct
  stack: pprof's values are added up per stack, and stacks of value 0 are
  left out on both sides.  The stacks and their values must be the same.

tree: an entry is a function with its flat, flat%, cum, cum% and its
  callers and callees with weight and calls%.  jheap's entries are --text's
  rows, where an inlined function is "name (inline)" and a function inlined
  in one place and not in another is two rows; pprof's nodes are functions
  and it marks inlining on the edge.  So " (inline)" is removed from every
  name, and the functions jheap shows both ways (such as call_init) are
  left out, with the edges that reach them.  Everything else must be the
  same, percentages included.

Prints the differences and exits 1 when there are some.
"""
import re
import sys

SEP_T = "-----------+-------------------------------------------------------"
SEP_R = "----------------------------------------------------------+-------------"


def number(s):
    s = s.strip()
    if s.endswith("B"):
        s = s[:-1]
    return int(float(s)) if s else 0


def traces(path):
    stacks = {}
    block = None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line == SEP_T:
            if block and block[1]:
                key = ";".join(block[1])
                stacks[key] = stacks.get(key, 0) + block[0]
            block = [0, []]
            continue
        if block is None:
            continue
        if re.match(r"^ {0,10}\S+:  ", line) and not block[1]:
            continue  # a label line ("    thread:  t0")
        value, frame = line[:10], line[13:]
        if value.strip():
            block[0] = number(value)
        block[1].append(frame)
    return {k: v for k, v in stacks.items() if v != 0}


def strip_inline(name):
    return name[:-9] if name.endswith(" (inline)") else name


def tree(path, skip):
    entries = {}
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines) and lines[i] != SEP_R:
        i += 1
    i += 2  # the separator and the legend
    cur = None
    pending = []
    for line in lines[i:]:
        if line == SEP_R or not line:
            if cur:
                entries[cur["name"]] = cur
            cur, pending = None, []
            continue
        left, _, name = line.partition("|")
        name = strip_inline(name.strip())
        f = left.split()
        if len(f) == 2:  # an edge: weight, calls%
            edge = (name, number(f[0]), f[1])
            if cur is None:
                pending.append(edge)
            else:
                cur["out"].append(edge)
        else:  # the entry: flat flat% sum% cum cum%
            cur = {"name": name, "flat": number(f[0]), "flatp": f[1], "cum": number(f[3]),
                   "cump": f[4], "in": pending, "out": []}
    out = {}
    for name, e in entries.items():
        if name in skip:
            continue
        e["in"] = sorted(x for x in e["in"] if x[0] not in skip)
        e["out"] = sorted(x for x in e["out"] if x[0] not in skip)
        out[name] = e
    return out


def both_ways(path):
    """Functions jheap shows inlined and not."""
    names = set()
    for line in open(path, encoding="utf-8"):
        for part in line.split("|")[1:]:
            names.add(part.strip())
    return {n[:-9] for n in names if n.endswith(" (inline)") and n[:-9] in names}


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("traces", "tree"):
        sys.stderr.write(__doc__)
        return 2
    kind, mine, theirs = sys.argv[1:]
    bad = 0
    if kind == "traces":
        a, b = traces(mine), traces(theirs)
        if not a:
            print("jheap printed no stack")
            bad = 1
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                print("stack %s: jheap %s, pprof %s" % (k, a.get(k), b.get(k)))
                bad = 1
    else:
        skip = both_ways(mine)
        a, b = tree(mine, skip), tree(theirs, skip)
        if not a:
            print("jheap printed no entry")
            bad = 1
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                print("entry %s only in %s" % (k, "jheap" if k in a else "pprof"))
                bad = 1
            elif a[k] != b[k]:
                print("entry %s:\n  jheap %s\n  pprof %s" % (k, a[k], b[k]))
                bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main())

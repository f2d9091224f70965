#!/usr/bin/env python3
"""addrrows.py: does "jheap --addresses" give one row per code address?

Usage: addrrows.py JHEAP DUMP [JHEAP OPTIONS...]

The code addresses are those of the dump's stacks that allocated
anything (in-use or accumulated): the first frame as written, every other
minus one (the call instruction).  jheap runs with --addresses,
--keep-allocator-frames, --alloc_space when the dump has accumulated
counts, and every row; the addresses of its rows must be exactly those.
Prints "addresses=N" or what differs, and exits 1 on a difference.
"""
import subprocess
import sys


def main(argv):
    jheap, dump, opts = argv[1], argv[2], argv[3:]
    want, stack, accum = set(), None, False
    for line in open(dump, errors="replace"):
        if line.startswith("@"):
            stack = [int(a, 16) for a in line.split()[1:]]
        elif stack is not None and line.lstrip().startswith("t*:"):
            f = line.replace("[", " ").replace("]", " ").replace(":", " ").split()
            inuse, alloc = int(f[1]) + int(f[2]), int(f[3]) + int(f[4])
            accum |= alloc != 0
            if inuse or alloc:
                want.add(stack[0])
                want.update(a - 1 for a in stack[1:])
            stack = None
    args = [jheap, "--addresses", "--keep-allocator-frames", "--nodecount=1000000"]
    args += (["--alloc_space"] if accum else []) + opts + [dump]
    out = subprocess.run(args, capture_output=True, text=True).stdout
    got = {int(line.split()[5], 16) for line in out.splitlines()[1:] if len(line.split()) > 5}
    if got != want:
        print("rows: %d addresses, dump: %d; only in rows: %s; only in the dump: %s" % (
            len(got), len(want), [hex(a) for a in sorted(got - want)[:5]],
            [hex(a) for a in sorted(want - got)[:5]]))
        return 1
    print("addresses=%d" % len(got))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

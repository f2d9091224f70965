#!/usr/bin/env python3
"""chform: a jemalloc dump written as ClickHouse writes its symbolized
profiles (SYSTEM JEMALLOC FLUSH PROFILE's ".heap.symbolized" files and
system.jemalloc_profile_text), so that tests can read that form without
a ClickHouse server.

    chform.py DUMP OUT [BINARY_LINE]

ClickHouse's writer (src/Processors/Sources/JemallocProfileSource.cpp):
"--- symbol", "binary=<its executable>" when it knows it (BINARY_LINE
here: the path to write, or "-" for no such line), then one line per
address the dump's stacks hold (the first of each stack as it is, the
others minus one), in the order of a hash set, each "0x" + 16 hex
digits, a space and the frames joined by "--", outer first: the
function that holds the address, demangled from the ELF symbol table,
then the functions inlined there with the names its DWARF reader
gives, which are linkage names, mangled; "??" for what it cannot name.
Then "---", "--- heap" and the dump as it is.  The names come from
llvm-symbolizer (--inlining --no-demangle) on the objects of the dump's
maps, the outer one demangled by binutils' c++filt (a C function's from
its DWARF: ClickHouse's symbol table may name it by an alias,
__libc_start_main for __libc_start_main_impl, which would make the
report differ for that reason alone).
"""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import leafcheck  # noqa: E402


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    dump, out = sys.argv[1], sys.argv[2]
    binary = sys.argv[3] if len(sys.argv) == 4 else "-"
    recs, maps = leafcheck.read_dump(dump, tagged=False)
    pcs = set()
    for addrs in recs:
        for i, a in enumerate(addrs):
            pcs.add(a if i == 0 else a - 1)
    raw = leafcheck.symbolize(sorted(pcs), maps, demangled=False)
    dwarf = leafcheck.symbolize(sorted(pcs), maps, demangled=False, style="short")
    outer = leafcheck.demangle(fr[-1][0] for fr in raw.values())
    lines = []
    for pc, frames in raw.items():
        names = [n for n, _ in frames]          # innermost first
        if names[-1].startswith(("_Z", "_R")):
            names[-1] = outer.get(names[-1], names[-1])
        elif names[-1] != "??" and dwarf[pc][-1][0] != "??":
            # a C function: its DWARF name, not a symbol-table alias
            names[-1] = dwarf[pc][-1][0]
        lines.append("0x%016x %s" % (pc, "--".join(reversed(names))))
    if len(lines) != len(pcs) or not any(n != "??" for n in lines):
        sys.exit("chform: llvm-symbolizer named nothing")
    random.Random(16).shuffle(lines)
    with open(out, "w", errors="surrogateescape") as f:
        f.write("--- symbol\n")
        if binary != "-":
            f.write("binary=%s\n" % binary)
        f.write("\n".join(lines) + "\n")
        f.write("---\n--- heap\n")
        with open(dump, errors="surrogateescape") as d:
            f.write(d.read())


if __name__ == "__main__":
    main()

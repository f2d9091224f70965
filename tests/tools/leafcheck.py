#!/usr/bin/env python3
"""leafcheck: which leaf names jheap gives a real program's allocations,
compared with llvm-symbolizer's at the call (return address - 1).

    leafcheck.py tag IN OUT
        Copies the dump IN (jemalloc heap_v2 or gperftools "heap profile:")
        to OUT with one made-up root frame per stack record, a distinct
        low address (0x1000 + record number, never mapped), so that each
        line of "jheap --collapsed OUT" is one record of the dump.

    leafcheck.py measure FORMAT GLUE OUT COLLAPSED
        FORMAT: jemalloc (the first frame is a pc inside jemalloc, the
        others return addresses) or gperf (every frame a return address).
        GLUE: which frames a reader skips from the leaf up: none; c (the
        C and C++ allocation functions: malloc, operator new, ...); rust
        (those, Rust's allocation glue and jemalloc's own code).  COLLAPSED is jheap's --collapsed output for OUT.  For
        every record, the expected leaf is found with llvm-symbolizer
        --inlining at each return address - 1 (the dump's maps give the
        object and the link-time address, binutils' c++filt the
        demangled name), shortened as a Rust or C reader expects; prints
        the bytes whose leaf jheap names the same way, the total, and the
        largest disagreements.
"""
import re
import subprocess
import sys
from collections import defaultdict

TAG_BASE = 0x1000


def tag(src, dst):
    n = 0
    with open(src, errors="surrogateescape") as f, \
            open(dst, "w", errors="surrogateescape") as out:
        for line in f:
            s = line.rstrip("\n")
            if s.startswith("@") or re.match(r"\s*\d+:\s*\d+\s*\[\s*\d+:\s*\d+\s*\]\s*@", s):
                s += " 0x%x" % (TAG_BASE + n)
                n += 1
            out.write(s + "\n")
    if n >= 0x10000 - TAG_BASE:
        sys.exit("leafcheck: too many records")


def read_dump(path, tagged=True):
    """The records (address list, leaf first, without the tag of a tagged
    dump) and the executable maps of a dump."""
    recs, maps = [], []
    in_maps = False
    with open(path, errors="surrogateescape") as f:
        for line in f:
            s = line.strip()
            if in_maps:
                m = re.match(r"([0-9a-f]+)-([0-9a-f]+)\s+(\S+)\s+([0-9a-f]+)\s+\S+\s+\d+\s+(.*)$", s)
                if m and "x" in m.group(3) and m.group(5).startswith("/"):
                    maps.append((int(m.group(1), 16), int(m.group(2), 16),
                                 int(m.group(4), 16), m.group(5)))
                continue
            if s.startswith("MAPPED_LIBRARIES:") or s.startswith("--- Memory map:"):
                in_maps = True
                continue
            if "@" in s and (s.startswith("@") or re.match(r"\d+:", s)):
                addrs = [int(a, 16) for a in s.split("@", 1)[1].split()]
                recs.append(addrs[:-1] if tagged else addrs)
    return recs, maps


def segments(path):
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
    segs = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    return segs


def demangle(names):
    todo = sorted({n for n in names if n.startswith(("_Z", "_R"))})
    if not todo:
        return {}
    out = subprocess.run(["c++filt", "-i"], input="\n".join(todo) + "\n",
                         capture_output=True, text=True).stdout.splitlines()
    return dict(zip(todo, out))


def symbolize(pcs, maps, demangled=True, style="linkage"):
    """pc -> list of (function name, file:line), innermost first ("??"
    unknown); the names demangled, or as llvm-symbolizer gives them
    without demangling (linkage names where the DWARF has them, the
    symbol table's for the outer frame); STYLE "short" gives the DWARF's
    names without parameters instead."""
    extra = ["--functions=" + style]
    by_obj = defaultdict(list)
    res = {}
    for pc in pcs:
        for start, end, off, path in maps:
            if start <= pc < end:
                by_obj[path].append((pc, pc - start + off))
                break
        else:
            res[pc] = [("??", "")]
    raw = {}
    for path, items in by_obj.items():
        segs = segments(path)
        query = []
        for pc, rel in items:
            va = None
            for poff, pva, filesz in segs:
                if poff <= rel < poff + filesz:
                    va = rel - poff + pva
                    break
            query.append((pc, rel if va is None else va))
        out = subprocess.run(["llvm-symbolizer", "--inlining", "--no-demangle"] + extra + ["--obj=" + path],
                             input="".join("0x%x\n" % va for _, va in query),
                             capture_output=True, text=True).stdout
        blocks = out.split("\n\n")
        for (pc, _), block in zip(query, blocks):
            lines = [l for l in block.split("\n") if l]
            raw[pc] = [(lines[i], lines[i + 1] if i + 1 < len(lines) else "")
                       for i in range(0, len(lines), 2)]
    dm = demangle(n for fr in raw.values() for n, _ in fr) if demangled else {}
    for pc, frames in raw.items():
        res[pc] = [(dm.get(n, n), loc) for n, loc in frames] or [("??", "")]
    return res


def skip_group(s, i):
    """Index after the '<...>' group that starts at s[i]."""
    depth = 0
    while i < len(s):
        c = s[i]
        if c == "<":
            depth += 1
        elif c == ">" and not s[i - 1] == "-":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


def rust_short(s):
    """A Rust name without generic arguments or hash, qualified paths
    (<T as Trait>, <impl X for Y>) kept, a leading <Type>:: unwrapped."""
    s = re.sub(r"::h[0-9a-f]{16}$", "", s)
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "<":
            prev = s[i - 1] if i else ""
            if prev == ":" and not s.startswith("impl ", i + 1):
                # turbofish: drop "::<...>"
                while out and out[-1] == ":":
                    out.pop()
                i = skip_group(s, i)
                continue
            if prev and (prev.isalnum() or prev in "_>"):
                i = skip_group(s, i)       # generic arguments
                continue
            end = skip_group(s, i)
            inner = rust_short(s[i + 1:end - 1])
            out.append("<" + inner + ">")
            i = end
            continue
        out.append(c)
        i += 1
    r = "".join(out)
    m = re.match(r"<([A-Za-z0-9_:]+)>::(.*)$", r)
    if m:
        r = m.group(1) + "::" + m.group(2)
    return r


def c_short(s):
    """jeprof's short form of a C or C++ name."""
    prev = None
    while prev != s:
        prev = s
        s = re.sub(r"\([^()]*\)(\s*const)?", "", s)
    prev = None
    while prev != s:
        prev = s
        s = re.sub(r"<[^<>]*>", "", s)
    m = re.match(r"^.*\s+(\w+::)", s)
    return s[m.start(1):] if m else s


def short(name):
    if name.startswith("<") or "::<" in name or re.search(r"::h[0-9a-f]{16}$", name):
        return rust_short(name)
    return c_short(name)


RUST_GLUE = re.compile(
    r"^(_rjem_|je_|__rust_|__rustc::|__rdl_|__rg_|std::alloc::__default_lib_allocator::"
    r"|alloc::alloc::(alloc|alloc_zeroed|realloc|dealloc|exchange_malloc)$"
    r"|alloc::alloc::Global::"
    r"|<alloc::alloc::Global( as core::alloc::Allocator)?>::"
    r"|<[^ ]+ as core::alloc::global::GlobalAlloc>::(alloc|alloc_zeroed|realloc|dealloc)$"
    r"|(malloc|calloc|realloc|free|mallocx|rallocx|sdallocx)$)")


C_GLUE = re.compile(r"^(malloc|calloc|realloc|free|memalign|posix_memalign|aligned_alloc"
                    r"|valloc|pvalloc|operator new|operator new\[\])$")


def is_glue(glue, name, loc):
    if glue == "none":
        return False
    if C_GLUE.match(short(name)):
        return True
    return glue == "rust" and (bool(RUST_GLUE.match(short(name))) or "/jemalloc/" in loc)


def measure(fmt, glue, dump, collapsed):
    recs, maps = read_dump(dump)
    pcs = set()
    for addrs in recs:
        for i, a in enumerate(addrs):
            pcs.add(a if fmt == "jemalloc" and i == 0 else a - 1)
    sym = symbolize(sorted(pcs), maps)
    total = agree = 0
    bad = defaultdict(int)
    with open(collapsed, errors="surrogateescape") as f:
        for line in f:
            stack, _, value = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            rec = int(frames[0], 16) + 1 - TAG_BASE
            v = float(value)
            total += v
            expect = "??"
            addrs = recs[rec]
            for i, a in enumerate(addrs):
                pc = a if fmt == "jemalloc" and i == 0 else a - 1
                found = None
                for name, loc in sym[pc]:
                    if not is_glue(glue, name, loc):
                        found = name
                        break
                if found is not None:
                    expect = found
                    break
            got = frames[-1]
            if got.endswith(" (inline)"):
                got = got[:-9]
            if got == short(expect):
                agree += v
            else:
                bad[(short(expect), got)] += v
    print("agree %d of %d bytes (%.1f%%)" % (agree, total, 100.0 * agree / total if total else 0))
    for (want, got), v in sorted(bad.items(), key=lambda kv: -kv[1])[:12]:
        print("  %10d  llvm-symbolizer: %s  jheap: %s" % (v, want, got))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "tag":
        tag(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 6 and sys.argv[1] == "measure":
        measure(*sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()

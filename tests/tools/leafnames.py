#!/usr/bin/env python3
"""leafnames.py: how many bytes of a jemalloc dump have a leaf name that
llvm-symbolizer agrees with.

Usage: leafnames.py [-v] [--truth=FILE] JHEAP DUMP [BINARY] [-- JHEAP OPTIONS]

jheap gives the leaf of every stack after its allocator cut, as
"--collapsed --addresses --full-names" prints it (the lookup pc, the name);
llvm-symbolizer --inlining names the same pc (a return address minus one)
in the object the dump's maps name, or for the main program in FILE
(--truth: the program that ran, when the dump's path now holds another);
BINARY goes to jheap only.  Names are compared without argument lists and template arguments,
which the two demanglers spell differently, and two names the object
exports at one address (aliases, such as libc's strdup and __strdup) are
one function.  A leaf jheap shows as
"module+0x..." (or a raw address) counts as disagreeing only where
llvm-symbolizer has a name for it.

Prints one line:
  total=BYTES agree=BYTES share=PERCENT named=BYTES unnamed=BYTES wrong=BYTES
followed, with -v, by every disagreeing leaf.  named/unnamed are the bytes
whose leaf jheap names / shows as module+offset; wrong, those it names
otherwise than llvm-symbolizer (or where llvm-symbolizer has no name).
"""
import re
import subprocess
import sys


def maps_of(dump):
    """[(start, end, offset, path)] of the dump's MAPPED_LIBRARIES lines."""
    out = []
    seen = False
    with open(dump, errors="replace") as f:
        for line in f:
            if line.startswith("MAPPED_LIBRARIES:"):
                seen = True
                continue
            if not seen:
                continue
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s*(.*)", line)
            if m and "x" in m.group(3) and m.group(5).startswith("/"):
                path = m.group(5).strip()
                if path.endswith(" (deleted)"):
                    path = path[: -len(" (deleted)")]
                out.append((int(m.group(1), 16), int(m.group(2), 16), int(m.group(4), 16), path))
    return out


def loads_of(path, cache={}):
    """PT_LOAD (offset, vaddr, filesz) of an ELF file, from readelf."""
    if path not in cache:
        segs = []
        try:
            text = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout
        except OSError:
            text = ""
        for line in text.splitlines():
            f = line.split()
            if f and f[0] == "LOAD":
                segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
        cache[path] = segs
    return cache[path]


def strip_args(name):
    """The name without (...) and <...> groups, clone tags and spaces."""
    name = re.sub(r" \[clone [^\]]*\]", "", name)
    name = re.sub(r" \(\.cold\)$", "", name)
    out, depth = [], 0
    for ch in name:
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    return "".join(out).replace(" ", "")


UNNAMED = re.compile(r"^(\S+\+0x[0-9a-f]+|0x[0-9a-f]+)$")


def aliases_of(path, cache={}):
    """{name: address} of the dynamic symbols an object exports: two names
    at one address (libc's strdup and __strdup) are one function, and the
    two tools may pick either."""
    if path not in cache:
        table = {}
        try:
            text = subprocess.run(["nm", "-D", "--defined-only", path],
                                  capture_output=True, text=True).stdout
        except OSError:
            text = ""
        for line in text.splitlines():
            f = line.split()
            if len(f) == 3:
                table[f[2].split("@")[0]] = int(f[0], 16)
        cache[path] = table
    return cache[path]


def same_function(a, b, obj):
    if a == b:
        return True
    table = aliases_of(obj) if obj else {}
    return a in table and b in table and table[a] == table[b]


# C's allocation entry points: where one is inlined into a function (as
# ld.so inlines its calloc wrapper into allocate_dtv), jheap cuts that
# inline frame as it cuts any allocator frame and names the function it
# is inlined into; so the reference skips it too.
ALLOC = {"malloc", "calloc", "realloc", "free", "reallocarray", "memalign",
         "posix_memalign", "aligned_alloc", "valloc", "pvalloc"}


def innermost(functions):
    """The innermost of llvm-symbolizer's frames (innermost first) that
    is not an inline allocation entry point."""
    for i, f in enumerate(functions):
        if f not in ALLOC or i == len(functions) - 1:
            return f
    return "??"


def main(argv):
    verbose = "-v" in argv
    truth = [a[len("--truth="):] for a in argv if a.startswith("--truth=")]
    argv = [a for a in argv if a != "-v" and not a.startswith("--truth=")]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    jheap, dump = argv[1], argv[2]
    binary = argv[3] if len(argv) > 3 else None
    cmd = [jheap, "--collapsed", "--addresses", "--full-names"] + extra
    cmd += ([binary] if binary else []) + [dump]
    res = subprocess.run(cmd, capture_output=True, text=True)
    leaves = {}  # pc -> [bytes, name]
    for line in res.stdout.splitlines():
        stack, _, value = line.rpartition(" ")
        leaf = stack.split(";")[-1]
        addr, _, rest = leaf.partition(" ")
        name = rest.rpartition(" ")[0]
        if name.endswith(" (inline)"):
            name = name[: -len(" (inline)")]
        pc = int(addr, 16)
        e = leaves.setdefault(pc, [0, name])
        e[0] += int(value)
    maps = maps_of(dump)
    main_path = None
    for start, end, off, path in maps:
        main_path = main_path or path
    per_obj = {}
    obj_of = {}
    for pc in leaves:
        for start, end, off, path in maps:
            if start <= pc < end:
                obj = truth[0] if truth and path == main_path else path
                rel = pc - start + off
                vaddr = None
                for soff, sva, sz in loads_of(obj):
                    if soff <= rel < soff + sz:
                        vaddr = rel - soff + sva
                if vaddr is not None:
                    per_obj.setdefault(obj, []).append((pc, vaddr))
                    obj_of[pc] = obj
                break
    llvm = {}
    for obj, pcs in per_obj.items():
        inp = "".join("0x%x\n" % v for _, v in pcs)
        out = subprocess.run(["llvm-symbolizer", "--inlining", "--obj=" + obj],
                             input=inp, capture_output=True, text=True).stdout
        blocks = out.strip("\n").split("\n\n")
        for (pc, _), block in zip(pcs, blocks):
            llvm[pc] = innermost(block.splitlines()[0::2]) if block else "??"
    total = agree = named = unnamed = wrong = 0
    bad = []
    for pc, (value, name) in sorted(leaves.items()):
        total += value
        ref = llvm.get(pc, "??")
        jh_unnamed = bool(UNNAMED.match(name))
        if jh_unnamed:
            unnamed += value
        else:
            named += value
        if ref == "??":
            ok = jh_unnamed
        else:
            ok = not jh_unnamed and same_function(strip_args(name), strip_args(ref), obj_of.get(pc))
        if ok:
            agree += value
        else:
            if not jh_unnamed:
                wrong += value
            bad.append((value, pc, name, ref))
    share = 100.0 * agree / total if total else 100.0
    print("total=%d agree=%d share=%.1f named=%d unnamed=%d wrong=%d" % (total, agree, share, named, unnamed, wrong))
    if verbose:
        for value, pc, name, ref in sorted(bad, reverse=True):
            print("  %10d %016x jheap: %s  llvm-symbolizer: %s" % (value, pc, name, ref))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""chaincheck: jheap's whole inline chain at every byte of some functions,
compared with llvm-symbolizer --inlining's.

    chaincheck.py dump BIN OUT SYM...
        Writes to OUT a jemalloc heap_v2 dump with one record per byte of
        each function SYM (a symbol of BIN, as nm -S lists it), a single
        frame each (the first frame of a jemalloc record is looked up at
        the address itself), and maps placing BIN's PT_LOAD segments at
        BASE as the kernel would.

    chaincheck.py compare BIN TRACES [REF]
        TRACES is "jheap --traces --addresses --full-names BIN OUT".  For
        every address, the frames jheap names (name, file, line; innermost
        first) against llvm-symbolizer --inlining's at the same link-time
        address of BIN, or of REF: the same code with intact DWARF, for a
        BIN whose DWARF was damaged on purpose.  Prints "agree N of M addresses" and the first
        disagreements; exits 1 when any address disagrees.
"""
import re
import struct
import subprocess
import sys

BASE = 0x555500000000


def symbols(binary, names):
    out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True,
                         text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[3] in names:
            found[f[3]] = (int(f[0], 16), int(f[1], 16))
    missing = [n for n in names if n not in found]
    if missing:
        sys.exit("chaincheck: %s: no symbol %s" % (binary, ", ".join(missing)))
    return [found[n] for n in names]


def load_segments(binary):
    """(offset, vaddr, memsz, flags) of each PT_LOAD of a 64-bit ELF file."""
    with open(binary, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        sys.exit("chaincheck: %s: not a 64-bit ELF file" % binary)
    end = "<" if data[5] == 1 else ">"
    phoff, = struct.unpack_from(end + "Q", data, 0x20)
    phentsize, phnum = struct.unpack_from(end + "HH", data, 0x36)
    segs = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, _, p_memsz, _ = struct.unpack_from(
            end + "IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            segs.append((p_offset, p_vaddr, p_memsz, p_flags))
    return segs


def dump(binary, out, names):
    path = subprocess.run(["realpath", binary], capture_output=True, text=True,
                          check=True).stdout.strip()
    with open(out, "w") as f:
        f.write("heap_v2/1\n  t*: 0: 0 [0: 0]\n")
        for addr, size in symbols(binary, names):
            for pc in range(addr, addr + size):
                f.write("@ 0x%x\n  t*: 1: 16 [0: 0]\n" % (BASE + pc))
        f.write("\nMAPPED_LIBRARIES:\n")
        for off, va, memsz, flags in load_segments(binary):
            lo, hi = va & ~0xfff, (va + memsz + 0xfff) & ~0xfff
            perm = "r-xp" if flags & 1 else "rw-p" if flags & 2 else "r--p"
            f.write("%x-%x %s %08x 00:00 0 %s\n"
                    % (BASE + lo, BASE + hi, perm, off & ~0xfff, path))


def jheap_chains(traces):
    """{link-time address: [(name, "file:line"), ...]} from jheap --traces
    --addresses --full-names: each frame "[value] ADDR NAME FILE:LINE"."""
    chains = {}
    with open(traces) as f:
        for line in f:
            m = re.match(r"\s+(?:[0-9.]+[a-zA-Z]*\s+)?([0-9a-f]{16}) (.*) (\S+)$", line)
            if not m:
                continue
            name = re.sub(r" \(inline\)$", "", m.group(2))
            chains.setdefault(int(m.group(1), 16) - BASE, []).append((name, m.group(3)))
    return chains


def llvm_chains(binary, addrs):
    out = subprocess.run(["llvm-symbolizer", "--inlining", "--obj=" + binary],
                         input="".join("0x%x\n" % a for a in addrs),
                         capture_output=True, text=True, check=True).stdout
    chains = {}
    for addr, block in zip(addrs, out.split("\n\n")):
        lines = block.strip("\n").split("\n")
        frames = []
        for name, where in zip(lines[0::2], lines[1::2]):
            # file:line:column; jheap shows file:line ("??:0" when unknown)
            frames.append((name, re.sub(r":\d+$", "", where)))
        chains[addr] = frames
    return chains


def compare(traces, ref):
    got = jheap_chains(traces)
    addrs = sorted(got)
    want = llvm_chains(ref, addrs)
    bad = [a for a in addrs if got[a] != want[a]]
    print("agree %d of %d addresses" % (len(addrs) - len(bad), len(addrs)))
    for a in bad[:5]:
        print("0x%x\n  jheap:           %s\n  llvm-symbolizer: %s"
              % (a, " <- ".join("%s %s" % f for f in got[a]),
                 " <- ".join("%s %s" % f for f in want[a])))
    return 1 if bad or not addrs else 0


def main():
    if len(sys.argv) >= 5 and sys.argv[1] == "dump":
        dump(sys.argv[2], sys.argv[3], sys.argv[4:])
        return 0
    if len(sys.argv) in (4, 5) and sys.argv[1] == "compare":
        return compare(sys.argv[3], sys.argv[-1] if len(sys.argv) == 5 else sys.argv[2])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""weblistcheck.py: check jheap's --weblist page against --list, --disasm
and llvm-symbolizer, for the tests (tests/t0405-weblist.sh).

Usage: weblistcheck.py PAGE LIST DISASM BINARY [LLVM_SYMBOLIZER]

PAGE is the --weblist=RE page, LIST and DISASM the --list=RE and
--disasm=RE texts of the same profile with the same options, BINARY the
program whose routines are checked.  It checks that

  - the page's routines (name, file) and their source lines (values,
    number, text) are --list's, in the same order;
  - every instruction row under a line is a --disasm row of BINARY: the
    same address, flat, cum and instruction text;
  - every --disasm instruction of BINARY is on the page, once per
    routine at most;
  - (with LLVM_SYMBOLIZER) an instruction under line N of FILE has, among
    the frames llvm-symbolizer --inlining gives for its address, an
    outermost frame in a file named as FILE at line N; one after the
    routine's lines has no such frame at a line the page shows.

It prints what is wrong and exits 1, or prints a summary line (routines,
lines with code, instructions placed) and exits 0.
"""
import html.parser
import os
import re
import subprocess
import sys

ROW = re.compile(r"^ *(\S+) +(\S+) +(\d+)(?:: (.*))?$")
INSN = re.compile(r"^ *(\S+) +(\S+) +([0-9a-f]+): (.*)$")


class Page(html.parser.HTMLParser):
    """The routines of a weblist page: name, file, rows; a row is a dict
    with kind ("line", or "other" for the code on no line shown), text
    and code (its instruction rows: text, pos)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.routines = []
        self.stack = []          # (tag, classes) of the open elements

    def handle_starttag(self, tag, attrs):
        c = (dict(attrs).get("class") or "").split()
        self.stack.append((tag, c))
        if tag == "h2":
            self.routines.append({"name": "", "file": "", "rows": []})
        elif tag in ("div", "details") and c[:1] == ["src"]:
            self.routines[-1]["rows"].append({"kind": "other" if "other" in c else "line",
                                              "text": "", "code": [], "hot": "hot" in c})
        elif tag == "span" and c[:1] == ["insn"]:
            self.routines[-1]["rows"][-1]["code"].append({"text": "", "pos": ""})

    def handle_endtag(self, tag):
        while self.stack and self.stack.pop()[0] != tag:
            pass

    def handle_data(self, data):
        for tag, c in reversed(self.stack):
            if tag == "span" and c == ["pos"]:
                self.routines[-1]["rows"][-1]["code"][-1]["pos"] += data
            elif tag == "span" and c[:1] == ["insn"]:
                self.routines[-1]["rows"][-1]["code"][-1]["text"] += data
            elif tag == "summary" or (tag == "div" and c[:1] == ["src"]):
                self.routines[-1]["rows"][-1]["text"] += data
            elif tag == "h2":
                self.routines[-1]["name"] += data
            elif tag == "div" and c == ["file"]:
                self.routines[-1]["file"] += data
            else:
                continue
            return


def read_list(path):
    """--list's routines: name, file, and their line rows (fences and
    totals left out)."""
    routines = []
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        line = line.rstrip("\n")
        if line.startswith("ROUTINE ====================== "):
            rest = line[len("ROUTINE ====================== "):]
            name, _, file = rest.rpartition(" in ")
            routines.append({"name": name, "file": file, "rows": []})
        elif line == "---" or line.endswith("(flat / cumulative)") or line.startswith("    (source"):
            continue
        elif routines:
            routines[-1]["rows"].append(line)
    return routines


def read_disasm(path, binary):
    """--disasm's instructions in BINARY's routines: {address: (flat, cum,
    text)}."""
    insns = {}
    mine = False
    prog = os.path.realpath(binary)
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        line = line.rstrip("\n")
        if line.startswith("ROUTINE ====================== "):
            mine = os.path.realpath(line.rpartition(" in ")[2]) == prog
            continue
        m = INSN.match(line)
        if m and mine and not line.startswith("-----"):
            insns[int(m.group(3), 16)] = (m.group(1), m.group(2), m.group(4))
    return insns


def symbolize(tool, binary, addrs):
    """llvm-symbolizer --inlining's frames (file, line) per address,
    innermost first."""
    if not addrs:
        return {}
    inp = "".join("0x%x\n" % a for a in addrs)
    out = subprocess.run([tool, "--obj=" + binary, "--inlining", "--functions=none"],
                         input=inp, capture_output=True, text=True, check=True).stdout
    frames = {}
    for a, block in zip(addrs, out.strip("\n").split("\n\n")):
        fr = []
        for l in block.strip().split("\n"):
            m = re.match(r"^(.*):(\d+):\d+$", l)
            if m:
                fr.append((m.group(1), int(m.group(2))))
        frames[a] = fr
    return frames


def main():
    if len(sys.argv) < 5:
        sys.stderr.write(__doc__)
        return 2
    page_path, list_path, dis_path, binary = sys.argv[1:5]
    tool = sys.argv[5] if len(sys.argv) > 5 else None
    page = Page()
    page.feed(open(page_path, encoding="utf-8", errors="surrogateescape").read())
    listed = read_list(list_path)
    insns = read_disasm(dis_path, binary)
    bad = []

    # the routines and lines are --list's
    names = [(r["name"], r["file"]) for r in page.routines]
    if names != [(r["name"], r["file"]) for r in listed]:
        bad.append("routines differ from --list: page %s, list %s" % (
            names, [(r["name"], r["file"]) for r in listed]))
    for pr, lr in zip(page.routines, listed):
        rows = [r["text"] for r in pr["rows"] if r["kind"] == "line"]
        if rows != lr["rows"]:
            bad.append("%s: lines differ from --list:\n  page %r\n  list %r" % (
                pr["name"], rows[:8], lr["rows"][:8]))

    # every instruction row is --disasm's
    placed = {}          # (routine index, address) -> line, or None after the lines
    nlines = 0
    for ri, pr in enumerate(page.routines):
        for row in pr["rows"]:
            m = ROW.match(row["text"])
            line = int(m.group(3)) if row["kind"] == "line" and m else None
            if row["kind"] == "line" and not m:
                bad.append("%s: not a source row: %r" % (pr["name"], row["text"]))
            if row["code"]:
                nlines += 1
            for c in row["code"]:
                mi = INSN.match(c["text"])
                if not mi:
                    bad.append("%s: not an instruction row: %r" % (pr["name"], c["text"]))
                    continue
                addr = int(mi.group(3), 16)
                got = (mi.group(1), mi.group(2), mi.group(4))
                if insns.get(addr) != got:
                    bad.append("%s: %x is %r on the page, %r in --disasm" % (
                        pr["name"], addr, got, insns.get(addr)))
                if (ri, addr) in placed:
                    bad.append("%s: %x shown twice" % (pr["name"], addr))
                placed[(ri, addr)] = line

    # every instruction --disasm shows is on the page
    on_page = {a for (_, a) in placed}
    for addr in sorted(set(insns) - on_page):
        bad.append("%x of --disasm is not on the page" % addr)

    # each under the line llvm-symbolizer places it at
    checked = 0
    if tool:
        frames = symbolize(tool, binary, sorted(on_page & set(insns)))
        for (ri, addr), line in sorted(placed.items()):
            if addr not in frames:
                continue
            pr = page.routines[ri]
            base = os.path.basename(pr["file"])
            outer = [l for f, l in frames[addr] if os.path.basename(f) == base]
            want = outer[-1] if outer else None
            shown = {int(ROW.match(r["text"]).group(3)) for r in pr["rows"]
                     if r["kind"] == "line" and ROW.match(r["text"])}
            if line is not None and want != line:
                bad.append("%s: %x is under line %d, llvm-symbolizer says %s (frames %s)" % (
                    pr["name"], addr, line, want, frames[addr]))
            if line is None and want in shown:
                bad.append("%s: %x is after the lines, llvm-symbolizer puts it at shown line %d" % (
                    pr["name"], addr, want))
            checked += 1

    for b in bad[:40]:
        print("weblistcheck: " + b)
    if bad:
        return 1
    print("weblistcheck: %d routines, %d lines with code, %d instructions placed, %d checked by llvm-symbolizer"
          % (len(page.routines), nlines, len(placed), checked))
    return 0


if __name__ == "__main__":
    sys.exit(main())

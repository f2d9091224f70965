#!/usr/bin/env python3
"""legacycheck: a legacy heap profile read by jheap against pprof's own
expected parse of it (google/pprof's profile/testdata/*.string: the
samples' values after pprof's unsampling, their locations and mappings).

    legacycheck.py STRING JHEAP PROFILE

For each sample type of STRING (inuse_space, alloc_objects...), runs
"JHEAP --collapsed --no-symbolize --<type> PROFILE" and "JHEAP --text"
for its Total line, and compares, per call stack (named as jheap names
frames it cannot symbolize: module+0xoffset from the mapping, the raw
pc without one), the sum of pprof's values with jheap's.  jheap unsamples
these formats as pprof does, each record's values truncated to integers,
so every stack and the total must be equal exactly.  Prints one line per
sample type; exits 1 on a difference.
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

OPTION = {
    "objects": "--inuse_objects", "space": "--inuse_space",
    "inuse_objects": "--inuse_objects", "inuse_space": "--inuse_space",
    "alloc_objects": "--alloc_objects", "alloc_space": "--alloc_space",
}


def read_string(path):
    types, samples, locs, maps = [], [], {}, {}
    section = None
    with open(path) as f:
        for line in f:
            s = line.rstrip("\n")
            if s in ("Samples:", "Locations", "Mappings"):
                section = s
                continue
            if section == "Samples:":
                if not types:
                    types = [t.split("/")[0] for t in s.split()]
                    continue
                m = re.match(r"\s*([-\d\s]+):(.*)$", s)
                if m and not s.strip().startswith("bytes:"):
                    vals = [int(v) for v in m.group(1).split()]
                    ids = [int(i) for i in m.group(2).split()]
                    samples.append((vals, ids))
            elif section == "Locations":
                m = re.match(r"\s*(\d+): (0x[0-9a-f]+) M=(\d+)", s)
                if m:
                    locs[int(m.group(1))] = (int(m.group(2), 16), int(m.group(3)))
            elif section == "Mappings":
                m = re.match(r"(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) ?(\S*)", s)
                if m:
                    maps[int(m.group(1))] = (int(m.group(2), 16), int(m.group(3), 16),
                                             int(m.group(4), 16), m.group(5))
    return types, samples, locs, maps


def frame_name(pc, mapping):
    start, limit, off, path = mapping
    if not path:                      # pprof's made-up mapping: none in the file
        return "0x%016x" % pc
    return "%s+0x%x" % (os.path.basename(path), pc - start + off)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    string, jheap, profile = sys.argv[1:]
    types, samples, locs, maps = read_string(string)
    bad = False
    for k, t in enumerate(types):
        want = defaultdict(int)
        nrec = defaultdict(int)
        total = 0
        for vals, ids in samples:
            names = [frame_name(*(lambda a, m: (a, maps[m]))(*locs[i])) for i in ids]
            key = ";".join(reversed(names)) if names else "[no frames]"
            want[key] += vals[k]
            nrec[key] += 1
            total += vals[k]
        out = subprocess.run([jheap, "--collapsed", "--no-symbolize", OPTION[t], profile],
                             capture_output=True, text=True)
        got = defaultdict(float)
        for line in out.stdout.splitlines():
            stack, _, v = line.rpartition(" ")
            got[stack] += float(v)
        txt = subprocess.run([jheap, "--text", "--show_bytes", "--no-symbolize", OPTION[t], profile],
                             capture_output=True, text=True).stdout.splitlines()
        jtotal = float(txt[0].split()[1]) if txt else -1
        diffs = [key for key in set(want) | set(got) if got.get(key, 0) != want.get(key, 0)]
        same_total = jtotal == total
        print("%s %s: %d stacks, %d differ; total %d, jheap %d%s" % (
            os.path.basename(profile), t, len(want), len(diffs), total, jtotal,
            "" if same_total else " (differs)"))
        for key in sorted(diffs)[:5]:
            print("  %s: pprof %d, jheap %d" % (key, want.get(key, 0), got.get(key, 0)))
        bad |= bool(diffs) or not same_total or out.returncode != 0
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

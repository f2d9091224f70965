#!/bin/bash
test_description='pprof profile.proto as input (gzip-compressed or not), and gzip-compressed dumps

For every workload dump:
 - jheap --proto --no-symbolize, read back with the binary, and jheap
   --proto (symbolized), read back without it, give the --text, --lines
   and --collapsed reports of the dump itself, byte for byte (exact and
   accum dumps: sampled ones are written to pprof per stack truncated to
   integers, see t0320), and --alloc_space for accum dumps;
 - the same after go tool pprof rewrote each file (-proto: another encoder,
   whose field order and packing differ);
 - the uncompressed protobuf and the gzip-compressed dump read the same.
A profile shaped as rust-jemalloc-pprof writes it (inuse_space/bytes only,
every address minus one, ids 1..N, the process maps as mappings), made
here from a dump with a small encoder: --text equals the dump'"'"'s, with a
warning that in-use objects are missing.  A real Go heap profile, written
by a Go program built here: every flat value of --text --show_bytes equals
go tool pprof -top -unit=B for inuse_space and alloc_objects.  --base of
two symbolized pprof files of programs that are gone, and their sum, equal
the same of --raw files.  Damaged input: truncated gzip,
truncated protobuf, corrupt gzip, a CPU profile, a location id or string
index that is not there: exit 1 with a message naming the file.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/workloads.sh"

test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test_need_profiles

if test_have_prog go; then
	test_set_prereq GO
	TOOLS=$BUILD_DIR/tools
	mkdir -p "$TOOLS" || exit 1
	export HOME=$TRASH_DIRECTORY GOPATH=$TRASH_DIRECTORY/go GOCACHE=$TOOLS/gocache GOFLAGS=
	export PPROF_BINARY_PATH=$TRASH_DIRECTORY/no-binaries PPROF_TMPDIR=$TRASH_DIRECTORY
fi
test_have_prog python3 && test_set_prereq PYTHON

DUMPS="w_basic.exact w_basic.accum w_basic_nopie.exact w_cpp.exact w_cpp.accum
w_shlib.accum w_threads.accum demo.exact demo.accum"

# same_reports NAME VARIANT FILE [BINARY]: FILE's reports equal the dump's
same_reports() {
	local b=$PROFILES/$1 d=$PROFILES/$1.$2.heap modes="--text|--text --lines|--collapsed"
	case $2 in accum) modes="$modes|--text --alloc_space|--collapsed --alloc_objects" ;; esac
	local IFS='|'
	for m in $modes; do
		IFS=' '
		"$JHEAP" $m "$b" "$d" >want 2>/dev/null &&
		"$JHEAP" $m ${4:+"$4"} "$3" >got 2>got.err &&
		test_cmp want got || { echo "$3 $m"; cat got.err; return 1; }
		IFS='|'
	done
}

for dump in $DUMPS; do
	name=${dump%%.*} variant=${dump#*.}
	test_expect_success "$dump: --proto --no-symbolize read back with the binary" '
		"$JHEAP" --proto --no-symbolize -o $dump.ns.pb.gz "$PROFILES/$name" "$PROFILES/$dump.heap" &&
		same_reports $name $variant $dump.ns.pb.gz "$PROFILES/$name"
	'
	test_expect_success "$dump: --proto read back without the binary" '
		"$JHEAP" --proto -o $dump.pb.gz "$PROFILES/$name" "$PROFILES/$dump.heap" &&
		same_reports $name $variant $dump.pb.gz
	'
	test_expect_success GO "$dump: the same after go tool pprof -proto rewrote them" '
		go tool pprof -symbolize=none -proto $dump.ns.pb.gz >$dump.go-ns.pb.gz 2>go.err &&
		go tool pprof -symbolize=none -proto $dump.pb.gz >$dump.go.pb.gz 2>go.err &&
		! cmp -s $dump.pb.gz $dump.go.pb.gz &&
		same_reports $name $variant $dump.go-ns.pb.gz "$PROFILES/$name" &&
		same_reports $name $variant $dump.go.pb.gz
	'
done

test_expect_success 'uncompressed protobuf, gzip-compressed dumps and two gzip members' '
	gunzip -c w_cpp.exact.ns.pb.gz >w_cpp.pb &&
	same_reports w_cpp exact w_cpp.pb "$PROFILES/w_cpp" &&
	gzip -c "$PROFILES/w_cpp.exact.heap" >w_cpp.heap.gz &&
	same_reports w_cpp exact w_cpp.heap.gz "$PROFILES/w_cpp" &&
	head -c 5000 "$PROFILES/w_cpp.exact.heap" | gzip -c >two.gz &&
	tail -c +5001 "$PROFILES/w_cpp.exact.heap" | gzip -c >>two.gz &&
	same_reports w_cpp exact two.gz "$PROFILES/w_cpp"
'

# Symbolized files of two programs that are gone (copies, removed after):
# what --base reads must come from the files themselves.
test_expect_success 'two symbolized pprof files of programs that are gone: --base and a sum' '
	mkdir -p gone && cp "$PROFILES/w_shlib" "$PROFILES/libwshared.so" "$PROFILES/demo" gone/ &&
	for d in w_shlib.exact demo.exact; do
		sed "s|$PROFILES/|$PWD/gone/|" "$PROFILES/$d.heap" >$d.moved.heap &&
		"$JHEAP" --raw gone/${d%%.*} $d.moved.heap >$d.raw &&
		"$JHEAP" --proto -o $d.sym.pb.gz gone/${d%%.*} $d.moved.heap || return 1
	done &&
	rm -r gone &&
	"$JHEAP" --text --show_bytes --base w_shlib.exact.raw demo.exact.raw >want &&
	"$JHEAP" --text --show_bytes --base w_shlib.exact.sym.pb.gz demo.exact.sym.pb.gz >got &&
	grep -q " -[0-9]*  *-[0-9.]*%  *[0-9.]*%  *-[0-9]*  *-[0-9.]*% wshared_inner\$" got &&
	grep -q "cache_store_value\$" got &&
	test_cmp want got &&
	"$JHEAP" --text --show_bytes demo.exact.raw w_shlib.exact.raw >want &&
	"$JHEAP" --text --show_bytes demo.exact.sym.pb.gz w_shlib.exact.sym.pb.gz >got &&
	test_cmp want got
'

# rust_pprof DUMP OUT: the dump as rust-jemalloc-pprof writes a profile
# (util/src/lib.rs to_pprof: one sample type inuse_space/bytes, period
# type space/bytes, every address minus one, locations numbered 1..N, the
# executable maps lines as mappings with ids 1..N); values are the dump's
# own unsampled bytes (an exact dump: the counts themselves).
rust_pprof() {
	python3 - "$1" "$2" <<'EOF'
import gzip, os, sys
sys.path.insert(0, os.path.join(os.environ["SRCDIR"], "tests", "tools"))
from mkpprof import varint
def key(f, wt): return varint(f << 3 | wt)
def vfield(f, v): return key(f, 0) + varint(v) if v else b""
def lfield(f, b): return key(f, 2) + varint(len(b)) + b
strings, sidx = [""], {"": 0}
def s(x):
    if x not in sidx:
        sidx[x] = len(strings); strings.append(x)
    return sidx[x]
maps, stacks, cur = [], [], None
lines = open(sys.argv[1]).read().split("\n")
inmaps = False
for ln in lines:
    if ln.startswith("MAPPED_LIBRARIES:"):
        inmaps = True; continue
    if inmaps:
        f = ln.split()
        if len(f) >= 6 and "x" in f[1]:
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            maps.append((lo, hi, int(f[2], 16), f[5]))
    elif ln.startswith("@"):
        cur = [int(a, 16) for a in ln.split()[1:]]
    elif ln.strip().startswith("t*:") and cur is not None:
        nbytes = int(ln.split()[2])
        stacks.append((cur, nbytes)); cur = None
out = bytearray()
out += lfield(1, vfield(1, s("inuse_space")) + vfield(2, s("bytes")))
locs = {}
samples = bytearray()
for addrs, nbytes in stacks:
    ids = []
    for a in addrs:
        a -= 1
        if a not in locs:
            locs[a] = len(locs) + 1
        ids.append(locs[a])
    samples += lfield(2, lfield(1, b"".join(varint(i) for i in ids)) + lfield(2, varint(nbytes)))
out += samples
for i, (lo, hi, off, path) in enumerate(maps):
    out += lfield(3, vfield(1, i + 1) + vfield(2, lo) + vfield(3, hi) + vfield(4, off) + vfield(5, s(path)))
for a, i in locs.items():
    m = next((k + 1 for k, mp in enumerate(maps) if mp[0] <= a < mp[1]), 0)
    out += lfield(4, vfield(1, i) + vfield(2, m) + vfield(3, a))
pt = lfield(11, vfield(1, s("space")) + vfield(2, s("bytes")))
for x in strings:
    out += lfield(6, x.encode())
out += pt + vfield(12, 1)
open(sys.argv[2], "wb").write(gzip.compress(bytes(out)))
EOF
}

test_expect_success PYTHON 'a profile shaped as rust-jemalloc-pprof writes it' '
	for d in w_cpp.exact w_shlib.exact demo.exact; do
		n=${d%%.*} &&
		rust_pprof "$PROFILES/$d.heap" $d.rust.pb.gz &&
		"$JHEAP" --text --show_bytes "$PROFILES/$n" "$PROFILES/$d.heap" >want &&
		"$JHEAP" --text --show_bytes "$PROFILES/$n" $d.rust.pb.gz >got 2>err &&
		test_cmp want got &&
		grep -q "$d.rust.pb.gz: the profile has no inuse_objects values" err || return 1
	done
'

test_expect_success GO 'a Go heap profile: the flat values of go tool pprof -top' '
	mkdir -p goheap && cat >goheap/main.go <<-\EOF &&
	package main

	import (
		"os"
		"runtime"
		"runtime/pprof"
	)

	var keep [][]byte

	//go:noinline
	func leafA(n int) { keep = append(keep, make([]byte, n)) }

	//go:noinline
	func middle(n int) {
		for i := 0; i < 100; i++ {
			leafA(n)
		}
	}

	func main() {
		runtime.MemProfileRate = 1
		middle(4096)
		for i := 0; i < 50; i++ {
			keep = append(keep, make([]byte, 100000))
		}
		runtime.GC()
		f, _ := os.Create(os.Args[1])
		pprof.Lookup("heap").WriteTo(f, 0)
		f.Close()
	}
	EOF
	(cd goheap && GO111MODULE=off go build -o goheap main.go) &&
	goheap/goheap go.pb.gz &&
	for m in inuse_space alloc_objects; do
		go tool pprof -sample_index=$m -top -unit=B -nodefraction=0 go.pb.gz 2>/dev/null |
			awk "/^ *flat/ {t=1; next} t {v=\$1; sub(/B\$/, \"\", v); print \$6, v}" |
			sort >pprof.rows &&
		"$JHEAP" --text $(mode_flags $m) go.pb.gz |
			awk "NR > 1 {print \$6, \$1}" | sort >jheap.rows &&
		grep -q "^main.leafA [1-9]" pprof.rows &&
		test_cmp pprof.rows jheap.rows || return 1
	done
'

test_expect_success 'damaged pprof input: a message naming the file, exit 1' '
	b=$PROFILES/w_cpp &&
	head -c 600 w_cpp.exact.ns.pb.gz >cut.pb.gz &&
	expect_fail 1 "^jheap: cut.pb.gz: the gzip data ends early" --text "$b" cut.pb.gz &&
	head -c 500 w_cpp.pb >cut.pb &&
	expect_fail 1 "^jheap: cut.pb: a pprof profile whose protobuf breaks off at byte [0-9]+ of 500" --text "$b" cut.pb &&
	gzip -c cut.pb >cutpb.gz &&
	expect_fail 1 "^jheap: cutpb.gz: a pprof profile whose protobuf breaks off" --text "$b" cutpb.gz &&
	printf "\037\213\010\000\000\000\000\000\000\003garbagegarbage" >bad.gz &&
	expect_fail 1 "^jheap: bad.gz: corrupt gzip data" --text bad.gz &&
	gzip -c bad.gz >twice.gz &&
	expect_fail 1 "^jheap: twice.gz: gzip-compressed data inside gzip-compressed data" --text twice.gz &&
	expect_fail 2 "is a pprof profile; --proto writes it symbolized" --raw "$b" w_cpp.pb &&
	expect_fail 2 "is gzip-compressed; give it uncompressed" --raw "$b" w_cpp.heap.gz
'

test_expect_success PYTHON 'pprof input that is not a heap profile or refers to what is not there' '
	python3 - <<-\EOF &&
	import gzip, os, sys
	sys.path.insert(0, os.path.join(os.environ["SRCDIR"], "tests", "tools"))
	from mkpprof import lf, varint, vf
	strs = b"".join(lf(6, x) for x in [b"", b"samples", b"count", b"cpu", b"nanoseconds"])
	cpu = lf(1, vf(1, 1) + vf(2, 2)) + lf(1, vf(1, 3) + vf(2, 4)) + strs
	open("cpu.pb.gz", "wb").write(gzip.compress(cpu))
	heap = b"".join(lf(6, x) for x in [b"", b"inuse_space", b"bytes"]) + lf(1, vf(1, 1) + vf(2, 2))
	loc = lf(4, vf(1, 1) + vf(3, 0x1234))
	open("noloc.pb", "wb").write(heap + loc + lf(2, lf(1, varint(2)) + lf(2, varint(5))))
	open("nostr.pb", "wb").write(heap + lf(1, vf(1, 9) + vf(2, 2)))
	open("nvals.pb", "wb").write(heap + loc + lf(2, lf(1, varint(1)) + lf(2, varint(5) + varint(6))))
	open("twoids.pb", "wb").write(heap + loc + loc + lf(2, lf(1, varint(1)) + lf(2, varint(5))))
	EOF
	expect_fail 1 "^jheap: cpu.pb.gz: a pprof profile of samples/count, cpu/nanoseconds, not a heap profile" --text cpu.pb.gz &&
	expect_fail 1 "^jheap: noloc.pb: byte [0-9]+ of the profile: sample 1: location id 2 is not in the profile" --text noloc.pb &&
	expect_fail 1 "^jheap: nostr.pb: byte [0-9]+ of the profile: string index 9 past the string table" --text nostr.pb &&
	expect_fail 1 "^jheap: nvals.pb: .*sample 1 has 2 values for 1 sample types" --text nvals.pb &&
	expect_fail 1 "^jheap: twoids.pb: .*two locations with id 1" --text twoids.pb
'

test_done

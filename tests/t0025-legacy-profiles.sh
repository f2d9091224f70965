#!/bin/bash
test_description='legacy heap profiles as pprof reads them

google/pprof'"'"'s own legacy test profiles with its expected parse of each
(../shared/testdata/pprof-legacy, or $JHEAP_SHARED_TESTDATA/pprof-legacy):
a gperftools heap and growth profile with the compact memory map and its
"source=" variable (cppbench), a Go runtime text heap profile (gobench,
"@ heap/1048576", zero-count records, an empty stack).  Every file gives
exactly the totals and the per-stack values of its .string file: as pprof
does, each record'"'"'s unsampled values are truncated to integers
(tests/tools/legacycheck.py).
And a real Go text heap profile (runtime/pprof, debug=1) against go tool
pprof reading the same file with the same binary: every row'"'"'s flat value,
so the frames of Go'"'"'s runtime at the leaf (a map'"'"'s growth allocates in
runtime.makeBucketArray) go to their caller, as pprof'"'"'s legacy parser
drops them, and a stack of the runtime alone stays whole.'
. "$(dirname "$0")/lib.sh"

LEGACY=${JHEAP_SHARED_TESTDATA:-$SRCDIR/../shared/testdata}/pprof-legacy
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test -x /usr/bin/python3 && test_set_prereq PYTHON
[ -d "$LEGACY" ] && test_set_prereq LEGACY ||
	say "# no $LEGACY (set JHEAP_SHARED_TESTDATA to the folder holding pprof-legacy): pprof's legacy profiles skipped"
if test_have_prog go; then
	test_set_prereq GO
	export HOME=$TRASH_DIRECTORY GOPATH=$TRASH_DIRECTORY/go GOCACHE=$BUILD_DIR/tools/gocache GOFLAGS=
	export PPROF_TMPDIR=$TRASH_DIRECTORY
fi

for f in cppbench.heap cppbench.growth gobench.heap; do
	test_expect_success LEGACY,PYTHON "$f: pprof's totals and values per stack" '
		/usr/bin/python3 "$TEST_DIRECTORY/tools/legacycheck.py" "$LEGACY/'$f'.string" "$JHEAP" "$LEGACY/'$f'" >out &&
		cat out
	'
done

test_expect_success LEGACY 'cppbench.heap: $source expanded in the map, v2 at the header'"'"'s period' '
	"$JHEAP" --text --show_bytes --addresses --no-symbolize "$LEGACY/cppbench.heap" >out &&
	grep -q " cppbench_server_main+0x8635c7 " out &&
	head -n 1 out >total && echo "Total: 80935293 B" >want && test_cmp want total
'

test_expect_success LEGACY 'gobench.heap: Go'"'"'s heap/N unsampled at N/2 (pprof: 7,721,316 in use, 11,445 objects)' '
	"$JHEAP" --text --show_bytes --no-symbolize "$LEGACY/gobench.heap" | head -n 1 >total &&
	echo "Total: 7721316 B" >want && test_cmp want total &&
	"$JHEAP" --text --inuse_objects --no-symbolize "$LEGACY/gobench.heap" | head -n 1 >total &&
	echo "Total: 11445 objects" >want && test_cmp want total
'

test_expect_success LEGACY 'cppbench.heap: 41,063 objects in use, as pprof counts them' '
	"$JHEAP" --text --inuse_objects --no-symbolize "$LEGACY/cppbench.heap" | head -n 1 >total &&
	echo "Total: 41063 objects" >want && test_cmp want total
'

test_expect_success GO 'a real Go text heap profile: go tool pprof'"'"'s flat value in every row' '
	mkdir -p goheap &&
	cat >goheap/main.go <<-\EOF &&
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
	func leafB(n int) { keep = append(keep, make([]byte, n)) }

	var m = map[int]int{}

	// every byte leafC holds belongs to the map, allocated as it grows in
	// runtime.makeBucketArray, under runtime.hashGrow and
	// runtime.mapassign_fast64: its last bucket arrays, of megabytes,
	// are sampled at any rate
	//go:noinline
	func leafC(n int) {
		for i := 0; i < n; i++ {
			m[i] = i
		}
	}

	func main() {
		for i := 0; i < 20000; i++ {
			leafA(100 + i%900)
		}
		for i := 0; i < 300; i++ {
			leafB(64 << 10)
		}
		leafC(1000000)
		runtime.GC()
		f, _ := os.Create(os.Args[1])
		pprof.Lookup("heap").WriteTo(f, 1)
		f.Close()
	}
	EOF
	(cd goheap && GO111MODULE=off go build -o goheap main.go) &&
	goheap/goheap go.heap &&
	head -n 1 go.heap | grep -q "@ heap/1048576\$" &&
	grep -q "^# runtime.MemStats" go.heap &&
	n=$(grep -c "^[0-9]" go.heap) &&
	for m in inuse_space alloc_space inuse_objects alloc_objects; do
		# go tool pprof once printed nothing in a make check (its error
		# unseen): a second try when there is no table
		for try in 1 2; do
			go tool pprof -sample_index=$m -top -nodefraction=0 -unit=B goheap/goheap go.heap >pprof.out 2>pprof.err
			grep -q " total\$" pprof.out && break
		done &&
		awk "/ total\$/ { t = \$NF == \"total\" ? \$(NF-1) : 0; sub(/B\$/, \"\", t); print \"Total\", t }
			     /^ *flat/ { r = 1; next } r && \$1 != \"0\" { v = \$1; sub(/B\$/, \"\", v); print \$6, v }" pprof.out >pprof.rows &&
		{ grep -q "^Total " pprof.rows || { cat pprof.out pprof.err; false; }; } &&
		"$JHEAP" --text --show_bytes --$m goheap/goheap go.heap |
			awk "NR == 1 { print \"Total\", \$2 } NR > 1 && \$1 != \"0\" { print \$6, \$1 }" >jheap.rows &&
		cat jheap.rows &&
		grep -q "^main.leafC [1-9]" jheap.rows && grep -q "^main.leafC [1-9]" pprof.rows &&
		test $(wc -l <pprof.rows) = $(wc -l <jheap.rows) &&
		# both truncate each record to an integer: equal.  A row may
		# be named otherwise where pprof looks up the first frame after
		# the call (it subtracts 1 from the others only) and the call is
		# an inlined function: jheap names the leaf as the Go runtime
		# does in its comment lines in the file (at the address minus 1), and
		# pprof the function it is inlined into; such a pair (the first
		# comment line of a record, a later one) is accepted, at the
		# same value
		awk "FNR == 1 { f++ }
			f == 1 && /^[0-9]/ { first = \"\"; next }
			f == 1 && \$1 == \"#\" && \$2 ~ /^0x/ { fn = \$3; sub(/[+]0x.*/, \"\", fn)
				if (first == \"\") first = fn; else pair[first SUBSEP fn] = 1; next }
			f == 1 { next }
			f == 2 { p[\$1] = \$2; next }
			(\$1 in p) && \$2 == p[\$1] { next }
			{ ok = 0; for (q in p) if (p[q] == \$2 && ((\$1 SUBSEP q) in pair)) ok = 1
			  if (!ok) { print \"differ:\", \$0, p[\$1]; bad = 1 } }
			END { exit bad }" go.heap pprof.rows jheap.rows || return 1
	done
'

test_done

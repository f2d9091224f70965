#!/bin/bash
test_description='JIT code named from perf map files; a note when stacks end in JIT code

testdata/w_jit.c compiles two pieces of code into anonymous executable
memory that call allocating C functions, and writes the perf map a JIT
runtime writes (/tmp/perf-PID.map: "START SIZE NAME").  Its dump, made
under Debian'"'"'s libjemalloc, has stacks that stop in that code (it has no
unwind tables, as JavaScript frames have none).  Without a map the frames
are [anon]+0xOFFSET and a note says what share that is and what names it;
with the map (--perf-map=FILE, DUMP.perf.map beside the dump, or
/tmp/perf-PID.map of the dump'"'"'s process) they carry the runtime'"'"'s names.
A map that is not the dump owner'"'"'s, a FIFO, a link or malformed lines are
not trusted.'
. "$(dirname "$0")/lib.sh"

JEMALLOC_SO=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
[ -f "$JEMALLOC_SO" ] || test_skip "no $JEMALLOC_SO (libjemalloc2)"
test "$(uname -m)" = x86_64 || test_skip "the workload writes x86-64 code"
test_have_prog cc || test_skip "no C compiler"

test_expect_success 'w_jit under libjemalloc: a dump and its perf map' '
	cc -O0 -g -o w_jit "$SRCDIR/testdata/w_jit.c" &&
	mkdir dumps &&
	W_JIT_MAP=$PWD/jit.map timeout 120 env LD_PRELOAD=$JEMALLOC_SO \
		MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$PWD/dumps/w ./w_jit &&
	ls dumps/w.*.heap >list && test $(wc -l <list) = 1 &&
	cp "$(cat list)" jit.heap &&
	test $(wc -l <jit.map) = 2
'

# leaf_under NAME JITNAME: in traces, NAME is the leaf of a stack whose
# next (and last) frame is JITNAME
leaf_under() {
	awk -v a="$1" -v b="$2" "
		/^-----/ { if (n == 2 && f[1] == a && f[2] == b) ok = 1; n = 0; next }
		{ n++; line = \$0; sub(/^ *[0-9.]+ +/, \"\", line); sub(/^ +/, \"\", line); f[n] = line }
		END { exit !ok }" traces || { echo "no $1 under $2:"; cat traces; return 1; }
}

test_expect_success 'no map: [anon]+0xOFFSET, and a note on the share and what would name it' '
	"$JHEAP" --traces jit.heap >traces 2>err &&
	leaf_under jit_alloc_small "[anon]+0x4f" &&
	grep -q "^jheap: note: [0-9.]*% of the bytes have stacks that end in code compiled at run time or in a JavaScript engine.s builtins: the unwinder cannot walk past that code, so the callers above it are not in the dump; [0-9.]*% end in anonymous memory without names (\[anon\]+0xOFFSET): .*node --perf-basic-prof.*/tmp/perf-PID.map.*DUMP.perf.map.*--perf-map=FILE\$" err
'

test_expect_success '--perf-map=FILE names the JIT frames' '
	"$JHEAP" --traces --perf-map=jit.map jit.heap >traces 2>err &&
	leaf_under jit_alloc_small "LazyCompile:*jsAlloc app.js:1" &&
	leaf_under jit_alloc_large "Builtin:jsGrow" &&
	grep -q "^jheap: note: [0-9.]*% of the bytes have stacks that end in code compiled at run time" err &&
	! grep -q "without names" err &&
	"$JHEAP" --text --show_bytes --perf-map=jit.map jit.heap >text &&
	grep -q " $((4 * 1048576)) .* Builtin:jsGrow\$" text
'

test_expect_success 'DUMP.perf.map beside the dump is read' '
	cp jit.map jit.heap.perf.map &&
	"$JHEAP" --traces jit.heap >traces 2>err &&
	leaf_under jit_alloc_small "LazyCompile:*jsAlloc app.js:1" &&
	rm jit.heap.perf.map
'

test_expect_success '/tmp/perf-PID.map of the process that wrote the dump is read' '
	pid=$(sed -n "s/^w\.\([0-9]*\)\..*/\1/p" <<-EOF
	$(basename "$(cat list)")
	EOF
	) &&
	test -n "$pid" &&
	if test -e /tmp/perf-$pid.map; then echo "(a /tmp/perf-$pid.map exists: skipped)"; exit 0; fi &&
	cp jit.map /tmp/perf-$pid.map &&
	"$JHEAP" --traces "$(cat list)" >traces 2>err
	rc=$?
	rm -f /tmp/perf-$pid.map
	test $rc = 0 && leaf_under jit_alloc_large "Builtin:jsGrow"
'

test_expect_success 'a map that is not the dump owner'"'"'s is not read, unless named' '
	if test "$(id -u)" != 0; then echo "(not root: chown skipped)"; exit 0; fi &&
	cp jit.map jit.heap.perf.map && chown nobody jit.heap.perf.map &&
	"$JHEAP" --traces jit.heap >traces 2>err &&
	leaf_under jit_alloc_small "[anon]+0x4f" &&
	grep -q "^jheap: warning: perf map: .jit.heap.perf.map. belongs to user [0-9]*, not to the dump.s owner" err &&
	"$JHEAP" --traces --perf-map=jit.heap.perf.map jit.heap >traces 2>err &&
	leaf_under jit_alloc_small "LazyCompile:*jsAlloc app.js:1" &&
	rm -f jit.heap.perf.map
'

test_expect_success 'a FIFO or a link beside the dump is not read (no hang); malformed lines are skipped' '
	mkfifo jit.heap.perf.map &&
	timeout 60 "$JHEAP" --traces jit.heap >traces 2>err &&
	grep -q "perf map: .jit.heap.perf.map. is not a regular file" err &&
	rm jit.heap.perf.map && ln -s jit.map jit.heap.perf.map &&
	timeout 60 "$JHEAP" --traces jit.heap >traces 2>err &&
	leaf_under jit_alloc_small "[anon]+0x4f" &&
	rm jit.heap.perf.map &&
	{ printf "zz 10 bad\n0x10\n%s\n" "$(head -c 70000 /dev/zero | tr "\\0" a)"; cat jit.map; printf "1 0 empty\nffffffffffffffff 10 wraps\n"; } >messy.map &&
	"$JHEAP" --traces --perf-map=messy.map jit.heap >traces 2>err &&
	leaf_under jit_alloc_large "Builtin:jsGrow" &&
	expect_fail 1 "^jheap: --perf-map: cannot open .missing.map.: No such file" --perf-map=missing.map jit.heap
'

test_expect_success 'a dump without JIT code: no note' '
	"$JHEAP" --traces "$SRCDIR/testdata/parse/gperf_v1.heap" >/dev/null 2>err;
	! grep -q "compiled at run time" err
'

test_done

#!/bin/bash
test_description='jheap record, dump and ctl on programs that link a prefixed jemalloc of their own

A Rust program (testdata/rheap, as t0222 builds it) with jemalloc-sys'"'"'s
jemalloc linked in statically under the _rjem_ prefix (settings in
_RJEM_MALLOC_CONF): the control library finds _rjem_mallctl in the
program'"'"'s own symbol table, the dumps hold what the steps allocated, the
names are the program'"'"'s.  The same built without profiling (the
crate'"'"'s default): record, status and dump say so.  A C program with a
jemalloc built from the same source under the je_ prefix, as Redis bundles
it (settings in JE_MALLOC_CONF).'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

BUILD_RHEAP=$TEST_DIRECTORY/tools/build-rheap.sh
BUILD_JE=$TEST_DIRECTORY/tools/build-jemalloc-je.sh
why=$(bash "$BUILD_RHEAP" --check) && test_set_prereq CARGO ||
	say "skipping the Rust tests: $why"
why=$(bash "$BUILD_JE" --check) && test_set_prereq JESRC ||
	say "skipping the je_ tests: $why"
test_have_prereq CARGO || test_have_prereq JESRC || test_skip "neither cargo nor jemalloc's source"
test_have_prog llvm-symbolizer && test_have_prog c++filt && test_have_prog python3 &&
	test_set_prereq SYMBOLIZER

# testdata/rheap's steps and testdata/w_ctl.c's table: bytes kept
FIRST=$((50 * 10240)) SECOND=$((20 * 40960)) MORE=$((8 * 114688))
# Rust's allocation glue and jemalloc's names, which no row may have
GLUE="_rjem_|je_|__rust|__rdl_|__rg_|GlobalAlloc>::|alloc::alloc::|Global>?::|Allocator>::|mallocx"

# The jemalloc builds are kept in build/ (a minute or two each the first
# time): the one with profiling is t0222's.
test_expect_success CARGO 'build the Rust program, with and without profiling' '
	bash "$BUILD_RHEAP" rheap &&
	bash "$BUILD_RHEAP" --no-profiling rheap-noprof &&
	nm rheap | grep " T _rjem_mallctl\$" && ! nm rheap | grep " T mallctl\$" &&
	nm rheap-noprof | grep " T _rjem_mallctl\$"
'

test_expect_success CARGO 'record: the program'"'"'s own jemalloc, its settings in _RJEM_MALLOC_CONF' '
	bg r "$JHEAP" record --sample=1 --accum --dir=d -- ./rheap steps &&
	wait_line r.out "^ready\$" &&
	pid=$(cat r.pid) &&
	grep "^jheap: recording process $pid (rheap) with its own jemalloc (_rjem_mallctl; settings in _RJEM_MALLOC_CONF); every allocation recorded\$" r.err &&
	tr "\0" "\n" </proc/$pid/environ | grep "^_RJEM_MALLOC_CONF=prof:true,.*prof_prefix:$TRASH_DIRECTORY/d/rheap," &&
	! grep -q libjemalloc /proc/$pid/maps && grep -q "/libjheapctl.so\$" /proc/$pid/maps &&
	! grep "jheap-ctl:" r.err &&
	"$JHEAP" ctl $pid status >st &&
	grep "^jemalloc: .* (_rjem_mallctl in $TRASH_DIRECTORY/rheap)\$" st &&
	grep "^profiling: enabled\$" st && grep "^active: yes\$" st &&
	grep "^dumps: $TRASH_DIRECTORY/d/rheap.$pid.<seq>.<kind>.heap\$" st
'

test_expect_success CARGO 'a dump after step 1 holds what steps_first allocated, under its own name' '
	w_step r 1 &&
	d1=$("$JHEAP" dump $(cat r.pid)) && echo "$d1" >d1 &&
	case $d1 in "$TRASH_DIRECTORY"/d/rheap.$(cat r.pid).*.m*.heap) ;; *) false ;; esac &&
	"$JHEAP" --show_bytes "$d1" >r1 &&
	check_total r1 "$(heap_sum "$d1" inuse_space | cut -d. -f1)" &&
	check_rows r1 <<-EOF &&
	$FIRST $FIRST rheap::steps_first
	none none rheap::steps_second
	EOF
	sed -n 2p r1 | grep " rheap::steps_first\$" &&
	! awk "NR > 1 { print \$6 }" r1 | grep -E "^($GLUE)"
'

test_expect_success CARGO 'step 2 (boxes): the growth since the first dump, inside steps_second' '
	w_step r 2 &&
	d2=$("$JHEAP" dump $(cat r.pid)) && echo "$d2" >d2 &&
	"$JHEAP" --show_bytes --base "$(cat d1)" "$d2" >diff &&
	check_total diff $SECOND &&
	check_rows diff <<-EOF
	- $SECOND rheap::steps_second
	none none rheap::steps_first
	EOF
'

test_expect_success CARGO 'ctl off: a step while profiling is off adds no samples' '
	"$JHEAP" ctl $(cat r.pid) off >out &&
	echo "profiling in process $(cat r.pid) is inactive (it was active)" >expected &&
	test_cmp expected out &&
	w_step r 3 &&
	d3=$("$JHEAP" dump $(cat r.pid)) && echo "$d3" >d3 &&
	"$JHEAP" --alloc_objects --base "$(cat d2)" "$d3" >off &&
	check_total off 0
'

test_expect_success CARGO 'ctl on: the next step is sampled, exactly' '
	"$JHEAP" ctl $(cat r.pid) on | grep "is active (it was inactive)" &&
	w_step r 4 &&
	d4=$("$JHEAP" dump $(cat r.pid)) && echo "$d4" >d4 &&
	"$JHEAP" --show_bytes --base "$(cat d3)" "$d4" >on &&
	check_total on $MORE && check_row on rheap::steps_more $MORE $MORE
'

test_expect_success SYMBOLIZER,CARGO 'every leaf of a recorded dump is llvm-symbolizer'"'"'s first frame that is not glue' '
	python3 "$TEST_DIRECTORY/tools/leafcheck.py" tag "$(cat d4)" tagged.heap &&
	"$JHEAP" --collapsed ./rheap tagged.heap >tagged.collapsed &&
	python3 "$TEST_DIRECTORY/tools/leafcheck.py" measure jemalloc rust tagged.heap tagged.collapsed >agree &&
	cat agree &&
	grep -q "^agree .* (100.0%)\$" agree
'

test_expect_success CARGO 'SIGTERM: the program exits as it would, with a final dump' '
	pid=$(cat r.pid) &&
	kill -TERM $pid && wait_line r.out "^bye\$" &&
	for i in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done &&
	! kill -0 $pid 2>/dev/null &&
	"$JHEAP" --show_bytes d/rheap.$pid.*.f.heap >final &&
	check_rows final <<-EOF
	$FIRST $FIRST rheap::steps_first
	- $SECOND rheap::steps_second
	$MORE $MORE rheap::steps_more
	EOF
'

# The two environment lines for a Rust program started by hand: jemalloc
# reads _RJEM_MALLOC_CONF, and nothing from MALLOC_CONF.
test_expect_success CARGO 'preloaded by hand: _RJEM_MALLOC_CONF works, MALLOC_CONF does not' '
	mkdir -p h &&
	bg h env LD_PRELOAD="$CTL_LIB" _RJEM_MALLOC_CONF=prof:true,lg_prof_sample:0,prof_prefix:h/r ./rheap steps &&
	wait_line h.out "^ready\$" && w_step h 1 &&
	path=$("$JHEAP" dump $(cat h.pid)) &&
	test "$path" = "$TRASH_DIRECTORY/h/r.$(cat h.pid).0.m0.heap" &&
	"$JHEAP" --show_bytes "$path" >r && check_row r rheap::steps_first $FIRST $FIRST &&
	bg m env LD_PRELOAD="$CTL_LIB" MALLOC_CONF=prof:true,lg_prof_sample:0,prof_prefix:h/m ./rheap steps &&
	wait_line m.out "^ready\$" &&
	expect_fail 1 "^jheap: process $(cat m.pid) \(rheap\): heap profiling is not enabled in process $(cat m.pid): jemalloc reads _RJEM_MALLOC_CONF=prof:true only when the program starts\$" dump $(cat m.pid) &&
	"$JHEAP" ctl $(cat m.pid) status | grep "^profiling: not enabled (start the program with _RJEM_MALLOC_CONF=prof:true)\$"
'

test_expect_success CARGO 'record says at once when the settings turn profiling off' '
	"$JHEAP" record -q --dir=o --malloc-conf=prof:false -- ./rheap >/dev/null 2>err &&
	grep "^jheap-ctl: process [0-9]*: no heap profiles: heap profiling is not enabled in process [0-9]*: jemalloc reads _RJEM_MALLOC_CONF=prof:true only when the program starts\$" err
'

NOPROF="was built without profiling (--enable-prof; in Rust, the \"profiling\" feature of jemalloc-sys or tikv-jemalloc-sys)"

test_expect_success CARGO 'without profiling compiled in: record, status, dump and ctl say so' '
	bg n "$JHEAP" record --dir=n -- ./rheap-noprof steps &&
	wait_line n.out "^ready\$" &&
	pid=$(cat n.pid) &&
	wait_line n.err "^jheap-ctl:" &&
	# jemalloc itself does not know the settings
	grep "^<jemalloc>: Invalid conf pair: prof:true\$" n.err &&
	grep -F "jheap-ctl: process $pid: no heap profiles: the jemalloc in process $pid (_rjem_mallctl in $TRASH_DIRECTORY/rheap-noprof) $NOPROF" n.err &&
	"$JHEAP" ctl $pid status >st &&
	grep "^jemalloc: .* (_rjem_mallctl in $TRASH_DIRECTORY/rheap-noprof)\$" st &&
	grep -F "profiling: not compiled in (jemalloc was built without --enable-prof; in Rust, the \"profiling\" feature of jemalloc-sys or tikv-jemalloc-sys)" st &&
	! grep "^active:" st &&
	"$JHEAP" dump $pid >out 2>err; test $? = 1 &&
	! test -s out &&
	grep -F "jheap: process $pid (rheap-noprof): the jemalloc in process $pid (_rjem_mallctl in $TRASH_DIRECTORY/rheap-noprof) $NOPROF" err &&
	"$JHEAP" ctl $pid off 2>err; test $? = 1 &&
	grep -F "$NOPROF" err
'

test_expect_success JESRC 'build jemalloc with the je_ prefix, and w_ctl on it' '
	je=$(bash "$BUILD_JE") &&
	cc -O0 -g -DJEMALLOC_MANGLE -include jemalloc/jemalloc.h -I"$je/include" \
		-o w_ctl_je "$SRCDIR/testdata/w_ctl.c" "$je/lib/libjemalloc_pic.a" -lpthread -ldl -lm &&
	nm w_ctl_je | grep " T je_mallctl\$" && ! nm w_ctl_je | grep " T mallctl\$" &&
	! nm w_ctl_je | grep " T malloc\$"
'

test_expect_success JESRC 'je_: record sets JE_MALLOC_CONF; the dumps hold what w_ctl allocated' '
	bg j "$JHEAP" record --sample=1 --dir=j -- ./w_ctl_je &&
	wait_line j.out "^ready\$" &&
	pid=$(cat j.pid) &&
	grep "^jheap: recording process $pid (w_ctl_je) with its own jemalloc (je_mallctl; settings in JE_MALLOC_CONF); every allocation recorded\$" j.err &&
	! grep "jheap-ctl:" j.err && ! grep -q libjemalloc /proc/$pid/maps &&
	"$JHEAP" ctl $pid status >st &&
	grep "^jemalloc: .* (je_mallctl in $TRASH_DIRECTORY/w_ctl_je)\$" st &&
	grep "^profiling: enabled\$" st &&
	w_step j 1 &&
	"$JHEAP" dump $pid --show_bytes >jr1 2>/dev/null &&
	check_total jr1 $FIRST && sed -n 2p jr1 | grep " ctl_first\$" &&
	"$JHEAP" ctl $pid off >/dev/null && w_step j 2 &&
	"$JHEAP" ctl $pid on >/dev/null && w_step j 3 &&
	"$JHEAP" dump $pid --show_bytes >jr3 2>/dev/null &&
	check_rows jr3 <<-EOF &&
	$FIRST $FIRST ctl_first
	none none ctl_second
	$MORE $MORE ctl_more
	EOF
	! awk "NR > 1 { print \$6 }" jr3 | grep -E "^($GLUE)" &&
	kill -TERM $pid && wait_line j.out "^bye\$" &&
	for i in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done &&
	ls j/w_ctl_je.$pid.*.f.heap
'

test_done

#!/bin/bash
test_description='a sum of dumps of a process and its forked children says what it counts more than once

testdata/w_sigfork.c allocates 5 x 32768 bytes (handler_alloc), then
forks; the child allocates 10 x 65536 more (child_work); both write a
final dump.  Their program and libraries are mapped at the same addresses
(fork copies the layout, exec draws a new one: analyzer/forks.h), so a
sum of the two dumps gets a note that what was allocated before fork is
counted once per dump; two separate runs do not; two dumps of one pid say
so.'
. "$(dirname "$0")/lib.sh"

JEMALLOC_SO=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
[ -f "$JEMALLOC_SO" ] || test_skip "no $JEMALLOC_SO (libjemalloc2)"
test_have_prog cc || test_skip "no C compiler"
test "$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null)" = 2 ||
	test_skip "address randomization is off here (kernel.randomize_va_space): separate runs share one layout"

# run N: one run of w_sigfork, its parent's dump in pN.heap, the child's
# in cN.heap (the child's pid is the larger one, the parent's the one
# whose dump has no child_work)
run() {
	mkdir "r$1" &&
	timeout 120 env LD_PRELOAD=$JEMALLOC_SO \
		MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$PWD/r$1/w \
		./w_sigfork >"r$1.out" 2>&1 &&
	ls r$1/w.*.heap >list && test "$(wc -l <list)" = 2 &&
	for f in $(cat list); do
		if "$JHEAP" --traces "$f" 2>/dev/null | grep -q child_work; then
			cp "$f" "c$1.$(basename "$f")"
		else
			cp "$f" "p$1.$(basename "$f")"
		fi
	done &&
	ls p$1.* c$1.* >/dev/null
}

test_expect_success 'two runs of w_sigfork under libjemalloc: a parent'"'"'s and a child'"'"'s dump each' '
	cc -O0 -g -o w_sigfork "$SRCDIR/testdata/w_sigfork.c" -lpthread &&
	run 1 && run 2
'

test_expect_success 'parent + child: a note naming both and their pids; the sum holds handler_alloc twice' '
	"$JHEAP" --text --show_bytes p1.* c1.* >text 2>err &&
	cat err &&
	ppid=$(echo p1.* | sed "s/.*\.w\.\([0-9]*\)\..*/\1/") &&
	cpid=$(echo c1.* | sed "s/.*\.w\.\([0-9]*\)\..*/\1/") &&
	grep -q "^jheap: note: .p1\.w\.$ppid\.0\.f\.heap., .c1\.w\.$cpid\.0\.f\.heap.: 2 dumps of processes forked from one another ($ppid, $cpid: their program and libraries at the same addresses): what was allocated before fork is in each of them, and counted once per dump in this sum\$" err &&
	check_row text handler_alloc $((2 * 5 * 32768)) - &&
	check_row text child_work $((10 * 65536)) -
'

test_expect_success 'two separate runs: no note' '
	"$JHEAP" --text p1.* p2.* >/dev/null 2>err &&
	! grep -q "forked from one another" err &&
	"$JHEAP" --text c1.* p2.* >/dev/null 2>err &&
	! grep -q "forked" err
'

test_expect_success 'both runs at once: one note per run' '
	"$JHEAP" --text p1.* c1.* p2.* c2.* >/dev/null 2>err &&
	test "$(grep -c "forked from one another" err)" = 2
'

test_expect_success 'one dump twice: a note that it is one process' '
	cp p1.* again.heap &&
	"$JHEAP" --text p1.* again.heap >/dev/null 2>err &&
	grep -q "^jheap: note: .*2 dumps of processes forked from one another\|^jheap: note: .*2 dumps of one process" err &&
	cp p1.* "x.$(echo p1.* | sed "s/^p1\.//")" &&
	"$JHEAP" --text p1.* x.* >/dev/null 2>err &&
	grep -q "^jheap: note: .*: 2 dumps of one process ([0-9]*): what it held at each dump is counted in each, 2 times in this sum\$" err
'

test_expect_success 'a single dump, or a --base: no note' '
	"$JHEAP" --text c1.* >/dev/null 2>err && ! grep -q "forked\|one process" err &&
	"$JHEAP" --text --base="$(echo p1.*)" c1.* >/dev/null 2>err && ! grep -q "forked\|one process" err
'

test_done

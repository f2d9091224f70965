#!/bin/bash
test_description='valgrind memcheck: no errors and no definite leaks on representative runs'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_have_prog valgrind || test_skip "valgrind is not installed"
# a sanitizer build cannot run under valgrind; CI's first pass covers it
if nm "$JHEAP" 2>/dev/null | grep -q __asan_init; then
	test_skip "$JHEAP is built with AddressSanitizer"
fi
test_need_profiles

vg() {
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--show-leak-kinds=definite "$JHEAP" "$@" >out 2>err
	rc=$?
	if [ $rc -eq 99 ] || grep -q "==[0-9]*==" err; then
		cat err; return 1
	fi
	return 0
}

test_expect_success 'C++ -O2 dump, text with inline frames and libc debug info' '
	vg --show_bytes "$PROFILES/w_cpp.exact.heap" && grep -q "make_buf (inline)" out
'

test_expect_success 'pprof output with threads' '
	vg --proto -o t.pb.gz "$PROFILES/w_threads.accum.heap" && test -s t.pb.gz
'

test_expect_success 'a diff, folded, with filters' '
	vg --collapsed --focus=main --base "$PROFILES/w_basic.exact.heap" "$PROFILES/w_basic.accum.heap"
'

test_expect_success 'source listing, dot and a growth series' '
	vg --list=alloc_realloc "$PROFILES/w_basic.exact.heap" && grep -q ROUTINE out &&
	vg --dot "$PROFILES/demo.exact.heap" &&
	vg --growth "$PROFILES/demo.exact.heap" "$PROFILES/demo.accum.heap" "$PROFILES/demo.sampled.heap"
'

test_expect_success 'error paths: truncated dump, missing binary' '
	head -c 300 "$PROFILES/w_basic.exact.heap" >trunc.heap &&
	vg trunc.heap; grep -q truncated err &&
	sed "s|$PROFILES/w_basic\$|/nonexistent/w_basic|" "$PROFILES/w_basic.exact.heap" >moved.heap &&
	vg moved.heap; grep -q "cannot open" err
'

test_done

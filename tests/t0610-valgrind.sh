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

# vg ARGS...: jheap ARGS under memcheck, output in out, errors in err, its
# exit status in rc; false (printing valgrind's report) on a memory error
# or a definite leak.
vg() {
	valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
		--show-leak-kinds=definite "$JHEAP" "$@" >out 2>err
	echo $? >rc
	if [ "$(cat rc)" -eq 99 ] || grep -q "==[0-9]*==" err; then
		cat err; return 1
	fi
	return 0
}

# same_as_plain ARGS...: the last vg run exited 0 and printed what jheap
# ARGS prints without valgrind
same_as_plain() {
	test "$(cat rc)" -eq 0 || { echo "exit status $(cat rc) under valgrind"; cat err; return 1; }
	"$JHEAP" "$@" >plain.out 2>plain.err && test_cmp plain.out out
}

test_have_prog dot && test_set_prereq GRAPHVIZ
H=$PROFILES/w_basic.exact.heap
A=$PROFILES/w_basic.accum.heap

test_expect_success 'C++ -O2 dump, text with inline frames and libc debug info' '
	vg --show_bytes "$PROFILES/w_cpp.exact.heap" && same_as_plain --show_bytes "$PROFILES/w_cpp.exact.heap" &&
	grep -q "make_buf (inline)" out &&
	check_total out "$(heap_sum "$PROFILES/w_cpp.exact.heap" inuse_space | cut -d. -f1)"
'

test_expect_success 'pprof output with threads: read back, the same report' '
	vg --proto -o t.pb.gz "$PROFILES/w_threads.accum.heap" && test "$(cat rc)" -eq 0 &&
	gzip -t t.pb.gz &&
	"$JHEAP" --show_bytes --alloc_space t.pb.gz >back &&
	"$JHEAP" --show_bytes --alloc_space "$PROFILES/w_threads.accum.heap" >want &&
	test_cmp want back &&
	if test_have_prog go; then
		# the threads are labels, as go tool pprof reads them
		HOME=$PWD go tool pprof -raw t.pb.gz >raw 2>/dev/null &&
		for t in 1 2 3 4; do
			grep -q "thread:\[t$t\]" raw || { echo "no thread t$t"; return 1; }
		done
	fi
'

# --collapsed with --base writes two counts a stack (flamegraph.pl'"'"'s
# difffolded form): the base'"'"'s and the profile'"'"'s, each its own dump'"'"'s.
test_expect_success 'a diff, folded, with filters: each column is its dump'"'"'s' '
	vg --collapsed --focus=main --base "$H" "$A" &&
	same_as_plain --collapsed --focus=main --base "$H" "$A" &&
	grep -q ";main;alloc_malloc 1024000 1024000\$" out &&
	"$JHEAP" --collapsed --focus=main "$H" >base.folded &&
	"$JHEAP" --collapsed --focus=main "$A" >prof.folded &&
	awk "{ n = \$(NF - 1); \$(NF - 1) = \"\"; sub(/ +[^ ]+\$/, \"\"); sub(/ +\$/, \"\"); print \$0, n }" out >col1 &&
	awk "{ n = \$NF; \$NF = \$(NF - 1) = \"\"; sub(/ +\$/, \"\"); print \$0, n }" out >col2 &&
	grep -v " 0\$" col1 >col1.nz && test_cmp base.folded col1.nz &&
	grep -v " 0\$" col2 >col2.nz && test_cmp prof.folded col2.nz
'

test_expect_success 'source listing' '
	vg --list=alloc_realloc "$H" && same_as_plain --list=alloc_realloc "$H" &&
	grep -q ROUTINE out && grep -q "realloc(p, 200000)" out
'

test_expect_success 'dot' '
	vg --dot "$PROFILES/demo.exact.heap" && same_as_plain --dot "$PROFILES/demo.exact.heap" &&
	head -n 1 out | grep -q "^digraph" && grep -q "cache_store_value" out &&
	{ ! test_have_prereq GRAPHVIZ || dot -Tsvg out >/dev/null; }
'

# demo.exact, .accum and .sampled in turn: each call site'"'"'s first and last
# values are its flat values in the first and last dump; its change is
# their difference, within 1: the sampled dump'"'"'s values have fractions,
# and each column is its own value truncated.
test_expect_success 'a growth series' '
	set -- "$PROFILES/demo.exact.heap" "$PROFILES/demo.accum.heap" "$PROFILES/demo.sampled.heap" &&
	vg --growth --show_bytes "$@" && same_as_plain --growth --show_bytes "$@" &&
	grep -q "^Growth of inuse_space over 3 profiles" out &&
	"$JHEAP" --show_bytes "$1" >first && "$JHEAP" --show_bytes "$3" >last &&
	sed 1,2d out >sites && test -s sites &&
	while read -r slope fit f l change name; do
		check_row first "$name" "$f" - && check_row last "$name" "$l" - &&
		d=$((change - (l - f))) && test "$d" -ge -1 && test "$d" -le 1 ||
		{ echo "$name: change $change, last - first $((l - f))"; return 1; }
	done <sites
'

test_expect_success 'error paths: truncated dump, missing binary' '
	head -c 300 "$PROFILES/w_basic.exact.heap" >trunc.heap &&
	vg trunc.heap && test "$(cat rc)" -eq 1 && grep -q truncated err &&
	sed "s|$PROFILES/w_basic\$|/nonexistent/w_basic|" "$H" >moved.heap &&
	vg moved.heap && test "$(cat rc)" -eq 1 && grep -q "cannot open" err
'

test_done

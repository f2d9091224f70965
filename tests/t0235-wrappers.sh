#!/bin/bash
test_description='malloc wrappers: one hint line with the --allocator option to paste; patterns that match nothing warn

testdata/w_wrap.c allocates through xmalloc (exported, so named in the
stripped build as nginx'"'"'s ngx_alloc is) and the static pool_grab
(unnamed once stripped, as nginx'"'"'s ngx_palloc_large: w_wrap+0xSTART),
each called from three functions, and through str_new, a constructor with
three callers that is named for what it builds (not a wrapper: its row
stays).  The rule (analyzer/wrappers.h): innermost above the allocator for
most of its bytes, many distinct callers, named for allocating or
unnamed.  The hint'"'"'s option, pasted, gives each caller exactly what the
workload'"'"'s table says it allocated (jemalloc'"'"'s usable sizes).
A pattern of --focus, --ignore, --retain, --exclude or --allocator that
matches nothing warns, naming the option; one with < or ( is matched
against full names too.'
. "$(dirname "$0")/lib.sh"

JEMALLOC_SO=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
[ -f "$JEMALLOC_SO" ] || test_skip "no $JEMALLOC_SO (libjemalloc2)"
test_have_prog cc || test_skip "no C compiler"
test_need_profiles
P=$PROFILES

# hint_re ERR: the pattern of the hint line in ERR
hint_re() {
	sed -n "s/^jheap: hint: .*; to charge \(its\|their\) callers: --allocator='\(.*\)'\$/\2/p" "$1"
}

test_expect_success 'w_wrap, stripped, under libjemalloc: one dump' '
	cc -O0 -g -rdynamic -o w_wrap.full "$SRCDIR/testdata/w_wrap.c" &&
	cp w_wrap.full w_wrap && strip w_wrap &&
	mkdir d &&
	timeout 60 env LD_PRELOAD=$JEMALLOC_SO \
		MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$PWD/d/w ./w_wrap >out &&
	grep -q "^536 blocks\$" out &&
	mv d/w.*.heap w.heap
'

test_expect_success 'the hint names xmalloc and the unnamed pool_grab, once, under the report' '
	"$JHEAP" --text --show_bytes w.heap >text 2>err &&
	check_row text xmalloc 1566720 1566720 &&
	start=$(sed -n "s/^ *[0-9]* .* \(w_wrap+0x[0-9a-f]*\)\$/\1/p" text) &&
	test -n "$start" &&
	test "$(grep -c "^jheap: hint:" err)" = 1 &&
	grep -q "^jheap: hint: 89\.4% of the bytes are allocated through 2 functions that look like malloc wrappers (xmalloc, w_wrap+0x[0-9a-f]*); to charge their callers: --allocator=" err &&
	test "$(hint_re err)" = "^(xmalloc|${start/+/\\+})\$"
'

test_expect_success 'the pasted option charges each caller what it allocated; the constructor stays' '
	"$JHEAP" --text --show_bytes --allocator="$(hint_re err)" w.heap >cut 2>err2 &&
	check_rows cut <<-\EOF &&
	409600 409600 make_users
	409600 409600 make_orders
	245760 245760 make_sessions
	245760 245760 make_index
	256000 256000 make_cache
	65536 65536 parse_config
	33600 33600 str_new
	none - xmalloc
	EOF
	! grep -q "w_wrap+0x" cut &&
	head -n 1 text >t1 && head -n 1 cut >t2 && test_cmp t1 t2 &&
	! grep -q "^jheap: hint:" err2 &&
	! grep -q "warning" err2
'

test_expect_success 'the first rows are the program'"'"'s own code once cut' '
	sed -n "2,6p" cut | awk "{ print \$6 }" >top5 &&
	cat >want <<-\EOF &&
	make_orders
	make_users
	make_cache
	make_index
	make_sessions
	EOF
	test_cmp want top5
'

test_expect_success 'unstripped, pool_grab is named for what it does: only xmalloc is hinted' '
	"$JHEAP" --text w_wrap.full w.heap >text 2>err &&
	test "$(hint_re err)" = "^(xmalloc)\$" &&
	grep -q "allocated through a function that looks like a malloc wrapper (xmalloc); to charge its callers" err
'

test_expect_success 'with part of the cut given, the hint adds the rest to it' '
	"$JHEAP" --text --allocator="^xmalloc\$" w.heap >text 2>err &&
	start=$(sed -n "s/^ *[0-9.]* .* \(w_wrap+0x[0-9a-f]*\)\$/\1/p" text) &&
	test -n "$start" &&
	test "$(hint_re err)" = "^xmalloc\$|^(${start/+/\\+})\$" &&
	grep -q "allocated through a further function that looks like a malloc wrapper (w_wrap+0x" err
'

test_expect_success 'no hint with --keep-allocator-frames, --lines, --full-names or --base' '
	for o in --keep-allocator-frames --lines --full-names --base=w.heap; do
		"$JHEAP" --text $o w.heap >/dev/null 2>err || return 1
		! grep -q "hint" err || { echo "a hint with $o"; return 1; }
	done
'

test_expect_success 'no hint on the workloads whose leaves are their own code' '
	for f in "$P/demo.exact.heap" "$P/w_basic.exact.heap" "$P/w_cpp.exact.heap"; do
		"$JHEAP" --text "$f" >/dev/null 2>err || return 1
		! grep -q "hint" err || { echo "a hint on $f:"; cat err; return 1; }
	done
'

test_expect_success 'JHEAP_DEBUG=wrappers says why each candidate was taken or not' '
	JHEAP_DEBUG=wrappers "$JHEAP" --text w.heap >/dev/null 2>err &&
	grep -q "^jheap: wrappers: round 1: xmalloc: 89\.4% flat, 100\.0% of its cum; 3 callers" err &&
	grep -q "^jheap: wrappers: round 2: w_wrap+0x[0-9a-f]*: .* 3 callers" err
'

test_expect_success 'each pattern option that matches nothing warns, naming it; exit status 0' '
	"$JHEAP" --text --focus=no_such_a --ignore=no_such_b --retain=no_such_c \
		--exclude=no_such_d --allocator=no_such_e w.heap >out 2>err &&
	grep -q "^jheap: warning: --focus=.no_such_a. matches no function of the profile (nor a file:line or an address): the report is empty\$" err &&
	grep -q "^jheap: warning: --ignore=.no_such_b. matches no function of the profile (nor a file:line or an address)\$" err &&
	grep -q "^jheap: warning: --retain=.no_such_c. matches no function of the profile: every frame is hidden\$" err &&
	grep -q "^jheap: warning: --exclude=.no_such_d. matches no function of the profile\$" err &&
	grep -q "^jheap: warning: --allocator=.no_such_e. matches no function of the profile\$" err &&
	"$JHEAP" --text --focus=make_users --ignore=str_new w.heap >out 2>err &&
	! grep -q warning err
'

test_expect_success 'a pattern with < or ( is matched against full names too' '
	"$JHEAP" --text --show_bytes "--focus=vector<int" "$P/w_cpp.exact.heap" >out 2>err &&
	! grep -q warning err &&
	grep -q " std::vector::_M_realloc_insert\$" out &&
	test "$(report_total out)" -gt 0 &&
	"$JHEAP" --text "--focus=^make_ints\(\)\$" "$P/w_cpp.exact.heap" >out2 2>err &&
	! grep -q warning err && grep -q " make_ints\$" out2 &&
	"$JHEAP" --text "--focus=^z(try)?malloc" "$P/w_cpp.exact.heap" >out3 2>err &&
	grep -q "warning: --focus=.\^z(try)?malloc. matches no function" err &&
	"$JHEAP" "--peek=vector<int" "$P/w_cpp.exact.heap" >peek 2>err &&
	grep -q "| std::vector::_M_realloc_insert\$" peek &&
	! grep -q "| make_ints\$" peek &&
	"$JHEAP" "--retain=_M_realloc_insert<int" --collapsed "$P/w_cpp.exact.heap" >ret 2>err &&
	! grep -q warning err && grep -q "^std::vector::_M_realloc_insert [0-9]*\$" ret
'

test_done

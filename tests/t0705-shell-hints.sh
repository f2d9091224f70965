#!/bin/bash
test_description='the shell, in a pseudo-terminal: the nearest command or setting for a typo, and the wrapper hint in the shell'"'"'s own words

A mistyped command or setting gets "did you mean ...?" as the command
line gives for an option; the malloc-wrapper hint under a report names
the shell'"'"'s setting (allocator=RE, no quotes needed: spaces in names are
\x20 in the pattern), which typed as it is cuts the wrappers; a
pattern that matches nothing warns with the setting'"'"'s name.
tests/tools/ptyshell.py types the keys.'
. "$(dirname "$0")/lib.sh"

JEMALLOC_SO=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
[ -f "$JEMALLOC_SO" ] || test_skip "no $JEMALLOC_SO (libjemalloc2)"
test_have_prog cc || test_skip "no C compiler"
test_have_prog python3 || test_skip "python3 is needed to drive a pseudo-terminal"

PTY="python3 $TEST_DIRECTORY/tools/ptyshell.py --timeout 60"
export XDG_STATE_HOME=$TRASH_DIRECTORY/state HOME=$TRASH_DIRECTORY
export JHEAP_PROGRESS_AFTER=1000

test_expect_success 'w_wrap (stripped): a dump' '
	cc -O0 -g -rdynamic -o w_wrap "$SRCDIR/testdata/w_wrap.c" && strip w_wrap &&
	mkdir d &&
	timeout 60 env LD_PRELOAD=$JEMALLOC_SO \
		MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$PWD/d/w ./w_wrap >/dev/null &&
	mv d/w.*.heap w.heap
'

test_expect_success 'typos: the nearest command or setting' '
	cat >script <<-\EOF &&
	cmd t1 foucs=main
	cmd t2 tetx
	cmd t3 show_btyes
	cmd t4 focsu make_users
	cmd t5 zzzzzzzzzz
	keys quit\r
	exit 0
	EOF
	$PTY script -- "$JHEAP" w.heap &&
	grep -q "^jheap: unknown command .foucs=main.; did you mean focus=? (.help. lists the commands)" t1 &&
	grep -q "did you mean text?" t2 &&
	grep -q "did you mean show_bytes?" t3 &&
	grep -q "did you mean focus=?" t4 &&
	grep -q "^jheap: unknown command .zzzzzzzzzz.; .help. lists the commands" t5 &&
	! grep -q "did you mean" t5
'

test_expect_success 'the wrapper hint names allocator=RE; typed as it is, it cuts the wrappers' '
	cat >script <<-\EOF &&
	cmd h1 top 3
	keys quit\r
	exit 0
	EOF
	$PTY script -- "$JHEAP" w.heap &&
	grep -q "^jheap: hint: 89\.4% of the bytes are allocated through 2 functions that look like malloc wrappers (xmalloc, w_wrap+0x[0-9a-f]*); to charge their callers: allocator=^(xmalloc|w_wrap\\\\+0x[0-9a-f]*)\\\$\$" h1 &&
	setting=$(sed -n "s/^jheap: hint: .*: \(allocator=.*\)\$/\1/p" h1 | tr -d "\r") &&
	printf "cmd c1 %s\ncmd c2 top 3\nkeys quit\\\\r\nexit 0\n" "$setting" >script2 &&
	$PTY script2 -- "$JHEAP" w.heap &&
	test ! -s c1 &&
	! grep -q "hint" c2 &&
	grep -q " make_orders\$" c2 && grep -q " make_users\$" c2
'

test_expect_success 'a setting that matches nothing warns with the setting'"'"'s name' '
	cat >script <<-\EOF &&
	cmd w0 focus=no_such_function
	cmd w1 top 2
	keys quit\r
	exit 0
	EOF
	$PTY script -- "$JHEAP" w.heap &&
	grep -q "^jheap: warning: focus=.no_such_function. matches no function of the profile" w1
'

test_done

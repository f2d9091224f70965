#!/bin/bash
test_description='the progress line: on a terminal only, erased before the report, silenced by --quiet'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_have_prog script || test_skip "no script(1) to make a terminal"
test_need_profiles
H=$PROFILES/w_cpp.exact.heap

# on_tty CMD: run CMD with standard error on a pseudo-terminal (script(1))
on_tty() {
	timeout -k 5 300 script -qfec "$1" /dev/null </dev/null
}

test_expect_success 'a terminal shows the stages (JHEAP_PROGRESS_AFTER=0 instead of 1 s)' '
	on_tty "JHEAP_PROGRESS_AFTER=0 \"$JHEAP\" --show_bytes \"$H\" >report" >tty.out &&
	grep -q "jheap: symbolizing: [0-9]* of [0-9]* addresses" tty.out &&
	"$JHEAP" --show_bytes "$H" >expected && test_cmp expected report
'

test_expect_success 'the line is erased: the terminal ends with a clear-line sequence' '
	tail -c 4 tty.out | od -An -c | tr -d " \n" | grep -q "\\\\r033\[K"
'

test_expect_success '--quiet shows nothing' '
	on_tty "JHEAP_PROGRESS_AFTER=0 \"$JHEAP\" --quiet \"$H\" >/dev/null" >quiet.out &&
	! grep -q symbolizing quiet.out
'

test_expect_success 'nothing reaches a pipe or a file' '
	JHEAP_PROGRESS_AFTER=0 "$JHEAP" "$H" >/dev/null 2>err &&
	test ! -s err
'

# The delay, not the machine's speed, decides: a run shorter than a delay
# of 10 minutes shows nothing, and a run made longer than the default 1 s
# (its input held back 2 s: at least that long, however fast the machine)
# shows the line.
test_expect_success 'a run shorter than the delay shows nothing' '
	on_tty "JHEAP_PROGRESS_AFTER=600 \"$JHEAP\" \"$H\" >/dev/null" >short.out &&
	! grep -q "jheap: " short.out
'

test_expect_success 'a run longer than the default delay of 1 s shows the stages' '
	head -c 2000 "$H" >part1 && tail -c +2001 "$H" >part2 &&
	on_tty "{ cat part1; sleep 2; cat part2; } | \"$JHEAP\" --show_bytes \"$PROFILES/w_cpp\" - >slow.report" >slow.out &&
	grep -q "jheap: symbolizing: [0-9]* of [0-9]* addresses" slow.out &&
	"$JHEAP" --show_bytes "$PROFILES/w_cpp" "$H" >expected && test_cmp expected slow.report
'

test_expect_success 'JHEAP_DEBUG=time: one line per stage, in order, the report unchanged' '
	JHEAP_DEBUG=time "$JHEAP" --show_bytes "$H" >timed 2>time.err &&
	"$JHEAP" --show_bytes "$H" >untimed && test_cmp untimed timed &&
	sed -n "s/^jheap: time: \([a-z]*\) *[0-9.]* s ([0-9.]* s in all), cpu [0-9.]* s, [0-9]* page faults\$/\1/p" time.err >stages &&
	printf "%s\n" parse symbolize aggregate write free >expected.stages &&
	test_cmp expected.stages stages &&
	test $(wc -l <time.err) = 5
'

test_expect_success 'JHEAP_DEBUG=cache,time: both' '
	JHEAP_DEBUG=cache,time "$JHEAP" "$H" >/dev/null 2>both.err &&
	grep -q "^jheap: time: parse" both.err && grep -q "^jheap: cache: " both.err
'

test_done

#!/bin/bash
test_description='jheap record --peaks catches a transient spike as heaptrack sees it; peak dumps kept, thinned, turned on and off'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null && test_set_prereq HEAPTRACK

test_expect_success 'build the workload' '
	cc -O0 -g -o w_spike "$SRCDIR/testdata/w_spike.c"
'

# peak_last PID: the bytes of process PID's last peak dump, from its
# status ("" when it has taken none)
peak_last() {
	"$JHEAP" ctl "$1" status 2>/dev/null | sed -n "s/^peak dumps: .*; last at \([0-9]*\) bytes;.*/\1/p"
}
peaks_taken() {
	"$JHEAP" ctl "$1" status 2>/dev/null | sed -n "s/^peak dumps: \([0-9]*\) taken.*/\1/p"
}

# wait_peak PID BYTES: until the last peak dump holds BYTES or more (a
# generous deadline: the library looks every 10 ms and dumps at most once
# a second; nothing here depends on how fast)
wait_peak() {
	local i v
	for ((i = 0; i < 600; i++)); do
		v=$(peak_last "$1")
		[ -n "$v" ] && [ "$v" -ge "$2" ] && return 0
		sleep 0.05
	done
	echo "process $1: no peak dump of $2 bytes or more; status:"
	"$JHEAP" ctl "$1" status
	return 1
}

# wait_taken PID N: until N peak dumps were taken
wait_taken() {
	local i v
	for ((i = 0; i < 600; i++)); do
		v=$(peaks_taken "$1")
		[ -n "$v" ] && [ "$v" -ge "$2" ] && return 0
		sleep 0.05
	done
	echo "process $1: fewer than $2 peak dumps; status:"
	"$JHEAP" ctl "$1" status
	return 1
}

# wait_gone PID: until the process has ended (its dump at exit is written)
wait_gone() {
	local i
	for ((i = 0; i < 600; i++)); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.05
	done
	echo "process $1 did not end"
	return 1
}

# heaptrack's sizes: "47.26M" (powers of 1000), "72.70K", "512B"
ht_bytes() {
	awk '{ v = $1 + 0; u = substr($1, length($1)); if (u == "K") v *= 1e3; else if (u == "M") v *= 1e6; else if (u == "G") v *= 1e9; printf "%.0f\n", v }'
}

test_expect_success HEAPTRACK 'heaptrack on the same program: its peak and who holds it' '
	heaptrack -o "$TRASH_DIRECTORY/ht-spike" ./w_spike run >ht.out 2>&1 &&
	heaptrack_print -f ht-spike.zst >ht.all 2>/dev/null &&
	sed -n "s/^peak heap memory consumption: //p" ht.all | ht_bytes >ht.peak && test -s ht.peak &&
	heaptrack_print -f ht-spike.zst -p 1 -a 0 -T 0 -l 0 -n 1 >ht.p 2>/dev/null &&
	awk "/peak memory consumed over .* from\$/ { getline; print; exit }" ht.p >ht.top &&
	echo spike >expected && test_cmp expected ht.top
'

SPIKE=$((40 << 20))
test_expect_success 'record --peaks: a dump between the two quiet ones catches the spike' '
	bg w "$JHEAP" record --peaks --sample=1 --dir=d -- ./w_spike &&
	wait_line w.out "^ready\$" && pid=$(cat w.pid) &&
	grep "^jheap: dumps go to $TRASH_DIRECTORY/d/ (w_spike.$pid.\*.heap): at new peaks (+10%), at exit, on .jheap dump $pid.\$" w.err &&
	"$JHEAP" ctl $pid status >st &&
	grep "^peaks: on; a dump when the heap passes the last peak dump by 10%, at most one a second, 20 kept\$" st &&
	"$JHEAP" dump $pid >before &&
	w_step_line() { kill -USR1 $pid && wait_line w.out "^$1\$"; } &&
	w_step_line spiked &&
	wait_peak $pid $SPIKE &&
	w_step_line freed &&
	"$JHEAP" dump $pid >after &&
	w_step_line bye && wait_gone $pid &&
	ls d/w_spike.$pid.*.p*.heap >peaks && test $(wc -l <peaks) -ge 2 &&
	ls d/w_spike.$pid.*.f.heap
'

test_expect_success HEAPTRACK '--peak: the peak dump holds heaptrack'"'"'s peak within 10%, the spike on top' '
	"$JHEAP" --peak --show_bytes d/*.heap >peak 2>peak.err &&
	grep "^jheap: --peak: the largest of the [0-9]* dumps is d/w_spike\.[0-9]*\.[0-9]*\.p[0-9]*\.heap, " peak.err &&
	total=$(sed -n "s/^Total: \([0-9]*\) B\$/\1/p" peak) &&
	ht=$(cat ht.peak) &&
	awk -v a="$total" -v b="$ht" "BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 0.1 * b) }" &&
	sed -n 2p peak | awk "{ print \$6 }" >top && test_cmp ht.top top
'

test_expect_success '--timeline: the peak between the two manual dumps, the spike grew most' '
	"$JHEAP" --timeline --show_bytes d/*.heap >tl &&
	b=$(basename "$(cat before)") && a=$(basename "$(cat after)") &&
	grep -n "  $b (manual)" tl | cut -d: -f1 >nb && grep -n "  $a (manual)" tl | cut -d: -f1 >na &&
	grep -n " (peak) .* +[0-9]* spike\$" tl | cut -d: -f1 >np && test $(wc -l <np) -eq 1 &&
	test "$(cat nb)" -lt "$(cat np)" && test "$(cat np)" -lt "$(cat na)" &&
	sed -n "$(cat na)p" tl | grep -E " -4[0-9]{7} " &&
	grep "^Peak: [0-9]* B in w_spike\.[0-9]*\.[0-9]*\.p[0-9]*\.heap, dump $(( $(cat np) - 2 )) of " tl
'

test_expect_success '--growth fits the manual dumps and lists the peak dumps and the exit dump' '
	"$JHEAP" --growth d/*.heap >gr &&
	sed -n 1p gr | grep "^Growth of inuse_space over 2 profiles, $(basename "$(cat before)") to $(basename "$(cat after)") " &&
	tail -n 1 gr | grep "^Left out (not of the regular series; --all-dumps fits them too): .*\.p0\.heap (peak), .*\.f\.heap (at exit)\$"
'

test_expect_success 'jheap ctl PID peaks off and on' '
	bg v "$JHEAP" record --sample=1 --dir=v -- ./w_spike &&
	wait_line v.out "^ready\$" && pid=$(cat v.pid) &&
	"$JHEAP" ctl $pid status >st && grep "^peaks: off; " st && ! grep "^peak dumps:" st &&
	"$JHEAP" ctl $pid peaks on >on &&
	grep "^peak dumps in process $pid are on (they were off); a dump when the heap passes the last peak dump by 10%, at most one a second, 20 kept\$" on &&
	kill -USR1 $pid && wait_line v.out "^spiked\$" &&
	wait_peak $pid $SPIKE &&
	"$JHEAP" ctl $pid peaks off >off && grep "are off (they were on)" off &&
	"$JHEAP" ctl $pid status >st && grep "^peaks: off; " st && grep "^peak dumps: 1 taken, 1 kept, 0 removed; " st &&
	"$JHEAP" ctl $pid peaks maybe 2>err; test $? -eq 2 && grep "peaks takes on or off" err &&
	kill -USR1 $pid && wait_line v.out "^freed\$" && kill -USR1 $pid && wait_gone $pid
'

# w_spike climb: 5, 7, 10, 15, 22, 33, 49 MiB, each step more than 30% up
test_expect_success 'record --peaks=30% --peaks-keep=3: seven peaks, three kept, the highest among them' '
	bg c "$JHEAP" record -q --peaks=30% --peaks-keep=3 --sample=1 --dir=k -- ./w_spike climb 7 &&
	wait_line c.out "^ready\$" && pid=$(cat c.pid) &&
	"$JHEAP" ctl $pid status | grep "^peaks: on; a dump when the heap passes the last peak dump by 30%, at most one a second, 3 kept\$" &&
	wait_taken $pid 1 &&
	for k in 1 2 3 4 5 6; do
		kill -USR1 $pid && wait_line c.out "^level $k\$" && wait_taken $pid $((k + 1)) || return 1
	done &&
	"$JHEAP" ctl $pid status >st &&
	grep "^peak dumps: 7 taken, 3 kept, 4 removed; last at [0-9]* bytes;" st &&
	ls k/*.p*.heap >kept && test $(wc -l <kept) -eq 3 &&
	grep "\.p6\.heap\$" kept &&
	kill -USR1 $pid && wait_line c.out "^bye\$" && wait_gone $pid
'

test_expect_success 'record --peaks with a bad ratio or count: usage errors' '
	"$JHEAP" record --peaks=ten -- ./w_spike run 2>err; test $? -eq 2 && grep "^jheap record: --peaks expects a ratio" err &&
	"$JHEAP" record --peaks-keep=0 -- ./w_spike run 2>err; test $? -eq 2 && grep "^jheap record: --peaks-keep expects a number of dumps from 1 to 64" err
'

test_done

#!/bin/bash
test_description='jheap record, jheap dump and jheap ctl on a workload of our own (testdata/w_ctl.c)'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

# w_ctl's table (testdata/w_ctl.c): what each step keeps, in bytes
FIRST=$((50 * 10240)) SECOND=$((20 * 40960)) MORE=$((8 * 114688)) CHILD=$((4 * 65536))

test_expect_success 'build the workload' '
	cc -O0 -g -o w_ctl "$SRCDIR/testdata/w_ctl.c"
'

test_expect_success 'record says where the dumps go and runs the program as its own pid' '
	bg w "$JHEAP" record --sample=1 --accum --dir=d -- ./w_ctl &&
	wait_line w.out "^ready\$" &&
	pid=$(cat w.pid) &&
	grep "^jheap: recording process $pid (w_ctl) with Debian.s jemalloc preloaded; every allocation recorded\$" w.err &&
	grep "^jheap: dumps go to $TRASH_DIRECTORY/d/ (w_ctl.$pid.\*.heap): at exit, on .jheap dump $pid.\$" w.err &&
	test "$(readlink /proc/$pid/exe)" = "$TRASH_DIRECTORY/w_ctl" &&
	grep -q "/libjheapctl.so\$" /proc/$pid/maps && grep -q "/libjemalloc.so.2\$" /proc/$pid/maps
'

test_expect_success 'a dump at a known point holds what the program allocated' '
	w_step w 1 &&
	d1=$("$JHEAP" dump $(cat w.pid)) &&
	case $d1 in "$TRASH_DIRECTORY"/d/w_ctl.$(cat w.pid).*.m*.heap) ;; *) false ;; esac &&
	echo "$d1" >d1 &&
	"$JHEAP" --show_bytes "$d1" >r1 &&
	check_total r1 "$(heap_sum "$d1" inuse_space | cut -d. -f1)" &&
	check_rows r1 <<-EOF
	$FIRST $FIRST ctl_first
	none none ctl_second
	none none jheapctl_init
	EOF
'

test_expect_success 'a second dump: ctl_second is exactly the growth since the first' '
	w_step w 2 &&
	d2=$("$JHEAP" dump $(cat w.pid)) && echo "$d2" >d2 &&
	"$JHEAP" --show_bytes "$d2" >r2 &&
	check_rows r2 <<-EOF &&
	$FIRST $FIRST ctl_first
	$SECOND $SECOND ctl_second
	EOF
	"$JHEAP" --show_bytes --base "$(cat d1)" "$d2" >diff &&
	check_total diff $SECOND &&
	check_rows diff <<-EOF
	$SECOND $SECOND ctl_second
	none none ctl_first
	EOF
'

test_expect_success 'jheap dump PID --text analyzes the new dump as jheap --text DUMP does' '
	"$JHEAP" dump $(cat w.pid) --text --show_bytes >report 2>err &&
	path=$(sed -n "s/^jheap: process $(cat w.pid) dumped its heap to //p" err) &&
	test -f "$path" &&
	"$JHEAP" --text --show_bytes "$path" >expected &&
	test_cmp expected report
'

test_expect_success 'jheap dump PID --base=EARLIER --flamegraph -o FILE' '
	"$JHEAP" dump $(cat w.pid) --base="$(cat d1)" --flamegraph -o grow.svg 2>err &&
	grep -q "<svg" grow.svg && grep -q ">ctl_second" grow.svg && ! grep -q ">ctl_first " grow.svg &&
	"$JHEAP" dump $(cat w.pid) -q --text >/dev/null 2>err && ! test -s err
'

test_expect_success 'ctl off: a step while profiling is off adds no samples' '
	"$JHEAP" ctl $(cat w.pid) off >out &&
	echo "profiling in process $(cat w.pid) is inactive (it was active)" >expected &&
	test_cmp expected out &&
	"$JHEAP" ctl $(cat w.pid) status | grep "^active: no\$" &&
	w_step w 3 &&
	d3=$("$JHEAP" dump $(cat w.pid)) && echo "$d3" >d3 &&
	"$JHEAP" --show_bytes "$d3" >r3 && check_row r3 ctl_more none &&
	"$JHEAP" --alloc_objects --base "$(cat d2)" "$d3" >off &&
	check_total off 0
'

test_expect_success 'ctl on: the next steps are sampled again' '
	"$JHEAP" ctl $(cat w.pid) on | grep "is active (it was inactive)" &&
	w_step w 4 &&
	d4=$("$JHEAP" dump $(cat w.pid)) && echo "$d4" >d4 &&
	"$JHEAP" --alloc_objects --base "$(cat d3)" "$d4" >on &&
	check_total on 8 &&
	w_step w 5 &&
	d5=$("$JHEAP" dump $(cat w.pid)) &&
	"$JHEAP" --show_bytes --base "$d4" "$d5" >r5 &&
	check_total r5 $MORE && check_row r5 ctl_more $MORE $MORE &&
	"$JHEAP" --show_bytes "$d5" >all &&
	check_rows all <<-EOF
	$((2 * MORE)) $((2 * MORE)) ctl_more
	$SECOND $SECOND ctl_second
	$FIRST $FIRST ctl_first
	EOF
'

test_expect_success 'ctl status says what jemalloc and the profiler do' '
	"$JHEAP" ctl $(cat w.pid) status >st &&
	grep "^pid: $(cat w.pid)\$" st &&
	grep "^program: $TRASH_DIRECTORY/w_ctl\$" st &&
	grep "^jemalloc: 5\..* (mallctl in $JEMALLOC)\$" st &&
	grep "^profiling: enabled\$" st && grep "^active: yes\$" st &&
	grep "^sample: every allocation (lg_prof_sample:0)\$" st &&
	grep "^accum: yes" st &&
	grep "^dumps: $TRASH_DIRECTORY/d/w_ctl.$(cat w.pid).<seq>.<kind>.heap\$" st &&
	grep "^dumps taken: 8 on request, 0 periodic\$" st
'

test_expect_success 'ctl reset forgets the samples; ctl sample sets the rate' '
	"$JHEAP" ctl $(cat w.pid) reset >out &&
	grep "profile of process $(cat w.pid) reset; every allocation is sampled" out &&
	"$JHEAP" dump $(cat w.pid) --show_bytes >r5 2>/dev/null &&
	check_total r5 0 &&
	"$JHEAP" ctl $(cat w.pid) sample 1M >out &&
	grep "one sample per 1048576 bytes on average (lg_prof_sample:20)" out &&
	"$JHEAP" ctl $(cat w.pid) status | grep "^sample: one per 1048576 bytes" &&
	"$JHEAP" ctl $(cat w.pid) sample 1 | grep "lg_prof_sample:0"
'

test_expect_success 'the program ends as it would: exit status, a final dump, no socket left' '
	pid=$(cat w.pid) &&
	sock=$(ctl_socket $pid) && test -S "$sock" &&
	kill -TERM $pid && wait_line w.out "^bye\$" &&
	for i in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.05; done &&
	! kill -0 $pid 2>/dev/null &&
	ls d/w_ctl.$pid.*.f.heap &&
	! test -e "$sock" &&
	expect_fail 1 "^jheap: no process $pid\$" dump $pid
'

test_expect_success 'the exit status, arguments, environment and pid are the program'"'"'s' '
	"$JHEAP" record -q -- sh -c "exit 3"; test $? -eq 3 || return 1
	"$JHEAP" record -q -- sh -c "kill -SEGV \$\$"; test $? -eq 139 || return 1
	FOO="a b" "$JHEAP" record -q --dir=e -- sh -c "printf \"%s|\" \"\$FOO\" \"\$@\"" arg0 "x y" z >out &&
	printf "a b|x y|z|" >expected && test_cmp expected out || return 1
	"$JHEAP" record -q --dir=e -- sh -c "echo \$\$" >pid1 &
	p=$!
	wait $p && test "$(cat pid1)" = "$p"
'

test_expect_success '--every keeps a dump per interval, named in sequence for --growth' '
	"$JHEAP" record -q --sample=1 --every=250ms --dir=g -- ./w_ctl grow 50 36 >out &&
	test "$(cat out)" = done &&
	n=$(ls g/*.m*.heap | wc -l) && test $n -ge 4 && ls g/*.f.heap &&
	"$JHEAP" --growth --show_bytes g/*.heap >growth &&
	sed -n 3p growth >first && grep -E "^ +[1-9][0-9]* +(0\.[89][0-9]|1\.00) .* ctl_leak\$" first &&
	grep -E " ctl_leak\$" growth | awk "{ exit !(\$5 >= 4096 * 20) }"
'

test_expect_success '--inactive starts with sampling off; --no-final writes no dump at exit' '
	bg i "$JHEAP" record --sample=1 --inactive --no-final --dir=i -- ./w_ctl &&
	wait_line i.out "^ready\$" &&
	grep "sampling off until .jheap ctl $(cat i.pid) on." i.err &&
	"$JHEAP" ctl $(cat i.pid) status | grep "^active: no\$" &&
	w_step i 1 &&
	"$JHEAP" dump $(cat i.pid) --show_bytes >r 2>/dev/null && check_row r ctl_first none &&
	kill -TERM $(cat i.pid) && wait_line i.out "^bye\$" && sleep 0.2 &&
	! ls i/*.f.heap 2>/dev/null
'

test_expect_success 'preloaded by hand: LD_PRELOAD and MALLOC_CONF, without jheap record' '
	mkdir -p u &&
	bg u env LD_PRELOAD="$JEMALLOC:$CTL_LIB" MALLOC_CONF=prof:true,lg_prof_sample:0,prof_prefix:u/w ./w_ctl &&
	wait_line u.out "^ready\$" && w_step u 1 &&
	path=$("$JHEAP" dump $(cat u.pid)) &&
	test "$path" = "$TRASH_DIRECTORY/u/w.$(cat u.pid).0.m0.heap" &&
	"$JHEAP" --show_bytes "$path" >r && check_row r ctl_first $FIRST $FIRST
'

test_expect_success 'without MALLOC_CONF=prof:true, or without jemalloc, the process says so' '
	bg p env LD_PRELOAD="$JEMALLOC:$CTL_LIB" ./w_ctl && wait_line p.out "^ready\$" &&
	expect_fail 1 "^jheap: process $(cat p.pid) \(w_ctl\): heap profiling is not enabled in process $(cat p.pid): jemalloc reads MALLOC_CONF=prof:true only when the program starts\$" dump $(cat p.pid) &&
	"$JHEAP" ctl $(cat p.pid) status | grep "^profiling: not enabled" &&
	bg n env LD_PRELOAD="$CTL_LIB" ./w_ctl && wait_line n.out "^ready\$" &&
	expect_fail 1 "no jemalloc in process $(cat n.pid): none of mallctl, je_mallctl, _rjem_mallctl is defined" ctl $(cat n.pid) off &&
	"$JHEAP" ctl $(cat n.pid) status | grep "^jemalloc: none"
'

test_expect_success 'a process without the control library: the message says how to start it' '
	bg s sleep 30 &&
	expect_fail 1 "^jheap: process $(cat s.pid) \(sleep\) does not have jheap.s control library loaded: start it with .jheap record -- PROGRAM." dump $(cat s.pid)
'

# jemalloc linked into the program itself (Debian's libjemalloc.a): record
# preloads no other jemalloc, and the library finds mallctl in the
# program's own symbol table.
test_expect_success 'a program with jemalloc linked statically' '
	cc -O0 -g -o w_ctl_static "$SRCDIR/testdata/w_ctl.c" "${JEMALLOC%.so.2}.a" -lpthread -ldl -lm -lstdc++ &&
	bg t "$JHEAP" record --sample=1 --dir=t -- ./w_ctl_static && wait_line t.out "^ready\$" &&
	grep "with its own jemalloc" t.err &&
	! grep -q libjemalloc /proc/$(cat t.pid)/maps &&
	"$JHEAP" ctl $(cat t.pid) status | grep "^jemalloc: 5\..* (mallctl in $TRASH_DIRECTORY/w_ctl_static)\$" &&
	w_step t 1 &&
	"$JHEAP" dump $(cat t.pid) --show_bytes >r 2>/dev/null && check_row r ctl_first $FIRST $FIRST
'

test_expect_success 'record refuses what it cannot do, with the documented status' '
	expect_fail 127 "^jheap record: cannot run .no-such-program.: not found in PATH\$" record -- no-such-program &&
	expect_fail 127 "cannot run .\./nope.: No such file or directory" record ./nope &&
	printf "x" >notexec && chmod 644 notexec &&
	expect_fail 126 "cannot run .$TRASH_DIRECTORY/notexec.: Permission denied" record -q -- "$TRASH_DIRECTORY/notexec" &&
	printf "int main(void) { return 0; }\n" >static.c && cc -static -o static static.c &&
	expect_fail 1 "is statically linked: the dynamic loader cannot load jheap.s control library" record ./static &&
	expect_fail 2 "which program\?" record --accum &&
	expect_fail 2 "unknown option .--bogus." record --bogus ./w_ctl &&
	expect_fail 2 "--every expects a time" record --every=soon ./w_ctl &&
	expect_fail 2 "--sample expects a size" record --sample=0 ./w_ctl &&
	expect_fail 2 "^jheap ctl: unknown command .bogus." ctl 1 bogus &&
	expect_fail 2 "^jheap dump: .abc. is not a process id" dump abc --text
'

# The words record, dump and ctl are subcommands only as the first
# argument; a profile of that name is given with a path or after an option.
test_expect_success 'a profile file named like a subcommand' '
	cp "$(cat d1)" dump && cp "$(cat d1)" record &&
	"$JHEAP" --show_bytes ./dump >a && check_row a ctl_first $FIRST $FIRST &&
	"$JHEAP" --show_bytes dump >b && test_cmp a b &&
	"$JHEAP" --show_bytes -- record >c && test_cmp a c &&
	expect_fail 2 "^jheap: to analyze the file .dump., write ./dump" dump &&
	expect_fail 2 "^jheap: to analyze the file .record., write ./record" record
'

test_done

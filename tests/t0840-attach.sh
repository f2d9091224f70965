#!/bin/bash
test_description='jheap dump and ctl on programs without the control library: attaching with ptrace

Programs started with MALLOC_CONF=prof:true,prof_active:false and no
control library, as servers are deployed: jheap attaches, calls
mallctl on one thread and lets it go.  A workload whose threads allocate,
free and check their own data (testdata/w_attach.c) is dumped 100 times
with a sleeping thread to use and 100 times with every thread busy in
the allocator: it ends with its data intact and every dump reads back.
w_ctl (testdata/w_ctl.c) gives exact counts; a static je_ jemalloc and a
Rust program (_rjem_) find mallctl in .symtab.  Refusals (another
user, no jemalloc, no prof:true, a stopped process, a folder that is not
private) leave the process running and unchanged, and say why.  The
dump folder is checked against a process that plants links in it
(tests/tools/attachdir).'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

[ "$(uname -m)" = x86_64 ] || test_skip "jheap attaches on x86-64 only"
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo none)
if [ "$(id -u)" != 0 ] && [ "$scope" != none ] && [ "$scope" -ge 1 ]; then
	test_skip "kernel.yama.ptrace_scope is $scope: only root may attach to a process that is not its descendant"
fi
[ "$scope" = 3 ] && test_skip "kernel.yama.ptrace_scope is 3: nobody may attach"

ATTACHDIR=$BUILD_DIR/tests/tools/attachdir
BUILD_RHEAP=$TEST_DIRECTORY/tools/build-rheap.sh
BUILD_JE=$TEST_DIRECTORY/tools/build-jemalloc-je.sh
CONF=prof:true,prof_active:false
why=$(bash "$BUILD_RHEAP" --check) && test_set_prereq CARGO ||
	say "# skipping the Rust test: $why"
why=$(bash "$BUILD_JE" --check) && test_set_prereq JESRC ||
	say "# skipping the je_ test: $why"

# Another user (tests/record-lib.sh's make_users: made with useradd when
# we are root, removed when the script ends)
make_users
OTHER=${VICTIM:-}
# a command, not a function: bg's $! is then the program itself
AS_OTHER="$AS_USER $OTHER"

# traced PID: the process's tracer, 0 when none
traced() {
	awk '$1 == "TracerPid:" { print $2 }' /proc/$1/status
}

# w_attach's result: every thread's data intact, and it ran to its end
w_ok() {
	kill -USR1 "$(cat "$1.pid")" && wait_line "$1.out" "^ok\$" 30 &&
	! grep -v "^ready\$\|^ok\$\|^thread [0-9]*: [0-9]* allocations, 0 bad blocks\$" "$1.out"
}

# dumps NAME N [PROGRAM]: N dumps of workload NAME, each read back: jheap's total
# is jeprof's unsampling of the file (tests/lib.sh heap_sum), under 200
# MiB; prints how many name churn_alloc.  The notes (held times) go to
# NAME.notes.
dumps() {
	local pid i d t sum named=0 prog=${3:-w_attach}
	pid=$(cat "$1.pid")
	for ((i = 0; i < $2; i++)); do
		d=$("$JHEAP" dump "$pid" 2>>"$1.notes") || { echo "dump $i failed:"; tail -n 3 "$1.notes"; return 1; }
		case $d in "$TRASH_DIRECTORY/jheap-$pid/$prog.$pid.$i.a$i.heap") ;; *) echo "dump $i: $d"; return 1 ;; esac
		"$JHEAP" --show_bytes "$d" >r 2>e || { echo "jheap cannot read $d:"; cat e; return 1; }
		# equal but for the rounding of a sum of doubles
		t=$(report_total r) sum=$(heap_sum "$d" inuse_space) && sum=${sum%.*} &&
		[ "$t" -ge $((sum - 1)) ] && [ "$t" -le $((sum + 1)) ] && [ "$t" -lt $((200 << 20)) ] ||
			{ echo "$d: total '$t', jeprof's '$sum'"; return 1; }
		[ "$t" -gt 0 ] && grep -q " churn_alloc\$" r && named=$((named + 1))
	done
	echo "$named"
}

test_expect_success 'build the workloads' '
	cc -O2 -g -pthread -o w_attach "$SRCDIR/testdata/w_attach.c" -ldl &&
	cc -O0 -g -o w_ctl "$SRCDIR/testdata/w_ctl.c"
'

test_expect_success 'status of a program on Debian'"'"'s jemalloc without the control library' '
	bg w env LD_PRELOAD="$JEMALLOC" MALLOC_CONF=$CONF,lg_prof_sample:14 ./w_attach 3 &&
	wait_line w.out "^ready\$" &&
	pid=$(cat w.pid) &&
	! grep -q libjheapctl /proc/$pid/maps &&
	"$JHEAP" ctl $pid status >st 2>err &&
	cat st err &&
	grep "^jemalloc: 5\.[0-9.]*-.* (mallctl in $(readlink -f "$JEMALLOC"))\$" st &&
	grep "^control: none; jheap attached with ptrace (thread [0-9]*, held [0-9.]* ms)\$" st &&
	grep "^profiling: enabled\$" st && grep "^active: no\$" st &&
	grep "^sample: one per 16384 bytes on average (lg_prof_sample:14)\$" st &&
	grep "^jheap: process $pid (w_attach) has no control library: jheap attached to its thread [0-9]* with ptrace and held it [0-9.]* ms\$" err &&
	test "$(traced $pid)" = 0
'

test_expect_success 'a dump while sampling is off is empty; ctl on, and the next one names churn_alloc' '
	pid=$(cat w.pid) &&
	d=$("$JHEAP" dump $pid 2>err) &&
	test "$d" = "$TRASH_DIRECTORY/jheap-$pid/w_attach.$pid.0.a0.heap" &&
	test "$(stat -c "%a %u" jheap-$pid)" = "700 $(id -u)" &&
	test "$(stat -c "%a %u %h" "$d")" = "600 $(id -u) 1" &&
	ls -A jheap-$pid >files && test "$(cat files)" = w_attach.$pid.0.a0.heap &&
	"$JHEAP" --show_bytes "$d" >r0 && check_total r0 0 &&
	"$JHEAP" ctl $pid on >on &&
	echo "profiling in process $pid is active (it was inactive)" >expected &&
	test_cmp expected on &&
	"$JHEAP" ctl $pid status | grep "^active: yes\$" &&
	"$JHEAP" dump $pid --show_bytes >r1 2>err &&
	grep "^jheap: process $pid dumped its heap to $TRASH_DIRECTORY/jheap-$pid/w_attach.$pid.1.a1.heap\$" err &&
	test "$(report_total r1)" -gt 0 &&
	sed -n 2p r1 | grep " churn_alloc\$" &&
	rm -f jheap-$pid/*
'

test_expect_success '100 dumps (signals sent meanwhile): all valid, no data lost, the program ends as it would' '
	pid=$(cat w.pid) &&
	: >sending &&
	{ while [ -e sending ] && kill -USR2 $pid 2>/dev/null; do sleep 0.002; done & } &&
	named=$(dumps w 100); rc=$?
	rm -f sending
	echo "$named"
	test $rc = 0 && test "$(echo "$named" | tail -n 1)" -ge 90 &&
	test "$(grep -c "held it" w.notes)" = 100 &&
	test "$(traced $pid)" = 0 &&
	w_ok w
'

test_expect_success '100 dumps with every thread busy in the allocator: threads inside it are passed over' '
	bg b env LD_PRELOAD="$JEMALLOC" MALLOC_CONF=prof:true,lg_prof_sample:14 ./w_attach 3 busy &&
	wait_line b.out "^ready\$" &&
	named=$(dumps b 100) &&
	echo "$named" &&
	test "$(echo "$named" | tail -n 1)" -ge 90 &&
	test "$(traced $(cat b.pid))" = 0 &&
	w_ok b
'

test_expect_success 'a thread asleep inside jemalloc (its only thread) is never used; the program ends well' '
	bg st env LD_PRELOAD="$JEMALLOC" MALLOC_CONF=prof:true ./w_attach stats &&
	wait_line st.out "^in stats\$" &&
	pid=$(cat st.pid) &&
	expect_fail 1 "^jheap: no thread of process $pid \(w_attach\) could be used in [0-9.]* s \([0-9]* tries\): thread $pid: it was inside the allocator \(libjemalloc.so.2\+0x[0-9a-f]*\); try again: a thread leaves the allocator soon, unless it waits in it\$" dump --timeout=1 $pid &&
	! test -e jheap-$pid &&
	test "$(traced $pid)" = 0 &&
	kill -USR1 $pid && wait_line st.out "^ok\$"
'

test_expect_success 'a thread that cannot be stopped (waiting for its vfork child) is not touched' '
	bg v env LD_PRELOAD="$JEMALLOC" MALLOC_CONF=prof:true ./w_attach vfork &&
	wait_line v.out "^child [0-9]*\$" &&
	pid=$(cat v.pid) child=$(sed -n "s/^child //p" v.out) &&
	forget_pid $child &&
	expect_fail 1 "^jheap: no thread of process $pid \(w_attach\) could be used in [0-9.]* s \([0-9]* tries\): thread $pid: it was in uninterruptible sleep \(state D\); try again when a thread is free\$" dump --timeout=1 $pid &&
	test "$(traced $pid)" = 0 &&
	kill -KILL $child && wait_line v.out "^ok\$"
'

test_expect_success 'exact counts (every allocation sampled): on, off, reset, sample' '
	bg c env LD_PRELOAD="$JEMALLOC" MALLOC_CONF=$CONF,lg_prof_sample:0 ./w_ctl &&
	wait_line c.out "^ready\$" &&
	pid=$(cat c.pid) &&
	"$JHEAP" ctl $pid on >/dev/null 2>&1 && w_step c 1 &&
	"$JHEAP" ctl $pid off 2>/dev/null | grep "is inactive (it was active)\$" && w_step c 2 &&
	"$JHEAP" dump $pid --show_bytes >c1 2>/dev/null &&
	check_rows c1 <<-EOF &&
	512000 512000 ctl_first
	none none ctl_second
	EOF
	"$JHEAP" ctl $pid on >/dev/null 2>&1 &&
	"$JHEAP" ctl $pid reset >out 2>/dev/null &&
	echo "profile of process $pid reset; every allocation is sampled (lg_prof_sample:0)" >expected &&
	test_cmp expected out &&
	w_step c 3 &&
	"$JHEAP" dump $pid --show_bytes >c3 2>/dev/null &&
	check_total c3 917504 && check_row c3 ctl_more 917504 917504 &&
	"$JHEAP" ctl $pid sample 4096 >out 2>/dev/null &&
	echo "profile of process $pid reset; one sample per 4096 bytes on average (lg_prof_sample:12)" >expected &&
	test_cmp expected out &&
	kill -TERM $pid && wait_line c.out "^bye\$"
'

test_expect_success 'a process without jemalloc: said, nothing made, the process untouched' '
	bg n ./w_ctl &&
	wait_line n.out "^ready\$" &&
	pid=$(cat n.pid) &&
	expect_fail 1 "^jheap: process $pid \(w_ctl\) has no control library and no jemalloc to ask: no jemalloc in process $pid: none of its objects defines mallctl, je_mallctl or _rjem_mallctl \(in .symtab or .dynsym\); jheap dumps only jemalloc.s heap profiles \(a program on glibc.s malloc can be started with .jheap record -- PROGRAM., which preloads jemalloc\)\$" dump $pid &&
	! test -s out && ! test -e jheap-$pid &&
	expect_fail 1 "no jemalloc in process $pid" ctl $pid on &&
	test "$(traced $pid)" = 0 &&
	w_step n 1
'

test_expect_success 'jemalloc without prof:true: the MALLOC_CONF advice, for every command' '
	bg p env LD_PRELOAD="$JEMALLOC" ./w_ctl &&
	wait_line p.out "^ready\$" &&
	pid=$(cat p.pid) &&
	advice="heap profiling is not enabled in this process: jemalloc reads MALLOC_CONF=prof:true only when the program starts; start it with MALLOC_CONF=prof:true,prof_active:false" &&
	expect_fail 1 "^jheap: process $pid \(w_ctl\): $advice" dump $pid &&
	! test -s out && ! test -e jheap-$pid &&
	expect_fail 1 "^jheap: process $pid \(w_ctl\): $advice" ctl $pid on &&
	expect_fail 1 "$advice" ctl $pid reset &&
	"$JHEAP" ctl $pid status >st 2>/dev/null &&
	grep "^profiling: not enabled (start the program with MALLOC_CONF=prof:true)\$" st &&
	test "$(traced $pid)" = 0 &&
	w_step p 1
'

test_expect_success 'a stopped process is refused and left stopped' '
	pid=$(cat p.pid) &&
	stop_process $pid &&
	expect_fail 1 "^jheap: process $pid \(w_ctl\) is stopped \(state T\): jheap runs no code in a stopped process, whose threads may hold the allocator.s locks; continue it first \(kill -CONT $pid\)\$" dump $pid &&
	grep -q "^State:.T" /proc/$pid/status &&
	kill -CONT $pid && w_step p 2
'

test_expect_success 'a dump folder that is not private is refused; nothing is written' '
	bg f env LD_PRELOAD="$JEMALLOC" MALLOC_CONF=$CONF ./w_ctl &&
	wait_line f.out "^ready\$" &&
	pid=$(cat f.pid) &&
	mkdir -m 755 jheap-$pid &&
	expect_fail 1 "^jheap: process $pid \(w_ctl\): .$TRASH_DIRECTORY/jheap-$pid. is not a private folder of yours \(owner uid $(id -u), mode 0755\)" dump $pid &&
	! ls -A jheap-$pid | grep . &&
	rmdir jheap-$pid && mkdir elsewhere && ln -s elsewhere jheap-$pid &&
	expect_fail 1 "cannot open the folder .$TRASH_DIRECTORY/jheap-$pid.: .*symbolic link" dump $pid &&
	! ls -A elsewhere | grep . &&
	rm jheap-$pid &&
	"$JHEAP" dump $pid >path 2>/dev/null &&
	test -s "$(cat path)" &&
	w_step f 1
'

test_expect_success 'a name with an escape sequence is shown escaped, and kept out of the dump'"'"'s name' '
	esc=$(printf "w\033[31mx") &&
	cp w_ctl "$esc" &&
	bg e env LD_PRELOAD="$JEMALLOC" MALLOC_CONF=$CONF "./$esc" &&
	wait_line e.out "^ready\$" &&
	pid=$(cat e.pid) &&
	d=$("$JHEAP" dump $pid 2>err) &&
	test "$d" = "$TRASH_DIRECTORY/jheap-$pid/w__31mx.$pid.0.a0.heap" &&
	grep -F "process $pid (w\\e[31mx) has no control library" err &&
	"$JHEAP" ctl $pid status >st 2>>err &&
	grep -F "program: $TRASH_DIRECTORY/w\\e[31mx" st &&
	! grep -q "$(printf "\033")" err st
'

test_expect_success 'a process with the control library is asked through its socket, as before' '
	bg l "$JHEAP" record -q --dir=l -- ./w_ctl &&
	wait_line l.out "^ready\$" &&
	pid=$(cat l.pid) &&
	"$JHEAP" dump $pid >path 2>err &&
	! grep "attached" err &&
	case $(cat path) in "$TRASH_DIRECTORY"/l/w_ctl.$pid.0.m0.heap) ;; *) false ;; esac &&
	kill -TERM $pid && wait_line l.out "^bye\$"
'

test_expect_success USERS 'another user'"'"'s process is refused; it runs on and ends well' '
	bg o env LD_PRELOAD="$JEMALLOC" MALLOC_CONF=$CONF ./w_attach 2 &&
	wait_line o.out "^ready\$" &&
	pid=$(cat o.pid) &&
	$AS_OTHER "$JHEAP" dump $pid >out 2>err; test $? = 1 &&
	cat err &&
	grep "^jheap: jheap can neither ask process $pid (w_attach) through a control socket (which answers its own user and root) nor attach to it: process $pid runs as user root (uid 0) and jheap as $OTHER (uid $(id -u $OTHER)): attaching needs the process.s own user or root (CAP_SYS_PTRACE); run jheap as that user, or with sudo\$" err &&
	! test -s out && ! test -e jheap-$pid &&
	$AS_OTHER "$JHEAP" ctl $pid on 2>err; test $? = 1 &&
	grep "nor attach to it: process $pid runs as user root" err &&
	test "$(traced $pid)" = 0 &&
	"$JHEAP" ctl $pid status 2>/dev/null | grep "^active: no\$" &&
	w_ok o
'

# Yama: a user attaching to its own process that is not its descendant.
# Where the kernel has no Yama, or its scope is 0, nothing refuses
# that: the message for each scope is checked by tests/unit/test_attach.c.
case $scope in
1 | 2) test_set_prereq YAMA ;;
*) say "# skipping the Yama test: kernel.yama.ptrace_scope is '$scope' here (no Yama, or 0); tests/unit/test_attach.c checks the message for each scope" ;;
esac
test_expect_success USERS,YAMA 'kernel.yama.ptrace_scope refuses a user its own process: said, the process untouched' '
	bg y $AS_OTHER env LD_PRELOAD="$JEMALLOC" MALLOC_CONF=$CONF ./w_ctl &&
	wait_line y.out "^ready\$" &&
	pid=$(cat y.pid) &&
	$AS_OTHER "$JHEAP" ctl $pid status >out 2>err; test $? = 1 &&
	cat err &&
	grep "kernel.yama.ptrace_scope is $scope" err &&
	test "$(traced $pid)" = 0 &&
	w_step y 1
'

test_expect_success USERS 'root dumps another user'"'"'s process: the dump is root'"'"'s, the folder private' '
	chmod 711 . &&
	bg u $AS_OTHER env LD_PRELOAD="$JEMALLOC" MALLOC_CONF=$CONF,lg_prof_sample:0 ./w_ctl &&
	wait_line u.out "^ready\$" &&
	pid=$(cat u.pid) &&
	"$JHEAP" ctl $pid on >/dev/null 2>&1 && w_step u 1 &&
	d=$("$JHEAP" dump $pid 2>err) &&
	test "$d" = "$TRASH_DIRECTORY/jheap-$pid/w_ctl.$pid.0.a0.heap" &&
	test "$(stat -c "%a %u" jheap-$pid)" = "711 0" &&
	test "$(stat -c "%a %u %h" "$d")" = "600 0 1" &&
	ls -A jheap-$pid >files && test "$(cat files)" = w_ctl.$pid.0.a0.heap &&
	"$JHEAP" --show_bytes "$d" >r && check_row r ctl_first 512000 512000 &&
	mkdir -m 700 closed &&
	d=$(cd closed && "$JHEAP" dump $pid 2>../err) &&
	cat err &&
	grep "; process $pid runs as uid $(id -u $OTHER), who cannot reach $TRASH_DIRECTORY/closed: the dump goes to /tmp/jheap-$pid-[A-Za-z0-9]*\$" err &&
	case $d in /tmp/jheap-$pid-*/w_ctl.$pid.0.a0.heap) ;; *) false ;; esac &&
	test "$(stat -c "%a %u" "${d%/*}")" = "711 0" &&
	rm -rf "${d%/*}" &&
	w_step u 2
'

# The folder against a process that plants things where it should write
# its dump: the process is played by the test, as the other user, which
# runs SCRIPT with the file name to write as $1 and the scratch folder as
# $2 while tests/tools/attachdir waits.
plant() {
	local name=$1 script=$2 pid target
	bg "$name" $AS_OTHER sleep 600 && pid=$(cat "$name.pid") &&
	# until setpriv has become that user and sleep
	wait_line /proc/$pid/comm "^sleep\$" &&
	mkfifo "$name.in" &&
	{ "$ATTACHDIR" $pid w <"$name.in" >"$name.res" 2>&1 & } &&
	exec 7>"$name.in" &&
	wait_line "$name.res" "^target " &&
	target=$(sed -n "s/^target //p" "$name.res") &&
	$AS_OTHER sh -c "$script" sh "$target" "$TRASH_DIRECTORY" &&
	echo go >&7 && exec 7>&- &&
	wait_line "$name.res" "^\(dump\|refused\) " &&
	cat "$name.res"
}

test_expect_success USERS 'the dump folder: a planted link, FIFO, folder or hard link is never read; a dump of the process is taken' '
	echo root-only >secret && chmod 600 secret &&
	plant h1 "ln -s \"\$2/secret\" \"\$1\"" &&
	grep "^refused process [0-9]* wrote no dump to .*/dump.heap (a symbolic link is there: not followed)\$" h1.res &&
	test "$(stat -c "%a %u" secret)" = "600 0" && test "$(cat secret)" = root-only &&
	plant h2 "mkfifo \"\$1\"" &&
	grep "^refused .*/dump.heap is not the file jemalloc writes" h2.res &&
	plant h3 "mkdir \"\$1\"" &&
	grep "^refused .*/dump.heap is not the file jemalloc writes" h3.res &&
	plant h5 "echo x >\"\${1%/*}/a\" && ln \"\${1%/*}/a\" \"\$1\"" &&
	grep "^refused .*/dump.heap is not the file jemalloc writes" h5.res &&
	plant h4 "echo heap_v2/1 >\"\$1\" && touch \"\${1%/*}/extra\"" &&
	grep "^dump $TRASH_DIRECTORY/jheap-[0-9]*/w.[0-9]*.0.a0.heap\$" h4.res &&
	d=$(sed -n "s/^dump //p" h4.res) &&
	test "$(stat -c "%a %u" "$d")" = "600 0" &&
	ls -A "${d%/*}" >files && test "$(cat files)" = "${d##*/}"
'

# A real server: Debian's redis-server (linked with libjemalloc.so.2),
# on a Unix socket only, under redis-benchmark while it is dumped.
test_have_prog redis-server && test_have_prog redis-benchmark && test_have_prog redis-cli &&
	test_set_prereq REDIS
test_expect_success REDIS 'redis-server under redis-benchmark, dumped 20 times: every request served' '
	bg rd env MALLOC_CONF=$CONF,lg_prof_sample:14 redis-server --port 0 --unixsocket r.sock \
		--save "" --appendonly no &&
	for i in $(seq 200); do redis-cli -s r.sock ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done &&
	pid=$(cat rd.pid) &&
	"$JHEAP" ctl $pid on >/dev/null 2>&1 &&
	bg rb sh -c "redis-benchmark -s r.sock -t set,get,lpush -n 100000 -r 100000 -d 200 -q; echo \"benchmark \$?\"" &&
	for i in $(seq 20); do "$JHEAP" dump $pid >/dev/null 2>>rd.notes || return 1; done &&
	wait_line rb.out "^benchmark " 120 &&
	grep "^benchmark 0\$" rb.out &&
	! grep -i "error" rb.out &&
	test "$(redis-cli -s r.sock ping)" = PONG &&
	"$JHEAP" dump $pid --text >rt 2>/dev/null &&
	sed -n 2p rt | grep -E " z(re)?(m|c|re)alloc(_usable)?\$" &&
	test "$(traced $pid)" = 0 &&
	redis-cli -s r.sock shutdown nosave; true
'

test_expect_success JESRC 'a program with a static je_ jemalloc: je_mallctl from .symtab, JE_MALLOC_CONF' '
	je=$(bash "$BUILD_JE") &&
	cc -O0 -g -DJEMALLOC_MANGLE -include jemalloc/jemalloc.h -I"$je/include" \
		-o w_ctl_je "$SRCDIR/testdata/w_ctl.c" "$je/lib/libjemalloc_pic.a" -lpthread -ldl -lm &&
	bg j env JE_MALLOC_CONF=$CONF,lg_prof_sample:0 ./w_ctl_je &&
	wait_line j.out "^ready\$" &&
	pid=$(cat j.pid) &&
	"$JHEAP" ctl $pid status >st 2>/dev/null &&
	grep "^jemalloc: .* (je_mallctl in $TRASH_DIRECTORY/w_ctl_je)\$" st &&
	grep "^active: no\$" st &&
	"$JHEAP" ctl $pid on >/dev/null 2>&1 && w_step j 1 &&
	"$JHEAP" dump $pid --show_bytes >jr 2>/dev/null &&
	check_total jr 512000 && check_row jr ctl_first 512000 512000 &&
	kill -TERM $pid && wait_line j.out "^bye\$" &&
	bg k env MALLOC_CONF=prof:true ./w_ctl_je &&
	wait_line k.out "^ready\$" &&
	expect_fail 1 "jemalloc reads JE_MALLOC_CONF=prof:true only when the program starts" dump $(cat k.pid)
'

# In a program, jemalloc's code is told by its names (je_*) and its
# source files' local functions: the same two checks as above.
test_expect_success JESRC 'static je_: a thread asleep in je_malloc_stats_print is never used' '
	je=$(bash "$BUILD_JE") &&
	cc -O2 -g -pthread -DJEMALLOC_MANGLE -include jemalloc/jemalloc.h -I"$je/include" \
		-o w_attach_je "$SRCDIR/testdata/w_attach.c" "$je/lib/libjemalloc_pic.a" -lpthread -ldl -lm &&
	bg js env JE_MALLOC_CONF=prof:true ./w_attach_je stats &&
	wait_line js.out "^in stats\$" &&
	pid=$(cat js.pid) &&
	expect_fail 1 "^jheap: no thread of process $pid \(w_attach_je\) could be used in [0-9.]* s \([0-9]* tries\): thread $pid: it was inside the allocator \(je_[a-z_]*\+0x[0-9a-f]* \(in $TRASH_DIRECTORY/w_attach_je\)\)" dump --timeout=1 $pid &&
	kill -USR1 $pid && wait_line js.out "^ok\$"
'

test_expect_success JESRC 'static je_: 100 dumps with every thread busy in the allocator' '
	bg jb env JE_MALLOC_CONF=prof:true,lg_prof_sample:14 ./w_attach_je 3 busy &&
	wait_line jb.out "^ready\$" &&
	named=$(dumps jb 100 w_attach_je) &&
	echo "$named" &&
	test "$(echo "$named" | tail -n 1)" -ge 90 &&
	w_ok jb
'

test_expect_success CARGO 'a Rust program (_rjem_mallctl): its one thread waits in sigwait, and carries on' '
	bash "$BUILD_RHEAP" rheap &&
	bg rs env _RJEM_MALLOC_CONF=$CONF,lg_prof_sample:0 ./rheap steps &&
	wait_line rs.out "^ready\$" &&
	pid=$(cat rs.pid) &&
	"$JHEAP" ctl $pid on >/dev/null 2>err &&
	cat err &&
	grep "held it [0-9.]* ms; thread $pid was waiting in rt_sigtimedwait, which returned EINTR to the program (as after any stop: gdb, SIGSTOP)\$" err &&
	w_step rs 1 &&
	"$JHEAP" dump $pid --show_bytes >rr 2>/dev/null &&
	check_row rr rheap::steps_first 512000 512000 &&
	w_step rs 2 &&
	kill -TERM $pid && wait_line rs.out "^bye\$"
'

test_expect_success CARGO 'a Rust program whose jemalloc has no profiling compiled in: said, for status and dump' '
	bash "$BUILD_RHEAP" --no-profiling rheap-noprof &&
	bg rn ./rheap-noprof steps &&
	wait_line rn.out "^ready\$" &&
	pid=$(cat rn.pid) &&
	"$JHEAP" ctl $pid status >st 2>/dev/null &&
	grep "^jemalloc: .* (_rjem_mallctl in $TRASH_DIRECTORY/rheap-noprof)\$" st &&
	grep -F "profiling: not compiled in (jemalloc was built without --enable-prof; in Rust, the \"profiling\" feature of jemalloc-sys or tikv-jemalloc-sys)" st &&
	expect_fail 1 "^jheap: process $pid \(rheap-noprof\): the jemalloc in this process \(_rjem_mallctl in $TRASH_DIRECTORY/rheap-noprof\) was built without profiling" dump $pid &&
	! test -e jheap-$pid &&
	w_step rn 1
'

test_done

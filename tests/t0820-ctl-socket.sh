#!/bin/bash
test_description='the control socket: who may use it, and processes that stop, crash, exit, fork or exec while asked'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

# the sockets' folders go to a sticky folder of this script's own (the
# library makes its folder in $TMPDIR): nothing another test left in /tmp
mkdir -p tmp && chmod 1777 tmp
export TMPDIR=$TRASH_DIRECTORY/tmp
# the recorded python is the real one, not a wrapper script (pyenv's
# shims run several programs in one process)
PYTHON=$(readlink -f /usr/bin/python3)

test_expect_success 'build the workload' '
	cc -O0 -g -o w_ctl "$SRCDIR/testdata/w_ctl.c"
'

# start NAME [RECORD OPTIONS]: w_ctl under jheap record, ready
start() {
	local name=$1
	shift
	bg "$name" "$JHEAP" record -q --sample=1 "$@" -- ./w_ctl && wait_line "$name.out" "^ready\$"
}

test_expect_success 'the socket is PID.sock in a folder jheap-UID.XXXXXX of mode 0700; the socket is 0600' '
	start a --dir=d &&
	pid=$(cat a.pid) &&
	sock=$(ctl_socket $pid) &&
	case $sock in "$TMPDIR"/jheap-$(id -u).??????/$pid.sock) ;; *) echo "socket $sock"; false ;; esac &&
	test "$(stat -c "%a %u %F" ${sock%/*})" = "700 $(id -u) directory" &&
	test "$(stat -c "%a %u %F" $sock)" = "600 $(id -u) socket"
'

# Another user: made with useradd when we are root (and removed at the end).
make_users
test_have_prereq USERS && test_set_prereq OTHER_USER
TESTUSER=${VICTIM:-}

test_expect_success OTHER_USER 'another user cannot reach the socket folder' '
	pid=$(cat a.pid) &&
	as_user $TESTUSER "$JHEAP" dump $pid >out 2>err; test $? -eq 1 &&
	grep "^jheap: cannot reach the control socket of process $pid (w_ctl) ($(ctl_socket $pid)): Permission denied; it runs as user root: run jheap as that user or as root\$" err
'

# A hard link gives the other user a path to the socket itself (the link
# shares the inode, so its mode too): then SO_PEERCRED must refuse.
test_expect_success OTHER_USER 'a peer of another user that reaches the socket is refused (SO_PEERCRED)' '
	pid=$(cat a.pid) &&
	mkdir -p open && chmod 755 open && ln $(ctl_socket $pid) open/s.sock && chmod 666 open/s.sock &&
	cat >client.py <<-\EOF &&
	import socket, sys
	s = socket.socket(socket.AF_UNIX)
	s.connect(sys.argv[1])
	s.sendall(sys.argv[2].encode() + b"\n")
	data = b""
	while not data.endswith(b"\n\n"):
	    more = s.recv(4096)
	    if not more:
	        break
	    data += more
	sys.stdout.write(data.decode())
	EOF
	as_user $TESTUSER /usr/bin/python3 client.py open/s.sock "jheap1 dump" >reply &&
	grep "^error refused: user $(id -u $TESTUSER) may not control process $pid, which runs as user 0 (only that user and root may)\$" reply &&
	/usr/bin/python3 client.py open/s.sock "jheap1 status" >mine && grep "^pid: $pid\$" mine &&
	chmod 600 $(ctl_socket $pid) && rm open/s.sock
'

test_expect_success OTHER_USER 'root controls a process of another user' '
	mkdir -m 700 o && chown $TESTUSER o &&
	bg u "$AS_USER" $TESTUSER "$JHEAP" record -q --sample=1 --dir="$TRASH_DIRECTORY/o" -- ./w_ctl &&
	wait_line u.out "^ready\$" && upid=$(cat u.pid) &&
	test "$(stat -c %U "$(ctl_socket $upid)")" = $TESTUSER &&
	kill -USR1 $upid && wait_line u.out "^step 1\$" &&
	path=$("$JHEAP" dump $upid) &&
	test "$(stat -c %U "$path")" = $TESTUSER &&
	"$JHEAP" --show_bytes "$path" >r && check_row r ctl_first $((50 * 10240)) $((50 * 10240)) &&
	kill -TERM $upid
'

test_expect_success 'a socket folder open to others is not used; the process says why' '
	mkdir -m 700 xdg && mkdir -m 777 xdg/jheap &&
	bg x env XDG_RUNTIME_DIR="$TRASH_DIRECTORY/xdg" "$JHEAP" record -q --dir=d -- ./w_ctl &&
	wait_line x.out "^ready\$" && pid=$(cat x.pid) &&
	grep "^jheap-ctl: process $pid: not listening: $TRASH_DIRECTORY/xdg/jheap is not a private folder of user $(id -u) (owner $(id -u), mode 0777)\$" x.err &&
	expect_fail 1 "^jheap: process $pid \(w_ctl\) has jheap.s control library but no control socket \(see its standard error for why\)\$" dump $pid
'

test_expect_success 'the socket goes to $XDG_RUNTIME_DIR/jheap, and jheap finds it from anywhere' '
	chmod 700 xdg/jheap &&
	start y --dir=d && pid=$(cat y.pid) &&
	bg z env XDG_RUNTIME_DIR="$TRASH_DIRECTORY/xdg" "$JHEAP" record -q --sample=1 --dir=d -- ./w_ctl &&
	wait_line z.out "^ready\$" && zpid=$(cat z.pid) &&
	test "$(ctl_socket $zpid)" = "$TRASH_DIRECTORY/xdg/jheap/$zpid.sock" &&
	env -u XDG_RUNTIME_DIR "$JHEAP" ctl $zpid status | grep "^pid: $zpid\$"
'

test_expect_success 'a killed process leaves its socket; jheap says it is gone; the next start removes it' '
	start k --dir=d && pid=$(cat k.pid) && sock=$(ctl_socket $pid) &&
	kill -KILL $pid && wait_gone $pid &&
	test -S $sock &&
	expect_fail 1 "^jheap: no process $pid\$" dump $pid &&
	start k2 --dir=d &&
	! test -e $sock
'

test_expect_success 'a socket file nobody listens on is not used; the message says what is missing' '
	bg s sleep 60 && spid=$(cat s.pid) && dir=$(dirname "$(ctl_socket $(cat a.pid))") &&
	/usr/bin/python3 -c "import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" $dir/$spid.sock &&
	elapsed_below 5 expect_fail 1 "^jheap: process $spid \(sleep\) does not have jheap.s control library loaded" dump $spid &&
	rm -f $dir/$spid.sock
'

test_expect_success 'a stopped process: jheap gives up after --timeout' '
	pid=$(cat a.pid) && stop_process $pid &&
	elapsed_below 6 expect_fail 1 "^jheap: process $pid \(w_ctl\) did not answer within 1 s \(it is stopped\)\$" dump --timeout=1 $pid;
	rc=$?; kill -CONT $pid; test $rc -eq 0 &&
	"$JHEAP" dump $pid >path && test -f "$(cat path)"
'

# wait_asking PID: wait until jheap (process PID) sleeps in poll(2),
# waiting for an answer: its request has been sent.
wait_asking() {
	local i
	for ((i = 0; i < 600; i++)); do
		case $(cat /proc/$1/wchan 2>/dev/null) in *poll*) return 0 ;; esac
		case $(cut -d" " -f1 /proc/$1/syscall 2>/dev/null) in 7 | 271 | 73) return 0 ;; esac
		kill -0 $1 2>/dev/null || { echo "jheap ($1) ended before it asked"; return 1; }
		sleep 0.05
	done
	echo "jheap ($1) did not come to wait for an answer within 30 s"
	return 1
}

# ask_dying NAME SIGNAL: start w_ctl as NAME, stop it, ask it for a dump
# (jheap dump in the background: the request waits in the socket's queue
# while the process is stopped), send SIGNAL and SIGCONT once the request
# is sent, and wait for jheap, which must be done within 10 s: its status
# in NAME.rc, its output in NAME.dout and NAME.derr.
ask_dying() {
	local name=$1 pid client
	start "$name" --dir=d && pid=$(cat "$name.pid") && stop_process "$pid" || return 1
	"$JHEAP" dump --timeout=30 "$pid" >"$name.dout" 2>"$name.derr" &
	client=$!
	echo $client >>"$BG_PIDS"
	wait_asking $client && kill -"$2" "$pid" && { kill -CONT "$pid" 2>/dev/null; true; } &&
	elapsed_below 10 wait $client
	echo $? >"$name.rc"
}

# answered_or_ended NAME: the dump was written, or jheap said the process
# ended before it answered (SIGSEGV and SIGTERM reach a stopped process
# when it continues, and its control thread may answer first: the dump is
# written, and jemalloc's final dump waits for it; or not)
answered_or_ended() {
	case $(cat "$1.rc") in
	0) test -s "$(cat "$1.dout")" ;;
	1) grep -E "^jheap: process $(cat "$1.pid") \(w_ctl\) ended before it answered" "$1.derr" ;;
	*) false ;;
	esac
}

# SIGKILL ends it at once, before its control thread can answer.
test_expect_success 'a process killed while a dump is asked for' '
	ask_dying c KILL &&
	{ test "$(cat c.rc)" = 1 &&
	  grep -E "^jheap: process $(cat c.pid) \(w_ctl\) ended before it answered \((it is a zombie: )?it exited or was killed\)\$" c.derr ||
	  { echo "status $(cat c.rc)"; cat c.dout c.derr; false; }; }
'

test_expect_success 'a process that crashes while a dump is asked for' '
	ask_dying s2 SEGV && answered_or_ended s2 &&
	for i in $(seq 100); do kill -0 $(cat s2.pid) 2>/dev/null || break; sleep 0.05; done &&
	! kill -0 $(cat s2.pid) 2>/dev/null
'

test_expect_success 'a process that exits while a dump is asked for' '
	ask_dying e TERM && answered_or_ended e &&
	wait_line e.out "^bye\$"
'

# unix_inodes PID: the inodes of the Unix sockets PID holds
unix_inodes() {
	ls -l /proc/$1/fd 2>/dev/null | sed -n "s/.*socket:\[\([0-9]*\)\]\$/\1/p"
}
# socket_path INODE: the path a Unix socket is bound to (/proc/net/unix)
socket_path() {
	awk -v i="$1" "\$7 == i { print \$8 }" /proc/net/unix
}

test_expect_success 'a child of fork answers for itself and holds nothing of its parent'"'"'s socket' '
	start f --accum --dir=d && pid=$(cat f.pid) &&
	w_step f 1 &&
	kill -USR2 $pid && wait_line f.out "^child " &&
	child=$(sed -n "s/^child //p" f.out) && forget_pid $child &&
	for i in $(seq 100); do ctl_socket $child >/dev/null && break; sleep 0.05; done &&
	psock=$(ctl_socket $pid) && csock=$(ctl_socket $child) &&
	for ino in $(unix_inodes $child); do
		p=$(socket_path $ino)
		test "$p" != $psock || { echo "the child holds its parent'"'"'s socket"; return 1; }
		echo "$p"
	done >child.sockets &&
	grep -x $csock child.sockets &&
	cpath=$("$JHEAP" dump $child) &&
	case $cpath in "$TRASH_DIRECTORY"/d/w_ctl.$child.*.m*.heap) ;; *) false ;; esac &&
	"$JHEAP" --show_bytes "$cpath" >cr &&
	check_rows cr <<-EOF &&
	$((4 * 65536)) $((4 * 65536)) ctl_child
	$((50 * 10240)) $((50 * 10240)) ctl_first
	EOF
	"$JHEAP" dump $pid --show_bytes >pr 2>/dev/null && check_row pr ctl_child none &&
	"$JHEAP" ctl $child status | grep "^pid: $child\$"
'

test_expect_success 'forks while dumps are asked for: each answer is the parent'"'"'s' '
	pid=$(cat f.pid) &&
	for i in 1 2 3 4 5 6 7 8; do
		kill -USR2 $pid &
		elapsed_below 10 "$JHEAP" dump --timeout=10 $pid >>paths || return 1
	done &&
	test $(wc -l <paths) -eq 8 &&
	! grep -v "^$TRASH_DIRECTORY/d/w_ctl\.$pid\.[0-9]*\.m[0-9]*\.heap\$" paths &&
	for f in $(cat paths); do test -s $f || return 1; done &&
	for i in $(seq 100); do test $(grep -c "^child " f.out) -ge 9 && break; sleep 0.05; done &&
	sed -n "s/^child //p" f.out >children &&
	while read c; do forget_pid $c; "$JHEAP" ctl $c status | grep -q "^pid: $c\$" || return 1; done <children
'

test_expect_success 'exec: the new program answers for the same pid' '
	bg x2 "$JHEAP" record -q --sample=1 --dir=d -- sh -c "exec ./w_ctl" &&
	wait_line x2.out "^ready\$" && pid=$(cat x2.pid) &&
	"$JHEAP" ctl $pid status >st &&
	grep "^pid: $pid\$" st && grep "^program: $TRASH_DIRECTORY/w_ctl\$" st
'

# A daemon may close every descriptor and reuse the number for a socket of
# its own: the control thread must not take that socket's connections.
test_expect_success 'a program that closes the socket and reuses its descriptor keeps its connections' '
	cat >reuse.py <<-\EOF &&
	import os, socket, sys, time
	ours = []
	for f in os.listdir("/proc/self/fd"):
	    try:
	        if os.readlink("/proc/self/fd/" + f).startswith("socket:"):
	            ours.append(int(f))
	    except OSError:
	        pass
	os.closerange(3, 1024)
	s = socket.socket(socket.AF_UNIX)
	s.bind(sys.argv[1])
	s.listen(8)
	if ours and s.fileno() != ours[0]:
	    os.dup2(s.fileno(), ours[0])
	    s = socket.socket(fileno=ours[0])
	print("listening", s.fileno(), ours, flush=True)
	for _ in range(5):
	    c, _ = s.accept()
	    c.sendall(b"mine\n")
	    c.close()
	time.sleep(60)
	EOF
	bg r "$JHEAP" record -q --every=100ms --dir=d -- "$PYTHON" reuse.py "$TRASH_DIRECTORY/own.sock" &&
	wait_line r.out "^listening" && pid=$(cat r.pid) &&
	sleep 0.3 &&
	for i in 1 2 3 4 5; do
		/usr/bin/python3 -c "import socket, sys; s = socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(sys.argv[1]); print(s.recv(100).decode(), end=\"\")" \
			"$TRASH_DIRECTORY/own.sock" >>answers || return 1
		sleep 0.15
	done &&
	test "$(sort -u answers)" = mine && test $(wc -l <answers) -eq 5 &&
	path=$("$JHEAP" dump $pid) && test -s "$path" &&
	ctl_socket $pid && ! grep jheap-ctl r.err
'

test_expect_success 'a program that closed every descriptor: the next request finds the thread listening again' '
	cat >closer.py <<-\EOF &&
	import os, time
	for _ in range(3):
	    os.closerange(3, 1024)
	    time.sleep(0.1)
	print("done", flush=True)
	time.sleep(60)
	EOF
	bg k "$JHEAP" record -q --sample=1 --dir=d -- "$PYTHON" closer.py &&
	wait_line k.out "^done" && pid=$(cat k.pid) &&
	# the thread, blocked in poll(), learns of it from the first
	# connection; jheap asks again and gets the answer
	path=$("$JHEAP" dump $pid) && test -s "$path" &&
	ctl_socket $pid && ! grep jheap-ctl k.err &&
	"$JHEAP" ctl $pid status >st && grep "^pid: $pid\$" st
'

test_expect_success 'closed after the thread stopped looking (3.1 s): the request wakes it, jheap asks again' '
	cat >late.py <<-\EOF &&
	import os, time
	time.sleep(3.6)
	os.closerange(3, 1024)
	print("closed", flush=True)
	time.sleep(60)
	EOF
	bg l "$JHEAP" record -q --sample=1 --dir=d -- "$PYTHON" late.py &&
	wait_line l.out "^closed" && pid=$(cat l.pid) &&
	path=$("$JHEAP" dump $pid) && test -s "$path" &&
	ctl_socket $pid
'

# A daemon as varnishd is one: started as root, it closes every
# descriptor, drops to its own user, and closes them all again.
cat >daemon.py <<-\EOF
import os, pwd, sys, time
os.closerange(3, 1024)
time.sleep(0.2)
pw = pwd.getpwnam(sys.argv[1])
os.setgroups([])
os.setresgid(pw.pw_gid, pw.pw_gid, pw.pw_gid)
os.setresuid(pw.pw_uid, pw.pw_uid, pw.pw_uid)
os.closerange(3, 1024)
time.sleep(0.2)
keep = [bytearray(100000) for _ in range(20)]
print("ready", flush=True)
time.sleep(60)
EOF

test_expect_success OTHER_USER 'a daemon that closes every descriptor and drops root: root dumps it' '
	bg dm "$JHEAP" record -q --sample=1 --dir="$TRASH_DIRECTORY/dd" --dump-group=$TESTUSER -- "$PYTHON" daemon.py $TESTUSER &&
	wait_line dm.out "^ready\$" && pid=$(cat dm.pid) &&
	test "$(stat -c %U /proc/$pid)" = $TESTUSER &&
	path=$("$JHEAP" dump $pid) &&
	test "$(stat -c %U "$(ctl_socket $pid)")" = $TESTUSER &&
	test "$(stat -c %U "$path")" = $TESTUSER &&
	"$JHEAP" ctl $pid status >st && grep "^pid: $pid\$" st
'

test_expect_success OTHER_USER 'the daemon'"'"'s user may not write in the dump folder: the message says so' '
	bg dr "$JHEAP" record -q --sample=1 --dir="$TRASH_DIRECTORY/ro" -- "$PYTHON" daemon.py $TESTUSER &&
	wait_line dr.out "^ready\$" && pid=$(cat dr.pid) &&
	expect_fail 1 "it runs as user $(id -u $TESTUSER), who may not write in $TRASH_DIRECTORY/ro \(Permission denied\)" dump $pid
'

test_done

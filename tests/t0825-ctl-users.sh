#!/bin/bash
test_description='jheap dump and jheap ctl between local users: hostile answers, a socket swapped for another process'"'"'s, slow clients, squatted socket folders

A process answers jheap through its control socket, and the process may
be another user'"'"'s: jheap run as root must talk to the process it names
and no other, use a dump path only once it has opened and checked the
file (never as an option, a URL or a file of someone else), and print
nothing from the answer raw.  The control thread serves a second client
while one is slow, and a socket folder another user made first is
skipped.  Run as root, the tests make two local users (removed at the
end); most of them also run as any user, against processes of that user.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

test_have_prog /usr/bin/python3 || test_skip "/usr/bin/python3 is needed"
PY=/usr/bin/python3
TESTCTL=$BUILD_DIR/tests/libjheapctl-test.so

# the library's folders go to a sticky folder of this script's own
mkdir -p tmp && chmod 1777 tmp
export TMPDIR=$TRASH_DIRECTORY/tmp

test_expect_success 'build the workload' '
	cc -O0 -g -o w_ctl "$SRCDIR/testdata/w_ctl.c" && chmod 755 w_ctl
'
make_users
# The "other" side: the attacker when there are two users, else ourselves
# (then the same checks apply: the answer is never trusted).
if test_have_prereq USERS; then
	OTHER=$ATTACKER
	RUN_OTHER=("$AS_USER" "$OTHER")
else
	OTHER=$(id -un)
	RUN_OTHER=()
fi
OUID=$(id -u "$OTHER")

# A control server that is not jheap's library: it listens as its own pid
# (or as the pid in its third argument) in the folder where jheap looked
# before (/tmp/jheap-UID), and answers every request with the bytes of the
# file "reply" and an empty line.  Its process name may be set too.
cat >fake.py <<-\EOF
import os, socket, sys
d = "/tmp/jheap-%d" % os.geteuid()
os.makedirs(d, mode=0o700, exist_ok=True)
name = sys.argv[2] if len(sys.argv) > 2 and sys.argv[2] else str(os.getpid())
if len(sys.argv) > 3:
    with open("/proc/self/comm", "wb") as f:
        f.write(sys.argv[3].encode())
path = os.path.join(d, name + ".sock")
try:
    os.unlink(path)
except FileNotFoundError:
    pass
s = socket.socket(socket.AF_UNIX)
s.bind(path)
s.listen(8)
print("listening", path, flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(10)
    req = b""
    try:
        while not req.endswith(b"\n"):
            more = c.recv(256)
            if not more:
                break
            req += more
        with open(sys.argv[1], "rb") as f:
            c.sendall(f.read() + b"\n\n")
    except OSError:
        pass
    c.close()
EOF

# reply TEXT: what the fake server answers from now on (printf format)
reply() {
	printf -- "$@" >"$TRASH_DIRECTORY/fk/reply"
}

# no_escape FILE...: no ESC or BEL byte in the files
no_escape() {
	! grep -l "$(printf "[\033\007]")" "$@"
}

test_expect_success 'a fake control server of the other user, with a dump folder in its environment' '
	mkdir -m 755 fk && chown $OTHER fk &&
	reply "ok" && chown $OTHER fk/reply &&
	"${RUN_OTHER[@]}" mkdir -m 700 fk/d &&
	bg fake "${RUN_OTHER[@]}" env MALLOC_CONF=prof:true,prof_prefix:$TRASH_DIRECTORY/fk/d/fake \
		$PY fake.py "$TRASH_DIRECTORY/fk/reply" &&
	wait_line fake.out "^listening" && fpid=$(cat fake.pid) &&
	test "$(sed -n "s/^listening //p" fake.out)" = /tmp/jheap-$OUID/$fpid.sock &&
	# a real dump of the fake'"'"'s user, for the answer that is right
	bg rd "$JHEAP" record -q --sample=1 --dir=rd -- ./w_ctl && wait_line rd.out "^ready\$" &&
	"$JHEAP" dump $(cat rd.pid) >rd.path && cp "$(cat rd.path)" real.heap && chmod 644 real.heap
'

# hostile NAME: jheap dump PID and jheap dump PID --text against the fake
# server: status 1, nothing on standard output, no escape sequence, and the
# standard error matching the pattern in NAME.want
hostile() {
	local fpid
	fpid=$(cat fake.pid)
	"$JHEAP" dump $fpid >$1.out 2>$1.err
	test $? = 1 || { echo "jheap dump: status $?"; cat $1.out $1.err; return 1; }
	"$JHEAP" dump $fpid --text >$1.tout 2>$1.terr
	test $? = 1 || { echo "jheap dump --text: status $?"; cat $1.tout $1.terr; return 1; }
	test ! -s $1.out && test ! -s $1.tout || { echo "printed:"; cat $1.out $1.tout; return 1; }
	no_escape $1.out $1.err $1.tout $1.terr &&
	grep -E -- "$(cat $1.want)" $1.err && grep -E -- "$(cat $1.want)" $1.terr
}

test_expect_success '"ok /etc/shadow" is not opened' '
	reply "ok /etc/shadow" &&
	echo "answered ./etc/shadow., which is not the absolute path of one of its dumps \(PREFIX\.$(cat fake.pid)\.SEQ\.mN\.heap\): not using it\$" >shadow.want &&
	hostile shadow && ! grep -q "^root:" shadow.tout shadow.terr
'

test_expect_success '"ok --output=FILE" is no option: nothing written' '
	reply "ok --output=$TRASH_DIRECTORY/x" &&
	echo "answered .--output=" >opt.want &&
	hostile opt && ! test -e x
'

test_expect_success '"ok http://..." is no URL: nothing fetched' '
	cat >listen.py <<-\EOF &&
	import socket, sys
	s = socket.socket()
	s.bind(("127.0.0.1", 0))
	s.listen(8)
	s.settimeout(120)
	print(s.getsockname()[1], flush=True)
	try:
	    while True:
	        c, _ = s.accept()
	        print("fetched", flush=True)
	        c.close()
	except OSError:
	    pass
	EOF
	bg web $PY listen.py && wait_line web.out "^[0-9]" && port=$(head -n 1 web.out) &&
	reply "ok http://127.0.0.1:$port/fake.$(cat fake.pid).0.m0.heap" &&
	echo "answered .http://127\.0\.0\.1:$port/" >url.want &&
	hostile url &&
	# a connection made now is seen: the listener works, and saw none before
	$PY -c "import socket, sys; socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), 5).close()" $port &&
	wait_line web.out "^fetched" && test $(grep -c "^fetched" web.out) = 1
'

test_expect_success 'escape sequences in an answer and in the process name reach no terminal' '
	reply "ok /x\033]0;pwned\007\033[2J" &&
	echo "answered ./x\\\\e\]0;pwned\\\\x07\\\\e\[2J., which is not" >esc.want &&
	hostile esc &&
	reply "error \033[31mred\033[0m and\nmore" &&
	"$JHEAP" ctl $(cat fake.pid) on >e2.out 2>e2.err; test $? = 1 &&
	no_escape e2.out e2.err && grep "\\\\e\[31mred\\\\e\[0m and" e2.err &&
	reply "ok\npid: 1\nprogram: /bin/\033[31mred\033[0m\nnote: \033]0;pwned\007" &&
	"$JHEAP" ctl $(cat fake.pid) status >st.out 2>st.err &&
	no_escape st.out st.err &&
	grep -x "program: /bin/\\\\e\[31mred\\\\e\[0m" st.out && grep -x "note: \\\\e\]0;pwned\\\\x07" st.out
'

test_expect_success 'a process whose name holds escape sequences: messages escape it' '
	reply "error no" &&
	bg fake2 "${RUN_OTHER[@]}" $PY fake.py "$TRASH_DIRECTORY/fk/reply" "" "$(printf "\033[2Jevil")" &&
	wait_line fake2.out "^listening" &&
	"$JHEAP" dump $(cat fake2.pid) >n.out 2>n.err; test $? = 1 &&
	no_escape n.out n.err && grep "(\\\\e\[2Jevil): no\$" n.err
'

test_expect_success 'a dump path of the right shape: a link, a file outside the dump folder, a hard link, another user'"'"'s file' '
	fpid=$(cat fake.pid) && d=$TRASH_DIRECTORY/fk/d &&
	"${RUN_OTHER[@]}" ln -s /etc/shadow $d/fake.$fpid.0.m0.heap &&
	reply "ok $d/fake.$fpid.0.m0.heap" &&
	echo "cannot open the dump .$d/fake\.$fpid\.0\.m0\.heap. of process $fpid \(python3[^)]*\): it is a symbolic link\$" >link.want &&
	hostile link &&
	mkdir -p elsewhere && cp real.heap elsewhere/fake.$fpid.1.m1.heap && chown $OTHER elsewhere/fake.$fpid.1.m1.heap &&
	reply "ok $TRASH_DIRECTORY/elsewhere/fake.$fpid.1.m1.heap" &&
	echo "which is not in the dump folder of its prof_prefix \($d/fake\): not using it\$" >out.want &&
	hostile out &&
	"${RUN_OTHER[@]}" cp real.heap $d/mine.heap &&
	"${RUN_OTHER[@]}" ln $d/mine.heap $d/fake.$fpid.2.m2.heap &&
	reply "ok $d/fake.$fpid.2.m2.heap" &&
	echo "is not a regular file of its user $OUID with one link \(owner $OUID [^,]*, mode 0644, 2 links\): not using it\$" >hard.want &&
	hostile hard
'

test_expect_success USERS 'a file of root (the one asking) in the other user'"'"'s dump folder is not read' '
	fpid=$(cat fake.pid) && d=$TRASH_DIRECTORY/fk/d &&
	chmod 777 $d && cp real.heap $d/fake.$fpid.3.m3.heap && chmod 600 $d/fake.$fpid.3.m3.heap && chmod 700 $d &&
	reply "ok $d/fake.$fpid.3.m3.heap" &&
	echo "is not a regular file of its user $OUID with one link \(owner 0 \(root\), mode 0600, 1 links\)" >rootf.want &&
	hostile rootf
'

test_expect_success 'a dump of the process'"'"'s own, as it should be, is analyzed (through the checked descriptor)' '
	fpid=$(cat fake.pid) && d=$TRASH_DIRECTORY/fk/d &&
	"${RUN_OTHER[@]}" cp real.heap $d/fake.$fpid.4.m4.heap &&
	reply "ok $d/fake.$fpid.4.m4.heap" &&
	"$JHEAP" dump $fpid >p.out && test "$(cat p.out)" = "$d/fake.$fpid.4.m4.heap" &&
	"$JHEAP" dump $fpid --text --show_bytes >p.txt 2>p.err &&
	grep "^jheap: process $fpid dumped its heap to $d/fake.$fpid.4.m4.heap\$" p.err &&
	"$JHEAP" --text --show_bytes real.heap >expected && test_cmp expected p.txt
'

test_expect_success 'a socket that answers for another process (its pid in the name) is refused before a byte is sent' '
	bg sl "${RUN_OTHER[@]}" sleep 120 && spid=$(cat sl.pid) &&
	reply "ok /etc/passwd" &&
	bg fake3 "${RUN_OTHER[@]}" $PY fake.py "$TRASH_DIRECTORY/fk/reply" $spid &&
	wait_line fake3.out "^listening" &&
	"$JHEAP" ctl $spid status >o3.out 2>o3.err; test $? = 1 &&
	grep "^jheap: process $spid (sleep): the socket /tmp/jheap-$OUID/$spid.sock answers for process $(cat fake3.pid) of user $OUID, not for process $spid of user $OUID or root; not using it\$" o3.err &&
	test ! -s o3.out
'

# target NAME [USER]: w_ctl under jheap record, as USER (default: ourselves)
target() {
	local name=$1
	if [ -n "${2:-}" ]; then
		mkdir -m 700 "$name.d" && chown "$2" "$name.d" &&
		bg "$name" "$AS_USER" "$2" "$JHEAP" record -q --sample=1 --dir="$TRASH_DIRECTORY/$name.d" -- ./w_ctl
	else
		bg "$name" "$JHEAP" record -q --sample=1 --dir="$TRASH_DIRECTORY/$name.d" -- ./w_ctl
	fi
	wait_line "$name.out" "^ready\$"
}

test_expect_success 'a hard link to another process'"'"'s socket in place of the socket: refused (SO_PEERCRED pid)' '
	target p1 && target r1 && p=$(cat p1.pid) && r=$(cat r1.pid) &&
	psock=$(ctl_socket $p) && rsock=$(ctl_socket $r) &&
	mv $psock $psock.held && ln $rsock $psock &&
	"$JHEAP" ctl $p status >h.out 2>h.err; rc=$?
	rm -f $psock && mv $psock.held $psock && test $rc = 1 &&
	grep "^jheap: process $p (w_ctl): the socket $psock answers for process $r of user $(id -u), not for process $p" h.err &&
	test ! -s h.out &&
	"$JHEAP" ctl $r status | grep "^dumps taken: 0 on request" &&
	"$JHEAP" ctl $p status | grep "^pid: $p\$"
'

# The owner of the socket folder swaps the socket for a link to another
# process's socket and back, as fast as it can, while jheap asks 200
# times: jheap may fail, but never talks to the other process.
cat >swap.py <<-\EOF
import os, sys
sock, other, stop = sys.argv[1], sys.argv[2], sys.argv[3]
tmp, held = sock + ".new", sock + ".held"
print("swapping", flush=True)
n = 0
while not os.path.exists(stop) and n < 20000000:
    os.symlink(other, tmp)
    os.rename(sock, held)
    os.rename(tmp, sock)
    os.rename(held, sock)
    n += 1
print("swapped", n, flush=True)
EOF

# swap_race NAME USER: the race against a target of USER ("": ourselves)
# and a process of root (or ours) as the other one
swap_race() {
	local name=$1 user=$2 p r psock i wrong=0 ok=0 refused=0
	target $name $user && target $name.r || return 1
	p=$(cat $name.pid) r=$(cat $name.r.pid)
	psock=$(ctl_socket $p) || return 1
	if [ -n "$user" ]; then
		bg $name.sw "$AS_USER" $user $PY swap.py $psock $(ctl_socket $r) "$TRASH_DIRECTORY/$name.stop"
	else
		bg $name.sw $PY swap.py $psock $(ctl_socket $r) "$TRASH_DIRECTORY/$name.stop"
	fi
	wait_line $name.sw.out "^swapping" || return 1
	for ((i = 0; i < 200; i++)); do
		if "$JHEAP" dump --timeout=10 $p >$name.o 2>$name.e; then
			case $(cat $name.o) in
			"$TRASH_DIRECTORY/$name.d"/w_ctl.$p.*.m*.heap) ok=$((ok + 1)) ;;
			*) wrong=$((wrong + 1)); cat $name.o ;;
			esac
		else
			refused=$((refused + 1))
			grep -q "w_ctl\.$r\." $name.e && { wrong=$((wrong + 1)); cat $name.e; }
		fi
	done
	touch $name.stop && wait_line $name.sw.out "^swapped"
	echo "200 tries: $ok dumps of process $p, $refused refused, $wrong of another process"
	"$JHEAP" ctl $r status >$name.rst && grep "^dumps taken: 0 on request" $name.rst &&
	! ls $name.r.d/w_ctl.$r.*.m*.heap 2>/dev/null && test $wrong = 0
}

test_expect_success 'the socket swapped for a link to another process'"'"'s, 200 times: no wrong connection' '
	swap_race sw ""
'

test_expect_success USERS 'the same race by another user against root'"'"'s jheap' '
	swap_race swu $ATTACKER
'

# slow.py SOCKET MODE: connects and then sends nothing ("silent") or a
# byte every 0.2 s ("trickle") without ever ending the line; prints
# "connected", then "closed" when the other side closes (at most 60 s).
cat >slow.py <<-\EOF
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
print("connected", flush=True)
s.settimeout(0.2)
end = time.monotonic() + 60
while time.monotonic() < end:
    try:
        if sys.argv[2] == "trickle":
            s.send(b"j")
        if s.recv(100) == b"":
            print("closed", flush=True)
            break
    except socket.timeout:
        pass
    except OSError:
        print("closed", flush=True)
        break
time.sleep(60)
EOF

test_expect_success 'a client that sends a byte at a time and never a line: another is served meanwhile; it is dropped' '
	target sc && p=$(cat sc.pid) && sock=$(ctl_socket $p) &&
	bg tr $PY slow.py $sock trickle && wait_line tr.out "^connected" &&
	path=$("$JHEAP" dump --timeout=30 $p) && test -s "$path" &&
	wait_line tr.out "^closed" 30
'

test_expect_success 'six silent connections: a request is still answered' '
	p=$(cat sc.pid) && sock=$(ctl_socket $p) &&
	for i in 1 2 3 4 5 6; do bg si$i $PY slow.py $sock silent || return 1; done &&
	for i in 1 2 3 4 5 6; do wait_line si$i.out "^connected" || return 1; done &&
	"$JHEAP" ctl --timeout=30 $p status | grep "^pid: $p\$" &&
	for i in 1 2 3 4 5 6; do wait_line si$i.out "^closed" 30 || return 1; done
'

test_expect_success 'socket folders named like the library'"'"'s but not private ones of the user: skipped, a new one made' '
	mkdir sq && chmod 1777 sq && u=$(id -u) &&
	mkdir -m 700 sq/jheap-$u.AAAAAA && chmod 707 sq/jheap-$u.AAAAAA &&
	mkdir -m 700 sq/jheap-$u.BBBBBB && chmod 770 sq/jheap-$u.BBBBBB &&
	mkdir -m 700 mine2 && ln -s "$TRASH_DIRECTORY/mine2" sq/jheap-$u.CCCCCC &&
	if test_have_prereq USERS; then
		as_user $ATTACKER mkdir -m 700 sq/jheap-$u.DDDDDD &&
		as_user $ATTACKER sh -c "mkdir sq/jheap-$u && chmod 777 sq/jheap-$u"
	fi &&
	bg q env TMPDIR="$TRASH_DIRECTORY/sq" "$JHEAP" record -q --sample=1 --dir=q.d -- ./w_ctl &&
	wait_line q.out "^ready\$" && p=$(cat q.pid) &&
	sock=$(ctl_socket $p) && dir=${sock%/*} &&
	case $dir in "$TRASH_DIRECTORY"/sq/jheap-$u.??????) ;; *) echo "socket in $dir"; false ;; esac &&
	case ${dir##*.} in AAAAAA | BBBBBB | CCCCCC | DDDDDD) echo "used ${dir##*/}"; false ;; esac &&
	test "$(stat -c "%a %u" $dir)" = "700 $u" &&
	test -z "$(find mine2 sq/jheap-$u.AAAAAA sq/jheap-$u.BBBBBB -mindepth 1)" &&
	"$JHEAP" dump $p >/dev/null &&
	bg q2 env TMPDIR="$TRASH_DIRECTORY/sq" "$JHEAP" record -q --sample=1 --dir=q2.d -- ./w_ctl &&
	wait_line q2.out "^ready\$" && test "$(dirname "$(ctl_socket $(cat q2.pid))")" = $dir
'

test_expect_success 'a peer of another user is refused by the library (test build: the peer seen as user 4242)' '
	test -f "$TESTCTL" || { echo "no $TESTCTL (make unit builds it)"; false; } &&
	bg pu env LD_PRELOAD="$JEMALLOC:$TESTCTL" MALLOC_CONF=prof:true JHEAP_CTL_TEST_PEER_UID=4242 ./w_ctl &&
	wait_line pu.out "^ready\$" && p=$(cat pu.pid) &&
	expect_fail 1 "^jheap: process $p \(w_ctl\): refused: user 4242 may not control process $p, which runs as user $(id -u) \(only that user and root may\)\$" ctl $p status &&
	expect_fail 1 "refused: user 4242 may not control" dump $p &&
	bg pm env LD_PRELOAD="$JEMALLOC:$TESTCTL" MALLOC_CONF=prof:true JHEAP_CTL_TEST_PEER_UID=$(id -u) ./w_ctl &&
	wait_line pm.out "^ready\$" && "$JHEAP" ctl $(cat pm.pid) status | grep "^pid: $(cat pm.pid)\$" &&
	bg pr env LD_PRELOAD="$JEMALLOC:$TESTCTL" MALLOC_CONF=prof:true JHEAP_CTL_TEST_PEER_UID=0 ./w_ctl &&
	wait_line pr.out "^ready\$" && "$JHEAP" ctl $(cat pr.pid) status | grep "^pid: $(cat pr.pid)\$"
'

test_expect_success 'the installed library has no such hook' '
	bg ph env LD_PRELOAD="$JEMALLOC:$CTL_LIB" MALLOC_CONF=prof:true JHEAP_CTL_TEST_PEER_UID=4242 ./w_ctl &&
	wait_line ph.out "^ready\$" && "$JHEAP" ctl $(cat ph.pid) status | grep "^pid: $(cat ph.pid)\$" &&
	! grep -q JHEAP_CTL_TEST_PEER_UID "$CTL_LIB"
'

test_expect_success 'clean up the fake servers'"'"' sockets' '
	for f in fake fake2 fake3; do
		s=$(sed -n "s/^listening //p" $f.out) && kill $(cat $f.pid) && rm -f "$s" || return 1
	done
'

test_done

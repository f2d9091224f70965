# tests/record-lib.sh: helpers for the tests of jheap record, jheap dump and
# jheap ctl (t08*), sourced after lib.sh.
#
#   JEMALLOC     Debian's libjemalloc.so.2
#   CTL_LIB      the control library beside $JHEAP
#   bg NAME CMD...   start CMD in the background: standard output in
#                    NAME.out, errors in NAME.err, its pid in NAME.pid;
#                    the process is killed when the script ends
#   forget_pid PID   add PID (a child a workload forked) to that list
#   wait_line FILE PATTERN [SECONDS]   wait until a line of FILE matches
#   w_step NAME N    send SIGUSR1 to workload NAME (testdata/w_ctl.c) and
#                    wait for its "step N"
#   elapsed_below SECONDS CMD...   run CMD; fail when it took longer
#   stop_process PID   SIGSTOP, and wait until every thread is stopped
#                    (kill returns before they are, on a busy machine
#                    long before)
#   wait_gone PID [SECONDS]   wait until PID has exited (a zombie counts:
#                    'wait PID' then gives a child's status), else fail
#                    saying so
#   ctl_socket PID   the path of PID's control socket (a listening socket
#                    named DIR/PID.sock in /proc/net/unix, DIR jheap or
#                    jheap-*); fails when there is none
#   make_users       two local users, $ATTACKER and $VICTIM, made with
#                    useradd when the script runs as root and removed
#                    when it ends (their processes killed first); sets
#                    the prereq USERS, or says why the tests that need
#                    them are skipped
#   as_user USER CMD...   CMD as USER, in the same process (setpriv), with
#                    no supplementary group and no XDG_RUNTIME_DIR;
#                    "$AS_USER" USER CMD... is the same as a program (for
#                    bg: the pid it records is then CMD's own)

JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
for f in /usr/lib/"$(gcc -print-multiarch 2>/dev/null)"/libjemalloc.so.2 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2; do
	[ -f "$f" ] && { JEMALLOC=$f; break; }
done
CTL_LIB=$(dirname "$JHEAP")/libjheapctl.so
export JEMALLOC CTL_LIB

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
[ -f "$CTL_LIB" ] || test_skip "no control library $CTL_LIB (make builds it)"
[ -f "$JEMALLOC" ] || test_skip "no $JEMALLOC (install libjemalloc2: scripts/deps.sh)"

BG_PIDS=$TRASH_DIRECTORY/.bg-pids
: >"$BG_PIDS"
MADE_USERS=
stop_background_() {
	local p u uid
	while read -r p; do
		kill -KILL "$p" 2>/dev/null
	done <"$BG_PIDS"
	wait 2>/dev/null
	for u in $MADE_USERS; do
		uid=$(id -u "$u" 2>/dev/null) || continue
		# what the library made for them (sockets of processes now gone)
		rm -rf "/tmp/jheap-$uid" /tmp/jheap-"$uid".??????
		userdel -f "$u" >/dev/null 2>&1 || echo "# could not remove the test user $u"
	done
	# and what tests/lib.sh stops at the end of every script (test_bg
	# processes, the heartbeat): this trap replaces its own
	test_bg_stop_ "$TEST_BG_SCRIPT_"
}
trap stop_background_ EXIT

make_users() {
	local base=jh${TEST_NAME%%-*}-$$
	if [ "$(id -u)" != 0 ]; then
		say "# skipping the tests with two local users: they need root (to make them with useradd)"
		return 0
	fi
	if ! test_have_prog useradd || ! test_have_prog setpriv; then
		say "# skipping the tests with two local users: useradd and setpriv are needed"
		return 0
	fi
	ATTACKER=${base}a VICTIM=${base}v
	for u in $ATTACKER $VICTIM; do
		useradd --system --user-group --no-create-home --shell /usr/sbin/nologin "$u" || {
			say "# skipping the tests with two local users: useradd $u failed"
			return 0
		}
		MADE_USERS="$MADE_USERS $u"
	done
	export ATTACKER VICTIM
	test_set_prereq USERS
}

AS_USER=$TRASH_DIRECTORY/.bin/as_user
mkdir -p "${AS_USER%/*}"
cat >"$AS_USER" <<-\EOF
	#!/bin/sh
	u=$1
	shift
	exec setpriv --reuid="$u" --regid="$u" --clear-groups -- env -u XDG_RUNTIME_DIR "$@"
	EOF
chmod 755 "$AS_USER"
as_user() {
	"$AS_USER" "$@"
}

wait_gone() {
	local i n=$((${2:-20} * 20))
	for ((i = 0; i < n; i++)); do
		case $(sed "s/.*) //" /proc/"$1"/stat 2>/dev/null) in Z* | "") return 0 ;; esac
		sleep 0.05
	done
	echo "process $1 did not exit within ${2:-20} s"
	return 1
}

ctl_socket() {
	awk -v tail="/$1.sock" '$5 == "0001" && $6 == "01" && length($8) > length(tail) &&
		substr($8, length($8) - length(tail) + 1) == tail && $8 ~ /\/jheap(-[^\/]*)?\/[0-9]+\.sock$/ {
			print $8; found = 1; exit }
		END { exit !found }' /proc/net/unix
}

bg() {
	local name=$1
	shift
	"$@" >"$name.out" 2>"$name.err" </dev/null &
	echo $! >"$name.pid"
	echo $! >>"$BG_PIDS"
}

forget_pid() {
	echo "$1" >>"$BG_PIDS"
}

wait_line() {
	local i n=$((${3:-10} * 20))
	for ((i = 0; i < n; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "timed out waiting for '$2' in $1:"
	cat "$1" 2>/dev/null
	return 1
}

w_step() {
	kill -USR1 "$(cat "$1.pid")" && wait_line "$1.out" "^step $2\$"
}

elapsed_below() {
	local limit=$1 t0 t1 rc
	shift
	t0=$EPOCHREALTIME
	"$@"
	rc=$?
	t1=$EPOCHREALTIME
	if awk -v a="$t0" -v b="$t1" -v l="$limit" 'BEGIN { exit !(b - a > l) }'; then
		echo "took longer than $limit s: $*"
		return 1
	fi
	return $rc
}

stop_process() {
	local i t stopped
	kill -STOP "$1" || return 1
	for ((i = 0; i < 200; i++)); do
		stopped=1
		for t in /proc/$1/task/*/stat; do
			case $(sed "s/.*) //" "$t" 2>/dev/null) in T*) ;; *) stopped= ;; esac
		done
		[ -n "$stopped" ] && return 0
		sleep 0.025
	done
	echo "process $1 did not stop"
	return 1
}

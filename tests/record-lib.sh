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
stop_background_() {
	local p
	while read -r p; do
		kill -KILL "$p" 2>/dev/null
	done <"$BG_PIDS"
}
trap stop_background_ EXIT

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

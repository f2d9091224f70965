#!/bin/bash
# tests/tools/heartbeat.sh PID STEPFILE: while process PID runs, say what
# it is doing when a step takes long.  STEPFILE holds one line,
# "EPOCH-SECONDS TEXT": the step TEXT, started then (the test library and
# tests/run.sh rewrite it as they go).  When one step has lasted 30 s, and
# every 30 s after, prints "# TEXT: still running after N s" on standard
# output.  Ends within 5 s of PID's end; started by tests/lib.sh and
# tests/run.sh, so that "make check" is never silent for long.
pid=$1 stepfile=$2

# the start time of PID, to tell it from a later process given its pid
start_of() {
	local st
	{ read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
	st=${st##*) }
	set -- $st
	case $1 in Z | X) return 1 ;; esac
	printf '%s\n' "${20}"
}

born=$(start_of "$pid") || exit 0
# A FIFO opened for reading and writing never has data: "read -t" on it
# waits without a child process (a sleep would outlive a kill of this
# script by up to its length).
fifo=$(mktemp -u "${TMPDIR:-/tmp}/jheap-heartbeat.XXXXXX") &&
	mkfifo -m 600 "$fifo" && exec 3<>"$fifo" && rm -f "$fifo" || exit 0
last=
while [ "$(start_of "$pid")" = "$born" ]; do
	read -r -t 5 -u 3 _
	read -r since text <"$stepfile" 2>/dev/null || continue
	case $since in '' | *[!0-9]*) continue ;; esac
	n=$(((EPOCHSECONDS - since) / 30 * 30))
	if [ "$n" -ge 30 ] && [ "$since $n $text" != "$last" ] &&
		[ "$(start_of "$pid")" = "$born" ]; then
		printf '# %s: still running after %d s\n' "$text" "$n"
		last="$since $n $text"
	fi
done

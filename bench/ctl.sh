#!/bin/bash
# bench/ctl.sh [BUILD]: what jheap's control library (libjheapctl.so) costs
# a program, printed as a Markdown section on standard output.  Part of
# `make bench` (bench/run.sh adds it to the report); alone:
#   bash bench/run.sh build ctl     (or bash bench/ctl.sh build)
#
# Every program runs under Debian's libjemalloc with MALLOC_CONF=prof:true
# (jemalloc's default sample rate), once without and once with the control
# library preloaded:
#   - start-up: wall time of /bin/true, the median of RUNS runs each way;
#   - an idle program (sleep): resident memory, threads, CPU time and the
#     control thread's wake-ups over IDLE seconds, from 4 s after its
#     start (the thread looks at its socket five times in its first 3.1 s,
#     in case the program closes it: counted on their own);
#   - the same with --every=1s (periodic dumps);
#   - the round trip of `jheap ctl PID status` and `jheap dump PID` on
#     testdata/w_ctl.c after its first two steps (1.3 MB in 70 blocks).
# Never fails on a figure.
set -u

SRCDIR=$(cd "$(dirname "$0")/.." && pwd) || exit 1
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 1
JHEAP=$BUILD/jheap
CTL=$BUILD/libjheapctl.so
RUNS=${CTL_RUNS:-200}
IDLE=${CTL_IDLE:-3}
W=$BUILD/bench/ctl
say() { printf '%s\n' "$*" >&2; }

JEMALLOC=
for f in /usr/lib/"$(gcc -print-multiarch 2>/dev/null)"/libjemalloc.so.2 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2; do
	[ -f "$f" ] && { JEMALLOC=$f; break; }
done
if [ -z "$JEMALLOC" ] || [ ! -x "$JHEAP" ] || [ ! -f "$CTL" ]; then
	echo "### Control library overhead"
	echo ""
	echo "not measured: needs $JHEAP, $CTL (make) and Debian's libjemalloc.so.2"
	exit 0
fi
mkdir -p "$W" && rm -rf "${W:?}"/* || exit 1
cd "$W" || exit 1
CONF=prof:true,prof_prefix:$W/idle
TICK=$(getconf CLK_TCK)

# startup: "without with": the median wall time in µs of RUNS runs of
# /bin/true each way, the two alternating (a shared machine's load then
# weighs on both alike)
startup() {
	local i t0 t1 t2 a=() b=()
	for ((i = 0; i < RUNS; i++)); do
		t0=$EPOCHREALTIME
		LD_PRELOAD=$JEMALLOC MALLOC_CONF=$CONF /bin/true
		t1=$EPOCHREALTIME
		LD_PRELOAD=$JEMALLOC:$CTL MALLOC_CONF=$CONF /bin/true
		t2=$EPOCHREALTIME
		a+=("$(awk -v x="$t0" -v y="$t1" 'BEGIN { printf "%.0f", (y - x) * 1e6 }')")
		b+=("$(awk -v x="$t1" -v y="$t2" 'BEGIN { printf "%.0f", (y - x) * 1e6 }')")
	done
	echo "$(printf '%s\n' "${a[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')" \
		"$(printf '%s\n' "${b[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')"
}

# idle PRELOAD [ENV...]: "rss_kib threads cpu_ticks ctl_wakeups settle_wakeups" of a
# sleeping program over IDLE seconds, measured after it settled
idle() {
	local preload=$1 pid rss thr c0 c1 w0 w1
	shift
	env LD_PRELOAD="$preload" MALLOC_CONF=$CONF "$@" sleep $((IDLE + 6)) &
	pid=$!
	sleep 0.05
	local ws=$(ctl_switches $pid)
	sleep 3.95
	c0=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
	w0=$(ctl_switches $pid)
	SETTLE_WAKEUPS=$((w0 - ws))
	sleep "$IDLE"
	c1=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
	w1=$(ctl_switches $pid)
	rss=$(awk '/^VmRSS:/ { print $2 }' /proc/$pid/status)
	thr=$(awk '/^Threads:/ { print $2 }' /proc/$pid/status)
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	echo "$rss $thr $((c1 - c0)) $((w1 - w0)) $SETTLE_WAKEUPS"
}

# ctl_switches PID: context switches of the thread named jheap-ctl ("-"
# when there is none)
ctl_switches() {
	local t
	for t in /proc/$1/task/*; do
		if [ "$(cat "$t/comm" 2>/dev/null)" = jheap-ctl ]; then
			awk '/ctxt_switches/ { s += $2 } END { print s }' "$t/status"
			return
		fi
	done
	echo 0
}

say "bench: the control library: start-up ($RUNS runs each way)..."
read -r s_without s_with < <(startup)
say "bench: the control library: an idle program ($IDLE s each way)..."
read -r r0 t0 c0 _ < <(idle "$JEMALLOC")
read -r r1 t1 c1 w1 s1 < <(idle "$JEMALLOC:$CTL")
read -r r2 t2 c2 w2 _ < <(idle "$JEMALLOC:$CTL" JHEAP_CTL_EVERY=1)

say "bench: the control library: round trips..."
cc -O0 -g -o w_ctl "$SRCDIR/testdata/w_ctl.c" || exit 1
"$JHEAP" record -q --dir="$W/w" -- ./w_ctl >w.out 2>w.err </dev/null &
wpid=$!
for _ in $(seq 100); do grep -q ready w.out && break; sleep 0.05; done
for k in 1 2; do
	kill -USR1 $wpid
	for _ in $(seq 100); do grep -q "step $k" w.out && break; sleep 0.05; done
done
# ms N CMD...: mean milliseconds of N runs of CMD
ms() {
	local n=$1 t0 t1 i
	shift
	t0=$EPOCHREALTIME
	for ((i = 0; i < n; i++)); do "$@" >/dev/null || return 1; done
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "%.2f", (b - a) * 1000 / n }'
}
m_status=$(ms 50 "$JHEAP" ctl $wpid status || echo failed)
m_dump=$(ms 20 "$JHEAP" dump $wpid || echo failed)
kill -TERM $wpid 2>/dev/null
wait $wpid 2>/dev/null

echo "### Control library overhead (jheap record, jheap dump)"
echo ""
echo "What \`libjheapctl.so\` costs a program, under Debian's libjemalloc with \`MALLOC_CONF=prof:true\`, without and with the library preloaded (\`bash bench/run.sh build ctl\` runs this part alone)."
echo ""
echo "| | without | with | with --every=1s |"
echo "|---|---:|---:|---:|"
echo "| start-up of /bin/true, µs (median of $RUNS) | $s_without | $s_with | |"
echo "| idle program (sleep): resident memory, KiB | $r0 | $r1 | $r2 |"
echo "| idle program: threads | $t0 | $t1 | $t2 |"
echo "| idle program: CPU time over $IDLE s, clock ticks (1/$TICK s) | $c0 | $c1 | $c2 |"
echo "| idle program: wake-ups of the control thread over $IDLE s, from 4 s after its start | | $w1 | $w2 |"
echo "| wake-ups of the control thread in its first 4 s (it looks at its socket after 0.1, 0.3, 0.7, 1.5 and 3.1 s) | | $s1 | |"
echo ""
echo "Round trips on testdata/w_ctl.c (1.3 MB held in 70 blocks, sampled at 512 KiB): \`jheap ctl PID status\` $m_status ms, \`jheap dump PID\` (jemalloc writes the dump) $m_dump ms, each the mean of 50 and 20 runs of the whole jheap command."
echo ""

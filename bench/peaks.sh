#!/bin/bash
# bench/peaks.sh [BUILD]: what jheap record --peaks costs a program, printed
# as a Markdown section on standard output.  Part of `make bench`
# (bench/run.sh adds it to the report); alone:
#   bash bench/run.sh build peaks     (or bash bench/peaks.sh build)
#
#   - one look at the heap's size, the two ways jemalloc offers
#     (bench/peakcost.c): stats.allocated after an epoch refresh, which
#     the control library uses, and the profiler's own per-size-class
#     live counts (prof.stats.*, by mib; needs prof_stats:true);
#   - an idle program (sleep) under jheap record without and with
#     --peaks: CPU time and the control thread's wake-ups over IDLE
#     seconds, from 4 s after its start;
#   - an allocation-heavy program whose heap reaches a new peak again and
#     again (bench/peakload.c): wall time, CPU time (user + system, every
#     process of the run) and peak resident memory (/usr/bin/time) under
#     jemalloc alone, jheap record, jheap record --peaks and heaptrack
#     (whose run includes heaptrack_interpret), the median of RUNS runs.
# Never fails on a figure.
set -u

SRCDIR=$(cd "$(dirname "$0")/.." && pwd) || exit 1
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 1
JHEAP=$BUILD/jheap
CTL=$BUILD/libjheapctl.so
IDLE=${PEAKS_IDLE:-5}
RUNS=${PEAKS_RUNS:-3}
ROUNDS=${PEAKS_ROUNDS:-30}
TEMPS=${PEAKS_TEMPS:-40}
W=$BUILD/bench/peaks
say() { printf '%s\n' "$*" >&2; }

JEMALLOC=
for f in /usr/lib/"$(gcc -print-multiarch 2>/dev/null)"/libjemalloc.so.2 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2; do
	[ -f "$f" ] && { JEMALLOC=$f; break; }
done
echo "### Peak dumps (jheap record --peaks)"
echo ""
if [ -z "$JEMALLOC" ] || [ ! -x "$JHEAP" ] || [ ! -f "$CTL" ] || [ ! -x /usr/bin/time ]; then
	echo "not measured: needs $JHEAP, $CTL (make), Debian's libjemalloc.so.2 and /usr/bin/time"
	exit 0
fi
mkdir -p "$W" && rm -rf "${W:?}"/* || exit 1
cd "$W" || exit 1
cc -O2 -o peakcost "$SRCDIR/bench/peakcost.c" -ldl -lpthread && cc -O2 -o peakload "$SRCDIR/bench/peakload.c" || exit 1
TICK=$(getconf CLK_TCK)

say "bench: peaks: one look at the heap's size..."
LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_stats:true ./peakcost >cost || echo "stats n/a" >cost
c_stats=$(awk '$1 == "stats" { print $2 }' cost)
c_prof=$(awk '$1 == "profstats" { print $2 }' cost)

# ctl_switches PID: context switches of the thread named jheap-ctl
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

# idle OPTIONS...: "cpu_ticks ctl_wakeups" of sleep under jheap record
# OPTIONS, over IDLE seconds from 4 s after its start
idle() {
	local pid c0 c1 w0 w1
	"$JHEAP" record -q --dir="$W/idle" "$@" -- sleep $((IDLE + 6)) &
	pid=$!
	sleep 4
	c0=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
	w0=$(ctl_switches $pid)
	sleep "$IDLE"
	c1=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
	w1=$(ctl_switches $pid)
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	echo "$((c1 - c0)) $((w1 - w0))"
}
say "bench: peaks: an idle program ($IDLE s each way)..."
read -r i_c0 i_w0 < <(idle)
read -r i_c1 i_w1 < <(idle --peaks)

# heavy NAME CMD...: "wall cpu rss_mib" of CMD, the median of RUNS runs
# (by wall time)
heavy() {
	local i name=$1
	shift
	: >"$name.times"
	for ((i = 0; i < RUNS; i++)); do
		rm -rf "$W/rec" "$W"/ht.*
		/usr/bin/time -o "$name.t" -f '%e %U %S %M' "$@" >/dev/null 2>"$name.err" || { echo "failed failed failed"; return; }
		awk '{ printf "%.2f %.2f %.1f\n", $1, $2 + $3, $4 / 1024 }' "$name.t" >>"$name.times"
		[ -d "$W/rec" ] && ls "$W/rec" | grep -c '\.p[0-9]*\.heap$' >"$name.peaks"
	done
	sort -n "$name.times" | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'
}
say "bench: peaks: an allocation-heavy program ($RUNS runs each way)..."
read -r h_w0 h_c0 h_r0 < <(heavy plain env LD_PRELOAD="$JEMALLOC" ./peakload "$ROUNDS" "$TEMPS")
read -r h_w1 h_c1 h_r1 < <(heavy record "$JHEAP" record -q --dir="$W/rec" -- ./peakload "$ROUNDS" "$TEMPS")
read -r h_w2 h_c2 h_r2 < <(heavy peaks "$JHEAP" record -q --peaks --dir="$W/rec" -- ./peakload "$ROUNDS" "$TEMPS")
n_peaks=$(cat peaks.peaks 2>/dev/null || echo "?")
if command -v heaptrack >/dev/null; then
	read -r h_w3 h_c3 h_r3 < <(heavy heaptrack heaptrack -o "$W/ht" ./peakload "$ROUNDS" "$TEMPS")
else
	h_w3="not installed" h_c3="" h_r3=""
fi

echo "What watching for peaks costs a program (\`bash bench/run.sh build peaks\` runs this part alone)."
echo ""
echo "One look at the heap's size, in a process that allocated from eight threads: \`epoch\` then \`stats.allocated\` $c_stats µs; the profiler's own live counts (\`prof.stats.bins.*.live\` and \`prof.stats.lextents.*.live\` by mib, every size class) $c_prof µs. The control library uses \`stats.allocated\`: it is exact whatever the sample rate and needs nothing at start, where the profiler's counts are of the sampled objects (to be unsampled per size class) and exist only with \`prof_stats:true\` from the start; at 10 looks a second (idle) to 100 (the heap moving) either costs well under 0.5% of a core."
echo ""
echo "| idle program (sleep), over $IDLE s | jheap record | jheap record --peaks |"
echo "|---|---:|---:|"
echo "| CPU time, clock ticks (1/$TICK s) | $i_c0 | $i_c1 |"
echo "| wake-ups of the control thread | $i_w0 | $i_w1 |"
echo ""
echo "bench/peakload.c ($ROUNDS rounds, $TEMPS short-lived allocations between two kept ones; its heap reaches a new high each round), the median of $RUNS runs:"
echo ""
echo "| | wall, s | CPU, s | peak RSS, MiB |"
echo "|---|---:|---:|---:|"
echo "| jemalloc alone (no profiling) | $h_w0 | $h_c0 | $h_r0 |"
echo "| jheap record (prof:true, one sample per 512 KiB) | $h_w1 | $h_c1 | $h_r1 |"
echo "| jheap record --peaks ($n_peaks peak dumps kept) | $h_w2 | $h_c2 | $h_r2 |"
echo "| heaptrack (recording and heaptrack_interpret) | $h_w3 | $h_c3 | $h_r3 |"
echo ""

#!/bin/bash
# bench/web.sh [BUILD]: how fast the web UI (jheap --http) answers on the
# synthetic 1,000,000-stack dump, and how large its pages are, printed as a
# Markdown section on standard output (issue 26: the first view under 2 s
# after loading, each change of view or filter under 0.3 s on the server,
# no page over 2 MB, the server's memory no more than the command line's).
# Part of `make bench` (bench/run.sh adds it to the report); alone, once
# the inputs exist:
#   bash bench/run.sh build inputs; bash bench/run.sh build web
#
# The server runs on 127.0.0.1, port 0, and each request is made with curl
# one after the other (time_total: the server's work plus loopback); the
# views are requested in the order a person clicks them.  WEB_ROUNDS
# servers (3), each from a fresh start: the median of the rounds per
# request.  Peak memory is VmHWM of the server after the last request,
# against /usr/bin/time's maximum RSS of jheap --text on the same dump.
# Never fails on a time.
set -u

SRCDIR=$(cd "$(dirname "$0")/.." && pwd) || exit 1
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 1
JHEAP=$BUILD/jheap
B=$BUILD/bench
DUMP=$B/dumps/synth1m.heap
PROG=$B/prog/benchprog
ROUNDS=${WEB_ROUNDS:-3}
W=$B/web
say() { printf '%s\n' "$*" >&2; }

# The requests, in order: the first view, then changes of view and filter.
REQUESTS=(
	"/data/top"
	"/data/flame"
	"/data/graph"
	"/data/top?sort=cum"
	"/data/top?f=bench::make"
	"/data/flame?f=bench::make"
	"/data/top?si=inuse_objects"
	"/data/flame?si=inuse_objects"
	"/data/peek?f=%5Emain%24"
	"/data/top"
	"/data/flame"
)

if [ ! -s "$DUMP" ] || [ ! -x "$PROG" ]; then
	echo "### The web UI"
	echo ""
	echo "Not measured: the inputs are missing (bash bench/run.sh $BUILD inputs)."
	exit 0
fi
mkdir -p "$W" || exit 1
declare -A T S C
# the server's CPU seconds (user + system, all threads) so far
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f", ($14 + $15) / hz }' "/proc/$1/stat"; }
LOADS=() HWM=()
for ((r = 0; r < ROUNDS; r++)); do
	rm -f "$W/err"
	t0=$EPOCHREALTIME
	"$JHEAP" --http=127.0.0.1:0 --no_browser -q "$PROG" "$DUMP" 2>"$W/err" &
	pid=$!
	for ((k = 0; k < 6000; k++)); do
		grep -q "serving the web UI" "$W/err" 2>/dev/null && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.05
	done
	t1=$EPOCHREALTIME
	base=$(sed -n 's|.*serving the web UI on \(http://[0-9.:]*\)/ui/.*|\1|p' "$W/err")
	if [ -z "$base" ]; then
		say "bench: the web UI did not start:"; cat "$W/err" >&2
		kill $pid 2>/dev/null; wait $pid 2>/dev/null
		echo "### The web UI"; echo ""; echo "Not measured: the server did not start."
		exit 0
	fi
	LOADS+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')")
	for ((i = 0; i < ${#REQUESTS[@]}; i++)); do
		c0=$(cpu_of $pid)
		read -r code t size < <(curl -s -o /dev/null -w '%{http_code} %{time_total} %{size_download}\n' "$base${REQUESTS[i]}")
		c1=$(cpu_of $pid)
		[ "$code" = 200 ] || t="failed($code)"
		T[$i]="${T[$i]:-} $t"
		C[$i]="${C[$i]:-} $(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.2f", b - a }')"
		S[$i]=$size
	done
	HWM+=("$(awk '/^VmHWM/ { print $2 }' /proc/$pid/status)")
	kill -INT $pid
	wait $pid 2>/dev/null
done
cli_rss=$(/usr/bin/time -f '%M' "$JHEAP" --text -q "$PROG" "$DUMP" 2>&1 >/dev/null | tail -n 1)
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'; }

echo "### The web UI"
echo ""
echo "\`jheap --http=127.0.0.1:0 PROG synth1m.heap\` (1,000,000 stacks): each request made with curl in turn, as a person clicks through the views; medians of $ROUNDS servers, each started afresh.  Loading (parse, symbolize, until the URL is printed): $(median "${LOADS[@]}") s."
echo ""
echo "| request | s (median) | server CPU s | page bytes |"
echo "|---|---:|---:|---:|"
for ((i = 0; i < ${#REQUESTS[@]}; i++)); do
	note=
	[ "$i" = 0 ] && note=" (first view)"
	[ "$i" -ge 9 ] && note=" (again: kept)"
	# shellcheck disable=SC2086
	echo "| \`${REQUESTS[i]}\`$note | $(median ${T[$i]}) | $(median ${C[$i]}) | ${S[$i]} |"
done
echo ""
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (on a shared machine the CPU time is the steadier figure)."
echo ""
echo "Peak memory: the server $(median "${HWM[@]}") KiB after every request (VmHWM), \`jheap --text\` on the same dump $cli_rss KiB (maximum RSS)."

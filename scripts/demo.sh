#!/bin/bash
# make demo: profile the bundled workload (testdata/demo.c, a small
# "server" with a cache, a buffer pool and a leak) under Debian's
# libjemalloc and print jheap's report of it; then run it again under
# jheap record and ask the running process for a dump with jheap dump.
# Usage: scripts/demo.sh BUILD_DIR
set -eu
BUILD=${1:-build}
SRCDIR=$(cd "$(dirname "$0")/.." && pwd)
JHEAP=$BUILD/jheap
DEMO=$BUILD/demo
JEMALLOC=
for f in /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 \
	 /usr/lib/"$(gcc -print-multiarch 2>/dev/null)"/libjemalloc.so.2 /usr/lib/libjemalloc.so.2; do
	[ -f "$f" ] && { JEMALLOC=$f; break; }
done
[ -n "$JEMALLOC" ] || { echo "demo: libjemalloc.so.2 not found (install libjemalloc2)" >&2; exit 1; }

mkdir -p "$DEMO"
rm -f "$DEMO"/demo.*.heap
${CC:-cc} -O0 -g -o "$DEMO/demo" "$SRCDIR/testdata/demo.c"
echo "\$ LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_accum:true,prof_prefix:$DEMO/demo $DEMO/demo"
LD_PRELOAD=$JEMALLOC \
MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_accum:true,prof_prefix:$DEMO/demo \
	"$DEMO/demo"
heap=$(ls "$DEMO"/demo.*.f.heap 2>/dev/null | head -n 1)
[ -n "$heap" ] || { echo "demo: jemalloc wrote no dump (is it built with profiling?)" >&2; exit 1; }
echo
echo "\$ $JHEAP --text $heap"
"$JHEAP" --text "$heap"
echo
echo "\$ $JHEAP --alloc_objects --nodecount=5 $heap"
"$JHEAP" --alloc_objects --nodecount=5 "$heap"
echo
echo "\$ $JHEAP --lines --show_bytes --nodecount=6 $DEMO/demo $heap"
"$JHEAP" --lines --show_bytes --nodecount=6 "$DEMO/demo" "$heap"

# The same workload, kept running ("demo wait" waits for the end of its
# standard input), profiled with jheap record and asked for a dump.
REC=$DEMO/record
rm -rf "$REC" "$DEMO/stdin"
mkfifo "$DEMO/stdin"
echo
echo "\$ $JHEAP record --sample=1 --accum --dir=$REC -- $DEMO/demo wait &"
"$JHEAP" record --sample=1 --accum --dir="$REC" -- "$DEMO/demo" wait <"$DEMO/stdin" >"$DEMO/record.out" &
pid=$!
exec 3>"$DEMO/stdin"
for _ in $(seq 100); do
	grep -q served "$DEMO/record.out" 2>/dev/null && break
	sleep 0.1
done
grep -q served "$DEMO/record.out" || { echo "demo: the recorded demo did not start" >&2; exit 1; }
echo
echo "\$ $JHEAP dump $pid"
"$JHEAP" dump "$pid"
echo
echo "\$ $JHEAP dump $pid --nodecount=5"
"$JHEAP" dump "$pid" --nodecount=5
echo
echo "\$ $JHEAP ctl $pid status"
"$JHEAP" ctl "$pid" status
exec 3>&-
wait "$pid"
rm -f "$DEMO/stdin"
echo
echo "(the demo has exited; its final dump: $(ls "$REC"/demo.*.f.heap))"

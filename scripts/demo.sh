#!/bin/bash
# make demo: profile the bundled workload (testdata/demo.c, a small
# "server" with a cache, a buffer pool and a leak) under Debian's
# libjemalloc and print jheap's report of it.
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

#!/bin/bash
# mkprofiles.sh OUTDIR: build the workloads in testdata/ into OUTDIR and run
# each under the installed jemalloc with profiling on, giving real heap
# dumps with stable names:
#
#   OUTDIR/<name>            the binaries (and libwshared.so)
#   OUTDIR/<name>.exact.heap lg_prof_sample:0 (every allocation recorded)
#   OUTDIR/<name>.accum.heap lg_prof_sample:0,prof_accum:true
#   OUTDIR/<name>.sampled.heap  lg_prof_sample:12 (w_basic and demo only)
#   OUTDIR/MANIFEST          one line per profile: "<heap file> <binary>"
#
# names: w_basic, w_basic_nopie, w_cpp, w_shlib, w_threads, demo.
# The expected amounts are in the comment table at the top of each workload
# source.  Every dump also holds one 81920-byte object that libstdc++
# allocates at load time (its exception emergency pool; Debian's
# libjemalloc.so.2 depends on libstdc++), under _dl_init, not under main.
#
# Environment: CC (default cc), CXX (default c++), JEMALLOC (default the
# Debian multiarch libjemalloc.so.2), FORCE=1 to rebuild when up to date.
# The binaries must stay where they are: the dumps' maps name them, and
# jeprof finds the main program only by that path.
set -u

die() {
	echo "mkprofiles.sh: $*" >&2
	exit 1
}

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }

SRCDIR=$(cd "$(dirname "$0")/.." && pwd) || die "cannot find the source tree"
TESTDATA=$SRCDIR/testdata
mkdir -p "$1" || die "cannot create '$1'"
OUTDIR=$(cd "$1" && pwd) || die "cannot enter '$1'"

# One run at a time per OUTDIR (make -j check demo).
if command -v flock >/dev/null 2>&1; then
	exec 9>"$OUTDIR/.lock" && flock 9 || die "cannot lock $OUTDIR/.lock"
fi

CC=${CC:-cc}
CXX=${CXX:-c++}

find_jemalloc() {
	local arch cand
	if [ -n "${JEMALLOC:-}" ]; then
		echo "$JEMALLOC"
		return
	fi
	arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || "$CC" -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
	for cand in "/usr/lib/$arch/libjemalloc.so.2" /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 \
		/usr/lib64/libjemalloc.so.2 /usr/lib/libjemalloc.so.2 /usr/local/lib/libjemalloc.so.2; do
		if [ -f "$cand" ]; then
			echo "$cand"
			return
		fi
	done
	echo "/usr/lib/$arch/libjemalloc.so.2"
}
JEMALLOC=$(find_jemalloc)
[ -f "$JEMALLOC" ] ||
	die "libjemalloc not found at '$JEMALLOC' (install libjemalloc2: scripts/deps.sh, or set JEMALLOC=/path/libjemalloc.so.2)"

# name:variant pairs, in MANIFEST order.
RUNS="w_basic:exact w_basic:accum w_basic:sampled
w_basic_nopie:exact w_basic_nopie:accum
w_cpp:exact w_cpp:accum
w_shlib:exact w_shlib:accum
w_threads:exact w_threads:accum
demo:exact demo:accum demo:sampled"

SOURCES=("$TESTDATA/w_basic.c" "$TESTDATA/w_cpp.cc" "$TESTDATA/w_shlib_lib.c"
	"$TESTDATA/w_shlib_main.c" "$TESTDATA/w_threads.c" "$TESTDATA/demo.c")
for f in "${SOURCES[@]}"; do
	[ -f "$f" ] || die "missing workload source $f"
done

# Up to date: every output exists, the stamp records the same settings, and
# no source or this script is newer than the stamp.
STAMP=$OUTDIR/.stamp
settings="CC=$CC CXX=$CXX JEMALLOC=$JEMALLOC"
if [ -z "${FORCE:-}" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$settings" ] &&
	[ -z "$(find "${SOURCES[@]}" "$0" -newer "$STAMP" 2>/dev/null | head -n 1)" ]; then
	uptodate=1
	for r in $RUNS; do
		[ -s "$OUTDIR/${r%%:*}.${r#*:}.heap" ] || uptodate=
	done
	[ -n "$uptodate" ] && exit 0
fi
rm -f "$STAMP"

build() {
	echo "  BUILD  $1" >&2
	shift
	"$@" || die "build failed: $*"
}

WARN="-Wall -Wextra"
build w_basic "$CC" $WARN -O0 -g -o "$OUTDIR/w_basic" "$TESTDATA/w_basic.c"
build w_basic_nopie "$CC" $WARN -O0 -g -fno-pie -no-pie -o "$OUTDIR/w_basic_nopie" "$TESTDATA/w_basic.c"
build w_cpp "$CXX" $WARN -O2 -g -o "$OUTDIR/w_cpp" "$TESTDATA/w_cpp.cc"
build libwshared.so "$CC" $WARN -O0 -g -fPIC -shared -o "$OUTDIR/libwshared.so" "$TESTDATA/w_shlib_lib.c"
build w_shlib "$CC" $WARN -O0 -g -o "$OUTDIR/w_shlib" "$TESTDATA/w_shlib_main.c" \
	-L"$OUTDIR" -lwshared -Wl,-rpath,"$OUTDIR"
build w_threads "$CC" $WARN -O0 -g -pthread -o "$OUTDIR/w_threads" "$TESTDATA/w_threads.c" -ldl
build demo "$CC" $WARN -O0 -g -o "$OUTDIR/demo" "$TESTDATA/demo.c"

TMP=$OUTDIR/.tmp
rm -rf "$TMP"
mkdir -p "$TMP" || die "cannot create '$TMP'"

# run NAME VARIANT: run OUTDIR/NAME once and move its final dump to
# OUTDIR/NAME.VARIANT.heap.
run() {
	local name=$1 variant=$2 conf dumps
	conf="prof:true,prof_final:true"
	case $variant in
	exact) conf="$conf,lg_prof_sample:0" ;;
	accum) conf="$conf,lg_prof_sample:0,prof_accum:true" ;;
	sampled) conf="$conf,lg_prof_sample:12" ;;
	*) die "unknown variant $variant" ;;
	esac
	conf="$conf,prof_prefix:$TMP/$name.$variant"
	echo "  RUN    $name ($variant)" >&2
	(cd "$TMP" && LD_PRELOAD=$JEMALLOC MALLOC_CONF=$conf "$OUTDIR/$name" </dev/null) ||
		die "$name exited with status $? (MALLOC_CONF=$conf)"
	dumps=$(find "$TMP" -maxdepth 1 -name "$name.$variant.*.f.heap")
	[ -n "$dumps" ] ||
		die "$name ($variant) produced no dump $TMP/$name.$variant.<pid>.<seq>.f.heap; is '$JEMALLOC' built with --enable-prof?"
	[ "$(printf '%s\n' "$dumps" | wc -l)" -eq 1 ] || die "$name ($variant): several dumps: $dumps"
	head -n 1 "$dumps" | grep -q '^heap_v2/' || die "$dumps is not a heap_v2 profile"
	grep -q '^MAPPED_LIBRARIES:' "$dumps" || die "$dumps has no MAPPED_LIBRARIES section"
	mv -f "$dumps" "$OUTDIR/$name.$variant.heap" || die "cannot move $dumps"
}

: >"$OUTDIR/MANIFEST.tmp"
for r in $RUNS; do
	run "${r%%:*}" "${r#*:}"
	echo "$OUTDIR/${r%%:*}.${r#*:}.heap $OUTDIR/${r%%:*}" >>"$OUTDIR/MANIFEST.tmp"
done
mv -f "$OUTDIR/MANIFEST.tmp" "$OUTDIR/MANIFEST"
rm -rf "$TMP"
# jeprof outputs cached by tests/lib.sh belong to the old dumps.
rm -rf "$OUTDIR/jeprof-cache"
echo "$settings" >"$STAMP"
exit 0

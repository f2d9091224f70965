#!/bin/bash
# bench/fleet.sh [BUILD] [inputs]: dumps of a fleet summed and compared
# by symbol (issue 29), printed as a Markdown section on standard output.
# Part of `make bench` (bench/run.sh adds it to the report); alone, once
# the generated program exists:
#   bash bench/run.sh build inputs; bash bench/run.sh build fleet
#
# The fleet, under BUILD/bench/fleet (made once, kept while its stamp
# holds):
#   - a second build of the generated program ("release B", prog2/): the
#     same objects but FLEET_GROWN files (m000, m050, ...) whose blob and
#     array allocations are three times larger, linked in the reverse
#     order, so that every function has another address;
#   - one real jemalloc dump of each build after FLEET_IDS path ids
#     (about 20,000 distinct stacks);
#   - FLEET_PROCS processes of each build (each its own address layout:
#     bench/dumptool.c fleet moves the program's mappings and the
#     libraries' by random numbers of pages) with FLEET_DUMPS dumps of
#     FLEET_STACKS stacks each: 1,000 dumps of 10,000 stacks by default,
#     named relA/relB.hostHHH.pidPPPPP.DD.heap.
#
# Measured: the sum of all of them by symbol (--text, and --collapsed),
# and what grew from release A to release B (--text of B's dumps with
# every A dump as --base), wall time and peak RSS, with jeprof on one
# dump for scale.  The dumps name their own programs (no BINARY argument:
# each dump is symbolized with its build).  Never fails on a time.
set -u

SRCDIR=$(cd "$(dirname "$0")/.." && pwd) || exit 1
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 1
JHEAP=${JHEAP:-$BUILD/jheap}
B=$BUILD/bench
PROG=$B/prog/benchprog
F=$B/fleet
PROCS=${FLEET_PROCS:-50}      # per build
DUMPS=${FLEET_DUMPS:-10}      # per process
STACKS=${FLEET_STACKS:-10000} # per dump
IDS=${FLEET_IDS:-12200}
GROWN="m000 m050 m100 m150 m200 m250"
CXX=${CXX:-g++}
TIMEOUT_S=${TOOL_TIMEOUT:-600}
say() { printf '%s\n' "$*" >&2; }

find_jemalloc() {
	local arch c
	if [ -n "${JEMALLOC:-}" ]; then echo "$JEMALLOC"; return; fi
	arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || cc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
	for c in "/usr/lib/$arch/libjemalloc.so.2" /usr/lib64/libjemalloc.so.2 /usr/lib/libjemalloc.so.2; do
		[ -f "$c" ] && { echo "$c"; return; }
	done
}
JEMALLOC=$(find_jemalloc)

echo "### Many dumps: a fleet summed and compared by symbol"
echo ""
if [ ! -x "$PROG" ] || [ ! -x "$JHEAP" ] || [ -z "$JEMALLOC" ]; then
	echo "not measured: the generated program, jheap or libjemalloc is missing (bash bench/run.sh $BUILD inputs)"
	exit 0
fi
DUMPTOOL=$B/tools/dumptool
[ -x "$DUMPTOOL" ] && [ "$DUMPTOOL" -nt "$SRCDIR/bench/dumptool.c" ] ||
	cc -std=gnu11 -O2 -Wall -Wextra -D_GNU_SOURCE -I"$SRCDIR" -o "$DUMPTOOL" "$SRCDIR/bench/dumptool.c" ||
	{ echo "not measured: bench/dumptool.c does not build"; exit 0; }

# ------------------------------------------------------------ inputs

stamp="prog=$(cat "$B/prog/.stamp" 2>/dev/null) grown=$GROWN ids=$IDS procs=$PROCS dumps=$DUMPS stacks=$STACKS tool=$(cksum <"$SRCDIR/bench/dumptool.c") jemalloc=$JEMALLOC"
if [ "$(cat "$F/.stamp" 2>/dev/null)" != "$stamp" ]; then
	say "bench: fleet: building release B and writing $((2 * PROCS * DUMPS)) dumps..."
	rm -rf "$F" && mkdir -p "$F/prog2/src" "$F/prog2/obj" "$F/A" "$F/B" || exit 1
	objs=()
	for o in "$B/prog/obj/"*.o; do
		f=$(basename "$o" .cc.o)
		case " $GROWN " in
		*" $f "*)
			sed -e 's/bench::make_blob</bench::make_blob<3 * /g' \
				-e 's/bench::array_of</bench::array_of<3 * /g' \
				-e 's/bench::make_shared_blob</bench::make_shared_blob<3 * /g' \
				"$B/prog/src/$f.cc" >"$F/prog2/src/$f.cc" &&
				cp "$B/prog/src/bench.h" "$F/prog2/src/" &&
				"$CXX" -O2 -g -c "$F/prog2/src/$f.cc" -o "$F/prog2/obj/$f.cc.o" ||
				{ echo "not measured: release B's $f.cc does not build"; exit 0; }
			objs=("$F/prog2/obj/$f.cc.o" "${objs[@]}")
			;;
		*) objs=("$o" "${objs[@]}") ;;
		esac
	done
	"$CXX" -o "$F/prog2/benchprog" "${objs[@]}" ||
		{ echo "not measured: release B does not link"; exit 0; }
	for rel in A B; do
		prog=$PROG seed=1
		[ $rel = B ] && prog=$F/prog2/benchprog seed=2
		rm -f "$F/src$rel".*.heap
		env LD_PRELOAD="$JEMALLOC" \
			MALLOC_CONF="prof:true,lg_prof_sample:0,lg_prof_interval:30,prof_prefix:$F/src$rel" \
			"$prog" 0 "$IDS" "$IDS" >/dev/null ||
			{ echo "not measured: release $rel did not run"; exit 0; }
		got=("$F/src$rel".*.i*.heap)
		[ -e "${got[0]}" ] && mv "${got[0]}" "$F/src$rel.heap" ||
			{ echo "not measured: release $rel wrote no dump"; exit 0; }
		rm -f "$F/src$rel".*.heap
		"$DUMPTOOL" fleet "$F/src$rel.heap" "$PROCS" "$DUMPS" "$STACKS" "$seed" \
			"$F/$rel" "rel$rel" >/dev/null ||
			{ echo "not measured: dumptool fleet failed"; exit 0; }
	done
	echo "$stamp" >"$F/.stamp"
fi
[ "${2:-}" = inputs ] && exit 0

# ------------------------------------------------------------ timing

GNU_TIME=/usr/bin/time
OUT=$B/out/fleet
mkdir -p "$OUT"
A=("$F/A/"*.heap)
BB=("$F/B/"*.heap)
BASES=()
for f in "${A[@]}"; do BASES+=("--base=$f"); done
n_all=$((${#A[@]} + ${#BB[@]}))
mb() { awk -v s="$(cat "$@" | wc -c)" 'BEGIN { printf "%.0f", s / 1048576 }'; }
fleet_mb=$(mb "${A[@]}" "${BB[@]}")

# run ID CMD...: wall seconds and peak MB of one run into T[ID], M[ID]
declare -A T M
run() {
	local id=$1
	shift
	if timeout "$TIMEOUT_S" "$GNU_TIME" -f '%e %M' -o "$OUT/$id.time" "$@" >"$OUT/$id.out" 2>"$OUT/$id.err"; then
		read -r T[$id] M[$id] <"$OUT/$id.time"
		M[$id]=$(awk -v k="${M[$id]}" 'BEGIN { printf "%.0f", k / 1024 }')
	else
		T[$id]=failed
		M[$id]=
	fi
}
say "bench: fleet: summing $n_all dumps..."
run sum "$JHEAP" --no-cache --text "${A[@]}" "${BB[@]}"
run sumc "$JHEAP" --no-cache --collapsed "${A[@]}" "${BB[@]}"
say "bench: fleet: release B against release A..."
run base "$JHEAP" --no-cache --text "${BB[@]}" "${BASES[@]}"
run one "$JHEAP" --no-cache --text "${A[0]}"
JEPROF=$(command -v jeprof)
if [ -n "$JEPROF" ]; then
	run jeprof "$JEPROF" --text "$PROG" "${A[0]}"
fi

{
	echo "sum ${T[sum]} ${M[sum]}"
	echo "sumc ${T[sumc]} ${M[sumc]}"
	echo "base ${T[base]} ${M[base]}"
} >"$OUT/summary"
met() { awk -v t="$1" -v m="$2" 'BEGIN { print (t != "failed" && t + 0 < 30 && m + 0 < 1024) ? "met" : "**not met**" }'; }
echo "$n_all dumps of $STACKS stacks ($fleet_mb MB): $PROCS processes of each of two builds of the generated program (release B: the same code but $(echo "$GROWN" | wc -w) files whose leaf allocations are three times larger, linked in the reverse order), each process with its own address layout, $DUMPS dumps each (bench/dumptool.c fleet).  Each dump names its own program in its maps; no BINARY argument.  Wall time and peak RSS of one run each, cold (--no-cache)."
echo ""
echo "| work | command | s | MB | target (< 30 s, < 1 GB) |"
echo "|---|---|---:|---:|---|"
echo "| sum by symbol | \`jheap --text relA.* relB.*\` | ${T[sum]} | ${M[sum]} | $(met "${T[sum]}" "${M[sum]}") |"
echo "| sum by symbol, folded stacks | \`jheap --collapsed relA.* relB.*\` | ${T[sumc]} | ${M[sumc]} | $(met "${T[sumc]}" "${M[sumc]}") |"
echo "| what grew in release B | \`jheap --text relB.* --base=relA.* ...\` | ${T[base]} | ${M[base]} | $(met "${T[base]}" "${M[base]}") |"
echo "| one dump of the 1,000 | \`jheap --text relA.host000.pid01000.00.heap\` | ${T[one]} | ${M[one]} | |"
if [ -n "$JEPROF" ]; then
	echo "| the same with jeprof | \`jeprof --text PROG relA.host000.pid01000.00.heap\` | ${T[jeprof]} | ${M[jeprof]} | |"
fi
echo ""
if [ "${T[base]}" != failed ]; then
	echo "The top of what grew (the first lines of the --base report: release B's larger allocations, in the files it changed):"
	echo ""
	echo '```'
	head -n 8 "$OUT/base.out"
	echo '```'
	echo ""
fi

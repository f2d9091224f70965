#!/bin/bash
# bench/mech.sh [BUILD]: what jheap's speed mechanisms save, printed as a
# Markdown section on standard output.  Part of `make bench` (bench/run.sh
# adds it to the report); alone, once the inputs exist:
#   bash bench/run.sh build inputs; bash bench/run.sh build mech
#
# Issue 20 asked that every mechanism earn its lines.  Each is measured
# here with and without, in the same rounds, on the same inputs:
#
#   split   the two-thread parse of a large heap_v2 body
#           (analyzer/parse_split.c): off with JHEAP_PARSE_SPLIT_MIN set
#           past any dump's size;
#   big     the model's big arrays in mappings of their own, with
#           transparent huge pages and mremap (lib/bigarray.h): off in
#           a copy of the source built with JH_BIG_MIN past any size;
#   parts   new answers appended to a persistent cache file as a part
#           (symbolize/diskcache.c, dcfile.h): off in a copy built with
#           DC_MAX_PARTS 0, so every run with new answers rewrites the file.
#
# The copies are built under BUILD/bench/mech from the checkout's sources
# (a minute each on two cores).  Each round runs every variant once, one
# after the other, so a busy moment of the machine falls on all of them;
# MECH_ROUNDS rounds (9), the median of each.  Never fails on a time.
set -u

SRCDIR=$(cd "$(dirname "$0")/.." && pwd) || exit 1
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 1
JHEAP=$BUILD/jheap
B=$BUILD/bench
PROG=$B/prog/benchprog
D100=$B/dumps/s100k.heap
D2ND=$B/dumps/second.heap
D200=$B/dumps/s200k.heap
SYN=$B/dumps/synth1m.heap
ROUNDS=${MECH_ROUNDS:-9}
W=$B/mech
say() { printf '%s\n' "$*" >&2; }

echo "### Mechanisms: what each one saves"
echo ""
for f in "$JHEAP" "$PROG" "$D100" "$D2ND" "$D200" "$SYN"; do
	if [ ! -s "$f" ]; then
		echo "not measured: $f is missing (make; bash bench/run.sh $BUILD inputs)"
		exit 0
	fi
done
mkdir -p "$W" && rm -rf "${W:?}"/* || exit 1

# ms COMMAND...: the wall time of one run in milliseconds ("fail" if it failed)
ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || { echo fail; return; }
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

# variant NAME FILE OLD NEW: a copy of the sources with OLD replaced by NEW
# in FILE, built as $W/NAME/jheap; fails when OLD is not there (the
# mechanism moved: this script must follow it)
variant() {
	local src=$W/src.$1
	mkdir -p "$src" &&
		tar -C "$SRCDIR" --exclude=./build --exclude=./.git -cf - . | tar -C "$src" -xf - &&
		grep -qF "$3" "$src/$2" &&
		sed -i "s|$3|$4|" "$src/$2" &&
		make -s -C "$src" BUILD="$W/$1" -j2 "$W/$1/jheap" >"$W/$1.log" 2>&1
}
say "bench: mechanisms: building the copies without them..."
if ! variant nobig lib/bigarray.h '#define JH_BIG_MIN ((size_t)4 << 20)' '#define JH_BIG_MIN ((size_t)1 << 62)' ||
	! variant noparts symbolize/dcfile.h '#define DC_MAX_PARTS 16' '#define DC_MAX_PARTS 0'; then
	echo "not measured: a copy without a mechanism did not build (see $W)"
	exit 0
fi

ONE=JHEAP_PARSE_SPLIT_MIN=1000000000000000
VARIANTS="all nosplit nobig noparts"
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
for ((k = 1; k <= ROUNDS; k++)); do
	say "bench: mechanisms, round $k of $ROUNDS..."
	for v in $VARIANTS; do
		e=(env) j=$JHEAP
		case $v in
		nosplit) e=(env "$ONE") ;;
		nobig | noparts) j=$W/$v/jheap ;;
		esac
		# the second run: the cache made by a first run of s100k
		rm -rf "$W/cache.$v"
		ms "${e[@]}" XDG_CACHE_HOME="$W/cache.$v" "$j" --quiet --text "$PROG" "$D100" >/dev/null
		echo "second.$v $(ms "${e[@]}" XDG_CACHE_HOME="$W/cache.$v" "$j" --quiet --text "$PROG" "$D2ND")" >>"$W/times"
		[ $v = noparts ] && continue # the cache is not used below
		echo "s200k.$v $(ms "${e[@]}" "$j" --quiet --text --no-symbolize "$PROG" "$D200")" >>"$W/times"
		echo "synth.$v $(ms "${e[@]}" "$j" --quiet --text --no-symbolize "$PROG" "$SYN")" >>"$W/times"
	done
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)

# med KEY: the median of the times recorded under KEY
med() {
	awk -v k="$1" '$1 == k && $2 != "fail" { v[n++] = $2 }
	END {
		if (!n) { print "n/a"; exit }
		for (a = 1; a < n; a++) for (b = a; b > 0 && v[b - 1] > v[b]; b--) { x = v[b]; v[b] = v[b - 1]; v[b - 1] = x }
		print v[int((n - 1) / 2)]
	}' "$W/times"
}
# row MECHANISM VARIANT RUN...: one line per run, with and without
row() {
	local m=$1 v=$2 what all without
	shift 2
	for what in "$@"; do
		all=$(med "$what.all") without=$(med "$what.$v")
		printf '| %s | %s | %s | %s | %s |\n' "$m" "$(label $what)" "$all" "$without" \
			"$(awk -v a="$without" -v b="$all" 'BEGIN { if (a == "n/a" || b == "n/a") print "n/a"; else printf "%+d (%+.0f%%)", a - b, 100 * (a - b) / b }')"
	done
}
label() {
	case $1 in
	second) echo "second run on \`second.heap\` (cache from \`s100k\`)" ;;
	s200k) echo "\`--no-symbolize\` on \`s200k\` (200,000 stacks)" ;;
	synth) echo "\`--no-symbolize\` on \`synth1m\` (1,000,000 stacks)" ;;
	esac
}

echo "Each mechanism on and off in the same rounds: \`--text\` wall time in ms, the median of $ROUNDS rounds (\`bench/mech.sh\`).  Two-thread parse: off with \`$ONE\` (only a body of 4 MiB or more is split, on two cores).  Big arrays: off in a copy built with \`JH_BIG_MIN\` past any size.  Appended cache parts: off in a copy built with \`DC_MAX_PARTS 0\` (every run with new answers rewrites the cache file).  Load average at the start: $LOAD_START; at the end: $LOAD_END."
echo ""
echo "| mechanism | run | with | without | it saves (ms) |"
echo "|---|---|---:|---:|---:|"
row "two-thread parse (\`analyzer/parse_split.c\`)" nosplit second s200k synth
row "big arrays (\`lib/bigarray.h\`)" nobig second s200k synth
row "appended cache parts (\`symbolize/diskcache.c\`)" noparts second
echo ""
exit 0

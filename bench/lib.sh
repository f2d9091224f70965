# shellcheck shell=bash
# bench/lib.sh: what the bench scripts share, sourced by them (bash).
# Nothing here fails on a time: a benchmark reports, it does not judge.
#
# bench_paths BUILD: sets BUILD (made absolute), JHEAP (BUILD/jheap
#   unless set), B (BUILD/bench, the inputs and outputs) and PROG (the
#   generated program); returns 1 when BUILD is no folder.
# bench_need BUILD FILE...: 0 when every FILE has content; else prints
#   "not measured: FILE is missing (...)" and returns 1, and the caller
#   exits 0.
# bench_time ID OUTBASE CMD...: one timed run of CMD, its standard
#   output to OUTBASE.out and its standard error to OUTBASE.err; returns
#   CMD's status.  Adds the run's figures to the lists of ID:
#   BENCH_WALL[ID] its wall seconds (the process as a user waits for it,
#   4 decimals), BENCH_CPU[ID] its CPU seconds (user and system, 2
#   decimals, empty without GNU time), BENCH_RSS[ID] its peak RSS in KiB
#   (0 without GNU time).  The lists are space-separated numbers, for
#   bench_median and bench_largest.
# bench_median N...: the middle number (the lower middle of an even count)
# bench_largest N...: the largest number
# bench_stage FILE STAGE: the last wall time jheap's stage timer
#   (JHEAP_DEBUG=time) printed into FILE for STAGE (parse, symbolize,
#   aggregate, write), or nothing

declare -A BENCH_WALL BENCH_CPU BENCH_RSS
BENCH_GNU_TIME=/usr/bin/time
"$BENCH_GNU_TIME" -f %M true >/dev/null 2>&1 || BENCH_GNU_TIME=

bench_paths() {
	BUILD=$(cd "$1" && pwd) || return 1
	JHEAP=${JHEAP:-$BUILD/jheap}
	B=$BUILD/bench
	# shellcheck disable=SC2034  # for the scripts that source this
	PROG=$B/prog/benchprog
}

bench_need() {
	local build=$1 f
	shift
	for f in "$@"; do
		if [ ! -s "$f" ]; then
			echo "not measured: $f is missing (make; bash bench/run.sh $build inputs)"
			return 1
		fi
	done
	return 0
}

bench_time() {
	local id=$1 o=$2 t0 t1 rc m u s pre=()
	shift 2
	[ -n "$BENCH_GNU_TIME" ] && pre=("$BENCH_GNU_TIME" -o "$o.time" -f "%e %M %U %S")
	t0=$EPOCHREALTIME
	"${pre[@]}" "$@" >"$o.out" 2>"$o.err"
	rc=$?
	t1=$EPOCHREALTIME
	m=0 u='' s=''
	[ -n "$BENCH_GNU_TIME" ] && read -r _ m u s < <(tail -n 1 "$o.time")
	rm -f "$o.time"
	BENCH_WALL[$id]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') "
	BENCH_CPU[$id]+="$([ -n "$u" ] && awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }') "
	BENCH_RSS[$id]+="${m:-0} "
	return $rc
}

bench_median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

bench_largest() { printf '%s\n' "$@" | sort -n | tail -n 1; }

bench_stage() {
	awk -v k="$2" '$1 == "jheap:" && $2 == "time:" && $3 == k { print $4 }' "$1" 2>/dev/null | tail -n 1
}

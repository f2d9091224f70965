#!/bin/bash
# bench/second.sh [BUILD]: the second analysis of another dump of the same
# binary with the persistent symbol cache (issue 5's 3x target), printed as
# a Markdown section on standard output.  Part of `make bench` (bench/run.sh
# adds it to the report and reads the ratio from BUILD/bench/out/second/
# summary); alone, once the inputs exist:
#   bash bench/run.sh build inputs; bash bench/run.sh build second
#
# Rounds of: the cache emptied, the first run (s100k.heap), the second
# (second.heap), the second again (every address cached by then); the
# median of each.  A second run repeated on its own would find the cache
# warmer than a real second analysis does (its new addresses already in
# it), so each round starts from nothing.  Then the second run with
# --no-cache and with --no-symbolize, each stage's wall time from jheap's
# own timer (JHEAP_DEBUG=time), and, with perf, where the second run's CPU
# time goes: the second run repeated from the cache the first run left,
# each sample of jheap's threads given to the stage its call chain is in.
# Never fails on a time.
#
# Environment: SECOND_ROUNDS (15), SECOND_PROFILE_RUNS (10), JHEAP.
set -u

SRCDIR=$(cd "$(dirname "$0")/.." && pwd) || exit 1
. "$SRCDIR/bench/lib.sh"
bench_paths "${1:-build}" || exit 1
D100=$B/dumps/s100k.heap D2ND=$B/dumps/second.heap
ROUNDS=${SECOND_ROUNDS:-15}
PRUNS=${SECOND_PROFILE_RUNS:-10}
OUT=$B/out/second
CACHE_DIR=$B/cache
mkdir -p "$OUT" && rm -f "$OUT/summary" || exit 1
PERF=$(command -v perf 2>/dev/null)

echo "### Second run: another dump of the same binary"
echo ""
bench_need "$BUILD" "$JHEAP" "$PROG" "$D100" "$D2ND" || exit 0

# one ID CMD...: one run (bench_time), its output to $OUT/ID.out and ID.err
one() { bench_time "$1" "$OUT/$1" "${@:2}"; }

for ((round = 0; round < ROUNDS; round++)); do
	rm -rf "$CACHE_DIR"
	for id in first second again; do
		dump=$D2ND
		[ $id = first ] && dump=$D100
		if ! one $id env XDG_CACHE_HOME="$CACHE_DIR" JHEAP_DEBUG=time "$JHEAP" --quiet --text "$PROG" "$dump"; then
			echo "jheap failed in the second-run rounds ($id): $(head -n 3 "$OUT/$id.err")"
			exit 0
		fi
	done
done
for k in 1 2 3; do
	one nocache env XDG_CACHE_HOME="$CACHE_DIR" JHEAP_DEBUG=time "$JHEAP" --quiet --text --no-cache "$PROG" "$D2ND"
	one nosym env JHEAP_DEBUG=time "$JHEAP" --quiet --text --no-symbolize "$PROG" "$D2ND"
done
declare -A S M
for id in first second again nocache nosym; do
	# shellcheck disable=SC2086  # space-separated numbers
	S[$id]=$(bench_median ${BENCH_WALL[$id]})
	# shellcheck disable=SC2086
	M[$id]=$(bench_largest ${BENCH_RSS[$id]})
done
printf 'first %s\nsecond %s\nagain %s\nnocache %s\nnosym %s\n' "${S[first]}" "${S[second]}" \
	"${S[again]}" "${S[nocache]}" "${S[nosym]}" >"$OUT/summary"

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
secs() { awk -v s="$1" 'BEGIN { printf "%.3f", s }'; }
mb() { awk -v k="$1" 'BEGIN { if (k > 0) printf "%.1f", k / 1024; else printf "n/a" }'; }
n2=$("$B/tools/dumptool" info "$D2ND" 2>/dev/null | awk '{ print $1 }')
echo "First: \`jheap --text\` on s100k.heap; second: on second.heap (${n2:-?} stacks, another process of the same binary, half of its path ids shared with the first); persistent cache in \`\$XDG_CACHE_HOME/jheap\`; $ROUNDS rounds of (cache emptied, first run, second run, second run again), the median of each (wall time of the process, as a user waits for it)."
echo ""
echo "| run | s | MB | first/this |"
echo "|---|---:|---:|---:|"
echo "| first (s100k.heap) | $(secs "${S[first]}") | $(mb "${M[first]}") | 1 |"
echo "| second (second.heap) | $(secs "${S[second]}") | $(mb "${M[second]}") | $(ratio "${S[first]}" "${S[second]}") |"
echo "| second.heap again (every address cached) | $(secs "${S[again]}") | $(mb "${M[again]}") | $(ratio "${S[first]}" "${S[again]}") |"
echo "| second with --no-cache | $(secs "${S[nocache]}") | $(mb "${M[nocache]}") | $(ratio "${S[first]}" "${S[nocache]}") |"
echo "| second with --no-symbolize | $(secs "${S[nosym]}") | $(mb "${M[nosym]}") | $(ratio "${S[first]}" "${S[nosym]}") |"
echo ""
echo "The second dump holds addresses the first did not (its new call paths): each is looked up live.  The cache file also keeps where the top-level functions of every unit indexed so far are, where each sequence of its line table starts and the DWARF's unit map, so such an address reads no unit headers or aranges, indexes only the function that holds it and decodes only the line-table sequence that holds it, not the whole unit.  The binary and its cache file are opened on the core the parse leaves idle while it merges its two halves.  The row after it is the case where every address is already cached."
echo ""
echo "Where each run's time goes, from jheap's own stage timer (\`JHEAP_DEBUG=time\`, wall seconds of the last round's runs; \"symbolize\" includes loading and saving the cache):"
echo ""
echo "| run | parse | symbolize | aggregate | write | in all |"
echo "|---|---:|---:|---:|---:|---:|"
for id in first second again nocache nosym; do
	f=$OUT/$id.err
	st() { bench_stage "$f" "$1"; }
	case $id in
	first) label="first (s100k.heap)" ;;
	second) label="second (second.heap)" ;;
	again) label="second.heap again" ;;
	nocache) label="--no-cache" ;;
	*) label="--no-symbolize" ;;
	esac
	all=$(awk '$1 == "jheap:" && $2 == "time:" { v = $6 } END { gsub(/\(/, "", v); print v }' "$f" 2>/dev/null)
	echo "| $label | $(st parse) | $(st symbolize) | $(st aggregate) | $(st write) | $all |"
done
echo ""
echo "The run with every address cached is what any symbol cache comes down to: its parse, aggregation and output are the second run's too, and its symbolize stage is loading the cache and reading the answers.  first/again = $(ratio "${S[first]}" "${S[again]}") is the most a cache can give on this dump; the second run's gap to it is its new addresses (looked up in the DWARF: a function indexed and a line-table sequence decoded each) and appending them to the cache file.  (--no-symbolize is no floor: it keeps a key per address, so its aggregation and output are larger.)  The first run's cold symbolization of 19,300 addresses is already short next to the rest of the pipeline, so the cache's gain is bounded by how fast the rest is; on a larger binary (more DWARF per address) the same cache saves more."
echo ""

# ---------------------------------------------------------------- profile
# The second run, PRUNS times from the cache state the first run leaves,
# under perf; each CPU sample of jheap's threads goes to the first stage
# (in the order below) whose functions its call chain holds.
[ -n "$PERF" ] || exit 0
rm -rf "$CACHE_DIR" "$CACHE_DIR.first"
XDG_CACHE_HOME="$CACHE_DIR" "$JHEAP" --quiet --text "$PROG" "$D100" >/dev/null 2>&1
mv "$CACHE_DIR" "$CACHE_DIR.first" || exit 0
: >"$OUT/perf.script"
for ((k = 0; k < PRUNS; k++)); do
	rm -rf "$CACHE_DIR" && cp -a "$CACHE_DIR.first" "$CACHE_DIR" || exit 0
	if ! XDG_CACHE_HOME="$CACHE_DIR" "$PERF" record -q -F 4999 --call-graph dwarf,16384 \
		-o "$OUT/perf.data" -- "$JHEAP" --quiet --text "$PROG" "$D2ND" >/dev/null 2>"$OUT/perf.err"; then
		echo "perf could not profile the second run here ($(head -n 1 "$OUT/perf.err"))."
		echo ""
		exit 0
	fi
	"$PERF" script -i "$OUT/perf.data" -F comm,tid,time,ip,sym 2>/dev/null >>"$OUT/perf.script"
done
rm -rf "$CACHE_DIR.first"
# per run: samples of every thread, and the run's task clock from the
# samples' count at 4999 Hz
awk -v runs="$PRUNS" '
	function flush() {
		if (!n) return
		total++
		for (c = 1; c <= ncat; c++)
			for (i = 1; i <= n; i++)
				if (chain[i] ~ re[c]) { got[c]++; n = 0; return }
		got[ncat + 1]++
		n = 0
	}
	BEGIN {
		ncat = 6
		name[1] = "parse (the dump'"'"'s text into the model, two threads)"
		re[1] = "^(load|parse_file|parse_buffer|first_half|second_half|v2_body|replay|parse_v2_split)$"
		name[2] = "cache: loading the cache files"
		re[2] = "^(preload_run|diskcache_module|dcfile_parse|dc_build_tables)$"
		name[3] = "symbolize: the addresses (cached and new ones), folding by symbol, saving the cache"
		re[3] = "^(symbolize_profile|symbolize_ids|worker_run|lookup_job|symcache_resolve|profile_fold_by_symbol|symbolize_model|diskcache_save)$"
		name[4] = "aggregate (flat and cum per function)"
		re[4] = "^(aggregate_build|sum_part|sum_rows|sum_plain|build_locinfo|aggregate_sort)$"
		name[5] = "write (the --text report)"
		re[5] = "^(report_one|text_write|driver_write)$"
		name[6] = "exit (the kernel freeing the process)"
		re[6] = "^(do_exit|exit_mmap|mmput|__x64_sys_exit_group)$"
		name[7] = "other (startup, allocation, unattributed frames)"
	}
	/^[^ \t]/ { flush(); next }
	NF == 0 { flush(); next }
	{ sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); chain[++n] = sym }
	END {
		flush()
		ms = total / runs / 4.999
		printf "CPU per second run: %.0f ms (%d samples of %d runs at 4999 Hz, every thread).\n\n", ms, total, runs
		print "| stage | share of the CPU time | ms per run |"
		print "|---|---:|---:|"
		for (c = 1; c <= ncat + 1; c++)
			printf "| %s | %.1f%% | %.1f |\n", name[c], 100 * got[c] / total, got[c] / runs / 4.999
	}' "$OUT/perf.script" >"$OUT/profile.md"
self=$("$PERF" report -i "$OUT/perf.data" --stdio --no-children --sort dso,symbol -g none --percent-limit 2 2>/dev/null |
	grep -v -e '^#' -e '^$' | awk '{ printf "%-8s %-20s %s\n", $1, $2, $4 }' | head -n 12)
echo "Where the second run's time goes, from a profile: \`perf record -F 4999 --call-graph dwarf\` of $PRUNS second runs, each from the cache the first run left (the stage of a sample is the first of the list below that its call chain holds):"
echo ""
cat "$OUT/profile.md"
echo ""
echo "Self time of the last of them (\`perf report --no-children\`, entries above 2%):"
echo ""
echo '```'
printf '%s\n' "$self"
echo '```'
echo ""

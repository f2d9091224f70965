#!/bin/bash
# bench/scale.sh [BUILD]: every output format on the 1,000,000-stack
# synthetic dump and on the largest real dump (issue 29), printed as a
# Markdown section on standard output.  Part of `make bench` (bench/run.sh
# adds it to the report); alone, once the inputs exist:
#   bash bench/run.sh build inputs; bash bench/run.sh build scale
#
# Each format: wall time (median of SCALE_ROUNDS runs, 3; bench/lib.sh
# times them as bench/second.sh does), CPU time and peak RSS (GNU time), the RSS against the dump's size, the size of what it wrote, and
# where the time goes (JHEAP_DEBUG=time of the last run: parse,
# symbolize, aggregate, write), cold (--no-cache), one run at a time.
# The targets: under 2 s and under twice the dump's size in RSS.  Never
# fails on a time.
set -u

SRCDIR=$(cd "$(dirname "$0")/.." && pwd) || exit 1
. "$SRCDIR/bench/lib.sh"
bench_paths "${1:-build}" || exit 1
ROUNDS=${SCALE_ROUNDS:-3}
OUT=$B/out/scale
FORMATS="text collapsed flamegraph speedscope proto callgrind dot traces tree raw"
mkdir -p "$OUT" && rm -f "$OUT/summary" || exit 1

echo "### Every output at scale"
echo ""
bench_need "$BUILD" "$JHEAP" "$PROG" "$B/dumps/synth1m.heap" "$B/dumps/s200k.heap" || exit 0

# one DUMP FORMAT: "seconds MB bytes stages" of ROUNDS runs (median time,
# largest RSS), stages from the last run's JHEAP_DEBUG=time
one() {
	local dump=$1 fmt=$2 k id o t
	id=$(basename "$dump" .heap).$fmt
	o=$OUT/$id
	for ((k = 0; k < ROUNDS; k++)); do
		if ! bench_time "$id" "$o" env JHEAP_DEBUG=time "$JHEAP" --no-cache --"$fmt" "$PROG" "$dump"; then
			echo "failed - - - - - -"
			return
		fi
	done
	# shellcheck disable=SC2086  # space-separated numbers
	t=$(bench_median ${BENCH_WALL[$id]})
	# shellcheck disable=SC2086
	echo "$(awk -v t="$t" 'BEGIN { printf "%.2f", t }') $(bench_median ${BENCH_CPU[$id]})" \
		"$(awk -v k="$(bench_largest ${BENCH_RSS[$id]})" 'BEGIN { printf "%.0f", k / 1024 }')" \
		"$(stat -c %s "$o.out") $(bench_stage "$o.err" parse) $(bench_stage "$o.err" symbolize)" \
		"$(bench_stage "$o.err" aggregate) $(bench_stage "$o.err" write)"
}

for dump in synth1m s200k; do
	D=$B/dumps/$dump.heap
	dmb=$(awk -v s="$(stat -c %s "$D")" 'BEGIN { printf "%.1f", s / 1048576 }')
	read -r nstacks _ < <("$B/tools/dumptool" info "$D")
	if [ "$dump" = synth1m ]; then
		echo "**$dump.heap**: $nstacks stacks, $dmb MB; targets under 2 s and under $(awk -v d="$dmb" 'BEGIN { printf "%.0f", 2 * d }') MB of RSS (twice the dump)."
	else
		echo "**$dump.heap** (a real dump): $nstacks stacks, $dmb MB; target under 2 s."
	fi
	echo ""
	echo "| format | s | CPU s | MB | RSS/dump | output MB | parse | symbolize | aggregate | write | target |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
	for fmt in $FORMATS; do
		say=$(one "$D" "$fmt")
		read -r t cpu m bytes p s a w <<<"$say"
		if [ "$t" = failed ]; then
			echo "| --$fmt | failed | | | | | | | | | |"
			continue
		fi
		ratio=$(awk -v m="$m" -v d="$dmb" 'BEGIN { printf "%.2f", m / d }')
		omb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1048576 }')
		# the RSS target is the 1,000,000-stack dump's; on a smaller
		# dump the binary's own symbolization dominates
		ok=$(awk -v t="$t" -v r="$ratio" -v big="$([ "$dump" = synth1m ] && echo 1)" \
			'BEGIN { print (t < 2 && (r < 2 || !big)) ? "met" : "**not met**" }')
		echo "| --$fmt | $t | $cpu | $m | $ratio | $omb | $p | $s | $a | $w | $ok |"
		echo "$dump $fmt $t $m $ratio $(awk -v p="${p:-0}" -v s="${s:-0}" -v a="${a:-0}" 'BEGIN { printf "%.2f", p + s + a }')" >>"$OUT/summary"
	done
	echo ""
done
# the floor of writing the largest output's bytes at all, here
big=$(ls -S "$OUT"/synth1m.*.out 2>/dev/null | head -n 1)
if [ -n "$big" ]; then
	bmb=$(awk -v b="$(stat -c %s "$big")" 'BEGIN { printf "%.0f", b / 1048576 }')
	/usr/bin/time -f %e -o "$OUT/dd.time" dd if=/dev/zero of="$OUT/dd.out" bs=64k count=$((bmb * 16)) 2>/dev/null
	dd_s=$(tail -n 1 "$OUT/dd.time")
	rm -f "$OUT/dd.out"
	# what every format shares: --text's parse, symbolize and aggregate
	shared=$(awk '$1 == "synth1m" && $2 == "text" { print $6 }' "$OUT/summary")
	fmt=$(basename "$big" .out | sed "s/^synth1m\.//")
	left=$(awk -v s="${shared:-0}" -v d="$dd_s" 'BEGIN { printf "%.2f", 2 - s - d }')
	if awk -v l="$left" 'BEGIN { exit !(l <= 0) }'; then
		what="a format that writes that much cannot finish in 2 s once the dump is read (${shared:-?} s: --text's parse, symbolize and aggregate)"
	else
		what="after the ${shared:-?} s every format spends reading the dump (--text's parse, symbolize and aggregate), that leaves $left s in 2 s for making those bytes"
	fi
	echo "Writing $bmb MB (the largest output above, --$fmt's) to a file with nothing else to do takes $dd_s s on this machine (\`dd bs=64k\`, a spread of a few tenths to a few seconds from one run to the next as other sessions write): $what."
	echo ""
fi
echo "Stage times are wall seconds of one run (\`JHEAP_DEBUG=time\`; \"symbolize\" includes loading the binary, \"write\" the format's own work).  What every format shares (parse, symbolize, aggregate) is the --text row's; the rest of a row is its writer.  Where a format writes hundreds of megabytes (--traces prints every frame of every stack, --collapsed every stack's whole path, --raw copies the dump), the write stage is bounded by the bytes themselves."
echo ""

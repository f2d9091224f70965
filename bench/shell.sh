#!/bin/bash
# bench/shell.sh [BUILD]: how fast the interactive shell answers on the
# ~200,000-stack dump (issue 19: "an answer within 0.1 s"), printed as a
# Markdown section on standard output.  Part of `make bench` (bench/run.sh
# adds it to the report); alone, once the inputs exist:
#   bash bench/run.sh build inputs; bash bench/run.sh build shell
#
# jheap runs on a pseudo-terminal of its own (tests/tools/ptyshell.py) with
# BUILD/bench's program and s200k dump, and the commands below are typed
# one after the other, as a person would; each is timed from its Enter to
# the next prompt, the output read as it comes (a terminal that reads
# slower makes a long report slower; the short ones are a screen or less).
# SHELL_ROUNDS sessions (5), each from a fresh start: the median, the
# fastest and the slowest of the rounds per command.  BROWSER is "true":
# weblist writes its page and opens nothing.  Never fails on a time.
set -u

SRCDIR=$(cd "$(dirname "$0")/.." && pwd) || exit 1
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 1
JHEAP=$BUILD/jheap
B=$BUILD/bench
DUMP=$B/dumps/s200k.heap
PROG=$B/prog/benchprog
ROUNDS=${SHELL_ROUNDS:-5}
W=$B/shell
say() { printf '%s\n' "$*" >&2; }

# The commands, in the order typed.  focus= is a setting (it prints
# nothing): the top after it builds a new, filtered aggregate.
COMMANDS=(
	"top"
	"top --cum"
	"peek bench::array_of"
	"list main"
	"tree --nodecount=20"
	"focus=bench::make"
	"top"
	"focus="
	"dot"
	"disasm ^main$"
	"weblist main"
	"text"
)

echo "### The interactive shell: time to answer"
echo ""
if [ ! -x "$JHEAP" ] || [ ! -s "$DUMP" ] || [ ! -x "$PROG" ] || ! command -v python3 >/dev/null 2>&1; then
	echo "not measured: needs $JHEAP (make), python3, and the inputs $DUMP and $PROG (bash bench/run.sh $BUILD inputs)"
	exit 0
fi
mkdir -p "$W" && rm -rf "${W:?}"/* || exit 1
{
	for c in "${COMMANDS[@]}"; do
		printf 'time %s/times %s\n' "$W" "$c"
	done
	printf 'keys quit\\r\nexit 0\n'
} >"$W/script"

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
ok=0
for ((k = 1; k <= ROUNDS; k++)); do
	say "bench: the shell, round $k of $ROUNDS..."
	# the history and libedit's ~/.editrc are the run's own; the
	# persistent symbol cache too (only the commands are timed)
	if HOME=$W XDG_STATE_HOME=$W/state XDG_CACHE_HOME=$W/cache BROWSER=true \
		python3 "$SRCDIR/tests/tools/ptyshell.py" --timeout 300 "$W/script" -- \
		"$JHEAP" "$PROG" "$DUMP" >>"$W/log" 2>&1 &&
		[ "$(wc -l <"$W/times")" -eq ${#COMMANDS[@]} ]; then
		ok=$((ok + 1))
		cat "$W/times" >>"$W/all"
	else
		say "bench: the shell's round $k failed (see $W/log)"
	fi
	rm -f "$W/times"
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)

echo "Each command typed at jheap's prompt in a pseudo-terminal (\`tests/tools/ptyshell.py\`), on \`s200k\` (about 200,000 stacks) with the generated program; the time from Enter to the next prompt, over $ok sessions each started afresh (the commands in the order below), the median and the range; the output is what the terminal read.  A setting (\`focus=\`) prints nothing; the \`top\` after it sums the profile again with the filter.  Target (issue 19): 0.1 s.  Load average at the start: $LOAD_START; at the end: $LOAD_END."
echo ""
echo "| command | output bytes | median s | fastest s | slowest s | within 0.1 s |"
echo "|---|---:|---:|---:|---:|---|"
# all: "SECONDS BYTES LINE", the commands in order, round after round
awk -v n=${#COMMANDS[@]} '
{
	i = (NR - 1) % n
	line = $0; sub(/^[^ ]+ [^ ]+ /, "", line)
	name[i] = line; bytes[i] = $2; t[i, int((NR - 1) / n)] = $1; rounds = int((NR - 1) / n) + 1
}
END {
	for (i = 0; i < n && rounds; i++) {
		m = 0
		for (r = 0; r < rounds; r++) if ((i, r) in t) v[m++] = t[i, r]
		for (a = 1; a < m; a++) for (b = a; b > 0 && v[b - 1] > v[b]; b--) { x = v[b]; v[b] = v[b - 1]; v[b - 1] = x }
		med = v[int((m - 1) / 2)]
		printf "| `%s` | %d | %.3f | %.3f | %.3f | %s |\n", name[i], bytes[i], med, v[0], v[m - 1], med < 0.1 ? "yes" : "**no**"
	}
}' "$W/all" 2>/dev/null
[ -s "$W/all" ] || echo "| (no session finished: see $W/log) | | | | | |"
echo ""
exit 0

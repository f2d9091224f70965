#!/bin/bash
test_description='--dot call graphs, and --svg/--pdf/--png through graphviz

The graph of every workload dump is rendered by graphviz'"'"'s own dot
program, which must not warn, into SVG that must be well-formed XML.  The
nodes are checked against jheap'"'"'s --text report of the same dump: the node
set is the rows sorted by |cum| descending then name, cut at --nodecount
and at --nodefraction of the flat total (spec 4.4), and each label shows the
row'"'"'s flat and cum.  The font size formula, the edge rules
(--edgefraction, --maxdegree, recursion self-edges, dashed inline edges),
the "Dropping nodes" note, name escaping and the graphviz error paths are
checked one by one.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/workloads.sh"

test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test_need_profiles

test_have_prog dot && test_set_prereq DOT
if test_have_prog xmllint || test_have_prog python3; then
	test_set_prereq XML
fi
# script(1) gives the command a terminal; it needs a working pty
if test_have_prog script && script -qec true /dev/null >/dev/null 2>&1 </dev/null; then
	test_set_prereq SCRIPT
fi

W=$PROFILES/w_basic
WH=$PROFILES/w_basic.exact.heap

# test_must_be_empty_ FILE
test_must_be_empty_() {
	if [ -s "$1" ]; then
		echo "$1 is not empty:"
		cat "$1"
		return 1
	fi
}

# test_expect_code_ CODE CMD...: CMD exits with CODE.
test_expect_code_() {
	local want=$1 rc
	shift
	"$@"
	rc=$?
	if [ "$rc" != "$want" ]; then
		echo "exit status $rc, expected $want: $*" >&2
		return 1
	fi
}

# xml_ok FILE: FILE is well-formed XML.
xml_ok() {
	if test_have_prog xmllint; then
		xmllint --noout "$1"
	else
		python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$1"
	fi
}

# render DOTFILE: graphviz reads it without a word on stderr and writes
# well-formed SVG.
render() {
	dot -Tsvg "$1" >"$1.svg" 2>"$1.err" || { cat "$1.err"; return 1; }
	if [ -s "$1.err" ]; then
		echo "graphviz warned on $1:"
		cat "$1.err"
		return 1
	fi
	xml_ok "$1.svg"
}

# dot_nodes DOTFILE: one line per node in id order,
# "NAME<TAB>FLAT<TAB>CUM<TAB>FONTSIZE", NAME with each "\n" of the label
# as \001.
dot_nodes() {
	awk '
	/^N[0-9]+ \[label="/ {
		s = $0
		sub(/^N[0-9]+ \[label="/, "", s)
		i = index(s, "\",shape=box,fontsize=")
		label = substr(s, 1, i - 1)
		fs = substr(s, i + 21)
		sub(/[],].*/, "", fs)
		sub(/\\r$/, "", label)
		n = split(label, part, /\\n/)
		name = part[1]
		for (k = 2; k < n; k++)
			name = name "\001" part[k]
		vals = part[n]
		flat = vals
		sub(/ .*/, "", flat)
		cum = flat
		if (match(vals, /\\rof [^ ]+/))
			cum = substr(vals, RSTART + 5, RLENGTH - 5)
		printf "%s\t%s\t%s\t%s\n", name, flat, cum, fs
	}' "$1"
}

# dot_edges DOTFILE: "CALLER -> CALLEE<TAB>LABEL<TAB>STYLE" per edge, in
# file order, with the node names of dot_nodes.
dot_edges() {
	awk '
	/^N[0-9]+ \[label="/ {
		id = $1
		s = $0
		sub(/^N[0-9]+ \[label="/, "", s)
		label = substr(s, 1, index(s, "\",shape=box,fontsize=") - 1)
		n = split(label, part, /\\n/)
		name = part[1]
		for (k = 2; k < n; k++)
			name = name "\001" part[k]
		node[id] = name
	}
	/^N[0-9]+ -> N[0-9]+ \[/ {
		lab = $0
		sub(/.*\[label=/, "", lab)
		sub(/,.*/, "", lab)
		st = $0
		sub(/.*style="/, "", st)
		sub(/".*/, "", st)
		printf "%s -> %s\t%s\t%s\n", node[$1], node[$3], lab, st
	}' "$1"
}

# text_total TEXTFILE: the sum of the flat column (jheap'"'"'s 100%).
text_flat_total() {
	awk '$1 != "Total:" && NF >= 6 { s += $1 } END { printf "%.0f\n", s }' "$1"
}

# expected_nodes TEXTFILE NODEFRACTION NODECOUNT: the nodes spec 4.4
# selects from a --text --show_bytes report, as dot_nodes prints them
# (without the font size).
expected_nodes() {
	local total limit
	total=$(text_flat_total "$1")
	limit=$(awk -v t="$total" -v f="$2" 'BEGIN { printf "%d\n", f * t }')
	awk '
	$1 != "Total:" && NF >= 6 {
		name = $0
		for (i = 0; i < 5; i++) sub(/^ *[^ ]+/, "", name)
		sub(/^ /, "", name)
		c = $4 < 0 ? -$4 : $4
		printf "%s\t%s\t%s\t%s\n", c, name, $1, $4
	}' "$1" | sort -t "$(printf '\t')" -k1,1gr -k2,2 | head -n "$3" |
	awk -F '\t' -v limit="$limit" '
	$1 > limit {
		name = $2
		gsub(/[ \t]+|::/, "\001", name)
		printf "%s\t%s\t%s\n", name, $3, $4
	}'
}

# node_names FILE: just the names of dot_nodes/expected_nodes output.
node_names() {
	cut -f1 "$1"
}

test_expect_success DOT,XML 'graphviz renders every workload graph without a warning' '
	while read -r heap bin; do
		name=${heap##*/} &&
		"$JHEAP" --dot "$bin" "$heap" >"$name.dot" 2>"$name.err" || {
			echo "jheap --dot $heap failed"; cat "$name.err"; return 1; }
		render "$name.dot" || return 1
	done <"$PROFILES/MANIFEST"
'

test_expect_success DOT,XML 'graphviz renders --lines, --addresses, --files, --full-names and object graphs' '
	for flags in --lines --addresses --files --full-names "--full-names --lines" \
		"--inuse_objects --nodefraction=0" "--alloc_space --nodefraction=0"; do
		# shellcheck disable=SC2086
		"$JHEAP" --dot $flags "$PROFILES/w_cpp" "$PROFILES/w_cpp.accum.heap" >g.dot 2>err || {
			echo "jheap --dot $flags w_cpp failed"; cat err; return 1; }
		render g.dot || { echo "flags: $flags"; return 1; }
	done
'

for w in w_basic w_cpp w_shlib w_threads demo; do
	test_expect_success "$w: nodes and their flat/cum are the --text rows spec 4.4 selects" "
		\"\$JHEAP\" --text --show_bytes \"\$PROFILES/$w\" \"\$PROFILES/$w.exact.heap\" >text &&
		\"\$JHEAP\" --dot --show_bytes \"\$PROFILES/$w\" \"\$PROFILES/$w.exact.heap\" >g.dot 2>err &&
		expected_nodes text 0.005 80 >expect &&
		dot_nodes g.dot | cut -f1-3 >actual &&
		test -s expect &&
		test_cmp expect actual
	"
done

test_expect_success 'w_basic: the node set is what the workload table implies' '
	"$JHEAP" --dot --show_bytes "$W" "$WH" >g.dot 2>err &&
	dot_nodes g.dot >nodes &&
	# recurse (24576 B) is at or below 0.5% of the flat total (25359 B)
	! grep "^recurse	" nodes &&
	grep "^alloc_realloc	2293760	2293760	" nodes &&
	grep "^leaf_alloc	512000	512000	" nodes &&
	grep "^caller_a	0	153600	" nodes &&
	grep "^main	327680	4989952	" nodes
'

test_expect_success 'MB labels name the same nodes as --show_bytes' '
	"$JHEAP" --dot "$PROFILES/demo" "$PROFILES/demo.exact.heap" >mb.dot 2>err &&
	"$JHEAP" --dot --show_bytes "$PROFILES/demo" "$PROFILES/demo.exact.heap" >b.dot 2>err &&
	dot_nodes mb.dot | cut -f1 >mb &&
	dot_nodes b.dot | cut -f1 >b &&
	test_cmp b mb &&
	grep "^cache_store_value	2.0	2.0	" <(dot_nodes mb.dot) &&
	head -1 mb.dot | grep "^digraph \".*/demo; 2.6 MB\" {$"
'

test_expect_success 'font size is 8 + 50 * sqrt(|flat| / flat total)' '
	"$JHEAP" --text --show_bytes "$W" "$WH" >text &&
	"$JHEAP" --dot --show_bytes "$W" "$WH" >g.dot 2>err &&
	total=$(text_flat_total text) &&
	dot_nodes g.dot >nodes &&
	awk -F "\t" -v t="$total" "{
		f = \$2 < 0 ? -\$2 : \$2
		want = sprintf(\"%.1f\", 8 + 50 * sqrt(f / t))
		if (want != \$4) { print \$1 \": fontsize \" \$4 \", expected \" want; bad = 1 }
	} END { exit bad }" nodes &&
	# by hand: main, 327680 of 5071872 B: 8 + 50 * 0.254179 = 20.7
	grep "^main	327680	4989952	20.7$" nodes &&
	grep "^caller_a	0	153600	8.0$" nodes
'

test_expect_success '--nodecount keeps the first N nodes' '
	"$JHEAP" --text --show_bytes "$W" "$WH" >text &&
	"$JHEAP" --dot --show_bytes --nodecount=5 "$W" "$WH" >g.dot 2>err &&
	expected_nodes text 0.005 5 >expect &&
	test $(wc -l <expect) -eq 5 &&
	dot_nodes g.dot | cut -f1-3 >actual &&
	test_cmp expect actual &&
	test $(grep -c "^N[0-9]* \[label" g.dot) -eq 5
'

test_expect_success '--nodefraction drops nodes at or below the limit' '
	"$JHEAP" --text --show_bytes "$W" "$WH" >text &&
	"$JHEAP" --dot --show_bytes --nodefraction=0.05 "$W" "$WH" >g.dot 2>err &&
	expected_nodes text 0.05 80 >expect &&
	dot_nodes g.dot | cut -f1-3 >actual &&
	test_cmp expect actual &&
	# limit int(0.05 * 5071872) = 253593: caller_b (358400) stays,
	# caller_a (153600) goes
	grep "^caller_b	" actual &&
	! grep "^caller_a	" actual &&
	"$JHEAP" --dot --show_bytes --nodefraction=0 "$W" "$WH" >all.dot 2>err &&
	grep "^recurse	24576	24576	" <(dot_nodes all.dot)
'

test_expect_success 'the Dropping note gives both limits on stderr' '
	"$JHEAP" --dot --show_bytes --nodefraction=0.05 "$W" "$WH" >g.dot 2>err &&
	echo "Dropping nodes with <= 253593 B; edges with <= 5071 abs(B)" >expect &&
	test_cmp expect err &&
	! grep Dropping g.dot &&
	"$JHEAP" --dot "$W" "$WH" >g.dot 2>err &&
	echo "Dropping nodes with <= 0.0 MB; edges with <= 0.0 abs(MB)" >expect &&
	test_cmp expect err &&
	grep "Dropped nodes with <= 0.0 abs(MB)\\\\lDropped edges with <= 0.0 MB\\\\l" g.dot &&
	"$JHEAP" --dot --nodefraction=0 --edgefraction=0 "$W" "$WH" >g.dot 2>err &&
	test_must_be_empty_ err
'

test_expect_success '--quiet: no Dropping note, as for --text' '
	"$JHEAP" -q --dot --show_bytes --nodefraction=0.05 "$W" "$WH" >g.dot 2>err &&
	test_must_be_empty_ err &&
	"$JHEAP" --dot --show_bytes --nodefraction=0.05 "$W" "$WH" >g2.dot &&
	test_cmp g2.dot g.dot
'

test_expect_success 'edges: each caller -> callee pair once, from the unreduced stacks' '
	"$JHEAP" --dot --show_bytes --nodefraction=0 "$W" "$WH" >g.dot 2>err &&
	dot_edges g.dot >edges &&
	grep "^main -> alloc_realloc	2293760	setlinewidth(2)$" edges &&
	grep "^caller_b -> leaf_alloc	358400	" edges &&
	grep "^caller_a -> leaf_alloc	153600	" edges &&
	# recursion: a self-edge counted once per repetition (8192 B per level,
	# levels 2 and 3 below level 1: 8192 + 2 * 8192)
	grep "^recurse -> recurse	24576	" edges &&
	grep "^main -> recurse	24576	" edges &&
	test $(cut -f1 edges | sort | uniq -d | wc -l) -eq 0
'

test_expect_success 'edge width and weight follow the formulas' '
	"$JHEAP" --dot --show_bytes "$W" "$WH" >g.dot 2>err &&
	# caller_a -> leaf_alloc: 153600 B of 5071872: width 2*3*w/t, weight w^0.7
	line=$(grep "^N[0-9]* -> N[0-9]* \[label=153600," g.dot) &&
	w=$(awk "BEGIN { printf \"%f\", 2 * 3 * 153600 / 5071872 }") &&
	k=$(awk "BEGIN { printf \"%d\", 153600 ^ 0.7 }") &&
	echo "$line" | grep "weight=$k, style=\"setlinewidth($w)\"" &&
	test "$w" = 0.181708 && test "$k" = 4270
'

test_expect_success '--edgefraction drops light edges into nodes that have one already' '
	"$JHEAP" --dot --show_bytes "$W" "$WH" >g.dot 2>err &&
	grep "^caller_a -> leaf_alloc	" <(dot_edges g.dot) &&
	"$JHEAP" --dot --show_bytes --edgefraction=0.1 "$W" "$WH" >g.dot 2>err &&
	dot_edges g.dot >edges &&
	# limit int(0.1 * 5071872) = 507187: caller_b -> leaf_alloc (358400)
	# is the first edge into leaf_alloc and stays, caller_a -> leaf_alloc
	# (153600) goes; main -> alloc_calloc (40960) is alone and stays
	grep "^caller_b -> leaf_alloc	" edges &&
	! grep "^caller_a -> leaf_alloc	" edges &&
	grep "^main -> alloc_calloc	" edges &&
	grep "^caller_a	" <(dot_nodes g.dot)
'

test_expect_success '--maxdegree limits the edges into a node' '
	"$JHEAP" --dot --show_bytes --maxdegree=1 "$W" "$WH" >g.dot 2>err &&
	dot_edges g.dot >edges &&
	grep "^caller_b -> leaf_alloc	" edges &&
	! grep "^caller_a -> leaf_alloc	" edges &&
	"$JHEAP" --dot --show_bytes --maxdegree=2 "$W" "$WH" >g.dot 2>err &&
	grep "^caller_a -> leaf_alloc	" <(dot_edges g.dot)
'

# fan.heap: A and B both call X1..X4 (A'"'"'s calls are heavier), from main.
write_fan() {
	{
		printf -- "--- symbol\nbinary=./fan\n"
		printf "0x0000000000001000 A\n0x0000000000001100 B\n0x0000000000001600 main\n"
		for i in 1 2 3 4; do printf "0x000000000000%d200 X%d\n" "$i" "$i"; done
		printf -- "---\n--- heap\nheap_v2/1\n"
		for i in 1 2 3 4; do
			printf "@ 0x%d200 0x1001 0x1601\n  t*: 1: %d [0: 0]\n" "$i" $((1000 + 10 * i))
			printf "@ 0x%d200 0x1101 0x1601\n  t*: 1: %d [0: 0]\n" "$i" $((100 + i))
		done
	} >fan.heap
}

test_expect_success '--maxdegree limits the edges out of and into a node' '
	write_fan &&
	"$JHEAP" --dot --show_bytes --nodefraction=0 --edgefraction=0 fan.heap >g.dot 2>err &&
	dot_edges g.dot | cut -f1 | sort >all &&
	test $(grep -c "^[AB] -> X" all) -eq 8 &&
	# 2: A -> X1..X4 come first and are each the first edge into their
	# callee; then B -> X4 and B -> X3 (heaviest first) fill B'"'"'s
	# out-degree, and B -> X2, B -> X1 go
	"$JHEAP" --dot --show_bytes --nodefraction=0 --edgefraction=0 --maxdegree=2 fan.heap >g.dot 2>err &&
	dot_edges g.dot | cut -f1 | grep "^B -> " | sort >b &&
	printf "B -> X3\nB -> X4\n" >expect &&
	test_cmp expect b &&
	test $(dot_edges g.dot | grep -c "^A -> X") -eq 4 &&
	# 1: every X has its edge from A, so no edge from B may enter
	"$JHEAP" --dot --show_bytes --nodefraction=0 --edgefraction=0 --maxdegree=1 fan.heap >g.dot 2>err &&
	! dot_edges g.dot | grep "^B -> X" &&
	test $(dot_edges g.dot | grep -c "^A -> X") -eq 4 &&
	# 0: still the first edge into every node
	"$JHEAP" --dot --show_bytes --nodefraction=0 --edgefraction=0 --maxdegree=0 fan.heap >g.dot 2>err &&
	dot_edges g.dot | cut -f1 | sort >zero &&
	printf "A -> X1\nA -> X2\nA -> X3\nA -> X4\nmain -> A\nmain -> B\n" >expect &&
	test_cmp expect zero
'

test_expect_success 'edges into inline frames are dashed, others are not' '
	"$JHEAP" --dot --show_bytes "$PROFILES/w_cpp" "$PROFILES/w_cpp.exact.heap" >g.dot 2>err &&
	dot_edges g.dot >edges &&
	grep "(inline)	" edges >inl &&
	test -s inl &&
	! grep -v ",dashed$" inl &&
	grep -v "(inline)	" edges >plain &&
	test -s plain &&
	! grep ",dashed" plain
'

test_expect_success 'two runs give byte-identical graphs' '
	for w in w_basic w_cpp demo; do
		"$JHEAP" --dot "$PROFILES/$w" "$PROFILES/$w.accum.heap" >1.dot 2>/dev/null &&
		"$JHEAP" --dot "$PROFILES/$w" "$PROFILES/$w.accum.heap" >2.dot 2>/dev/null &&
		cmp 1.dot 2.dot || return 1
	done
'

test_expect_success 'the program name is the title and the first legend line' '
	"$JHEAP" --dot "$W" "$WH" >g.dot 2>err &&
	sed -n 1p g.dot >title &&
	echo "digraph \"$W; 4.8 MB\" {" >expect &&
	test_cmp expect title &&
	grep "^Legend \[shape=box,fontsize=24,shape=plaintext,label=\"$W\\\\lTotal MB: 4.8\\\\lFocusing on: 4.8\\\\l" g.dot
'

test_expect_success 'names with quotes, backslashes, & and bad bytes are escaped' '
	write_weird &&
	"$JHEAP" --dot --show_bytes weird.heap >weird.dot 2>err &&
	test_golden dot-weird--show_bytes.dot weird.dot
'

test_expect_success DOT,XML 'graphviz shows the escaped names as they are' '
	write_weird &&
	"$JHEAP" --dot --show_bytes weird.heap >weird.dot 2>err &&
	render weird.dot &&
	grep ">say&quot;hi\\\\there<" weird.dot.svg &&
	grep ">op&amp;amp;<" weird.dot.svg &&
	grep ">./we&quot;ird\\\\prog<" weird.dot.svg &&
	grep ">bad?utf8<" weird.dot.svg &&
	grep ">ctl?x<" weird.dot.svg
'

test_expect_success DOT,XML '--svg: the HTML labels of pictures escape odd names too' '
	write_weird &&
	"$JHEAP" --svg weird.heap >w.svg 2>err &&
	test_must_be_empty_ err &&
	xml_ok w.svg &&
	grep ">say&quot;hi\\\\there<" w.svg &&
	grep ">op&amp;amp;<" w.svg &&
	grep ">./we&quot;ird\\\\prog<" w.svg &&
	grep ">bad?utf8<" w.svg &&
	grep ">ctl?x<" w.svg &&
	grep ">of 96 (100.0%)<" <("$JHEAP" --svg --show_bytes weird.heap)
'

test_expect_success DOT,XML '--svg of C++ names with templates and arguments: no graphviz warning' '
	for flags in "--full-names --lines" --addresses; do
		# shellcheck disable=SC2086
		"$JHEAP" --svg $flags "$PROFILES/w_cpp" "$PROFILES/w_cpp.exact.heap" >g.svg 2>err &&
		grep -v "^Dropping nodes with" err >warn
		test_must_be_empty_ warn &&
		xml_ok g.svg || return 1
	done &&
	grep "&lt;" g.svg >/dev/null || grep ">std<" g.svg
'

test_expect_success DOT,XML '--base: negative values; the limits are fractions of |total|' '
	"$JHEAP" --dot --show_bytes --base "$PROFILES/demo.sampled.heap" "$PROFILES/demo" \
		"$PROFILES/demo.exact.heap" >g.dot 2>err &&
	render g.dot &&
	"$JHEAP" --text --show_bytes --base "$PROFILES/demo.sampled.heap" "$PROFILES/demo" \
		"$PROFILES/demo.exact.heap" >text &&
	t=$(awk "\$1 == \"Total:\" { print (\$2 < 0 ? -\$2 : \$2) }" text) &&
	nl=$(awk -v t="$t" "BEGIN { printf \"%d\", 0.005 * t }") &&
	el=$(awk -v t="$t" "BEGIN { printf \"%d\", 0.001 * t }") &&
	# The sampled dump estimates the exact one: their difference is
	# random and may be under 200 B, and then both limits are 0, of which
	# jeprof (and jheap) say nothing, and nodes whose values cancel to a
	# fraction of a byte (printed 0) stay
	if test "$nl" -gt 0 || test "$el" -gt 0
	then
		echo "Dropping nodes with <= $nl B; edges with <= $el abs(B)" >expect
	else
		: >expect
	fi &&
	test_cmp expect err &&
	dot_nodes g.dot >nodes &&
	test -s nodes &&
	awk -F "\t" -v l="$nl" "{ c = \$3 < 0 ? -\$3 : \$3; if (l > 0 && c <= l) { print \"kept \" \$0; bad = 1 } }
		END { exit bad }" nodes &&
	awk -F "\t" "{ if (\$4 + 0 > 58) { print \"font \" \$0; bad = 1 } } END { exit bad }" nodes
'

test_expect_success 'No nodes to print: exit 1 and a message' '
	test_expect_code_ 1 "$JHEAP" --dot --nodecount=0 "$W" "$WH" >out 2>err &&
	grep "^jheap: No nodes to print" err &&
	test_expect_code_ 1 "$JHEAP" --dot --nodefraction=1 "$W" "$WH" >out 2>err &&
	grep "^jheap: No nodes to print" err &&
	! test -s out
'

test_expect_success DOT,XML '--svg -o FILE writes the same graph as dot -Tsvg' '
	"$JHEAP" --svg -o g.svg "$W" "$WH" 2>err &&
	xml_ok g.svg &&
	grep "<svg " g.svg &&
	grep "<title>N1</title>" g.svg &&
	grep ">alloc_realloc</text>" g.svg &&
	"$JHEAP" --svg "$W" "$WH" >stdout.svg 2>err &&
	cmp g.svg stdout.svg
'

test_expect_success DOT '--png and --pdf write their formats' '
	"$JHEAP" --png -o g.png "$W" "$WH" 2>err &&
	test "$(head -c 8 g.png | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a &&
	"$JHEAP" --pdf "$W" "$WH" >g.pdf 2>err &&
	test "$(head -c 5 g.pdf)" = "%PDF-"
'

# big.heap: 300 functions with long names, each calling the next.
write_big() {
	awk "BEGIN {
		printf \"--- symbol\nbinary=./big\n\"
		for (i = 0; i < 300; i++)
			printf \"0x%016x function_with_a_rather_long_name_number_%d_abcdefghijklmnopqrstuvwxyz_abcdefghijklmnopqrstuvwxyz\n\", 4096 + 16 * i, i
		printf \"---\n--- heap\nheap_v2/1\n\"
		for (i = 0; i < 300; i++)
			printf \"@ 0x%x 0x%x\n  t*: 1: %d [0: 0]\n\", 4096 + 16 * i, 4096 + 16 * ((i + 1) % 300) + 1, 1000 + i
	}" >big.heap
}

test_expect_success DOT,XML 'a graph larger than a pipe buffer goes through graphviz' '
	write_big &&
	"$JHEAP" --dot --nodecount=1000 --nodefraction=0 big.heap >big.dot 2>err &&
	test $(wc -c <big.dot) -gt 70000 &&
	"$JHEAP" --svg --nodecount=1000 --nodefraction=0 --edgefraction=0 big.heap >big.svg 2>err &&
	test_must_be_empty_ err &&
	xml_ok big.svg &&
	test $(grep -c "<g id=\"node" big.svg) -eq 301 # and the legend
'

test_expect_success 'no graphviz on PATH: a clear message, exit 1' '
	mkdir -p empty &&
	PATH=$PWD/empty test_expect_code_ 1 "$JHEAP" --svg -o g.svg "$W" "$WH" 2>err &&
	grep "^jheap: --svg needs graphviz'"'"'s '"'"'dot'"'"' program: install graphviz (apt-get install graphviz)$" err
'

test_expect_success 'graphviz failing: its exit status and message are reported' '
	mkdir -p fake &&
	printf "#!/bin/sh\ncat >/dev/null\necho \"Error: boom\" >&2\nexit 3\n" >fake/dot &&
	chmod +x fake/dot &&
	PATH=$PWD/fake:$PATH test_expect_code_ 1 "$JHEAP" --svg -o g.svg "$W" "$WH" 2>err &&
	grep "^jheap: graphviz .dot -Tsvg. failed (exit status 3): Error: boom$" err
'

test_expect_success 'graphviz exiting without reading: an error, not a SIGPIPE death' '
	mkdir -p fake2 &&
	printf "#!/bin/sh\nexec 0<&-\nsleep 0.3\nexit 0\n" >fake2/dot &&
	chmod +x fake2/dot &&
	write_big &&
	"$JHEAP" --dot --nodecount=1000 --nodefraction=0 big.heap >big.dot 2>/dev/null &&
	test $(wc -c <big.dot) -gt 70000 &&
	PATH=$PWD/fake2:$PATH test_expect_code_ 1 "$JHEAP" --svg --nodecount=1000 \
		--nodefraction=0 big.heap >out 2>err &&
	grep "^jheap: graphviz .dot -Tsvg. stopped reading its input$" err
'

test_expect_success SCRIPT '--png and --pdf refuse to write to a terminal' '
	{ script -qec "$JHEAP --png $W $WH; echo status=\$?" /dev/null >out 2>&1 || :; } &&
	grep "not writing it to a terminal; use -o FILE" out &&
	grep "status=2" out &&
	{ script -qec "$JHEAP --pdf $W $WH; echo status=\$?" /dev/null >out 2>&1 || :; } &&
	grep "^jheap: --pdf writes binary data" out &&
	grep "status=2" out
'

test_done

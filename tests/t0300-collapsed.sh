#!/bin/bash
test_description='jheap --collapsed writes folded stacks that flame-graph tools read

Rules checked (output/collapsed.c):
 - one line per distinct stack, root first, frames joined by ";", one space,
   an unsigned integer: the chosen value rounded to the nearest integer
   (bytes or objects); lines sorted by the stack text in byte order; no
   line whose weight rounds to 0;
 - every line matches speedscope'"'"'s /^(.*) (\d+)$/ and flamegraph.pl'"'"'s
   /^(.*)\s+?(\d+(?:\.\d*)?)$/, and its stack does not match the latter
   again (flamegraph.pl would take it for the two-column diff form);
 - the weights add up to the --text Total (exact dumps: equal; sampled
   dumps: within one per line, the rounding of unsampled doubles);
 - allocator frames are cut as in --text, inline levels are frames;
 - with --base: "stack BEFORE AFTER" (base value, then base plus change).
Expected values come from the workload tables (tests/workloads.sh), from
jheap --text, from jeprof --collapsed (after removing its <hex> tags and
aggregating its duplicate lines) and from a hand-written symbolized profile.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/workloads.sh"

test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test_need_profiles

test_have_prog "$JEPROF" && test_set_prereq JEPROF
test_have_prog perl && test_set_prereq PERL
test_have_prog flamegraph.pl && test_set_prereq FLAMEGRAPH
# speedscope's own parser, from the npm package that t0350 installs
test_npm_speedscope >/dev/null 2>&1
SPEEDSCOPE_JS=$(ls "$BUILD_DIR"/npm/speedscope/node_modules/speedscope/dist/release/speedscope-*.js 2>/dev/null | head -n 1)
test_have_prog node && [ -n "$SPEEDSCOPE_JS" ] && test_set_prereq SPEEDSCOPE

# folded OUT ARGS...: jheap --collapsed ARGS into OUT, failing on an error.
folded() {
	local out=$1
	shift
	jheap_into "$out" --collapsed "$@"
}

# text_total ARGS...: the number on jheap --text's Total line.
text_total() {
	"$JHEAP" --text "$@" | awk '$1 == "Total:" { print $2; exit }'
}

# check_format FILE [diff]: the line syntax and frame rules above.
check_format() {
	awk -v diff="${2:-}" '
	{
		if (diff != "" && $0 !~ /^.* [0-9]+ [0-9]+$/) { print "not BEFORE AFTER: " $0; bad = 1; next }
		if ($0 !~ /^.* [0-9]+$/) { print "not speedscope syntax: " $0; bad = 1; next }
		stack = $0
		sub(/ [0-9]+$/, "", stack)
		if (diff != "")
			sub(/ [0-9]+$/, "", stack)
		if (diff == "" && stack ~ /[ \t][0-9]+(\.[0-9]*)?$/) { print "ends in a number: " $0; bad = 1 }
		if (diff == "" && $NF == 0) { print "zero weight: " $0; bad = 1 }
		n = split(stack, f, ";")
		for (i = 1; i <= n; i++)
			if (f[i] == "") { print "empty frame: " $0; bad = 1 }
		if (stack ~ /[\001-\037\177]/) { print "control character: " $0; bad = 1 }
	}
	END { if (NR == 0) { print "no lines"; bad = 1 } exit bad }' "$1"
}

# check_sorted FILE [diff]: stacks unique and in byte order.
check_sorted() {
	local strip='s/ [0-9]+$//'
	[ -n "${2:-}" ] && strip='s/ [0-9]+ [0-9]+$//'
	sed -E "$strip" "$1" >"$1.stacks" &&
	LC_ALL=C sort -c -u "$1.stacks"
}

# check_sum FILE TOTAL: the weights add up to TOTAL, within one per line
# when SLACK is "sampled".
check_sum() {
	awk -v total="$2" -v slack="${3:-}" '
	{ s += $NF }
	END {
		d = s - total; if (d < 0) d = -d
		tol = slack == "sampled" ? NR : 0
		if (d > tol) { printf "weights add up to %d, --text Total is %d (tolerance %d)\n", s, total, tol; exit 1 }
	}' "$1"
}

# exact dumps of every workload; prof_accum and sampled dumps of two
for spec in w_basic.exact w_basic.accum w_cpp.exact w_shlib.exact w_threads.exact demo.exact \
	w_basic.sampled demo.sampled w_basic.accum:alloc demo.accum:alloc; do
	heap=$PROFILES/${spec%%:*}.heap
	slack=
	case $spec in *.sampled) slack=sampled ;; esac
	modes="--show_bytes --inuse_objects"
	case $spec in *:alloc) modes="--alloc_space --alloc_objects" ;; esac
	for m in $modes; do
		test_expect_success "${spec%%:*} $m: syntax, order, sum = --text Total" "
			folded out $m \"$heap\" &&
			check_format out &&
			check_sorted out &&
			total=\$(text_total --show_bytes $m \"$heap\") &&
			check_sum out \"\$total\" $slack
		"
	done
done

test_expect_success 'two runs give the same bytes' '
	folded one "$PROFILES/w_cpp.exact.heap" &&
	folded two "$PROFILES/w_cpp.exact.heap" &&
	test_cmp one two &&
	folded one "$PROFILES/demo.sampled.heap" --inuse_objects &&
	folded two "$PROFILES/demo.sampled.heap" --inuse_objects &&
	test_cmp one two
'

# The stacks below main, with the values of testdata/w_basic.c's table.
expect_w_basic_stacks() {
	case $1 in
	space) s=1 ;;
	*) s=0 ;;
	esac
	b() { if [ $s = 1 ]; then echo $(($1 * $2)); else echo "$1"; fi; }
	cat <<-EOF
	main $(b 1 327680)
	main;alloc_aligned $(b 4 16384)
	main;alloc_calloc $(b 40 1024)
	main;alloc_malloc $(b 100 10240)
	main;alloc_memalign $(b 20 3072)
	main;alloc_realloc $(b 10 229376)
	main;caller_a;leaf_alloc $(b 30 5120)
	main;caller_b;leaf_alloc $(b 70 5120)
	main;many_small $(b 10000 64)
	main;recurse $(b 4 2048)
	main;recurse;recurse $(b 4 2048)
	main;recurse;recurse;recurse $(b 4 2048)
	EOF
}

# below_main FILE: the lines through main, with the frames above main cut
# off; fails unless they all share one root path.
below_main() {
	awk '
	{
		i = index($0, ";main;"); if (!i) i = index($0, ";main ")
		if (!i) next
		root = substr($0, 1, i)
		if (seen != "" && root != seen) { print "two root paths: " seen " and " root > "/dev/stderr"; bad = 1 }
		seen = root
		print substr($0, i + 1)
	}
	END { exit bad }' "$1"
}

for v in exact accum; do
	test_expect_success "w_basic.$v: folded stacks and bytes from the table" "
		folded out --show_bytes \"\$PROFILES/w_basic.$v.heap\" &&
		below_main out >actual &&
		expect_w_basic_stacks space >expect &&
		test_cmp expect actual
	"
	test_expect_success "w_basic.$v: folded stacks and objects from the table" "
		folded out --inuse_objects \"\$PROFILES/w_basic.$v.heap\" &&
		below_main out >actual &&
		expect_w_basic_stacks objects >expect &&
		test_cmp expect actual
	"
done

test_expect_success 'w_basic.accum --alloc_space: freed blocks are counted' '
	folded out --alloc_space "$PROFILES/w_basic.accum.heap" &&
	below_main out >actual &&
	expect_w_basic_stacks space |
		sed -e "s/^main;alloc_realloc .*/main;alloc_realloc $((10 * 229376 + 10 * 112))/" >expect &&
	echo "main;transient $((50 * 229376))" >>expect &&
	LC_ALL=C sort -o expect expect &&
	test_cmp expect actual
'

test_expect_success 'the default value is inuse_space in bytes, not MB' '
	folded a "$PROFILES/w_basic.exact.heap" &&
	folded b --show_bytes "$PROFILES/w_basic.exact.heap" &&
	test_cmp a b
'

test_expect_success 'no allocator frame is left (C, C++, shared library, threads)' '
	for w in w_basic w_cpp w_shlib w_threads demo; do
		folded out "$PROFILES/$w.exact.heap" || return 1
		sed -E "s/ [0-9]+$//" out | tr ";" "\n" |
			grep -E "^(malloc|calloc|realloc|free|posix_memalign|aligned_alloc|operator new(\[\])?|operator delete(\[\])?|malloc_usable_size|je_.*|prof_.*|imalloc.*|fallback_impl|newImpl)( \(inline\))?\$|libjemalloc" &&
			{ echo "allocator frames in $w"; return 1; }
	done
	return 0
'

test_expect_success 'w_cpp: inline levels are frames of their own' '
	folded out "$PROFILES/w_cpp.exact.heap" &&
	grep -E ";main;fill_buffers;make_buf \(inline\) $((64 * 4096))\$" out &&
	grep -E ";main;grow_vector;std::vector::push_back \(inline\);.* 524288\$" out &&
	grep -E ";main;make_ints $((30 * 10240))\$" out &&
	grep -E ";main;ns::Holder::add $((200 * 256))\$" out
'

# jeprof prints one line per address-level stack with <hex> nm tags; with
# the tags removed and equal stacks added up, the stacks through main of
# the C workloads (no inlining) are jheap'"'"'s lines exactly.
for w in w_basic demo w_shlib; do
	test_expect_success JEPROF "$w: the stacks through main agree with jeprof --collapsed" "
		test_jeprof jp --collapsed \"\$PROFILES/$w\" \"\$PROFILES/$w.exact.heap\" &&
		sed -E 's/<[0-9a-f]{16}>//g' jp |
			awk '{ n = \$NF; sub(/ [-0-9]+\$/, \"\"); s[\$0] += n } END { for (k in s) if (s[k]) print k, s[k] }' |
			LC_ALL=C sort | grep -E '(^|;)main(;| )' >expect &&
		folded out \"\$PROFILES/$w.exact.heap\" &&
		grep -E '(^|;)main(;| )' out >actual &&
		test_cmp expect actual
	"
done

# A stack that --focus or --ignore drops, or --exclude leaves without a
# frame, is no line at all (it was an "[allocator]" line): the weights
# add up to the flat values --text shows.
test_expect_success 'filtered stacks are left out, not shown as [allocator]' '
	heap=$PROFILES/demo.exact.heap &&
	folded out --focus=cache_store "$heap" &&
	! grep "^\[allocator\]" out &&
	test $(wc -l <out) -eq 1 &&
	grep -E ";cache_store_value 2048000\$" out &&
	folded out2 --ignore=cache_store "$heap" &&
	! grep -e "^\[allocator\]" -e cache_store out2 &&
	"$JHEAP" --text --show_bytes --ignore=cache_store "$heap" |
		awk "NR > 1 { s += \$1 } END { print s }" >flat &&
	awk "{ s += \$NF } END { print s }" out2 >sum &&
	test_cmp flat sum
'

# --- the differential form --------------------------------------------

test_expect_success '--base with the same dump: BEFORE = AFTER = the one-column weight' '
	heap=$PROFILES/w_basic.exact.heap &&
	folded one "$heap" &&
	folded out --base "$heap" "$heap" &&
	check_format out diff &&
	check_sorted out diff &&
	sed -E "s/ ([0-9]+) ([0-9]+)\$/ \\2/" out >after &&
	test_cmp one after &&
	awk "\$(NF - 1) != \$NF { print \"before != after: \" \$0; bad = 1 } END { exit bad }" out
'

test_expect_success '--base sampled vs exact: before/after sides and the change total' '
	base=$PROFILES/w_basic.sampled.heap heap=$PROFILES/w_basic.exact.heap &&
	folded out --base "$base" "$heap" &&
	check_format out diff &&
	check_sorted out diff &&
	awk "{ b += \$(NF - 1); a += \$NF } END { print b; print a; print a - b }" out >sums &&
	before=$(sed -n 1p sums) after=$(sed -n 2p sums) change=$(sed -n 3p sums) &&
	n=$(wc -l <out) &&
	tb=$(text_total --show_bytes "$base") &&
	ta=$(text_total --show_bytes "$heap") &&
	tc=$(text_total --show_bytes --base "$base" "$heap") &&
	for pair in "$before $tb" "$after $ta" "$change $tc"; do
		set -- $pair
		d=$(($1 - $2)); [ $d -lt 0 ] && d=$((-d))
		[ $d -le $((n + 1)) ] || { echo "sum $1, --text says $2"; return 1; }
	done &&
	# the after side of every stack is its one-column weight in the new dump
	folded one "$heap" &&
	awk "\$NF != 0" out | sed -E "s/ ([0-9]+) ([0-9]+)\$/ \\2/" >after &&
	test_cmp one after
'

test_expect_success 'symbolized profile: sanitized names, [allocator], exact lines' '
	write_symbolized &&
	folded actual prof.heap &&
	check_format actual &&
	test_golden collapsed-symbolized actual
'

test_expect_success 'symbolized profile with --base: BEFORE AFTER from the two tables' '
	write_symbolized &&
	folded actual --base prof.heap base.heap &&
	check_format actual diff &&
	test_golden collapsed-symbolized--base actual
'

test_expect_success 'the goldens say what the tables say' '
	cat >expect <<-\EOF &&
	[allocator] 1000
	main::run 32
	main;operator> 96
	main;tmpl::f;semi:colon_12;it'"'"'s&"q" 128
	outer;inner (inline);main;operator< 64
	EOF
	test_cmp expect "$GOLDEN_DIR/collapsed-symbolized" &&
	cat >expect <<-\EOF &&
	[allocator] 1000 1000
	main::run 32 32
	main;operator> 96 192
	main;tmpl::f;semi:colon_12;it'"'"'s&"q" 128 64
	outer;inner (inline);main;operator< 64 0
	EOF
	test_cmp expect "$GOLDEN_DIR/collapsed-symbolized--base"
'

# --- what the real readers make of it ------------------------------------

# flamegraph.pl's parse step (its source, "process and merge frames"):
# prints "stack<TAB>samples<TAB>samples2" per line, or "IGNORED".
fg_parse() {
	perl -ne '
		chomp;
		my ($stack, $samples) = (/^(.*)\s+?(\d+(?:\.\d*)?)$/);
		unless (defined $samples and defined $stack) { print "IGNORED\n"; next }
		my $samples2 = "";
		if ($stack =~ /^(.*)\s+?(\d+(?:\.\d*)?)$/) {
			$samples2 = $samples;
			($stack, $samples) = $stack =~ (/^(.*)\s+?(\d+(?:\.\d*)?)$/);
		}
		print "$stack\t$samples\t$samples2\n";
	' "$1"
}

test_expect_success PERL 'flamegraph.pl'"'"'s parser reads every line, one column or two' '
	write_symbolized &&
	for args in "prof.heap" "$PROFILES/w_cpp.exact.heap" "$PROFILES/demo.sampled.heap" \
		"--lines $PROFILES/w_basic.exact.heap" "--addresses $PROFILES/w_basic.exact.heap"; do
		folded out $args &&
		fg_parse out >parsed &&
		sed -E "s/^(.*) ([0-9]+)\$/\\1\t\\2\t/" out >expect &&
		test_cmp expect parsed || return 1
	done &&
	folded out --base base.heap prof.heap &&
	fg_parse out >parsed &&
	sed -E "s/^(.*) ([0-9]+) ([0-9]+)\$/\\1\t\\2\t\\3/" out >expect &&
	test_cmp expect parsed
'

test_expect_success FLAMEGRAPH 'flamegraph.pl draws the one-column and the diff form' '
	write_symbolized &&
	folded one "$PROFILES/demo.exact.heap" &&
	flamegraph.pl --countname bytes one >one.svg 2>err &&
	! grep -i "ignored" err && grep -q "<svg" one.svg &&
	folded two --base base.heap prof.heap &&
	flamegraph.pl --countname bytes two >two.svg 2>err &&
	! grep -i "ignored" err && grep -q "<svg" two.svg
'

cat >ssparse.js <<-\EOF
// Runs speedscope's own collapsed-stack importer, cut out of its npm
// bundle, on FILE; prints "STACKS SUM EMPTY_FRAMES".
'use strict';
const fs = require('fs');
const [bundle, file] = process.argv.slice(2);
const src = fs.readFileSync(bundle, 'utf8');
const m = /function ([\w$]+)\(([\w$]+)\)\{let ([\w$]+)=\[\];for\(let ([\w$]+) of \2\.splitLines\(\)\)\{let ([\w$]+)=\/\^\(\.\*\) \(\\d\+\)\$\/gm\.exec\(\4\);[^]*?return \3\}/.exec(src);
if (!m) { console.error('the collapsed importer is not in ' + bundle); process.exit(3); }
const parse = new Function('return ' + m[0])();
const lines = fs.readFileSync(file, 'utf8').split('\n');
if (lines[lines.length - 1] === '') lines.pop();
let sum = 0, empty = 0;
const stacks = parse({ splitLines: () => lines });
for (const s of stacks) { sum += s.duration; for (const f of s.stack) if (f.name === '') empty++; }
console.log(`${stacks.length} ${sum} 0${empty ? ' ' + empty : ''}`);
EOF

test_expect_success SPEEDSCOPE 'speedscope'"'"'s importer reads every line and weight' '
	write_symbolized &&
	for args in "prof.heap" "$PROFILES/w_cpp.exact.heap" "$PROFILES/demo.sampled.heap" \
		"--inuse_objects $PROFILES/w_threads.exact.heap"; do
		folded out $args &&
		node "$TRASH_DIRECTORY/ssparse.js" "$SPEEDSCOPE_JS" out >actual &&
		awk "{ s += \$NF } END { print NR, s, 0 }" out >expect &&
		test_cmp expect actual || return 1
	done
'

test_done

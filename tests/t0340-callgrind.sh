#!/bin/bash
test_description='--callgrind files, read by valgrind'"'"'s callgrind_annotate

callgrind_annotate (the valgrind package) must read the --callgrind output of
every workload dump without a warning, and report as PROGRAM TOTALS the
Total of jheap'"'"'s --text --show_bytes report.  Per function, its exclusive
costs must be the --text flat values and its --inclusive=yes costs the cum
values (checked for w_basic against the workload table too), file names
and line numbers must point into the workload source, call counts are the
objects allocated through a call, and the format'"'"'s name compression must
define every id before it is used.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/workloads.sh"

test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test_need_profiles

test_have_prog callgrind_annotate && test_set_prereq CGA

W=$PROFILES/w_basic
WH=$PROFILES/w_basic.exact.heap
WSRC=$SRCDIR/testdata/w_basic.c

# cga OUT CALLGRINDFILE [options]: run callgrind_annotate; it must exit 0
# and say nothing on stderr.
cga() {
	local out=$1 in=$2
	shift 2
	callgrind_annotate --threshold=100 --auto=no "$@" "$in" >"$out" 2>"$out.err" || {
		echo "callgrind_annotate $* $in failed"; cat "$out.err"; return 1; }
	if [ -s "$out.err" ]; then
		echo "callgrind_annotate $* $in warned:"
		cat "$out.err"
		return 1
	fi
}

# cga_total FILE: the PROGRAM TOTALS numbers, commas removed.
cga_total() {
	awk '/PROGRAM TOTALS/ {
		s = ""
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9,]+$/) { gsub(/,/, "", $i); s = s (s == "" ? "" : " ") $i }
		print s
		exit
	}' "$1"
}

# cga_rows FILE: "FUNCTION<TAB>VALUE<TAB>FILE" for each file:function row
# (first event only; "." is 0).
cga_rows() {
	awk '
	/file:function/ { on = 1; getline; next }
	on && NF == 0 { exit }
	on {
		v = $1
		gsub(/,/, "", v)
		if (v == ".") v = 0
		rest = $0
		sub(/^ *[^ ]+ +(\( *[0-9.]+%\) +)?/, "", rest)
		i = index(rest, ":")
		printf "%s\t%s\t%s\n", substr(rest, i + 1), v, substr(rest, 1, i - 1)
	}' "$1"
}

# cga_value FILE FUNCTION: the value of FUNCTION (0 when not listed).
cga_value() {
	F=$2 awk -F '\t' '$1 == ENVIRON["F"] { v = $2; n++ }
		END { if (n > 1) { print "many"; exit } print v + 0 }' <(cga_rows "$1")
}

# text_total FILE: the number on the Total: line of a --text report.
text_total() {
	awk '$1 == "Total:" { print $2; exit }' "$1"
}

# check_names FILE: every "(N)" of the name compression is defined once
# ("(N) name") before it is used, in two id spaces: files (fl fi fe cfl
# cfi) and functions (fn cfn).
check_names() {
	awk '
	/^(fl|fi|fe|cfl|cfi|fn|cfn)=/ {
		key = $0; sub(/=.*/, "", key)
		space = (key == "fn" || key == "cfn") ? "fn" : "fl"
		v = $0; sub(/^[a-z]+=/, "", v)
		if (v !~ /^\([0-9]+\)/) { print NR ": not compressed: " $0; bad = 1; next }
		id = v; sub(/\).*/, "", id); sub(/^\(/, "", id)
		name = v; sub(/^\([0-9]+\) ?/, "", name)
		if (name != "") {
			if ((space, id) in def) { print NR ": (" id ") defined twice"; bad = 1 }
			def[space, id] = name
		} else if (!((space, id) in def)) {
			print NR ": (" id ") used before it is defined: " $0; bad = 1
		}
	}
	END { exit bad }' "$1"
}

# uncompress <FILE: the file with every compressed name written out.
uncompress() {
	awk '
	/^(fl|fi|fe|cfl|cfi|fn|cfn)=\(/ {
		key = $0; sub(/=.*/, "", key)
		space = (key == "fn" || key == "cfn") ? "fn" : "fl"
		v = $0; sub(/^[a-z]+=/, "", v)
		id = v; sub(/\).*/, "", id); sub(/^\(/, "", id)
		name = v; sub(/^\([0-9]+\) ?/, "", name)
		if (name != "") def[space, id] = name
		print key "=" def[space, id]
		next
	}
	{ print }'
}

# callgrind OUT NAME VARIANT [flags]: jheap --callgrind of a workload dump.
callgrind() {
	local out=$1 name=$2 variant=$3
	shift 3
	"$JHEAP" --callgrind "$@" "$PROFILES/$name" "$PROFILES/$name.$variant.heap" >"$out" 2>"$out.err" || {
		echo "jheap --callgrind $* $name.$variant failed"; cat "$out.err"; return 1; }
}

# same_total CGAFILE TEXTFILE SLACK: PROGRAM TOTALS equals the Total line,
# within SLACK (sampled dumps: jheap rounds each cost line, --text
# truncates the sum).
same_total() {
	local a b
	a=$(cga_total "$1")
	b=$(text_total "$2")
	awk -v a="$a" -v b="$b" -v s="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= s) }' ||
		{ echo "PROGRAM TOTALS '$a', --text Total '$b' (slack $3)"; return 1; }
}

while read -r heap bin; do
	base=${heap##*/}
	name=${base%%.*}
	variant=${base#*.}
	variant=${variant%.heap}
	slack=0
	[ "$variant" = sampled ] && slack=50
	test_expect_success CGA "$name.$variant: callgrind_annotate reads it and agrees with the Total" "
		callgrind cg $name $variant &&
		check_names cg &&
		cga out cg &&
		\"\$JHEAP\" --text --show_bytes \"$bin\" \"$heap\" >text &&
		same_total out text $slack
	"
done <"$PROFILES/MANIFEST"

for mode in inuse_objects alloc_space alloc_objects; do
	test_expect_success CGA "--$mode: the event and the Total follow the value" "
		callgrind cg demo accum --$mode &&
		grep '^events: $mode\$' cg &&
		cga out cg &&
		\"\$JHEAP\" --text \$(mode_flags $mode) \"\$PROFILES/demo\" \"\$PROFILES/demo.accum.heap\" >text &&
		same_total out text 0
	"
done

# The functions of w_basic with their flat and cum from the table.
w_basic_functions() {
	expect_w_basic_inuse_space | grep -v "^none "
}

test_expect_success CGA 'w_basic: exclusive cost = flat and inclusive cost = cum, per function' '
	callgrind cg w_basic exact &&
	cga self cg &&
	cga incl cg --inclusive=yes &&
	"$JHEAP" --text --show_bytes "$W" "$WH" >text &&
	rc=0 &&
	while read -r flat cum fn; do
		s=$(cga_value self "$fn") && i=$(cga_value incl "$fn") &&
		t=$(report_row text "$fn") &&
		if [ "$s $i" != "$flat $cum" ] || [ "$t" != "$flat $cum" ]; then
			echo "$fn: table $flat $cum, --text $t, callgrind_annotate $s $i"
			rc=1
		fi
	done < <(w_basic_functions) &&
	return $rc
'

test_expect_success CGA 'every function: callgrind_annotate = --text, flat and cum' '
	for w in w_basic w_cpp w_shlib demo; do
		callgrind cg $w exact &&
		cga self cg &&
		cga incl cg --inclusive=yes &&
		"$JHEAP" --text --show_bytes "$PROFILES/$w" "$PROFILES/$w.exact.heap" >text &&
		# --text rows "flat cum name"; inline rows are the function itself
		# in callgrind, so only rows without "(inline)" whose function has
		# no inline row
		awk "NF >= 6 && \$1 != \"Total:\" {
			n = \$0; for (i = 0; i < 5; i++) sub(/^ *[^ ]+/, \"\", n); sub(/^ /, \"\", n)
			print \$1 \"\t\" \$4 \"\t\" n }" text >rows &&
		grep " (inline)$" rows | cut -f3 | sed "s/ (inline)$//" >inl &&
		rc=0 &&
		while IFS="	" read -r flat cum fn; do
			case $fn in *" (inline)") continue ;; esac
			grep -qxF "$fn" inl && continue
			s=$(cga_value self "$fn") && i=$(cga_value incl "$fn") || return 1
			if [ "$s $i" != "$flat $cum" ]; then
				echo "$w: $fn: --text $flat $cum, callgrind_annotate $s $i"
				rc=1
			fi
		done <rows &&
		test $rc = 0 || return 1
	done
'

test_expect_success 'w_basic: files and lines point into the source' '
	callgrind cg w_basic exact &&
	uncompress <cg >cgu &&
	# main is in the workload source
	grep -B1 "^fn=main\$" cgu >block &&
	# (the path the binary was built from: compare the end of it)
	grep "^fl=/.*/testdata/w_basic.c\$" block &&
	# alloc_malloc'"'"'s cost is on the line of its malloc(10000)
	want=$(grep -n "hold(malloc(10000));" "$WSRC" | cut -d: -f1) &&
	test -n "$want" &&
	grep -A1 "^fn=alloc_malloc\$" cgu | sed -n 2p >line &&
	echo "$want 1024000" >expect &&
	test_cmp expect line &&
	# caller_a calls leaf_alloc on the line of "leaf_alloc(30);"
	want=$(grep -n "leaf_alloc(30);" "$WSRC" | cut -d: -f1) &&
	grep -A4 "^fn=caller_a\$" cgu >block &&
	grep "^cfl=/.*/testdata/w_basic.c\$" block &&
	grep "^$want 153600\$" block &&
	# frames without a source file are in "??", never an empty fl=
	! grep -E "^(fl|fi|fe|cfl|cfi)=\$" cgu &&
	grep -B1 "^fn=_start\$" cgu | grep "^fl=??\$"
'

test_expect_success 'w_basic: calls= is the number of objects allocated through the call' '
	callgrind cg w_basic exact &&
	uncompress <cg >cgu &&
	grep -A4 "^fn=caller_a\$" cgu | grep "^calls=30 " &&
	grep -A4 "^fn=caller_b\$" cgu | grep "^calls=70 " &&
	grep -A1 "^cfn=many_small\$" cgu | grep "^calls=10000 "
'

test_expect_success CGA 'recursion: the inclusive cost counts a function once per stack' '
	callgrind cg w_basic exact &&
	uncompress <cg >cgu &&
	cga incl cg --inclusive=yes &&
	test "$(cga_value incl recurse)" = 24576 &&
	# the recursive call itself carries 0: its cost is in the outer call
	grep -A5 "^fn=recurse\$" cgu >block &&
	grep -A2 "^cfn=recurse\$" block | sed -n 3p >rec &&
	grep " 0\$" rec &&
	grep -A2 "^cfn=recurse\$" cgu | grep -x "[0-9]* 24576"
'

test_expect_success CGA 'w_cpp: inlined functions are functions in their own files' '
	callgrind cg w_cpp exact &&
	cga incl cg --inclusive=yes &&
	cga_rows incl >rows &&
	grep "^fill_buffers	262144	.*/testdata/w_cpp.cc\$" rows &&
	grep "^make_buf	262144	.*/testdata/w_cpp.cc\$" rows &&
	grep "^std::vector::push_back	524288	.*/stl_vector.h\$" rows &&
	! grep "(inline)" cg
'

test_expect_success '--full-names: demangled names with templates and arguments' '
	callgrind cg w_cpp exact --full-names &&
	uncompress <cg >cgu &&
	grep -x "cfn=ns::Holder<Widget>::add(int)" cgu &&
	grep -x "cfn=make_ints()" cgu &&
	callgrind cg w_cpp exact &&
	uncompress <cg >cgu &&
	grep -x "cfn=ns::Holder::add" cgu
'

test_expect_success 'two runs give byte-identical files' '
	for w in w_cpp demo w_threads; do
		callgrind 1 $w accum && callgrind 2 $w accum && cmp 1 2 || return 1
	done
'

test_expect_success CGA '--base: two events, increase - decrease = the Total' '
	"$JHEAP" --callgrind --base "$PROFILES/demo.sampled.heap" "$PROFILES/demo" \
		"$PROFILES/demo.exact.heap" >cg 2>err &&
	grep "^events: inuse_space_increase inuse_space_decrease\$" cg &&
	check_names cg &&
	cga out cg &&
	"$JHEAP" --text --show_bytes --base "$PROFILES/demo.sampled.heap" "$PROFILES/demo" \
		"$PROFILES/demo.exact.heap" >text &&
	totals=$(cga_total out) &&
	inc=${totals% *} dec=${totals#* } &&
	test "$inc $dec" = "$totals" && test "$inc" != "$dec" &&
	awk -v i="$inc" -v d="$dec" -v t="$(text_total text)" -v n="$(grep -c "^[0-9]" cg)" \
		"BEGIN { x = i - d - t; if (x < 0) x = -x; exit !(x <= n) }" ||
	{ echo "PROGRAM TOTALS ${totals:-none}; --text Total $(text_total text)"; return 1; }
'

test_expect_success 'a symbolized profile with odd names (golden)' '
	write_weird &&
	"$JHEAP" --callgrind weird.heap >cg 2>err &&
	check_names cg &&
	test_golden callgrind-weird.out cg
'

test_expect_success CGA 'callgrind_annotate reads the odd names' '
	write_weird &&
	"$JHEAP" --callgrind weird.heap >cg 2>err &&
	cga self cg &&
	test "$(cga_total self)" = 96 &&
	test "$(cga_value self "ctl?x")" = 64 &&
	cga incl cg --inclusive=yes &&
	test "$(cga_value incl "say\"hi\\there")" = 96
'

test_done

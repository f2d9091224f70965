#!/bin/bash
test_description='--raw writes jeprof'"'"'s symbolized profile format

For every workload dump, jheap --raw BINARY DUMP is checked:
 - the layout: "--- symbol", "binary=BINARY", one "0x<16 hex digits> name"
   line per pc in strictly increasing order, "---", "--- heap", then the
   dump itself byte for byte;
 - every address jeprof looks up has a symbol line: the first frame of each
   stack as it is, every other frame minus one (FixCallerAddresses);
 - read back by jheap without the program or its libraries (every path in
   the MAPPED_LIBRARIES section moved to /nonexistent, so nothing can be
   opened), the --text report is the one jheap gives for the dump with the
   binary, byte for byte, with nothing on stderr;
 - read back by jeprof ("jeprof --text RAW", no program argument): the same
   Total as jheap'"'"'s report of the dump, and the same flat and cum for every
   workload function (the names in tests/workloads.sh).  Flat is compared
   too: the frames inside libjemalloc are written as "malloc(...)" so that
   jeprof cuts them as jheap does.  Sampled dumps: jeprof adds the unsampled
   values in another order, so each may differ by 1 (as in t0200).
Also: --raw of a --raw file gives the same file; two runs give the same
bytes; several profiles, --base and standard input are refused; --lines on
a raw file has the same Total but no file:line (the format has none);
a hand-made symbolized profile (leading % command, libjemalloc frames,
a pc shared by a leaf and a caller) against a golden file.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/workloads.sh"

test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test_need_profiles

if test_have_prog "$JEPROF"; then
	test_set_prereq JEPROF
fi

# raw OUT NAME VARIANT: jheap --raw BINARY DUMP, nothing on stderr.
raw() {
	"$JHEAP" --raw "$(workload_binary "$2")" "$PROFILES/$2.$3.heap" >"$1" 2>"$1.err" &&
	test ! -s "$1.err" || {
		echo "jheap --raw failed (exit $?) on $2.$3"
		cat "$1.err"
		return 1
	}
}

# check_layout RAW DUMP BINARY
check_layout() {
	test "$(sed -n 1p "$1")" = "--- symbol" &&
	test "$(sed -n 2p "$1")" = "binary=$3" &&
	# the dump, byte for byte, after the first "--- heap" line
	sed -e '1,/^--- heap$/d' "$1" >embedded &&
	cmp "$2" embedded &&
	# symbol lines: from line 3 to the "---" line
	awk 'NR <= 2 { next }
		$0 == "---" { end = 1; exit }
		# (no {16}: mawk has no intervals)
		$1 !~ /^0x[0-9a-f]+$/ || length($1) != 18 || NF < 2 { print "bad symbol line " NR ": " $0; bad = 1; exit }
		{ if ($1 <= last) { print "not increasing at line " NR; bad = 1; exit }; last = $1; n++ }
		END { if (!end) print "no --- line"; if (!n) print "no symbol lines"; exit bad || !end || !n }' "$1" &&
	test "$(sed -n '/^---$/{n;p;q}' "$1")" = "--- heap"
}

# check_coverage RAW: every pc of the embedded dump has a symbol line.
check_coverage() {
	perl -e '
		no warnings "portable";
		my (%sym, $in, @miss, $n);
		while (<>) {
			s/\r?\n$//;
			if (/^--- symbol/) { $in = 1; next }
			if ($in && /^---/) { $in = 0; next }
			if ($in) { $sym{$1} = 1 if /^0x([0-9a-f]{16}) /; next }
			last if /^MAPPED_LIBRARIES:/;
			next unless /^\@\s+(.*)$/;
			my @a = split " ", $1;
			for my $i (0 .. $#a) {
				my $pc = hex($a[$i]) - ($i > 0 ? 1 : 0);
				my $k = sprintf("%016x", $pc);
				$n++;
				push @miss, $k unless $sym{$k};
			}
		}
		die "no stacks\n" unless $n;
		if (@miss) { print "no symbol line for: @miss\n"; exit 1 }
	' "$1"
}

# modes_of VARIANT: the modes compared for a dump.
modes_of() {
	case $1 in
	accum) echo alloc_space alloc_objects ;;
	*) echo inuse_space inuse_objects ;;
	esac
}

# jheap_text OUT MODE FILE...
jheap_text() {
	local out=$1 mode=$2
	shift 2
	# shellcheck disable=SC2046
	"$JHEAP" --text $(mode_flags "$mode") "$@" >"$out" 2>"$out.err" || {
		echo "jheap --text failed (exit $?) on $*"
		cat "$out.err"
		return 1
	}
}

# same_value A B TOL: two "flat cum" pairs (or two empty strings) agree.
same_value() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN {
		if (a == "" || b == "") exit !(a == b)
		split(a, x, " "); split(b, y, " ")
		for (i = 1; i <= 2; i++) { d = x[i] - y[i]; if (d < -t || d > t) exit 1 }
		exit 0
	}'
}

# check_dump NAME VARIANT
check_dump() {
	local name=$1 variant=$2 e bin tol=0 mode fn a b rc=0
	e=$(workload_table "$name")
	[ "$variant" = sampled ] && tol=1
	bin=$(workload_binary "$name")
	raw out.raw "$name" "$variant" &&
	check_layout out.raw "$PROFILES/$name.$variant.heap" "$bin" &&
	check_coverage out.raw &&
	# elsewhere: no program, no libraries
	sed -e '/^MAPPED_LIBRARIES:/,$ s| /| /nonexistent/|' out.raw >moved.raw &&
	grep -q " /nonexistent/" moved.raw || return 1
	for mode in $(modes_of "$variant"); do
		jheap_text orig.$mode "$mode" "$bin" "$PROFILES/$name.$variant.heap" &&
		jheap_text back.$mode "$mode" moved.raw &&
		test_cmp orig.$mode back.$mode &&
		test ! -s back.$mode.err || return 1
		test_have_prereq JEPROF || continue
		# shellcheck disable=SC2046
		"$JEPROF" --text $(mode_flags "$mode") out.raw >je.$mode 2>je.$mode.err || {
			echo "jeprof failed on the raw file:"
			cat je.$mode.err
			return 1
		}
		a=$(report_total orig.$mode) b=$(report_total je.$mode)
		same_value "$a $a" "$b $b" "$tol" || {
			echo "$mode: Total: jheap $a, jeprof on the raw file $b"
			rc=1
		}
		for fn in $("expect_${e}_inuse_space" | cut -d' ' -f3- | sort -u); do
			a=$(report_row orig.$mode "$fn") b=$(report_row je.$mode "$fn")
			same_value "$a" "$b" "$tol" || {
				echo "$mode: row $fn: jheap '$a', jeprof on the raw file '$b'"
				rc=1
			}
		done
	done
	return $rc
}

while read -r heap binary; do
	f=${heap##*/}
	name=${f%%.*} variant=${f#*.}
	variant=${variant%.heap}
	test_expect_success "$name.$variant: --raw layout; jheap and jeprof read it back without the binary" "
		check_dump $name $variant
	"
done <"$PROFILES/MANIFEST"

test_expect_success JEPROF 'w_cpp, demo: jeprof'"'"'s whole report of the raw file is jheap'"'"'s' '
	for w in w_cpp demo; do
		raw r.raw $w exact &&
		jheap_text jh inuse_space "$PROFILES/$w" "$PROFILES/$w.exact.heap" &&
		"$JEPROF" --text --show_bytes r.raw >je 2>je.err &&
		test_cmp jh je || return 1
	done
'

test_expect_success '--raw of a --raw file is the same file; two runs are the same' '
	for w in w_cpp w_shlib; do
		raw one.raw $w exact &&
		raw two.raw $w exact &&
		cmp one.raw two.raw &&
		"$JHEAP" --raw one.raw >again.raw &&
		cmp one.raw again.raw || return 1
	done
'

test_expect_success 'also without the BINARY argument: binary= is the path in the dump' '
	"$JHEAP" --raw "$PROFILES/w_basic.exact.heap" >nb.raw &&
	test "$(sed -n 2p nb.raw)" = "binary=$PROFILES/w_basic" &&
	raw wb.raw w_basic exact &&
	cmp nb.raw wb.raw
'

# expect_refusal WHAT ARGS...: jheap --raw ARGS exits 2 with a message
# containing WHAT and writes nothing on stdout.
expect_refusal() {
	local what=$1 rc
	shift
	"$JHEAP" --raw "$@" >out 2>err </dev/null
	rc=$?
	test "$rc" = 2 && grep -q -e "$what" err && test ! -s out || {
		echo "jheap --raw $*: exit $rc, stdout $(wc -c <out) bytes:"
		cat err
		return 1
	}
}

test_expect_success 'several profiles, --base and standard input are refused' '
	expect_refusal "one PROFILE" "$PROFILES/w_basic.exact.heap" "$PROFILES/w_basic.accum.heap" &&
	expect_refusal "--base" --base="$PROFILES/w_basic.exact.heap" "$PROFILES/w_basic.accum.heap" &&
	{
		"$JHEAP" --raw - <"$PROFILES/w_basic.exact.heap" >out 2>err
		test $? = 2
	} &&
	grep -q "standard input" err && test ! -s out
'

test_expect_success '--lines on a raw file: same Total, no file:line in the format' '
	raw l.raw w_cpp exact &&
	"$JHEAP" --text --lines --show_bytes l.raw >back &&
	"$JHEAP" --text --lines --show_bytes "$PROFILES/w_cpp" "$PROFILES/w_cpp.exact.heap" >orig &&
	test "$(report_total back)" = "$(report_total orig)" &&
	awk "NF >= 6 && \$1 != \"Total:\" && \$NF != \"??:0\" { print; bad = 1 } END { exit bad }" back
'

# A symbolized profile made by hand: a % command first, frames inside
# libjemalloc (one not yet written as malloc(...), one already), a pc that
# is both a leaf (0x...1249) and a caller (0x...124a - 1).
make_hand_profile() {
	printf "%%warn made by hand\n--- symbol\nbinary=/opt/app/prog\n" &&
	printf "0x0000555500001233 main\n0x0000555500001249 outer--inner\n" &&
	printf "0x00007f0000001010 libjemalloc.so.2+0x1010\n" &&
	printf "0x00007f0000002000 malloc(libjemalloc.so.2+0x2000)\n---\n--- heap\n" &&
	printf "heap_v2/1\n  t*: 2: 128 [0: 0]\n" &&
	printf "@ 0x7f0000001010 0x7f0000002001 0x55550000124a 0x555500001234\n  t*: 1: 64 [0: 0]\n" &&
	printf "@ 0x555500001249 0x555500001234\n  t*: 1: 64 [0: 0]\nMAPPED_LIBRARIES:\n" &&
	printf "555500000000-555500002000 r-xp 00000000 00:00 0 /opt/app/prog\n" &&
	printf "7f0000000000-7f0000003000 r-xp 00000000 00:00 0 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n"
}

test_expect_success 'hand-made symbolized profile (golden)' '
	make_hand_profile >hand.heap &&
	"$JHEAP" --raw hand.heap >hand.raw 2>err &&
	test_golden raw-hand.txt hand.raw &&
	"$JHEAP" --text --show_bytes hand.raw >back 2>/dev/null &&
	check_total back 128 &&
	check_rows back <<-EOF
	128 128 inner (inline)
	0 128 outer
	0 128 main
	EOF
'

test_expect_success JEPROF 'jeprof cuts the malloc(...) frames of the hand-made profile' '
	"$JEPROF" --text --show_bytes hand.raw >je 2>/dev/null &&
	check_total je 128 &&
	check_rows je <<-EOF
	128 128 inner (inline)
	0 128 main
	EOF
'

test_done

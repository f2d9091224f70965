#!/bin/bash
test_description='a fleet: many dumps summed and compared by symbol, streamed; labels

A small fleet is made at test time from a workload dump by
bench/dumptool.c fleet: processes of one program, each with its own
address layout (its mappings moved by random numbers of pages), each
writing dumps of a random part of the stacks.  Checked against the dumps
one by one (jheap on each, and the awk unsampling of lib.sh: heap_sum):
 - the sum of the fleet by symbol equals the sum of the per-dump reports,
   row by row, though no two processes share an address;
 - --base between two fleets equals the per-dump sums subtracted;
 - the streamed load (from JHEAP_STREAM_MIN inputs) gives the usual
   load'"'"'s bytes;
 - a dump that cannot be read is named and skipped (exit status 1), or
   stops the run with --strict;
 - labels (--label, --label-from-path) reach go tool pprof -tags and
   -tagfocus through --proto, and --tagfocus/--tagignore select the
   samples they name;
 - a progress bar on a terminal.
Values are sums of unsampled fractions that each report truncates: a
per-row comparison allows one unit per dump.'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no jheap binary at $JHEAP yet (run make)"
test_need_profiles
H=$PROFILES/w_basic.exact.heap
S=$PROFILES/w_basic.sampled.heap
test -s "$H" && test -s "$S" || test_skip "no w_basic dumps in $PROFILES"

cc -std=gnu11 -O2 -D_GNU_SOURCE -I"$SRCDIR" -o dumptool "$SRCDIR/bench/dumptool.c" 2>cc.err ||
	test_skip "bench/dumptool.c does not build: $(head -n 1 cc.err)"
export JHEAP_STREAM_MIN=2

# rows_sum OUT FILE...: the rows (flat and cum by name) of the --text
# reports FILE... added up, and the Total
rows_sum() {
	local out=$1
	shift
	awk '$1 == "Total:" { t += $2; next }
	     NF >= 6 { n = $6; for (i = 7; i <= NF; i++) n = n " " $i; f[n] += $1; c[n] += $4 }
	     END { printf "Total %d\n", t; for (k in f) printf "%s\t%d\t%d\n", k, f[k], c[k] }' "$@" |
		sort >"$out"
}

# rows_close A B TOL: the same names, every value within TOL
rows_close() {
	awk -F'\t' -v tol="$3" '
	function abs(x) { return x < 0 ? -x : x }
	NR == FNR { split($0, a, "\t"); want[a[1]] = $0; next }
	{
		if (!($1 in want)) { print "unexpected row: " $0; bad = 1; next }
		split(want[$1], w, "\t"); seen[$1] = 1
		if ($1 ~ /^Total/) { split($1, x, " "); split(w[1], y, " ")
			if (abs(x[2] - y[2]) > tol) { print "total: " y[2] " expected, got " x[2]; bad = 1 }
			next }
		if (abs($2 - w[2]) > tol || abs($3 - w[3]) > tol) { print "row " $1 ": expected " w[2] "/" w[3] ", got " $2 "/" $3; bad = 1 }
	}
	END { for (k in want) if (!(k in seen)) { print "missing row: " k; bad = 1 } exit bad }' "$1" "$2"
}

test_expect_success 'a fleet of three processes, each its own layout' '
	mkdir -p A B &&
	./dumptool fleet "$H" 3 2 9 1 A relA >/dev/null &&
	./dumptool fleet "$S" 2 2 9 2 B relB >/dev/null &&
	test $(ls A | wc -l) = 6 && test $(ls B | wc -l) = 4 &&
	for f in A/*.00.heap; do grep -A1 "^MAPPED_LIBRARIES:" "$f" | tail -n 1; done | cut -d- -f1 | sort -u >starts &&
	test $(wc -l <starts) = 3
'

test_expect_success 'the sum by symbol equals the dumps summed one by one' '
	"$JHEAP" --show_bytes --nodecount=1000 A/*.heap >fleet 2>err &&
	! grep -q . err &&
	mkdir -p per &&
	for f in A/*.heap; do "$JHEAP" --show_bytes --nodecount=1000 "$f" >"per/${f#*/}.txt" || return 1; done &&
	rows_sum expected per/relA.*.txt &&
	sed -n "s/^Total: \([0-9]*\) B/Total: \1/p; /^Total/d; p" fleet | rows_sum got /dev/stdin &&
	rows_close expected got 6 &&
	want=$(for f in A/*.heap; do heap_sum "$f" inuse_space; done | awk "{ s += \$1 } END { printf \"%d\", s }") &&
	test "$(report_total fleet)" = "$want"
'

test_expect_success 'one row per function, not one per process' '
	"$JHEAP" --show_bytes --nodecount=1000 "$H" >one &&
	test $(grep -c "^ *[0-9]" fleet) -le $(grep -c "^ *[0-9]" one) &&
	"$JHEAP" --collapsed A/*.heap >fleet.folded &&
	test $(wc -l <fleet.folded) -le $(grep -c "^@" "$H")
'

test_expect_success 'the streamed load gives the usual load'"'"'s reports' '
	for m in --text --collapsed --traces --callgrind "--lines --text" "--addresses --text"; do
		JHEAP_STREAM_MIN=1000 "$JHEAP" $m A/*.heap B/*.heap >usual || return 1
		"$JHEAP" $m A/*.heap B/*.heap >streamed || return 1
		test_cmp usual streamed || return 1
	done
'

test_expect_success 'one thread or two: the same stack reports' '
	for m in --collapsed --flamegraph --speedscope --traces --tree --callgrind; do
		JHEAP_THREADS=1 "$JHEAP" $m A/*.heap B/*.heap >one || return 1
		JHEAP_THREADS=2 "$JHEAP" $m A/*.heap B/*.heap >two || return 1
		test_cmp one two || return 1
	done
'

test_expect_success '--base by symbol: the per-dump sums subtracted' '
	bases=$(for f in A/*.heap; do printf -- "--base=%s " "$f"; done) &&
	"$JHEAP" --show_bytes --nodecount=1000 B/*.heap $bases >diff &&
	for f in B/*.heap; do "$JHEAP" --show_bytes --nodecount=1000 "$f" >"per/${f#*/}.txt" || return 1; done &&
	rows_sum b per/relB.*.txt && rows_sum a per/relA.*.txt &&
	join -t "	" -a1 -a2 -e0 -o 0,1.2,1.3,2.2,2.3 b a |
		awk -F"\t" "/^Total/ { split(\$1, x, \" \"); print \"Total \" 0; next }
			{ printf \"%s\t%d\t%d\n\", \$1, \$2 - \$4, \$3 - \$5 }" >expected.raw &&
	tb=$(awk "/^Total/ { print \$2 }" b) && ta=$(awk "/^Total/ { print \$2 }" a) &&
	{ echo "Total $((tb - ta))"; grep -v "^Total" expected.raw | awk -F"\t" "\$2 != 0 || \$3 != 0"; } | sort >expected &&
	sed -n "s/^Total: \(-*[0-9]*\) B/Total: \1/p; /^Total/d; p" diff | rows_sum got /dev/stdin &&
	grep -v "	0	0$" got >got.nz &&
	rows_close expected got.nz 10
'

test_expect_success 'a dump that cannot be read is named and skipped (exit status 1)' '
	printf "heap_v2/1\n  t*: 1: 2 [0: 0]\n@ zzzz\n" >A/bad.heap &&
	"$JHEAP" --show_bytes --nodecount=1000 A/*.heap >skipped 2>err
	test $? = 1 &&
	grep -q "^jheap: warning: skipping .*A/bad.heap" err &&
	rm A/bad.heap && test_cmp fleet skipped
'

test_expect_success '--strict stops at it' '
	cp A/relA.host000.pid01000.00.heap A/cut.heap &&
	printf "@ 0x1 nothex\n" >>A/cut.heap && : >A/empty.heap &&
	expect_fail 1 "A/cut.heap" --strict A/*.heap &&
	test ! -s out &&
	"$JHEAP" A/*.heap >/dev/null 2>err; test $? = 1 &&
	test $(grep -c "skipping" err) = 2 &&
	rm A/cut.heap A/empty.heap
'

test_expect_success 'no dump readable: an error' '
	: >e1.heap && : >e2.heap &&
	expect_fail 1 "none of the profiles could be read" e1.heap e2.heap
'

test_expect_success 'labels: --label and --label-from-path, bad ones refused' '
	expect_fail 2 "--label expects KEY=VALUE" --label=host A/*.heap &&
	expect_fail 2 "--label-from-path: bad regular expression" --label-from-path="(" A/*.heap &&
	expect_fail 2 "--tagfocus: bad regular expression" --label=a=b --tagfocus="a=(" A/*.heap
'

# values that are no numbers: pprof reads a number as a range
LFP='(?<release>rel[AB])\.(?<host>host[0-9]+)\.(?<pid>pid[0-9]+)'

test_expect_success '--tagfocus and --tagignore select the samples they name' '
	"$JHEAP" --show_bytes --label-from-path="$LFP" --tagfocus=host=host001 A/*.heap >h1 &&
	"$JHEAP" --show_bytes A/relA.host001.* >only1 &&
	test "$(report_total h1)" = "$(report_total only1)" &&
	"$JHEAP" --show_bytes --label-from-path="$LFP" --tagignore=host=host001 A/*.heap >not1 &&
	"$JHEAP" --show_bytes A/relA.host000.* A/relA.host002.* >only02 &&
	test "$(report_total not1)" = "$(report_total only02)" &&
	"$JHEAP" --show_bytes --label-from-path="$LFP" --tagfocus=relB A/*.heap B/*.heap >bonly &&
	"$JHEAP" --show_bytes B/*.heap >ball &&
	test "$(report_total bonly)" = "$(report_total ball)" &&
	"$JHEAP" --show_bytes --label-from-path="$LFP" --tagfocus=nosuchkey=. A/*.heap >none &&
	test "$(report_total none)" = 0
'

test_expect_success '--label applies to the profiles after it' '
	"$JHEAP" --show_bytes A/relA.host000.* --label=zone=b A/relA.host001.* --label=zone=c \
		A/relA.host002.* --tagfocus=zone=b >zb &&
	test "$(report_total zb)" = "$(report_total only1)"
'

test_have_prog go && test_set_prereq GO
TOOLS=$BUILD_DIR/tools
export HOME=$TRASH_DIRECTORY GOPATH=$TRASH_DIRECTORY/go GOCACHE=$TOOLS/gocache GOFLAGS=
export PPROF_BINARY_PATH=$TRASH_DIRECTORY/no-binaries PPROF_TMPDIR=$TRASH_DIRECTORY

test_expect_success GO 'go tool pprof -tags reads the labels of --proto' '
	"$JHEAP" --proto -o l.pb --label dc=eu --label-from-path="$LFP" A/*.heap B/*.heap &&
	go tool pprof -symbolize=none -tags l.pb >tags 2>tags.err &&
	grep -q "^ *dc: Total" tags && grep -q ": eu$" tags &&
	for k in release host pid; do grep -q "^ *$k: Total" tags || return 1; done &&
	for v in relA relB host000 host001 host002 pid01000 pid01007 pid01014; do
		grep -q ": $v$" tags || return 1
	done
'

# the bytes of the samples pprof -top keeps with a -tagfocus (its
# "accounting for" figure: "of ... total" is all the samples')
pprof_total() {
	go tool pprof -symbolize=none -sample_index=inuse_space -unit=B -nodefraction=0 -top "$@" 2>&1 |
		sed -n "s/^Showing nodes accounting for \([0-9]*\)B, .*/\1/p"
}

test_expect_success GO 'go tool pprof -tagfocus keeps the samples --tagfocus keeps' '
	for f in host=host001 release=relB pid=pid01000; do
		p=$(pprof_total -tagfocus=$f l.pb) &&
		"$JHEAP" --show_bytes --label-from-path="$LFP" --tagfocus=$f A/*.heap B/*.heap >j &&
		j=$(report_total j) &&
		echo "$f: pprof $p jheap $j" &&
		test -n "$p" && test $((p - j)) -le 40 && test $((j - p)) -le 40 || return 1
	done
'

test_expect_success GO 'the same stack from two hosts stays two samples' '
	go tool pprof -symbolize=none -traces l.pb >traces 2>/dev/null &&
	grep -c "^ *host:" traces >n.host &&
	test $(cat n.host) -gt $(grep -c "^@" "$H")
'

test_have_prog script && test_set_prereq SCRIPT
test_expect_success SCRIPT 'a progress bar on a terminal' '
	timeout -k 5 300 script -qfec "JHEAP_PROGRESS_AFTER=0 \"$JHEAP\" A/*.heap B/*.heap >report" /dev/null \
		</dev/null >tty.out &&
	grep -q "jheap: \[#*\.*\] [0-9]* of 10 profiles" tty.out &&
	grep -q "\[##############################\] 10 of 10 profiles" tty.out &&
	"$JHEAP" A/*.heap B/*.heap >expected && test_cmp expected report
'

test_done

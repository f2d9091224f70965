#!/bin/bash
test_description='the parser reads every dump format into the model (golden model dumps)'
. "$(dirname "$0")/lib.sh"

DUMPMODEL=$BUILD_DIR/tests/tools/dumpmodel
[ -x "$DUMPMODEL" ] || test_skip "no $DUMPMODEL (make unit)"
FIXTURES=$SRCDIR/testdata/parse

# Each golden was checked by hand: unsampled values recomputed with the
# formula of spec section 2 (e.g. crlf.heap's 2: 200000 at R=524288 gives
# 11.517530 objects and 1151752.988586 bytes), thread names, mapping kinds,
# "(deleted)" stripped, leaf flags and the main executable.
for f in crlf v2_accum gperf_v1 symbolized truncated truncated_record; do
	test_expect_success "model of $f.heap" '
		(cd "$FIXTURES" && "$DUMPMODEL" '$f'.heap) >actual
		test_golden parse-'$f'.txt actual
	'
done

test_expect_success 'CRLF and LF dumps give the same model' '
	(cd "$FIXTURES" && "$DUMPMODEL" crlf.heap) >crlf.txt &&
	tr -d "\r" <"$FIXTURES/crlf.heap" >lf.heap &&
	"$DUMPMODEL" lf.heap | sed "s/lf.heap/crlf.heap/" >lf.txt &&
	test_cmp crlf.txt lf.txt
'

# A large heap_v2 body is parsed in two threads (the second from the first
# stack line after the middle) and the halves joined; nothing may depend
# on it.  big.heap: over 4 MiB of body (the default threshold), period
# 524288 (unsampled values are not integers, so sums depend on their
# order), every fifth record repeats an earlier stack, threads repeat
# within records, accumulated counts, a header with a thread name, and
# v2_accum.heap's maps.
test_expect_success 'make a dump with a body over 4 MiB' '
	cat >big.awk <<-\EOF &&
	BEGIN {
		print "heap_v2/524288"
		print "  t*: 90000: 123456789 [180000: 987654321]"
		print "  t0: 40000: 23456789 [80000: 87654321]"
		print "  t3: 50000: 100000000 [100000: 900000000] a worker"
		for (k = 0; k < 64000; k++) {
			j = k % 5 == 4 ? k - 3 : k
			# (mawk prints %x in 32 bits only)
			printf "@ 0x7f000000%04x 0x55550000%04x 0x55550000%04x 0x%x\n",
				4112 + (j % 8) * 16, 4096 + (j * 7) % 4096, 4096 + (j * 13) % 4096, 65536 + j
			printf "  t*: %d: %d [%d: %d]\n", k % 9 + 1, (k * 37) % 100000 + 64,
				(k % 3 ? 0 : k % 9 + 2), (k % 3 ? 0 : (k * 37) % 100000 + 4096)
			printf "  t%d: %d: %d [0: 0]\n", k % 4, k % 9 + 1, (k * 37) % 100000 + 64
			if (k % 7 == 0)
				printf "  t%d: 1: 4096 [0: 0]\n", k % 4
		}
		print ""
	}
	EOF
	awk -f big.awk </dev/null >big.heap &&
	sed -n "/^MAPPED_LIBRARIES:/,\$p" "$FIXTURES/v2_accum.heap" >>big.heap &&
	grep -q "^@ 0x7f0000001010 0x555500001000 0x555500001000 0x10000\$" big.heap &&
	test $(wc -c <big.heap) -gt 4300000
'

# same_both NAME ARGS...: jheap ARGS with JHEAP_THREADS=1 and =2 give the
# same exit status, standard output and standard error.
same_both() {
	local name=$1 rc1 rc2
	shift
	JHEAP_THREADS=1 "$JHEAP" "$@" >"$name.1" 2>"$name.1.err"
	rc1=$?
	JHEAP_THREADS=2 "$JHEAP" "$@" >"$name.2" 2>"$name.2.err"
	rc2=$?
	[ $rc1 = $rc2 ] || { echo "exit status $rc1 with one thread, $rc2 with two"; return 1; }
	test_cmp "$name.1" "$name.2" && test_cmp "$name.1.err" "$name.2.err"
}

test_expect_success 'a large dump: parsed in two threads only when allowed' '
	JHEAP_THREADS=2 "$DUMPMODEL" big.heap >model.2 2>model.2.err &&
	grep -q "^dumpmodel: big.heap: parsed in two threads\$" model.2.err &&
	JHEAP_THREADS=1 "$DUMPMODEL" big.heap >model.1 2>model.1.err &&
	! grep -q "two threads" model.1.err &&
	test_cmp model.1 model.2 &&
	JHEAP_THREADS=2 JHEAP_PARSE_SPLIT_MIN=99999999 "$DUMPMODEL" big.heap >model.3 2>model.3.err &&
	! grep -q "two threads" model.3.err
'

test_expect_success 'a large dump: --raw, --text and --collapsed the same with one or two threads' '
	same_both raw --raw big.heap &&
	grep -q "^--- heap\$" raw.1 &&
	same_both text --text --show_bytes big.heap &&
	same_both collapsed --collapsed --inuse_objects big.heap
'

test_expect_success 'a large dump cut in its second half: the same error either way' '
	head -c 4000000 big.heap >cut.heap &&
	same_both cut --raw cut.heap &&
	grep -q "^jheap: cut.heap:121935: expected .\[. before the accumulated counts\$" cut.1.err &&
	awk "/^@/ { n++ } { print } n == 50000 { exit }" big.heap >cut2.heap &&
	same_both cut2 --raw cut2.heap &&
	grep -q "^jheap: cut2.heap:$(wc -l <cut2.heap): stack record has no .t\*:. counts line" cut2.1.err
'

test_expect_success 'a large dump without its maps: the same warning either way' '
	sed "/^MAPPED_LIBRARIES:/,\$d" big.heap >nomaps.heap &&
	same_both nomaps --text nomaps.heap &&
	grep -q "^jheap: warning: nomaps.heap:$(wc -l <nomaps.heap): no MAPPED_LIBRARIES" nomaps.1.err
'

# the workload dumps (made here when missing: a fresh clone has none yet)
test_need_profiles

# The workload dumps are small: JHEAP_PARSE_SPLIT_MIN=0 splits them.
test_expect_success 'workload dumps split at any size: --raw the same' '
	while read -r heap bin; do
		JHEAP_PARSE_SPLIT_MIN=0 same_both "$(basename "$heap")" --raw "$bin" "$heap" ||
			return 1
	done <"$PROFILES/MANIFEST"
'

test_done

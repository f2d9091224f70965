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

test_done

#!/bin/bash
test_description='--text options: --cum, --files, --addresses, --keep-allocator-frames, --version, a golden report'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_need_profiles
H=$PROFILES/w_basic.exact.heap

test_expect_success '--version' '
	"$JHEAP" --version >out && grep -qx "jheap [0-9][0-9.]*" out
'

# w_basic: main's cum is 4989952 (testdata/w_basic.c's table); its callers
# up to _start carry the same cum; ties sort by name in byte order.
test_expect_success '--cum sorts by cumulative value, ties by name' '
	"$JHEAP" --show_bytes --cum "$H" | sed -n 2,5p | awk "{ print \$4, \$6 }" >out &&
	printf "%s\n" "4989952 __libc_start_call_main" "4989952 __libc_start_main_impl" \
		"4989952 _start" "4989952 main" >expected &&
	test_cmp expected out
'

test_expect_success '--files: one row per source file; w_basic.c holds every workload byte' '
	"$JHEAP" --show_bytes --files "$H" >out &&
	grep -E "^ 4989952 +[0-9.]+% +[0-9.]+% +4989952 +[0-9.]+% .*/testdata/w_basic\.c\$" out
'

test_expect_success '--addresses: address, function and file:line per row' '
	"$JHEAP" --show_bytes --addresses "$H" >out &&
	grep -E "^ 1024000 .* [0-9a-f]{16} alloc_malloc .*/testdata/w_basic\.c:[0-9]+\$" out &&
	test $(grep -c " alloc_malloc " out) -eq 1
'

test_expect_success '--lines: the call lines of leaf_alloc callers' '
	"$JHEAP" --show_bytes --lines "$H" >out &&
	a=$(grep -n "leaf_alloc(30);" "$SRCDIR/testdata/w_basic.c" | cut -d: -f1) &&
	grep -E "^ +0 .* 153600 .* caller_a .*w_basic\.c:$a\$" out
'

test_expect_success '--keep-allocator-frames: libjemalloc frames are the leaves' '
	"$JHEAP" --show_bytes --keep-allocator-frames "$H" >out &&
	sed -n 2p out | grep -q "libjemalloc.so.2+0x" &&
	! "$JHEAP" --show_bytes "$H" | grep -q libjemalloc
'

# Checked by hand against testdata/w_basic.c's table: each workload
# function's flat and cum, Total 5071872 = 4989952 + libstdc++'s 81920.
test_expect_success 'the whole report (golden)' '
	"$JHEAP" --show_bytes "$H" >out &&
	test_golden text-w_basic.exact--show_bytes out
'

test_done

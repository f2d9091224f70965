#!/bin/bash
test_description='libstdc++'"'"'s operator new over a jemalloc that does not define it: its frames are cut by name

Debian'"'"'s libjemalloc defines operator new itself, so in a dump of a C++
program preloaded with it, operator new lies in the allocator'"'"'s library
and is cut for that.  Here jemalloc is linked in statically under the je_
prefix without its C++ operators (as Redis bundles it; built by
tests/tools/build-jemalloc-je.sh), and testdata/w_newje.cc forwards malloc
to it: operator new is libstdc++'"'"'s, in libstdc++.so, and only the
allocator name list can tell that it is an allocator frame.  Its callers
are the rows, with what the program allocated (the table in w_newje.cc).'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_have_prog g++ || test_skip "no g++"
BUILD_JE=$TEST_DIRECTORY/tools/build-jemalloc-je.sh
why=$(bash "$BUILD_JE" --check) || test_skip "$why"

test_expect_success 'build w_newje on a je_ jemalloc without operator new, and dump it' '
	test_step "building jemalloc with the je_ prefix (tests/tools/build-jemalloc-je.sh, about a minute once)" &&
	je=$(bash "$BUILD_JE") &&
	g++ -O0 -g -I"$je/include" -o w_newje "$SRCDIR/testdata/w_newje.cc" \
		"$je/lib/libjemalloc_pic.a" -lpthread -ldl -lm &&
	# operator new comes from libstdc++ (undefined here), not from jemalloc
	nm -C w_newje | grep " U operator new(unsigned long)" &&
	! nm -C w_newje | grep " [TW] operator new(unsigned long)\$" &&
	! grep -q libjemalloc w_newje &&
	JE_MALLOC_CONF=prof:true,lg_prof_sample:0 timeout 120 ./w_newje "$PWD/newje.heap" >out &&
	test "$(cat out)" = "$PWD/newje.heap" &&
	grep -q "^MAPPED_LIBRARIES:" newje.heap &&
	! grep -q "libjemalloc" newje.heap
'

test_expect_success 'the stacks hold libstdc++'"'"'s operator new above malloc' '
	"$JHEAP" --collapsed --keep-allocator-frames ./w_newje newje.heap >keep 2>keep.err &&
	grep -q ";make_array;operator new;malloc;je_malloc[; ]" keep &&
	grep -q ";make_widgets;operator new;malloc;je_malloc[; ]" keep
'

test_expect_success 'operator new is cut: its callers are the rows, with their bytes' '
	"$JHEAP" --text --show_bytes ./w_newje newje.heap >text 2>err &&
	check_rows text <<-\EOF
	327680 327680 make_array
	205312 205312 make_widgets
	none - operator new
	none - malloc
	EOF
'

test_expect_success 'and in every stack of every format' '
	for f in --collapsed --traces --tree --callgrind --dot; do
		"$JHEAP" $f ./w_newje newje.heap >out 2>err || return 1
		! grep -q "operator new" out || { echo "operator new in $f:"; grep "operator new" out; return 1; }
	done &&
	"$JHEAP" --collapsed ./w_newje newje.heap >collapsed &&
	grep -q ";main;make_array 327680\$" collapsed &&
	grep -q ";main;make_widgets 205312\$" collapsed
'

test_done

#!/bin/bash
test_description='a gperftools heap profile of Debian'"'"'s -O2 python3.11: every frame is a return address, the first one too

gperftools'"'"' heap profiler records the return address into its caller as
a stack'"'"'s first frame, so jheap looks every address of a "heap profile:"
dump up at the call (address - 1).  The leaf names must be
llvm-symbolizer --inlining'"'"'s at the call (python3.11-dbg gives the DWARF of
the -O2 build), the totals jeprof'"'"'s.  jeprof looks the first frame up at
the address itself, which lies after the call: it names the function
holding the call (gc_alloc, new_keys_object) instead of the inlined
PyObject_Malloc call in it.'
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3.11
TCMALLOC=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4
LEAFCHECK=$TEST_DIRECTORY/tools/leafcheck.py
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
[ -x "$PY" ] || test_skip "no $PY (python3.11)"
[ -r "$TCMALLOC" ] || test_skip "no $TCMALLOC (libgoogle-perftools4)"
test_have_prog llvm-symbolizer || test_skip "no llvm-symbolizer (llvm)"
test_have_prog c++filt || test_skip "no c++filt (binutils)"
test_have_prog python3 || test_skip "no python3"
id=$(readelf -n "$PY" 2>/dev/null | sed -n "s/.*Build ID: //p")
[ -r "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ] ||
	test_skip "no debug info for $PY (python3.11-dbg)"
test_have_prog "$JEPROF" && test_set_prereq JEPROF

test_expect_success 'a gperftools heap profile of python3.11 (PYTHONMALLOC=malloc, live data)' '
	PYTHONMALLOC=malloc LD_PRELOAD=$TCMALLOC HEAPPROFILE=$TRASH_DIRECTORY/py "$PY" -c "
import json, collections, ctypes
d = [{\"k%d\" % i: list(range(i % 50))} for i in range(2000)]
s = json.dumps(d)
x = [s[i:i+100] for i in range(0, len(s), 100)]
c = collections.Counter(s)
ctypes.CDLL(None).HeapProfilerDump(b\"live\")
" 2>/dev/null &&
	mv py.0001.heap live.heap &&
	head -n 1 live.heap | grep -q "^heap profile: .*@ heapprofile" &&
	grep -q "^MAPPED_LIBRARIES:" live.heap
'

test_expect_success 'every leaf is named as llvm-symbolizer names the call (address - 1)' '
	python3 "$LEAFCHECK" tag live.heap tagged.heap &&
	"$JHEAP" --collapsed tagged.heap >tagged.collapsed &&
	python3 "$LEAFCHECK" measure gperf c tagged.heap tagged.collapsed >agree &&
	cat agree &&
	grep -q "^agree .* (100.0%)\$" agree
'

test_expect_success 'the leaf rows are the inlined allocator calls, not the code after them' '
	"$JHEAP" --text --nodecount=3 live.heap >top &&
	sed -n 2p top | grep -q " PyObject_Malloc (inline)\$" &&
	! grep -E " (gc_alloc|new_keys_object)( \(inline\))?\$" top
'

test_expect_success JEPROF 'the totals are jeprof'"'"'s' '
	for mode in --show_bytes --inuse_objects --alloc_space --alloc_objects; do
		"$JHEAP" --text $mode live.heap | head -n 1 >total.jheap &&
		"$JEPROF" --text $mode "$PY" live.heap 2>/dev/null | head -n 1 >total.jeprof &&
		test_cmp total.jeprof total.jheap || return 1
	done
'

test_expect_success JEPROF 'a record with no stack is left out of the totals, as jeprof does, and said' '
	# gperftools writes "@" and nothing after when it could not unwind;
	# jeprof'"'"'s entry pattern wants a frame, so its totals leave it out
	awk "NR == 2 { print \"     1:       64 [     1:       64] @\" }
	     /^MAPPED_LIBRARIES:/ { print \"     2:      128 [     2:      128] @   \" }
	     { print }" live.heap >nostack.heap &&
	grep -c "@ *\$" nostack.heap >n && echo 2 >n.expect && test_cmp n.expect n &&
	"$JHEAP" --text --show_bytes nostack.heap >text 2>err &&
	head -n 1 text >total.jheap &&
	"$JEPROF" --text --show_bytes "$PY" nostack.heap 2>/dev/null | head -n 1 >total.jeprof &&
	test_cmp total.jeprof total.jheap &&
	"$JHEAP" --text --show_bytes live.heap | head -n 1 >total.live &&
	test_cmp total.live total.jheap &&
	grep -q "nostack.heap:2: 2 records with no stack (192 bytes in use) left out of the totals" err
'

test_expect_success JEPROF '--raw names the first frames for jeprof too' '
	"$JHEAP" --raw live.heap >live.sym &&
	"$JHEAP" --text --show_bytes live.sym >from_raw &&
	"$JHEAP" --text --show_bytes live.heap >direct &&
	test_cmp direct from_raw &&
	"$JEPROF" --text --show_bytes live.sym 2>/dev/null | head -n 4 >jeprof.top &&
	head -n 4 direct >jheap.top &&
	test_cmp jheap.top jeprof.top
'

test_done

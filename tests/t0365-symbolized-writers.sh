#!/bin/bash
test_description='symbolized profiles written by other tools: ClickHouse'"'"'s form

ClickHouse writes jeprof'"'"'s "--- symbol" form itself (SYSTEM JEMALLOC
FLUSH PROFILE'"'"'s ".heap.symbolized" files, system.jemalloc_profile_text):
"??" for what it cannot name, inline frames joined by "--" under their
mangled linkage names, the addresses in hash order, "binary=" when it
knows its path.  tests/tools/chform.py writes each workload dump so
(names from llvm-symbolizer).  Read back, with "binary=" or without, the
report is the dump'"'"'s own with its binary: "??" is never a function
(each such address is looked up as in the dump: in the object when it
is there, else module+offset), inline names are demangled, the rows add
up to Total.  With the objects gone, the unknown addresses stay apart as
module+offset.  A BINARY given with the file: the file'"'"'s names win, with
a note.  C++'"'"'s operator-- is one name.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/workloads.sh"

CHFORM=$TEST_DIRECTORY/tools/chform.py
test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test_have_prog llvm-symbolizer || test_skip "no llvm-symbolizer (llvm)"
test_have_prog c++filt && test_have_prog python3 || test_skip "no c++filt or python3"
test_need_profiles

DUMPS="w_basic.exact w_cpp.exact w_cpp.accum w_shlib.exact w_threads.accum demo.exact"

test_expect_success 'the workload dumps in ClickHouse'"'"'s form, binary= and not' '
	for d in $DUMPS; do
		w=${d%.*} &&
		python3 "$CHFORM" "$PROFILES/$d.heap" $d.ch "$(workload_binary $w)" &&
		python3 "$CHFORM" "$PROFILES/$d.heap" $d.nobin.ch &&
		grep -q "^binary=" $d.ch && ! grep -q "^binary=" $d.nobin.ch &&
		grep -q "^0x[0-9a-f]\{16\} ??\$" $d.ch || return 1
	done &&
	grep -q "^0x[0-9a-f]\{16\} [^ ].*--_Z" w_cpp.exact.ch &&
	grep -q "^0x[0-9a-f]\{16\} make_ints()\$" w_cpp.exact.ch &&
	# hash order: not sorted by address
	grep "^0x" w_cpp.exact.ch >syms && ! sort -c syms 2>/dev/null
'

# same NAME FILE [OPTIONS]: FILE'"'"'s reports are the dump'"'"'s with its binary
same() {
	local d=$1 f=$2 w=${1%.*} modes="--text --show_bytes|--text --inuse_objects|--collapsed"
	shift 2
	case $d in *.accum) modes="$modes|--text --alloc_space --show_bytes" ;; esac
	local IFS='|'
	for m in $modes; do
		IFS=' '
		"$JHEAP" $m "$@" "$(workload_binary $w)" "$PROFILES/$d.heap" >want 2>/dev/null &&
		"$JHEAP" $m "$@" $f >got 2>got.err &&
		test_cmp want got && test ! -s got.err || { echo "$f $m"; return 1; }
		IFS='|'
	done
}

test_expect_success 'read back: the reports of the dump with its binary' '
	for d in $DUMPS; do
		same $d $d.ch && same $d $d.nobin.ch || return 1
	done
'

test_expect_success 'mangled inline names are demangled and shortened' '
	"$JHEAP" --text --show_bytes w_cpp.exact.ch >text &&
	! grep " _Z" text &&
	grep -q " std::__new_allocator::allocate (inline)\$" text &&
	"$JHEAP" --text --full-names w_cpp.exact.ch >full &&
	grep -q " std::__new_allocator<int>::allocate(unsigned long, void const\*) (inline)\$" full
'

test_expect_success 'the rows add up to Total' '
	for d in $DUMPS; do
		"$JHEAP" --text --show_bytes $d.ch >text &&
		awk "NR == 1 { t = \$2 } NR > 1 { s += \$1 } END { if (s != t) { print \"rows\", s, \"Total\", t; exit 1 } }" text ||
			return 1
	done
'

test_expect_success 'objects gone: each unknown address its own module+offset' '
	sed -e "/^MAPPED_LIBRARIES:/,\$ s| /| /nonexistent/|" w_cpp.accum.ch >moved.ch &&
	grep -q " /nonexistent/" moved.ch &&
	# (the objects are gone: warnings, and no answer from the main program)
	{ "$JHEAP" --collapsed --alloc_objects --keep-allocator-frames moved.ch >moved.collapsed 2>/dev/null; test -s moved.collapsed; } &&
	sed "s/ [0-9]*\$//" moved.collapsed | tr ";" "\n" | sort -u >frames &&
	grep -E "^[^ ]+\+0x[0-9a-f]+\$" frames >unknown &&
	test $(wc -l <unknown) -eq $(grep -c " ??\$" moved.ch) &&
	! grep -x "??" frames &&
	{ "$JHEAP" --text --show_bytes moved.ch >text 2>/dev/null; test -s text; } &&
	awk "NR == 1 { t = \$2 } NR > 1 { s += \$1 } END { exit s != t }" text
'

test_expect_success 'BINARY given: the file'"'"'s names win, with a note' '
	sed "s/ make_ints()\$/ renamed_make_ints()/" w_cpp.exact.ch >renamed.ch &&
	"$JHEAP" --text --show_bytes "$PROFILES/w_cpp" renamed.ch >with 2>with.err &&
	"$JHEAP" --text --show_bytes renamed.ch >without &&
	test_cmp without with &&
	grep -q " renamed_make_ints\$" with &&
	grep -q "^jheap: note: the profile is symbolized: the names in it are used, .*w_cpp. only names the addresses it leaves unknown\$" with.err &&
	"$JHEAP" --text --quiet "$PROFILES/w_cpp" renamed.ch >/dev/null 2>quiet.err &&
	test ! -s quiet.err
'

test_expect_success 'operator-- is one name, not two frames' '
	printf "%s\n" "--- symbol" \
		"0x0000000000001000 A::operator--(int)--_ZN2ns12inner_inlineEm" \
		"0x0000000000001fff B::operator-(B const&)--_ZN2ns12outer_inlineEm--_ZN2ns12inner_inlineEm" \
		"---" "--- heap" "heap_v2/1" "@ 0x1000 0x2000" "  t*: 1: 64 [0: 0]" >op.sym &&
	"$JHEAP" --text --show_bytes --full-names op.sym >op.txt &&
	grep -q "^ *64 .* ns::inner_inline(unsigned long) (inline)\$" op.txt &&
	grep -q "^ *0 .* 64 .* A::operator--(int)\$" op.txt &&
	grep -q "^ *0 .* 64 .* B::operator-(B const&)\$" op.txt &&
	grep -q "^ *0 .* 64 .* ns::outer_inline(unsigned long) (inline)\$" op.txt &&
	test $(wc -l <op.txt) = 5
'

test_done

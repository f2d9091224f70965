#!/bin/bash
test_description='finding the program and its libraries: BINARY, copies, strip, debug files, lib_prefix, errors'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_need_profiles

B=$PROFILES/w_basic
H=$PROFILES/w_basic.exact.heap
S=$PROFILES/w_shlib
SH=$PROFILES/w_shlib.exact.heap

# alloc_malloc holds 100 x 10240 bytes (testdata/w_basic.c's table)
has_alloc_malloc() {
	grep -q "^ 1024000 .* alloc_malloc\$" "$1"
}

test_expect_success 'reference report with the binary found from the dump' '
	"$JHEAP" --show_bytes "$H" >ref && has_alloc_malloc ref
'

test_expect_success 'a copy of the binary elsewhere, given on the command line' '
	cp "$B" copy &&
	"$JHEAP" --show_bytes ./copy "$H" >out &&
	test_cmp ref out
'

test_expect_success 'a stripped copy of the binary: its functions by start, a note, exit 0' '
	strip -s -o stripped "$B" &&
	"$JHEAP" --show_bytes ./stripped "$H" >out 2>err &&
	! grep alloc_malloc out &&
	! grep "is it the binary" err &&
	grep "^jheap: note: .\./stripped. is stripped: [0-9.]*% of the bytes are in its functions without names (w_basic+0xSTART); its debug package names them (/usr/lib/debug/.build-id/.*\.debug), as do --debuginfo-dir=DIR and DEBUGINFOD_URLS\$" err &&
	# alloc_malloc (102400 x 10 bytes) is a row of its own, named after
	# where the function starts, as the symbol table of the original says
	start=$(nm "$B" | sed -n "s/^0*\([0-9a-f]*\) T alloc_malloc\$/\1/p") &&
	grep "^ 1024000 .* w_basic+0x$start\$" out
'

test_expect_success 'separate debug info through --debuginfo-dir (build id)' '
	objcopy --only-keep-debug "$B" w_basic.debug &&
	id=$(readelf -n "$B" | sed -n "s/.*Build ID: //p") &&
	mkdir -p dbg/.build-id/${id%${id#??}} &&
	cp w_basic.debug dbg/.build-id/${id%${id#??}}/${id#??}.debug &&
	"$JHEAP" --show_bytes --debuginfo-dir=dbg ./stripped "$H" >out &&
	test_cmp ref out
'

test_expect_success 'separate debug info through .gnu_debuglink next to the binary' '
	mkdir -p link && objcopy --strip-debug "$B" link/w_basic &&
	objcopy --add-gnu-debuglink=w_basic.debug link/w_basic &&
	cp w_basic.debug link/ &&
	"$JHEAP" --show_bytes link/w_basic "$H" >out &&
	test_cmp ref out
'

test_expect_success 'another program as BINARY: names from the one the dump names, warning, exit 1' '
	"$JHEAP" --show_bytes "$PROFILES/w_threads" "$H" >out 2>err
	test $? -eq 1 && cat err &&
	grep "^jheap: warning: .$PROFILES/w_threads. is not the program that wrote the dump: 22 of the 22 return addresses in the dump do not follow a call instruction in it; names are taken from .$B., the program named in the dump\$" err &&
	test_cmp ref out
'

test_expect_success 'a missing binary named in the maps: warning, module+offset names, exit 1' '
	sed "s|$B\$|/nonexistent/w_basic|" "$H" >moved.heap &&
	"$JHEAP" --show_bytes moved.heap >out 2>err
	test $? -eq 1 &&
	grep "cannot open .*/nonexistent/w_basic" err && grep "w_basic+0x" out
'

test_expect_success '--lib_prefix finds a program moved under another root' '
	mkdir -p root/nonexistent && cp "$B" root/nonexistent/w_basic &&
	"$JHEAP" --show_bytes --lib_prefix=$TRASH_DIRECTORY/root/ moved.heap >out &&
	test_cmp ref out
'

test_expect_success '--lib_prefix drops leading folders one at a time' '
	mkdir -p flat && cp "$B" flat/w_basic &&
	"$JHEAP" --show_bytes --lib_prefix=/nowhere,$TRASH_DIRECTORY/flat moved.heap >out &&
	test_cmp ref out
'

test_expect_success 'a "(deleted)" program is read from its path without the suffix' '
	sed "s|$B\$|$B (deleted)|" "$H" >deleted.heap &&
	grep -q "(deleted)" deleted.heap &&
	"$JHEAP" --show_bytes deleted.heap >out &&
	test_cmp ref out
'

test_expect_success 'the shared library of the project is symbolized (names not ending in .so work)' '
	"$JHEAP" --show_bytes "$SH" >ref.sh &&
	cp "$PROFILES/libwshared.so" libwshared.plugin &&
	sed "s|$PROFILES/libwshared.so\$|$TRASH_DIRECTORY/libwshared.plugin|" "$SH" >plugin.heap &&
	grep -q libwshared.plugin plugin.heap &&
	"$JHEAP" --show_bytes plugin.heap >out &&
	test_cmp ref.sh out
'

test_expect_success 'the main program is found from the maps when BINARY is absent (PIE and non-PIE)' '
	"$JHEAP" --show_bytes "$PROFILES/w_basic_nopie.exact.heap" >nopie &&
	has_alloc_malloc nopie &&
	"$JHEAP" --show_bytes "$PROFILES/w_basic_nopie" "$PROFILES/w_basic_nopie.exact.heap" >nopie2 &&
	test_cmp nopie nopie2
'

test_expect_success 'a dump without MAPPED_LIBRARIES still symbolizes a non-PIE BINARY (status 1: cut short)' '
	sed "/^MAPPED_LIBRARIES:/,\$d" "$PROFILES/w_basic_nopie.exact.heap" >nomaps.heap &&
	"$JHEAP" --show_bytes "$PROFILES/w_basic_nopie" nomaps.heap >out 2>err
	test $? -eq 1 &&
	grep "no MAPPED_LIBRARIES" err &&
	grep "^       0 .* 1024000 .* alloc_malloc\$" out &&
	# the leaf is a raw address in libjemalloc, wherever ASLR put it
	# (0x00007e... as well as 0x00007f...)
	grep "^ 5071872 .* 0x0000[0-9a-f]\{12\}\$" out
'

# --add_lib=FILE (jeprof's meaning): FILE's code at its link-time
# addresses.  A non-PIE program's dump without its maps, and no BINARY:
# without --add_lib its addresses stay hex; with it, the program's rows
# are jeprof's (jeprof --add_lib with an unrelated PIE as the program,
# whose fallback entry would otherwise name them).
test_have_prog "$JEPROF" && test_set_prereq JEPROF
test_expect_success '--add_lib: unmapped addresses looked up in FILE as they are' '
	sed "/^MAPPED_LIBRARIES:/,\$d" "$PROFILES/w_basic_nopie.exact.heap" >nomaps.heap &&
	"$JHEAP" -q --show_bytes nomaps.heap >plain
	test $? -eq 1 && ! grep alloc_malloc plain &&
	"$JHEAP" -q --show_bytes --add_lib="$PROFILES/w_basic_nopie" nomaps.heap >added
	test $? -eq 1 &&
	grep -E "^ +0 .* 1024000 .* alloc_malloc\$" added &&
	"$JHEAP" --show_bytes --add_lib="$PROFILES/w_basic" nomaps.heap >/dev/null 2>err
	grep "warning: --add_lib: no address of the profile .* lies in .*w_basic." err &&
	"$JHEAP" --add_lib=no-such-lib nomaps.heap 2>err
	test $? -eq 1 && grep "^jheap: --add_lib: cannot open .no-such-lib." err &&
	"$JHEAP" --add_lib="$PROFILES/demo.exact.heap" nomaps.heap 2>err
	test $? -eq 1 && grep "is not an ELF object file" err
'

test_expect_success JEPROF '--add_lib: the program'"'"'s rows are jeprof'"'"'s' '
	test_jeprof jp --text --show_bytes --add_lib="$PROFILES/w_basic_nopie" "$PROFILES/w_basic" nomaps.heap &&
	grep -v -e "^Total" -e " 0x0000" jp | sort >expect &&
	test $(wc -l <expect) -ge 10 &&
	grep -v -e "^Total" -e " 0x0000" added | sort >actual &&
	test_cmp expect actual
'

test_expect_success 'a missing profile: message naming it, exit 1' '
	"$JHEAP" "$B" no-such.heap 2>err
	test $? -eq 1 && grep "cannot open .no-such.heap.: No such file or directory" err
'

test_expect_success 'a file that is not a heap profile: exit 1' '
	echo "hello" >hello.txt &&
	"$JHEAP" hello.txt 2>err
	test $? -eq 1 && grep "hello.txt:1: not a heap profile" err
'

test_expect_success 'a truncated dump: file and line, exit 1' '
	head -c 300 "$H" >trunc.heap &&
	"$JHEAP" trunc.heap 2>err
	test $? -eq 1 && grep "trunc.heap:[0-9]*: .*truncated" err
'

test_expect_success 'two binaries: usage error, exit 2' '
	"$JHEAP" "$B" "$B" "$H" 2>err
	test $? -eq 2 && grep "not a heap profile; only the first argument may be the program" err
'

test_expect_success '--alloc_space without prof_accum: a clear message, exit 1' '
	"$JHEAP" --alloc_space "$H" 2>err
	test $? -eq 1 && grep "prof_accum" err
'

test_expect_success 'conflicting options: usage error, exit 2' '
	"$JHEAP" --inuse_objects --alloc_space "$H" 2>err
	test $? -eq 2 && grep "at most one of" err &&
	"$JHEAP" --lines --files "$H" 2>err
	test $? -eq 2
'

test_expect_success '-o naming an input is refused and the input is kept' '
	cp "$H" input.heap && cp input.heap before.heap &&
	"$JHEAP" --show_bytes -o input.heap input.heap 2>err
	test $? -eq 2 && grep "refusing to write the report over the input" err &&
	cmp before.heap input.heap
'

test_expect_success '--full-names shows whole demangled names, the same on every run' '
	"$JHEAP" --show_bytes --full-names "$PROFILES/w_cpp.exact.heap" >full1 &&
	"$JHEAP" --show_bytes --full-names "$PROFILES/w_cpp.exact.heap" >full2 &&
	test_cmp full1 full2 &&
	grep -F "std::__new_allocator<int>::allocate(unsigned long, void const*) (inline)" full1 &&
	grep -F " make_ints()" full1
'

test_expect_success 'a write error (full disk) is reported, exit 1' '
	"$JHEAP" "$H" >/dev/full 2>err
	test $? -eq 1 && grep "error writing" err
'

test_done

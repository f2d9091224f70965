#!/bin/bash
test_description='DWARF laid out unusually: functions defined inside their types (rustc up to 1.63), a .debug_aranges section that is cut short, has a terminator in the middle of a list (rustc 1.63 writes one) or leaves code out; every inline chain as llvm-symbolizer --inlining has it, cold and warm

testdata/dwarf/nested.cc has methods of a struct, a class and a union with
always_inline helpers inlined into them.  Built through clang'"'"'s IR with
the definitions moved into the type DIEs and the unit said to be Rust (as
rustc 1.63 wrote every method), and with gcc (which writes .debug_aranges)
then damaged on purpose.  For every byte of the functions, jheap'"'"'s frames
(names, files, lines) are llvm-symbolizer'"'"'s: on the binary itself, or on
the intact gcc build where the damage misleads llvm-symbolizer too.'
. "$(dirname "$0")/lib.sh"

CHAINCHECK=$TEST_DIRECTORY/tools/chaincheck.py
SRC=$SRCDIR/testdata/dwarf/nested.cc
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_have_prog llvm-symbolizer || test_skip "no llvm-symbolizer (llvm)"
test_have_prog python3 || test_skip "no python3"
test_have_prog nm && test_have_prog objcopy || test_skip "no nm or objcopy (binutils)"
test_have_prog clang && test_have_prog clang++ && test_have_prog llvm-dwarfdump && test_set_prereq CLANG
test_have_prog g++ && test_set_prereq GCC

FUNCS="main _Z4sinki _ZN7Counter3addEi _ZN5Meter7measureEi _ZN4Cell4bumpEi"

# check BIN [REF]: jheap's frames at every byte of $FUNCS of BIN are
# llvm-symbolizer's (on REF when given): without the symbol cache, on a
# cold and a warm one, and on a cache that knows the unit from main alone
# (the other functions are then indexed one by one, from the unit's
# top-level functions the cache keeps)
check() {
	python3 "$CHAINCHECK" dump "$1" all.heap $FUNCS &&
	python3 "$CHAINCHECK" dump "$1" main.heap main &&
	"$JHEAP" --no-cache --traces --addresses --full-names "$1" all.heap >nocache &&
	python3 "$CHAINCHECK" compare "$1" nocache ${2:-} &&
	rm -rf .cache &&
	"$JHEAP" --traces --addresses --full-names "$1" all.heap >cold &&
	"$JHEAP" --traces --addresses --full-names "$1" all.heap >warm &&
	test_cmp nocache cold && test_cmp nocache warm &&
	rm -rf .cache &&
	"$JHEAP" --traces --addresses --full-names "$1" main.heap >/dev/null &&
	"$JHEAP" --traces --addresses --full-names "$1" all.heap >known &&
	test_cmp nocache known
}

test_expect_success CLANG 'clang, definitions inside their types in a Rust unit' '
	clang++ -O2 -g -S -emit-llvm -o nested.ll "$SRC" &&
	# the definitions lose their link to the declaration in the type, so
	# LLVM writes each inside the type, as it did for rustc 1.63
	sed -e "s/DW_LANG_C_plus_plus[_0-9]*/DW_LANG_Rust/" \
	    -e "s/, declaration: ![0-9]*//" nested.ll >nested-rust.ll &&
	! grep -q "declaration: !" nested-rust.ll &&
	clang -O2 -g -o nested-rust nested-rust.ll &&
	llvm-dwarfdump --debug-info nested-rust >dies &&
	grep -q "DW_AT_language.*DW_LANG_Rust" dies &&
	for f in add measure bump; do
		llvm-dwarfdump --name=$f --show-parents nested-rust >$f.dies &&
		awk "/DW_TAG_compile_unit/ { t = s = 0 }
		     /DW_TAG_(structure|class|union)_type/ { t = 1 }
		     t && /DW_TAG_subprogram/ { s = 1 }
		     s && /DW_AT_low_pc/ { ok = 1 }
		     END { exit !ok }" $f.dies || return 1
	done
'

test_expect_success CLANG 'functions defined inside their types: every inline chain' '
	check nested-rust
'

# damage HOW: nested-gcc with its .debug_aranges damaged, as nested-HOW
damage() {
	objcopy --dump-section .debug_aranges=aranges nested-gcc &&
	python3 - "$1" aranges aranges.$1 "$(nm nested-gcc | awk "\$3 == \"_ZN7Counter3addEi\" { print \$1 }")" <<-\EOF &&
	import struct, sys
	how, src, dst, add = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4], 16)
	d = bytearray(open(src, "rb").read())
	# the first unit's list: unit_length, version, CU offset, address
	# and segment sizes, then (address, length) pairs from offset
	# 2 * address size on; little-endian machines
	length, = struct.unpack_from("<I", d, 0)
	asize = d[10]
	fmt = "<QQ" if asize == 8 else "<II"
	if how == "cut":
	    d = d[:-3 * asize]
	elif how == "midterm":
	    d[2 * asize:2 * asize] = bytes(2 * asize)
	    struct.pack_into("<I", d, 0, length + 2 * asize)
	elif how == "short":
	    for off in range(2 * asize, 4 + length, 2 * asize):
	        a, n = struct.unpack_from(fmt, d, off)
	        if a == add:
	            struct.pack_into(fmt, d, off, a, 16)
	            break
	    else:
	        sys.exit("no list entry at %#x" % add)
	open(dst, "wb").write(d)
	EOF
	objcopy --update-section .debug_aranges=aranges.$1 nested-gcc nested-$1 &&
	! cmp -s aranges aranges.$1
}

test_expect_success GCC 'gcc, with .debug_aranges intact and damaged three ways' '
	g++ -O2 -g -o nested-gcc "$SRC" &&
	readelf --debug-dump=aranges nested-gcc | grep -q "Offset into .debug_info" &&
	damage cut && damage midterm && damage short &&
	llvm-dwarfdump --debug-aranges nested-cut 2>&1 | grep -q "exceeds section size" &&
	llvm-dwarfdump --debug-aranges nested-midterm 2>&1 | grep -q "premature terminator" &&
	readelf --debug-dump=aranges nested-short | grep -q "^ *[0-9a-f]* 0*10\$"
'

test_expect_success GCC '.debug_aranges intact: every inline chain' '
	check nested-gcc
'

# libdw refuses the first two sections whole: the units'"'"' own ranges place
# everything.  It reads the third, which leaves most of Counter::add out
# (llvm-symbolizer then loses its lines and inline frames there): the
# unit'"'"'s DIE still places it.
for how in cut midterm short; do
	test_expect_success GCC ".debug_aranges $how: every inline chain of the intact build" '
		check nested-'$how' nested-gcc
	'
done

test_done

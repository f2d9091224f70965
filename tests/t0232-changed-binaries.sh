#!/bin/bash
test_description='names only from the code that ran: rebuilt, wrong and stripped binaries (which names, which message, which exit status, in several formats); the call-instruction check against objdump; call-frame entries against readelf'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_have_prog gcc || test_skip "no gcc"
test_need_profiles
JEMALLOC=${JEMALLOC:-/usr/lib/$(gcc -print-multiarch)/libjemalloc.so.2}
[ -f "$JEMALLOC" ] || test_skip "no $JEMALLOC"
OBJCHECK=$BUILD_DIR/tests/tools/objcheck
SRC=$SRCDIR/testdata/calls
test_have_prog python3 && test_set_prereq PYTHON
test_have_prog clang && test_have_prog ld.lld && test_have_prog llvm-objdump && test_set_prereq AARCH64

# testdata/calls/changing.c: main first, then alloc_a..alloc_d, late_b,
# late_a; each alloc_x and late_b allocates once and keeps it.
# rows_named FILE: the workload's own functions with their bytes
rows_named() {
	awk "\$6 ~ /^(alloc_[abcd]|late_[ab]|main)\$/ { print \$1, \$4, \$6 }" "$1" | sort -k3
}

test_expect_success 'build the workload as it ran, changed early, changed late, and with other debug info' '
	gcc -O0 -g -o prog "$SRC/changing.c" &&
	gcc -O0 -g -DCHANGE_EARLY -o early "$SRC/changing.c" &&
	gcc -O0 -g -DCHANGE_LATE -o late "$SRC/changing.c" &&
	gcc -O0 -g1 -o otherdebug "$SRC/changing.c" &&
	cp prog prog.orig && cmp prog prog.orig &&
	# the same code, another build id
	objcopy -O binary --only-section=.text prog text.prog &&
	objcopy -O binary --only-section=.text otherdebug text.other &&
	cmp text.prog text.other &&
	! cmp -s <(readelf -n prog) <(readelf -n otherdebug) &&
	# without build ids, as jemalloc dumps are anyway
	mkdir nb && gcc -O0 -g -Wl,--build-id=none -o nb/prog "$SRC/changing.c" &&
	gcc -O0 -g -Wl,--build-id=none -DCHANGE_EARLY -o nb/early "$SRC/changing.c" &&
	! readelf -n nb/prog | grep -q "Build ID"
'

test_expect_success 'run both under jemalloc: a dump each' '
	LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$TRASH_DIRECTORY/d ./prog &&
	mv d.*.f.heap prog.heap &&
	(cd nb && LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$TRASH_DIRECTORY/nb/d ./prog) &&
	mv nb/d.*.f.heap nb.heap &&
	grep -q "$TRASH_DIRECTORY/prog\$" prog.heap && grep -q "$TRASH_DIRECTORY/nb/prog\$" nb.heap
'

test_expect_success 'the program as it ran: its names, exit 0' '
	"$JHEAP" --show_bytes prog.heap >ref 2>err &&
	rows_named ref >ref.rows && cat ref.rows &&
	cat >expect <<-\EOF &&
	40960 40960 alloc_a
	81920 81920 alloc_b
	131072 131072 alloc_c
	163840 163840 alloc_d
	0 229376 late_a
	229376 229376 late_b
	0 647168 main
	EOF
	test_cmp expect ref.rows &&
	"$JHEAP" --show_bytes nb.heap >ref.nb &&
	rows_named ref.nb >ref.nb.rows && test_cmp expect ref.nb.rows
'

# check_refused FORMAT...: out.FORMAT has none of the workload's names
# and some prog+0x frames, for each format
check_refused() {
	for f in "$@"; do
		# paths are left out: the checkout's own path may hold "main"
		! sed "s|$SRCDIR|@SRCDIR@|g" out.$f | grep -wE "alloc_[abcd]|late_[ab]|main" || return 1
		grep -q "prog+0x" out.$f || return 1
	done
}

# run_formats ARGS...: jheap ARGS in text, folded, raw and callgrind form
# into out.text, out.collapsed, out.raw, out.callgrind, stderr into
# err.FORMAT; every exit status into rc (one line per format)
run_formats() {
	: >rc
	for f in text collapsed raw callgrind; do
		"$JHEAP" --$f --show_bytes -o out.$f "$@" 2>err.$f
		echo $? >>rc
	done
	cat err.text
}

test_expect_success 'rebuilt in place (the change moves most code): refused in every format, exit 1' '
	cp early prog && run_formats prog.heap &&
	test "$(sort -u rc)" = 1 &&
	for f in text collapsed raw callgrind; do
		grep "^jheap: warning: .$TRASH_DIRECTORY/prog. has changed since the dump was written: 10 of the 12 return addresses in the dump do not follow a call instruction in it; its frames are shown as prog+0xOFFSET\$" err.$f || return 1
	done &&
	check_refused text collapsed raw callgrind &&
	head -n 1 out.text | grep "^Total: 729088 B"
'

test_expect_success 'the same without build ids: the call check alone tells' '
	cp nb/early nb/prog && run_formats nb.heap &&
	test "$(sort -u rc)" = 1 &&
	grep "^jheap: warning: .$TRASH_DIRECTORY/nb/prog. has changed since the dump was written: 10 of the 12 return addresses" err.text &&
	check_refused text collapsed raw callgrind
'

test_expect_success 'rebuilt in place, the original kept and given as BINARY: its names, no warning, exit 0' '
	cp early prog && "$JHEAP" --show_bytes prog.orig prog.heap >out 2>err &&
	! grep warning err && test_cmp ref out
'

test_expect_success 'changed in part (late_b and late_a moved): those two unnamed, the others named, exit 1' '
	cp late prog && run_formats prog.heap &&
	test "$(sort -u rc)" = 1 &&
	grep "^jheap: warning: .$TRASH_DIRECTORY/prog. may have changed since the dump was written: 2 of the 12 return addresses in the dump do not follow a call instruction in it; the frames at those addresses are shown as prog+0xOFFSET\$" err.text &&
	rows_named out.text >rows &&
	grep -v late_ expect >expect.part && test_cmp expect.part rows &&
	grep -c "prog+0x" out.text >n && test "$(cat n)" -eq 2 &&
	! grep late_ out.collapsed out.raw out.callgrind
'

test_expect_success 'the changed build as BINARY, the original still in place: names from the original, exit 1' '
	cp prog.orig prog && run_formats early prog.heap &&
	test "$(sort -u rc)" = 1 &&
	grep "^jheap: warning: .early. is not the program that wrote the dump: 10 of the 12 return addresses in the dump do not follow a call instruction in it; names are taken from .$TRASH_DIRECTORY/prog., the program named in the dump\$" err.text &&
	test_cmp ref out.text &&
	"$JHEAP" --collapsed prog.heap >ref.collapsed && test_cmp ref.collapsed out.collapsed
'

test_expect_success 'the same code with another build id as BINARY: the build id decides, exit 1' '
	"$JHEAP" --show_bytes otherdebug prog.heap >out 2>err
	test $? -eq 1 &&
	grep "^jheap: warning: .otherdebug. is not the program that wrote the dump: its build id differs from that of .$TRASH_DIRECTORY/prog., the program named in the dump; names are taken from .$TRASH_DIRECTORY/prog., the program named in the dump\$" err &&
	test_cmp ref out
'

test_expect_success 'code changed in part as BINARY loses to the whole program the dump names' '
	"$JHEAP" --show_bytes late prog.heap >out 2>err
	test $? -eq 1 &&
	grep "^jheap: warning: .late. is not the program that wrote the dump: 2 of the 12 return addresses" err &&
	test_cmp ref out
'

test_expect_success 'the changed build as BINARY, the program the dump names gone: no names, exit 1' '
	sed "s|$TRASH_DIRECTORY/prog\$|$TRASH_DIRECTORY/gone/prog|" prog.heap >gone.heap &&
	run_formats early gone.heap &&
	test "$(sort -u rc)" = 1 &&
	grep "^jheap: warning: .early. is not the program that wrote the dump: 10 of the 12 return addresses in the dump do not follow a call instruction in it; its frames are shown as prog+0xOFFSET\$" err.text &&
	check_refused text collapsed raw callgrind
'

test_expect_success 'both changed, BINARY more: the program in place, changed in part, is used where it can be' '
	cp late prog && "$JHEAP" --show_bytes early prog.heap >out 2>err
	test $? -eq 1 &&
	grep "^jheap: warning: .early. is not the program that wrote the dump: 10 of the 12 return addresses .*; names are taken from .$TRASH_DIRECTORY/prog., the program named in the dump\$" err &&
	grep "^jheap: warning: .$TRASH_DIRECTORY/prog. may have changed since the dump was written: 2 of the 12 return addresses" err &&
	rows_named out >rows && test_cmp expect.part rows
'

test_expect_success 'both changed, the program in place more: BINARY, changed in part, is used where it can be' '
	cp early prog && "$JHEAP" --show_bytes late prog.heap >out 2>err
	test $? -eq 1 &&
	grep "^jheap: warning: .late. may have changed since the dump was written: 2 of the 12 return addresses" err &&
	test $(grep -c warning err) -eq 1 &&
	rows_named out >rows && test_cmp expect.part rows
'

test_expect_success 'both not the code that ran: neither is used, each refusal says why' '
	cp early prog && "$JHEAP" --show_bytes nb/early prog.heap >out 2>err
	test $? -eq 1 &&
	grep "^jheap: warning: .nb/early. is not the program that wrote the dump: [0-9]* of the 12 return addresses .*; nor is .$TRASH_DIRECTORY/prog., the program named in the dump: 10 of the 12 return addresses .*; its frames are shown as prog+0xOFFSET\$" err &&
	cp out out.text && check_refused text
'

# A stripped copy of the right program: only exported names (none here),
# every function a row of its own named by its start, as the original's
# symbol table says; a note, no warning, exit 0.
test_expect_success 'the right program, stripped, as BINARY: rows by function start, a note, exit 0, in every format' '
	cp prog.orig prog && strip -s -o stripped prog.orig &&
	run_formats ./stripped prog.heap &&
	test "$(sort -u rc)" = 0 &&
	for f in text collapsed raw callgrind; do
		! grep "warning" err.$f &&
		grep "^jheap: note: .\./stripped. is stripped: 88\.8% of the bytes are in its functions without names (prog+0xSTART); its debug package names them (/usr/lib/debug/.build-id/.*\.debug), as do --debuginfo-dir=DIR and DEBUGINFOD_URLS\$" err.$f || return 1
	done &&
	nm prog.orig | sed -n "s/^0*\([0-9a-f]*\) T \(.*\)/\1 \2/p" >syms &&
	while read start name; do
		case $name in alloc_*|late_*|main) ;; *) continue ;; esac
		# the original name row, and the stripped one at its start
		grep " $name\$" ref | awk "{ print \$1, \$4 }" >a &&
		grep " prog+0x$start\$" out.text | awk "{ print \$1, \$4 }" >b &&
		test -s a && test_cmp a b || return 1
	done <syms
'

test_expect_success 'stripped in place: the same' '
	cp stripped prog && "$JHEAP" --show_bytes prog.heap >out2 2>err &&
	grep "is stripped: 88\.8%" err && ! grep warning err &&
	test_cmp out.text out2
'

test_expect_success '--inuse_objects: the note counts objects' '
	"$JHEAP" --inuse_objects prog.heap >/dev/null 2>err &&
	grep "% of the objects are in its functions without names" err
'

test_expect_success '--base of another program: a warning naming both, the difference still made' '
	cp prog.orig prog &&
	"$JHEAP" --show_bytes --base "$PROFILES/w_basic.exact.heap" prog.heap >out 2>err &&
	grep "^jheap: warning: the base profile .$PROFILES/w_basic.exact.heap. is of .$PROFILES/w_basic., the profile of .$TRASH_DIRECTORY/prog.: the difference is between two programs\$" err &&
	grep "^Total: -4342784 B" out &&
	"$JHEAP" --show_bytes --base prog.heap prog.heap >out 2>err &&
	! test -s err
'

test_expect_success PYTHON '--addresses without line information: one row per code address (none merge)' '
	strip -g -o w_basic.nolines "$PROFILES/w_basic" &&
	strip -s -o w_basic.stripped "$PROFILES/w_basic" &&
	python3 "$TEST_DIRECTORY/tools/addrrows.py" "$JHEAP" "$PROFILES/w_basic.exact.heap" w_basic.nolines &&
	python3 "$TEST_DIRECTORY/tools/addrrows.py" "$JHEAP" "$PROFILES/w_basic.exact.heap" w_basic.stripped &&
	python3 "$TEST_DIRECTORY/tools/addrrows.py" "$JHEAP" "$PROFILES/w_cpp.accum.heap"
'

# ---- the call-instruction check against the disassemblers --------------

# calls_agree FILE OBJDUMP...: at the end of every instruction OBJDUMP
# shows, objcheck must see a call exactly where the instruction is one
# (a few non-calls may look like calls: at most 1 in 100)
calls_agree() {
	local f=$1
	shift
	"$@" "$f" >dis &&
	awk "
		/^ *[0-9a-f]+:[ \t]/ {
			addr = \$1; sub(/:/, \"\", addr)
			n = 0; mn = \"\"
			for (i = 2; i <= NF; i++) { if (\$i ~ /^[0-9a-f][0-9a-f]\$/) n++; else { mn = \$i; break } }
			if (mn == \"\") next
			print addr, n, (mn ~ /^(call|bl|blr|blraa|blraaz|blrab|blrabz)\$/ || mn ~ /^call/) ? 1 : 0
		}" dis >insns &&
	python3 -c "
import sys
for l in open(\"insns\"):
    a, n, c = l.split()
    print(\"%x %s\" % (int(a, 16) + int(n), c))" >ends &&
	cut -d\  -f1 ends | "$OBJCHECK" calls "$f" >seen &&
	paste -d\  ends seen | awk "
		\$2 == 1 { calls++; if (\$4 != 1) { missed++; print \"missed the call ending at \" \$1 } }
		\$2 == 0 { other++; if (\$4 == 1) false_calls++ }
		END { printf \"%d calls, %d missed; %d other instructions, %d look like calls\\n\", calls, missed, other, false_calls
		      exit !(calls >= 8 && missed == 0 && false_calls * 100 <= other) }"
}

test_expect_success PYTHON 'x86-64: every call form gcc and clang emit is seen (PLT, -fno-plt GOT, retpoline, CET, -O0)' '
	gcc -O2 -shared -fPIC -o cf_plt.so "$SRC/callforms.c" &&
	gcc -O2 -shared -fPIC -fno-plt -o cf_noplt.so "$SRC/callforms.c" &&
	gcc -O2 -shared -fPIC -mindirect-branch=thunk -o cf_thunk.so "$SRC/callforms.c" &&
	gcc -O2 -shared -fPIC -fcf-protection=full -o cf_cet.so "$SRC/callforms.c" &&
	gcc -O0 -shared -fPIC -o cf_O0.so "$SRC/callforms.c" &&
	objdump -d cf_noplt.so | grep -q "call  *\*0x[0-9a-f]*(%rip)" &&
	for f in cf_plt.so cf_noplt.so cf_thunk.so cf_cet.so cf_O0.so; do
		calls_agree $f objdump -d --insn-width=16 || return 1
	done &&
	if test_have_prog clang; then
		clang -O2 -shared -fPIC -fno-plt -o cf_clang.so "$SRC/callforms.c" &&
		calls_agree cf_clang.so objdump -d --insn-width=16
	fi
'

test_expect_success PYTHON 'x86-64: Debian programs and libraries (nghttpd, redis, libc, libcrypto)' '
	for f in /usr/sbin/nghttpd /usr/bin/redis-check-rdb /usr/lib/$(gcc -print-multiarch)/libc.so.6; do
		test -f $f || continue
		calls_agree $f objdump -d --insn-width=16 || return 1
	done
'

test_expect_success PYTHON,AARCH64 'AArch64: BL, BLR and BLRAA/BLRAB(Z) are seen (clang and lld, no C library)' '
	clang --target=aarch64-linux-gnu -O2 -ffreestanding -nostdlib -fuse-ld=lld -static \
		-Wl,-e,entry -Wl,--unresolved-symbols=ignore-all -o cf_a64 "$SRC/callforms.c" &&
	clang --target=aarch64-linux-gnu -O2 -ffreestanding -nostdlib -fuse-ld=lld -shared -fPIC \
		-Wl,--unresolved-symbols=ignore-all -o cf_a64.so "$SRC/callforms.c" &&
	calls_agree cf_a64 llvm-objdump -d --mattr=+v8.3a &&
	calls_agree cf_a64.so llvm-objdump -d --mattr=+v8.3a &&
	printf ".text\n.globl f\nf:\nblraa x1, x2\nnop\nblraaz x3\nnop\nblrab x4, x5\nblrabz x6\nadd x0, x0, #1\nblr x7\nbl f\nbl f\nblr x8\nblraaz x9\nblraa x10, x11\nret\n" >pauth.s &&
	clang --target=aarch64-linux-gnu -march=armv8.3-a -c -o pauth.o pauth.s &&
	calls_agree pauth.o llvm-objdump -d --mattr=+v8.3a
'

# ---- call-frame entries against readelf ---------------------------------

# fdes_agree FILE: objcheck's table is readelf's list of FDEs
fdes_agree() {
	"$OBJCHECK" fdes "$1" | sort >mine &&
	readelf --debug-dump=frames "$1" 2>/dev/null |
		sed -n "s/.* FDE .*pc=\([0-9a-f]*\)\.\.\([0-9a-f]*\).*/\1 \2/p" |
		python3 -c "
import sys
for l in sys.stdin:
    a, b = (int(x, 16) for x in l.split())
    if a < b: print(\"%x %x\" % (a, b))" | sort >theirs &&
	test -s theirs && test_cmp theirs mine &&
	echo "$1: $(wc -l <mine) entries"
}

test_expect_success PYTHON 'FDEs of Debian objects: the same as readelf --debug-dump=frames' '
	lib=/usr/lib/$(gcc -print-multiarch) &&
	for f in /usr/sbin/nghttpd /usr/bin/redis-check-rdb $lib/libc.so.6 $lib/libstdc++.so.6 $JEMALLOC; do
		test -f $f || continue
		fdes_agree $f || return 1
	done
'

test_expect_success PYTHON 'FDEs in .debug_frame (plain and compressed) and of AArch64' '
	gcc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -o df "$SRC/changing.c" &&
	# the C runtime brings .eh_frame; the program s functions are in
	# .debug_frame alone
	readelf -S df | grep -q " .debug_frame " &&
	readelf --debug-dump=frames df | sed -n "/^Contents of the .debug_frame/,\$p" | grep -q " FDE " &&
	fdes_agree df &&
	gcc -O2 -g -gz -fno-asynchronous-unwind-tables -fno-unwind-tables -o dfz "$SRC/changing.c" &&
	readelf -SW dfz | grep " .debug_frame " | grep -q " C " &&
	"$OBJCHECK" fdes dfz >z && "$OBJCHECK" fdes df >p && test_cmp p z &&
	if test_have_prereq AARCH64; then
		clang --target=aarch64-linux-gnu -O2 -fasynchronous-unwind-tables -ffreestanding -nostdlib \
			-fuse-ld=lld -shared -fPIC -Wl,--unresolved-symbols=ignore-all -o cf_a64u.so "$SRC/callforms.c" &&
		fdes_agree cf_a64u.so
	fi
'

test_expect_success PYTHON 'a pc in code of a stripped program is named by the FDE that holds it (the real dump)' '
	cp prog.orig prog &&
	"$JHEAP" --addresses --show_bytes ./stripped prog.heap >addrs 2>/dev/null &&
	"$OBJCHECK" fdes prog.orig >fdes &&
	grep " prog+0x" addrs | awk "{ print \$6, \$7 }" >pcs && test -s pcs &&
	base=$(awk "/r-xp.*\/prog\$/ { split(\$1, a, \"-\"); print a[1]; exit }" prog.heap) &&
	off=$(awk "/r-xp.*\/prog\$/ { print \$3; exit }" prog.heap) &&
	while read pc name; do
		rel=$(printf "%x" $((0x$pc - 0x$base + 0x$off))) &&
		start=${name#prog+0x} &&
		python3 -c "
import sys
rel, start = int(\"$rel\", 16), int(\"$start\", 16)
ok = any(int(lo, 16) == start and start <= rel < int(hi, 16) for lo, hi in (l.split() for l in open(\"fdes\")))
sys.exit(0 if ok else 1)" || { echo "$pc $name"; return 1; }
	done <pcs
'

test_done

#!/bin/bash
test_description='hostile and broken input: clear messages naming the file, documented exit codes, no crash, no shell'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_need_profiles
B=$PROFILES/w_basic
H=$PROFILES/w_basic.exact.heap

test_expect_success 'an empty file' '
	: >empty.heap && expect_fail 1 "^jheap: empty.heap: the file is empty\$" empty.heap
'

test_expect_success 'binary garbage' '
	head -c 4096 /dev/urandom | tr "\n" x | sed "s/^/\x01/" >garbage.heap &&
	expect_fail 1 "^jheap: garbage.heap: binary data, not a text heap profile" garbage.heap
'

test_expect_success 'a gzip file of something else: what is inside is named' '
	printf "digraph x {}\n" | gzip -c >g.dot.gz &&
	expect_fail 1 "^jheap: g.dot.gz:1: not a heap profile" g.dot.gz &&
	head -c 200 "$H" | gzip -c >cut.heap.gz &&
	expect_fail 1 "^jheap: cut.heap.gz:[0-9]+: .*truncated" cut.heap.gz
'

test_expect_success 'a text file that is not a profile' '
	printf "digraph x {}\n" >g.dot &&
	expect_fail 1 "^jheap: g.dot:1: not a heap profile" g.dot
'

test_expect_success 'truncated in the middle of a line' '
	head -c 200 "$H" >t1.heap &&
	expect_fail 1 "^jheap: t1.heap:[0-9]+: .*truncated" t1.heap
'

test_expect_success 'truncated between records (a stack without counts)' '
	awk "/^@/ { n++ } n == 3 && /^  t\\*/ { exit } { print }" "$H" >t2.heap &&
	expect_fail 1 "^jheap: t2.heap:[0-9]+: stack record has no .t\*:. counts line \(truncated dump\?\)" t2.heap
'

# A dump cut between records (or in its maps) can be read: the report of
# what it holds is printed, with a warning, and the status is 1 (a
# degraded result, as the man page says) with one thread or two.
test_expect_success 'cut before its maps: the report of what is there, status 1' '
	sed "/^MAPPED_LIBRARIES:/,\$d" "$H" >t3.heap &&
	for threads in 1 2; do
		JHEAP_THREADS=$threads JHEAP_PARSE_SPLIT_MIN=0 \
			expect_fail 1 "^jheap: warning: t3.heap:[0-9]+: no MAPPED_LIBRARIES section \(truncated dump\?\)" \
			--show_bytes "$B" t3.heap &&
		grep "^Total: 5071872 B\$" out || return 1
	done &&
	"$JHEAP" --show_bytes "$B" "$H" >whole &&
	grep "^Total: 5071872 B\$" whole
'

test_expect_success 'cut inside its last maps line: the report, status 1' '
	head -c -1 "$H" >t4.heap &&
	expect_fail 1 "^jheap: warning: t4.heap:[0-9]+: the file does not end with a newline \(truncated dump\?\)" t4.heap &&
	grep "^Total: " out
'

test_expect_success 'counts that overflow 64 bits' '
	printf "heap_v2/1\n@ 0x1 0x2\n  t*: 1: 18446744073709551616 [0: 0]\n" >big.heap &&
	expect_fail 1 "^jheap: big.heap:3: a byte count does not fit in 64 bits" big.heap
'

test_expect_success 'negative counts' '
	printf "heap_v2/1\n@ 0x1 0x2\n  t*: -1: 8 [0: 0]\n" >neg.heap &&
	expect_fail 1 "^jheap: neg.heap:3: an object count is negative" neg.heap
'

test_expect_success 'non-hex addresses' '
	printf "heap_v2/1\n@ 0x1 0xfoo\n  t*: 1: 8 [0: 0]\n" >hex.heap &&
	expect_fail 1 "^jheap: hex.heap:2: expected a hex address, found .0xfoo." hex.heap &&
	printf "heap_v2/1\n@ 0x1 0x12345678901234567\n  t*: 1: 8 [0: 0]\n" >long.heap &&
	expect_fail 1 "^jheap: long.heap:2: address .* is longer than 64 bits" long.heap
'

test_expect_success 'a line over the 64 MiB limit' '
	{ printf "heap_v2/1\n@"; head -c $((65 * 1024 * 1024)) /dev/zero | tr "\0" " "; printf "0x1\n"; } >huge.heap &&
	expect_fail 1 "^jheap: huge.heap:2: line longer than 67108864 bytes" huge.heap
'

test_expect_success 'a stack of 10,000 frames' '
	base=$(awk "/r-xp.*w_basic\$/ { split(\$1, a, \"-\"); print a[1]; exit }" "$H") &&
	{ sed "/^@/,\$d" "$H"
	  printf "@ 0x%s" "$base"; for i in $(seq 10000); do printf " 0x%x" $((0x$base + 0x200 + i % 64)); done; echo
	  echo "  t*: 1: 4096 [0: 0]"; echo; sed -n "/^MAPPED_LIBRARIES:/,\$p" "$H"; } >deep.heap &&
	# made-up return addresses follow no call: named module+offset, exit 1
	"$JHEAP" --show_bytes deep.heap >out 2>err
	test $? -eq 1 && grep "w_basic. has changed since the dump was written" err &&
	grep -q "^Total: 4096 B" out &&
	"$JHEAP" --collapsed deep.heap >folded 2>err
	test $? -eq 1 && test $(tr ";" "\n" <folded | wc -l) -ge 10000
'

test_expect_success 'maps lines with spaces, (deleted), [vdso], [heap], anonymous' '
	mkdir -p "dir with space" && cp "$B" "dir with space/w basic" &&
	sed "s|$B\$|$TRASH_DIRECTORY/dir with space/w basic (deleted)|" "$H" >spaced.heap &&
	printf "7fff00000000-7fff00002000 r-xp 00000000 00:00 0                  [vdso]\n55550000a000-55550002b000 rw-p 00000000 00:00 0                  [heap]\n7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n" >>spaced.heap &&
	"$JHEAP" --show_bytes spaced.heap >out &&
	"$JHEAP" --show_bytes "$H" >ref && test_cmp ref out
'

test_expect_success 'a binary that does not exist' '
	expect_fail 1 "cannot open .no-such-binary." no-such-binary "$H"
'

test_expect_success 'a "binary" that is not ELF is taken as a profile and rejected' '
	printf "#!/bin/sh\n" >script && expect_fail 1 "script:1: not a heap profile" script "$H"
'

test_expect_success 'an ELF for another architecture: no crash, names not trusted' '
	cp "$B" arm && printf "\267\000" | dd of=arm bs=1 seek=18 conv=notrunc 2>/dev/null &&
	"$JHEAP" --show_bytes ./arm "$H" >out 2>err
	rc=$? && test $rc -le 1 && head -n 1 out | grep -q "^Total: 5071872 B"
'

test_expect_success 'a binary whose build id does not match the dump' '
	expect_fail 1 "is not the program that wrote the dump" "$PROFILES/w_basic_nopie" "$H"
'

test_expect_success 'corrupt DWARF (truncated .debug_info): symbols still, no crash' '
	objcopy --dump-section .debug_info=info.bin "$B" &&
	head -c 100 info.bin >cut.bin &&
	objcopy --update-section .debug_info=cut.bin "$B" corrupt &&
	"$JHEAP" --show_bytes ./corrupt "$H" >out 2>err
	rc=$? && test $rc -le 1 &&
	head -n 1 out | grep -q "^Total: 5071872 B" && grep -q " alloc_malloc\$" out
'

test_expect_success 'an unreadable profile' '
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		cp "$H" secret.heap && chmod 000 secret.heap && chmod 755 . &&
		setpriv --reuid=65534 --regid=65534 --clear-groups "$JHEAP" secret.heap 2>err >out
		test $? -eq 1 && grep "cannot open .secret.heap.: Permission denied" err
	else
		cp "$H" secret.heap && chmod 000 secret.heap &&
		expect_fail 1 "cannot open .secret.heap.: Permission denied" secret.heap
	fi
'

test_expect_success 'a directory given as a profile' '
	mkdir -p adir && expect_fail 1 "cannot (open|read) .adir.: Is a directory" adir
'

test_expect_success 'output to a full disk: an error, exit 1' '
	"$JHEAP" "$H" >/dev/full 2>err
	test $? -eq 1 && grep "^jheap: error writing the report: No space left on device" err &&
	"$JHEAP" --collapsed "$H" >/dev/full 2>err
	test $? -eq 1
'

test_expect_success 'output to a closed pipe: jheap stops quietly (SIGPIPE), as Unix tools do' '
	"$JHEAP" --addresses "$H" 2>err | head -n 1 >first &&
	grep -q "^Total" first && test ! -s err
'

test_expect_success 'no shell: a maps path with ; $(...) quotes and a newline runs nothing' '
	evil="$TRASH_DIRECTORY/x;touch pwned1;\$(touch pwned2)\`touch pwned3\`\"q'"'"'" &&
	cp "$B" "$evil" &&
	sed "s|$B\$|$evil|" "$H" >evil.heap &&
	"$JHEAP" --show_bytes evil.heap >out 2>err &&
	grep -q " alloc_malloc\$" out &&
	"$JHEAP" --svg -o evil.svg evil.heap 2>/dev/null
	"$JHEAP" --list=alloc_malloc evil.heap >/dev/null 2>&1
	sed "s|$B\$|/tmp/\$(touch pwned4)\\012;touch pwned5|" "$H" >evil2.heap &&
	grep -q "pwned4" evil2.heap &&
	"$JHEAP" evil2.heap >/dev/null 2>err
	grep -q "cannot open" err &&
	! ls pwned* 2>/dev/null
'

test_expect_success 'inputs the fuzzer found (testdata/fuzz/crashes) are handled' '
	for f in "$SRCDIR"/testdata/fuzz/crashes/*; do
		"$JHEAP" --show_bytes "$f" >/dev/null 2>err
		rc=$?
		test $rc -le 2 || { echo "$f: exit $rc"; cat err; return 1; }
	done
'

test_done

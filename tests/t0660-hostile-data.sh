#!/bin/bash
test_description='sizes, numbers and names in a profile: bounded memory and time, no wrong numbers, nothing forged'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_need_profiles
B=$PROFILES/w_basic
H=$PROFILES/w_basic.exact.heap
MKPPROF="python3 $SRCDIR/tests/tools/mkpprof.py"
test_have_prog python3 && test_set_prereq PYTHON
test_have_prog /usr/bin/time && test_set_prereq TIME

# bounded SECS ARGS...: jheap ARGS with out, err and its status in rc;
# killed after SECS seconds (status 137), which no test expects.  With
# /usr/bin/time, its peak resident memory in KiB is in rss.
bounded() {
	local secs=$1
	shift
	rm -f out err rc rss
	if test_have_prereq TIME; then
		/usr/bin/time -o rss -f %M timeout -s KILL "$secs" "$JHEAP" "$@" >out 2>err
		echo $? >rc
	else
		timeout -s KILL "$secs" "$JHEAP" "$@" >out 2>err
		echo $? >rc
		echo 0 >rss
	fi
}

# rss_below MIB: the last bounded run stayed under MIB MiB (under ASan,
# whose shadow memory adds its own, twice that)
rss_below() {
	local mib=$1
	case ${ASAN_OPTIONS:-} in *max_allocation*) mib=$((2 * mib)) ;; esac
	test $(tail -n 1 rss) -lt $((mib * 1024)) || { echo "peak $(tail -n 1 rss) KiB"; false; }
}

# --- memory bombs ---------------------------------------------------------
test_expect_success PYTHON 'pprof: 200 million frames in 190 KB of gzip are refused as they are read' '
	$MKPPROF bomb.pb.gz --depth 200000000 --gzip &&
	test $(wc -c <bomb.pb.gz) -lt 300000 &&
	bounded 60 --flamegraph bomb.pb.gz && test $(cat rc) -eq 1 &&
	grep "^jheap: bomb.pb.gz: byte [0-9]* of the profile: more than 1048576 frames in one sample" err &&
	rss_below 400
'

test_expect_success PYTHON 'pprof: a sample at the frame limit is read and written quickly' '
	$MKPPROF deep.pb.gz --depth 1048576 --gzip &&
	for f in text flamegraph callgrind speedscope collapsed; do
		bounded 60 --$f -o deep.$f deep.pb.gz && test $(cat rc) -eq 0 || return 1
	done
'

test_expect_success 'a 10 GB sparse file is refused from its first bytes' '
	truncate -s 10G sparse.heap &&
	bounded 60 sparse.heap && test $(cat rc) -eq 1 &&
	grep "^jheap: sparse.heap: binary data, not a text heap profile" err && rss_below 100 &&
	printf "heap_v2/1\n" | dd of=sparse.heap conv=notrunc 2>/dev/null &&
	bounded 60 sparse.heap && test $(cat rc) -eq 1 &&
	grep "^jheap: sparse.heap:2: line longer than 67108864 bytes" err && rss_below 400 &&
	rm sparse.heap
'

test_expect_success 'a 2 GB line on standard input stops at the 64 MiB limit' '
	{ printf "heap_v2/1\n@ "; head -c 2G /dev/zero | tr "\0" " "; } 2>/dev/null | bounded 60 - &&
	test $(cat rc) -eq 1 &&
	grep "^jheap: /dev/stdin:2: line longer than 67108864 bytes" err && rss_below 400
'

test_expect_success 'a dump truncated while it is read: a message, exit 1, never a signal' '
	awk "/^@/ { r = 1 } /^MAPPED_LIBRARIES:/ { exit } r" "$H" >rec &&
	{ sed "/^@/,\$d" "$H"
	  awk "{ a[NR] = \$0 } END { for (i = 0; i < 30000; i++) for (j = 1; j <= NR; j++) print a[j] }" rec
	  sed -n "/^MAPPED_LIBRARIES:/,\$p" "$H"; } >big.heap &&
	# under ASan, its own SIGBUS handler would answer first
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_sigbus=0" &&
	# the file is cut at fractions of the time a whole read takes here
	# (measured now: the machine may be loaded), in rounds until one cut
	# falls inside the read
	t0=$(date +%s%N) && "$JHEAP" --no-symbolize big.heap >/dev/null && t1=$(date +%s%N) &&
	ms=$(( (t1 - t0) / 1000000 )) &&
	seen=0 runs=0 &&
	for round in 1 2 3 4 5; do
		for pct in 5 15 30 50 70 90; do
			cp big.heap t.heap &&
			{ timeout -s KILL 120 "$JHEAP" --no-symbolize t.heap >/dev/null 2>err; echo $? >rc; } &
			sleep $(awk "BEGIN { print $ms * $pct / 100000 }"); truncate -s 4000 t.heap; wait
			runs=$((runs + 1))
			test $(cat rc) -le 1 || { cat err; return 1; }
			if grep -q "^jheap: t.heap: the file was truncated while it was read" err; then
				seen=$((seen + 1))
			fi
		done
		test $seen -ge 1 && break
	done
	echo "truncated while read in $seen of $runs runs (a whole read: $ms ms)" && test $seen -ge 1
'

# --- numbers ---------------------------------------------------------------
test_expect_success 'objects of 0 bytes under sampling: an error naming the line, no NaN' '
	printf "heap_v2/524288\n  t*: 1: 0 [0: 0]\n@ 0x1 0x2\n  t*: 1: 0 [0: 0]\n  t0: 1: 0 [0: 0]\n" >zero.heap &&
	for m in text callgrind collapsed; do
		bounded 20 --$m zero.heap && test $(cat rc) -eq 1 &&
		grep "^jheap: zero.heap:4: 1 objects of 0 bytes: under sampling (one sample per 524288 bytes) such counts cannot be unsampled" err &&
		! grep -qiE "nan|inf|-9223372036854775808" out || return 1
	done
'

test_expect_success 'a sampling period of 2^63: an error naming the line, no inf' '
	printf "heap_v2/9223372036854775808\n@ 0x1 0x2\n  t*: 1: 4096 [0: 0]\n  t0: 1: 4096 [0: 0]\n" >p63.heap &&
	bounded 20 --show_bytes p63.heap && test $(cat rc) -eq 1 &&
	grep "^jheap: p63.heap:3: 1 objects of 4096 bytes, unsampled with one sample per 9223372036854775808 bytes, stand for more than 2^60" err &&
	! grep -qiE "nan|inf" out
'

test_expect_success 'a --base that cancels the total: no nan or inf in any report' '
	# two dumps of one stack each, 1000 bytes on different stacks, with
	# the maps of the workload they come from
	awk "/^@/ { n++ } /^MAPPED_LIBRARIES:/ { m = 1 } m { print > \"maps\" }
	     /^@/ && n <= 2 { print > (\"stack\" n) }" "$H" &&
	for k in 1 2; do
		{ printf "heap_v2/1\n  t*: 1: 1000 [0: 0]\n  t0: 1: 1000 [0: 0]\n" &&
		  cat stack$k && printf "  t*: 1: 1000 [0: 0]\n  t0: 1: 1000 [0: 0]\n\n" && cat maps; } >z$k.heap || return 1
	done &&
	"$JHEAP" --text --show_bytes --base=z2.heap "$B" z1.heap >out &&
	head -n 1 out | grep -x "Total: 0 B" && grep -c " n/a " out &&
	for m in text dot tree traces callgrind collapsed flamegraph "speedscope --drop_negative"; do
		# (the program'"'"'s path may hold such a word: it is left out)
		"$JHEAP" --$m --base=z2.heap "$B" z1.heap >raw 2>err || { echo "--$m failed:"; cat err; return 1; }
		sed "s|$SRCDIR||g; s|$B||g" raw >out
		! grep -qiwE "nan|[+-]?inf" out || { echo "in --$m:"; grep -iwE "nan|inf" out; return 1; }
	done
'

test_expect_success 'counts near 2^64 without sampling: an error, not a wrapped total' '
	printf "heap_v2/1\n@ 0x1 0x2\n  t*: 1: 18446744073709551615 [0: 0]\n  t0: 1: 18446744073709551615 [0: 0]\n" >max.heap &&
	bounded 20 --show_bytes --callgrind max.heap && test $(cat rc) -eq 1 &&
	grep "^jheap: max.heap:3: .*more than 2^60" err && ! grep -q -- "-9223372036854775808" out &&
	{ printf "heap_v2/1\n"; for i in 1 2 3; do
		printf "@ 0x1 0x%x\n  t*: 1: 1000000000000000000 [0: 0]\n  t0: 1: 1000000000000000000 [0: 0]\n" $i; done; } >sum.heap &&
	bounded 20 --show_bytes sum.heap && test $(cat rc) -eq 1 &&
	grep "^jheap: sum.heap:6: the records up to this one add up to more than 2^60 bytes" err
'

test_expect_success PYTHON 'pprof values that add up past 2^60: an error' '
	$MKPPROF huge.pb --values 1,4611686018427387904 &&
	bounded 20 --show_bytes huge.pb && test $(cat rc) -eq 1 &&
	grep "^jheap: huge.pb: byte [0-9]* of the profile: sample 1: the values up to this one add up to more than 2^60" err &&
	$MKPPROF big.pb --values 1,1100000000000000000 &&
	bounded 20 --show_bytes big.pb big.pb big.pb big.pb big.pb && test $(cat rc) -eq 1 &&
	grep "^jheap: the profiles. values add up to more than 4611686018427387904 bytes" err &&
	! grep -q -- "-9223372036854775808" out
'

# --- regular expressions ----------------------------------------------------
test_expect_success PYTHON 'a regular expression that hits PCRE2s match limit is an error, not "no match"' '
	$MKPPROF aaa.pb --fn aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa! &&
	bounded 60 --focus="(a+)+\$" aaa.pb && test $(cat rc) -eq 1 &&
	grep "^jheap: --focus=.(a+)+\$.: matching .aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!. failed: match limit exceeded" err &&
	bounded 60 --list="(a+)+\$" aaa.pb && test $(cat rc) -eq 1 &&
	grep "^jheap: --list=.(a+)+\$.: matching .a*!. failed: match limit exceeded" err &&
	bounded 60 --ignore="(*LIMIT_MATCH=5)^(\w|\w\w)+\$" "$H" && test $(cat rc) -eq 1 &&
	grep "^jheap: --ignore=.*failed: match limit exceeded" err &&
	bounded 60 --disasm="(*LIMIT_MATCH=5)^(\w|\w\w)+\$" "$H" && test $(cat rc) -eq 1 &&
	grep "^jheap: --disasm=.*failed: match limit exceeded" err
'

# --- open files ----------------------------------------------------------------
test_expect_success PYTHON 'a dump naming 1,500 objects: all named with a low soft limit, exit 1 when they cannot be opened' '
	python3 "$SRCDIR/tests/tools/manyobjs.py" "$H" "$B" 1500 objs many.heap &&
	(ulimit -S -n 1024 && bounded 120 --no-cache many.heap) && test $(cat rc) -eq 0 &&
	! grep -q "^ .* o[0-9]*+0x" out && ! grep -q "Too many open files" err &&
	if [ "$(ulimit -H -n)" = unlimited ] || [ "$(ulimit -H -n)" -gt 1024 ]; then
		(ulimit -n 1024 && bounded 120 --no-cache many.heap) && test $(cat rc) -eq 1 &&
		grep "^jheap: warning: some object or debug files could not be opened (too many open files" err
	fi
'

# --- threads and listings: linear ----------------------------------------------
test_expect_success PYTHON '--thread=* with 200,000 threads' '
	python3 - "$H" <<-\EOF &&
	import re, sys
	src = open(sys.argv[1]).read()
	maps = src[src.index("MAPPED_LIBRARIES:"):]
	stacks = re.findall(r"^@ (.*)$", src, re.M)
	n = 200000
	with open("threads.heap", "w") as f:
	    f.write(src.split("\n", 1)[0] + "\n  t*: %d: %d [0: 0]\n" % (n, 64 * n))
	    for i in range(n):
	        st = stacks[i % len(stacks)].split()
	        f.write("@ 0x%x %s\n  t*: 1: 64 [0: 0]\n  t%d: 1: 64 [0: 0]\n"
	                % (int(st[0], 16) + (i // len(stacks)) * 16, " ".join(st[1:]), i))
	    f.write("\n" + maps)
	EOF
	bounded 60 --thread="*" --show_bytes threads.heap && test $(cat rc) -eq 0 &&
	test $(grep -c "^Total (t[0-9]*): 64 B" out) -eq 200000
'

test_expect_success PYTHON '--list of one function of 200,000 lines' '
	$MKPPROF lines.pb --lines 200000 --file src/many.c && mkdir -p src &&
	seq 200000 | sed "s/^/int x/; s/\$/;/" >src/many.c &&
	bounded 30 --list=fn --source-dir=src lines.pb && test $(cat rc) -eq 0 &&
	test $(grep -cE "^ +0\.0 +0\.0 +[0-9]+: int x[0-9]+;" out) -eq 200000
'

# --- names, messages and the rest ------------------------------------------
test_expect_success PYTHON 'control characters in names are escaped in every line-based output' '
	$MKPPROF evil.pb --fn "$(printf "evil\n  99.9 100.0%% 100.0%%     99.9 100.0%% forged\033[2J")" --file "$(printf "a\rb.c")" &&
	bounded 20 evil.pb && test $(cat rc) -eq 0 &&
	! grep -q forged$ out && grep -qF "evil\n  99.9" out && grep -qF "forged\e[2J" out &&
	! grep -q "$(printf "\033")" out &&
	for m in collapsed callgrind "lines" "list=evil" raw; do
		bounded 20 --$m evil.pb
		test $(grep -c "$(printf "\033")" out) -eq 0 && ! grep -q "^  99.9 100.0%" out || return 1
	done
'

test_expect_success 'control characters from a profile are escaped in error messages' '
	printf "heap_v2/1\n\033[31mred\n" >esc.heap &&
	bounded 20 esc.heap && test $(cat rc) -eq 1 &&
	grep -F "found '"'"'\e[31mred'"'"'" err && ! grep -q "$(printf "\033")" err
'

test_expect_success PYTHON 'a pprof --base under --thread is refused, not dropped' '
	$MKPPROF base.pb &&
	bounded 20 --thread=1 --base base.pb "$PROFILES/w_threads.exact.heap" && test $(cat rc) -eq 1 &&
	grep "^jheap: --thread: the --base profile .base.pb. has no per-thread values (a pprof profile)" err
'

# The server accepts connections (the kernel does, into its backlog) and
# never answers.  Without the budget, libdebuginfod waits its own timeout
# (set to 600 s here) per object; the 60 s bound of the run lies between
# the budget (2 s, plus the run's own work) and that.
test_expect_success PYTHON 'a debuginfod server that never answers costs at most the budget' '
	if ! ldconfig -p 2>/dev/null | grep -q libdebuginfod.so.1; then
		echo "no libdebuginfod.so.1: nothing to test"; return 0
	fi
	cat >silent.py <<-\EOF &&
	import socket, time
	s = socket.socket()
	s.bind(("127.0.0.1", 0))
	s.listen(64)
	print(s.getsockname()[1], flush=True)
	time.sleep(600)
	EOF
	test_bg silent 300 python3 silent.py &&
	port=$(test_bg_line silent "^[0-9]+\$") &&
	cp "$B" nodebug && objcopy --strip-debug nodebug &&
	sed "s|$B\$|$TRASH_DIRECTORY/nodebug|" "$H" >nodebug.heap &&
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$TRASH_DIRECTORY/dcache \
		DEBUGINFOD_TIMEOUT=600 JHEAP_DEBUGINFOD_BUDGET=2 bounded 60 --no-cache nodebug.heap &&
	if [ "$(cat rc)" -eq 137 ]; then
		echo "jheap was still waiting for the server after 60 s: the 2 s budget was not kept"
		return 1
	fi &&
	test "$(cat rc)" -eq 0 &&
	grep "^jheap: warning: debuginfod: the 2 s budget for this run is spent" err &&
	grep -q " alloc_malloc\$" out
'

test_done

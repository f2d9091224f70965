#!/bin/bash
test_description='finding a leak: --base across runs, filters, --thread, --list, --growth, --symbols'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_need_profiles
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
B=$PROFILES/w_basic
H=$PROFILES/w_basic.exact.heap

# row NAME FILE: "flat cum" of the row named NAME
row() {
	awk -v n="$1" '{ name = $6; for (i = 7; i <= NF; i++) name = name " " $i } name == n { print $1, $4 }' "$2"
}

# run_dump PREFIX PROGRAM ARGS...: run under jemalloc, print the dump's name
run_dump() {
	local prefix=$1
	shift
	LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$TRASH_DIRECTORY/$prefix \
		"$@" && ls "$TRASH_DIRECTORY/$prefix".*.heap
}

test_expect_success 'build the phase and growth workloads' '
	cc -O0 -g -o w_phases "$SRCDIR/testdata/w_phases.c" &&
	cc -O0 -g -o w_growth "$SRCDIR/testdata/w_growth.c" -ldl
'

# --- --base -----------------------------------------------------------
test_expect_success '--base: two runs of one binary (two ASLR layouts) cancel to zero' '
	a=$(run_dump a ./w_phases 20 30) && b=$(run_dump b ./w_phases 20 30) &&
	! cmp -s <(grep "^@" "$a") <(grep "^@" "$b") &&
	"$JHEAP" --show_bytes --base "$a" "$b" >out &&
	echo "Total: 0 B" >expected && test_cmp expected out
'

test_expect_success '--base: a phase that allocates more shows exactly its difference' '
	a=$(run_dump c ./w_phases 20 30) && b=$(run_dump d ./w_phases 20 45) &&
	"$JHEAP" --show_bytes --base "$a" "$b" >out &&
	head -n 1 out >total && echo "Total: 46080 B" >expected && test_cmp expected total &&
	test "$(row phase2 out)" = "46080 46080" &&
	test -z "$(row phase1 out)" && test -z "$(row stable out)"
'

test_expect_success '--base: shrinking is negative; --drop_negative clamps it' '
	a=$(run_dump e ./w_phases 30 30) && b=$(run_dump f ./w_phases 20 30) &&
	"$JHEAP" --show_bytes --base "$a" "$b" >out &&
	test "$(row phase1 out)" = "-102400 -102400" &&
	"$JHEAP" --show_bytes --drop_negative --base "$a" "$b" >out &&
	head -n 1 out | grep -q "Total: 0 B"
'

test_expect_success '--base and the option order of jeprof users (--base a.heap b.heap --text)' '
	a=$(ls c.*.heap) && b=$(ls d.*.heap) &&
	"$JHEAP" --base "$a" "$b" --text --show_bytes >out &&
	head -n 1 out | grep -q "Total: 46080 B"
'

# --- filters (w_basic: testdata/w_basic.c's table) -----------------------
test_expect_success '--focus keeps the stacks through caller_a and caller_b: 512000 B' '
	"$JHEAP" --show_bytes --focus="caller_[ab]" "$H" >out &&
	test "$(row leaf_alloc out)" = "512000 512000" &&
	test "$(row caller_a out)" = "0 153600" && test "$(row main out)" = "0 512000"
'

test_expect_success '--focus on file:line selects one call site (Perl syntax \d, lazy quantifier)' '
	line=$(grep -n "leaf_alloc(70);" "$SRCDIR/testdata/w_basic.c" | cut -d: -f1) &&
	"$JHEAP" --show_bytes --focus="w_basic\.c:$line\b" "$H" >out &&
	test "$(row leaf_alloc out)" = "358400 358400" &&
	"$JHEAP" --show_bytes --focus="(?i)CALLER_.*?B" "$H" >out2 &&
	test_cmp out out2
'

test_expect_success '--ignore drops the stacks through caller_b; Total stays the whole profile' '
	"$JHEAP" --show_bytes --ignore=caller_b "$H" >out &&
	head -n 1 out | grep -q "Total: 5071872 B" &&
	test "$(row leaf_alloc out)" = "153600 153600"
'

test_expect_success '--exclude removes frames: their bytes go to the caller' '
	"$JHEAP" --show_bytes --exclude="^alloc_" "$H" >out &&
	test "$(row main out)" = "$((327680 + 1024000 + 40960 + 2293760 + 61440 + 65536)) 4989952"
'

test_expect_success '--retain keeps only matching frames' '
	"$JHEAP" --show_bytes --retain="^(main|leaf_alloc)\$" "$H" >out &&
	test "$(sed 1d out | wc -l)" -eq 2 &&
	test "$(row leaf_alloc out)" = "512000 512000"
'

test_expect_success 'filters agree with jeprof on the workload functions' '
	for f in --focus=caller_ --ignore=caller_b "--retain=^(main|alloc_\w+)\$" "--exclude=alloc_|many|leaf|recurse"; do
		"$JHEAP" --show_bytes "$f" "$H" | grep -E " (main|caller_[ab]|leaf_alloc|alloc_\w+|many_small|recurse)\$" >j &&
		test_jeprof p --text --show_bytes "$f" "$B" "$H" &&
		grep -E " (main|caller_[ab]|leaf_alloc|alloc_\w+|many_small|recurse)\$" p >e &&
		test_cmp e j || return 1
	done
'

test_expect_success 'a bad regular expression is a usage error' '
	"$JHEAP" --focus="(" "$H" 2>err
	test $? -eq 2 && grep "bad regular expression" err
'

test_expect_success '--nodefraction prunes --text rows, with the note jeprof prints' '
	"$JHEAP" --show_bytes --nodefraction=0.01 "$H" >out 2>err &&
	grep -x "Dropping nodes with <= 50718 B" err &&
	! grep -E " (alloc_calloc|recurse)\$" out &&
	test "$(row alloc_memalign out)" = "61440 61440" &&
	"$JHEAP" --show_bytes --nodecount=3 "$H" >out3 && test $(wc -l <out3) -eq 4
'

# --- --thread (w_threads: testdata/w_threads.c's table) ------------------
test_expect_success '--thread=N: that thread only, with its name' '
	"$JHEAP" --show_bytes --thread=3 "$PROFILES/w_threads.exact.heap" >out &&
	head -n 1 out >total && echo "Total (t3 worker-3): 245760 B" >expected &&
	test_cmp expected total && test "$(row worker out)" = "245760 245760"
'

test_expect_success "--thread='*': every thread with its heading, in order" '
	"$JHEAP" --show_bytes --thread="*" "$PROFILES/w_threads.exact.heap" >out &&
	grep "^Total" out | sed "s/:.*//" >headings &&
	printf "Total (t0)\nTotal (t1 worker-1)\nTotal (t2 worker-2)\nTotal (t3 worker-3)\nTotal (t4 worker-4)\n" >expected &&
	test_cmp expected headings &&
	grep "^Total (t4 worker-4): 327680 B" out
'

test_expect_success '--thread combines with --base (a thread minus itself is zero)' '
	"$JHEAP" --show_bytes --thread=2 --base "$PROFILES/w_threads.exact.heap" "$PROFILES/w_threads.exact.heap" >out &&
	head -n 1 out | grep -q "^Total (t2 worker-2): 0 B"
'

test_expect_success 'an unknown thread is an error' '
	"$JHEAP" --thread=77 "$PROFILES/w_threads.exact.heap" 2>err
	test $? -eq 1 && grep "no thread 77" err
'

# --- --list -------------------------------------------------------------
test_expect_success '--list: the realloc line carries alloc_realloc bytes, each routine once' '
	"$JHEAP" --show_bytes --list="^alloc_realloc\$" "$H" >out &&
	test $(grep -c "^ROUTINE" out) -eq 1 &&
	line=$(grep -n "hold(realloc(p, 200000));" "$SRCDIR/testdata/w_basic.c" | cut -d: -f1) &&
	grep -E "^2293760 2293760 +$line: .*realloc\(p, 200000\)" out &&
	test $(grep -cE "^ +\. +\. +[0-9]+:" out) -ge 5
'

test_expect_success '--list: a caller shows its call line as cumulative' '
	"$JHEAP" --show_bytes --list="caller_b" "$B" "$H" >out &&
	line=$(grep -n "leaf_alloc(70);" "$SRCDIR/testdata/w_basic.c" | cut -d: -f1) &&
	grep -E "^ +\. 358400 +$line:" out
'

test_expect_success '--list with --source-dir reads relocated sources' '
	mkdir -p moved/deep && cp "$SRCDIR/testdata/w_basic.c" moved/deep/ &&
	"$JHEAP" --show_bytes --list="^alloc_realloc\$" --source-dir="$TRASH_DIRECTORY/moved/deep" "$H" >out &&
	grep "realloc(p, 200000)" out
'

# --- --disasm ---------------------------------------------------------
test_expect_success '--disasm: the call to realloc carries alloc_realloc bytes' '
	"$JHEAP" --show_bytes --disasm="^alloc_realloc\$" "$H" >out &&
	test $(grep -c "^ROUTINE" out) -eq 1 &&
	grep -E "^2293760 2293760 +[0-9a-f]+: +call +[0-9a-f]+ <realloc@plt>" out &&
	grep -q "^-------------------- .*w_basic.c:" out
'

test_expect_success '--disasm: a caller shows its call as cumulative' '
	"$JHEAP" --show_bytes --disasm=caller_b "$H" >out &&
	grep -E "^ +\. 358400 +[0-9a-f]+: +call +[0-9a-f]+ <leaf_alloc>" out
'

test_expect_success '--disasm without objdump: a clear message, exit 1' '
	mkdir -p nobin && ln -sf "$(command -v dirname)" nobin/dirname &&
	PATH=$TRASH_DIRECTORY/nobin "$JHEAP" --disasm=caller_b "$H" 2>err
	test $? -eq 1 && grep "needs binutils. .objdump. program" err
'

# --- --growth -----------------------------------------------------------
test_expect_success '--growth: the steady leak ranks first, the cache and the spike do not' '
	LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,lg_prof_sample:0,prof_prefix:$TRASH_DIRECTORY/g ./w_growth &&
	test $(ls g.*.m*.heap | wc -l) -eq 10 &&
	"$JHEAP" --growth --show_bytes g.*.m*.heap >out &&
	sed -n 3p out | grep -E "^ +65536 +1\.00 +65536 +655360 +589824 leak_step\$" &&
	grep -E "^ +0 +0\.00 +8388608 +8388608 +0 build_cache\$" out &&
	! sed -n 3,4p out | grep spike
'

test_expect_success '--growth orders jemalloc dump names by sequence number' '
	"$JHEAP" --growth --show_bytes $(ls g.*.m*.heap | sort -r) >reversed &&
	test_cmp out reversed
'

test_expect_success '--growth --collapsed carries the fitted growth' '
	"$JHEAP" --growth --collapsed g.*.m*.heap >folded &&
	grep -E ";leak_step 589824\$" folded && ! grep build_cache folded
'

# A site that grows by 16 KiB a dump grows by 0.0156 MB: in MB the table
# shows it with two significant digits, not as a slope of 0.0.
test_expect_success '--growth in MB: a slow leak does not print a slope of 0.0' '
	for k in 1 2 3 4 5 6; do
		{
			printf "heap_v2/1\n  t*: %d: %d [0: 0]\n" $((k + 64)) $((16384 * k + 8388608))
			printf "@ 0x1001 0x2001\n  t*: %d: %d [0: 0]\n" $k $((16384 * k))
			printf "@ 0x1002 0x2002\n  t*: 64: 8388608 [0: 0]\n"
			printf "\nMAPPED_LIBRARIES:\n"
		} >slow.$k.heap || return 1
	done &&
	"$JHEAP" --growth --no-symbolize slow.[1-6].heap >mb &&
	sed -n 1p mb | grep "(MB per profile;" &&
	sed -n 3p mb | grep -E "^ +0\.016 +1\.00 +0\.016 +0\.094 +0\.078 0x0*1001\$" &&
	sed -n 4p mb | grep -E "^ +0\.0 +0\.00 +8\.0 +8\.0 +0\.0 0x0*1002\$" &&
	"$JHEAP" --growth --no-symbolize --show_bytes slow.[1-6].heap >bytes &&
	sed -n 3p bytes | grep -E "^ +16384 +1\.00 +16384 +98304 +81920 0x0*1001\$"
'

# --- --symbols ------------------------------------------------------------
test_expect_success '--symbols: maps and addresses on standard input, like jeprof' '
	nm "$PROFILES/w_basic_nopie" | awk "\$3 == \"alloc_malloc\" || \$3 == \"caller_b\" { print \"0x\" \$1 }" >addrs &&
	test $(wc -l <addrs) -eq 2 &&
	"$JHEAP" --symbols "$PROFILES/w_basic_nopie" <addrs >out &&
	sort out >sorted && printf "alloc_malloc\ncaller_b\n" >expected && test_cmp expected sorted &&
	"$JEPROF" --symbols "$PROFILES/w_basic_nopie" <addrs 2>/dev/null | sort >jeprof.out &&
	test_cmp jeprof.out sorted
'

test_done

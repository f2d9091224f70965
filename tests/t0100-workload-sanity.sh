#!/bin/bash
test_description='the workloads allocate what their tables say, checked with jeprof

This checks the workloads and the harness, not jheap: the generated dumps
are read by the installed jeprof, and every workload function must show the
amounts computed from the tables in testdata/ (tests/workloads.sh).

jeprof gets the leaf wrong in places (spec 3.3/3.4): for C++ new the leaf is
a jemalloc frame it names malloc_usable_size, so a function'"'"'s FLAT may be 0
there.  So only the CUM column is compared here; it does not depend on
which allocator frames jeprof leaves at the top.  The Total line is
compared with the sum of the dump'"'"'s stack records (heap_sum), unsampled
with jeprof'"'"'s formula.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/workloads.sh"

test_have_prog "$JEPROF" || test_skip "jeprof not found (install libjemalloc-dev)"
test_need_profiles

# jeprof_report OUT NAME VARIANT MODE [more flags]
jeprof_report() {
	local out=$1 name=$2 variant=$3 mode=$4
	shift 4
	# shellcheck disable=SC2046
	test_jeprof "$out" --text $(mode_flags "$mode") "$@" \
		"$(workload_binary "$name")" "$PROFILES/$name.$variant.heap"
}

# check_workload NAME EXPECT VARIANT MODE: jeprof's report on
# NAME.VARIANT.heap in MODE has the cum values of expect_EXPECT_MODE and
# the Total of the dump's own records.
check_workload() {
	local name=$1 expect=$2 variant=$3 mode=$4 total
	jeprof_report report "$name" "$variant" "$mode" || return 1
	total=$(heap_sum "$PROFILES/$name.$variant.heap" "$mode") || return 1
	check_total report "${total%.*}" &&
		"expect_${expect}_$mode" | cum_only | check_rows report
}

# Fill the jeprof cache in parallel first.
while read -r w variant mode _; do
	test_jeprof_bg jeprof_report /dev/null $w $variant $mode
done < <(workload_cases)
for k in 1 2 3 4; do
	test_jeprof_bg jeprof_report /dev/null w_threads exact inuse_space --thread=$k
done
for w in w_basic demo; do
	for mode in inuse_space inuse_objects; do
		test_jeprof_bg jeprof_report /dev/null $w sampled $mode
	done
done
test_jeprof_wait

while read -r w variant mode label; do
	test_expect_success "$w: jeprof --$mode matches the table ($label profile)" "
		check_workload $w $(workload_table $w) $variant $mode
	"
done < <(workload_cases)

test_expect_success 'main cum is the table total (w_basic, w_cpp, w_shlib, demo)' '
	jeprof_report basic w_basic exact inuse_space &&
	check_row basic main - $W_BASIC_INUSE_BYTES &&
	jeprof_report cpp w_cpp exact inuse_space &&
	check_row cpp main - $W_CPP_INUSE_BYTES &&
	jeprof_report shlib w_shlib exact inuse_space &&
	check_row shlib main - $W_SHLIB_INUSE_BYTES &&
	jeprof_report demo demo exact inuse_space &&
	check_row demo main - $DEMO_INUSE_BYTES
'

test_expect_success 'the only allocation outside main is libstdc++ init (81920 B)' '
	jeprof_report basic w_basic exact inuse_space &&
	check_total basic $((W_BASIC_INUSE_BYTES + 81920)) &&
	check_row basic _dl_init 0 81920
'

test_expect_success 'w_basic accum dump records transient with 0 in use' '
	grep "^  t\*: 0: 0 \[50: $((50 * 229376))\]\$" "$PROFILES/w_basic.accum.heap" &&
	! grep "^  t\*: 0: 0 \[" "$PROFILES/w_basic.exact.heap"
'

test_expect_success 'w_basic_nopie is a non-PIE executable, w_basic a PIE' '
	readelf -h "$PROFILES/w_basic_nopie" >nopie &&
	grep "Type: *EXEC" nopie &&
	readelf -h "$PROFILES/w_basic" >pie &&
	grep "Type: *DYN" pie
'

test_expect_success 'w_shlib: libwshared.so is mapped and named in the dump' '
	grep -E "r-xp .*/libwshared\.so\$" "$PROFILES/w_shlib.exact.heap"
'

test_expect_success 'w_threads: named threads with their own amounts in the dump' '
	f=$PROFILES/w_threads.exact.heap &&
	for k in 1 2 3 4; do
		grep "^  t$k: $((10 * k)): $((10 * k * 8192)) \[0: 0\] worker-$k\$" "$f" || return 1
	done
'

for k in 1 2 3 4; do
	test_expect_success "w_threads: jeprof --thread=$k shows worker-$k's blocks" "
		jeprof_report t$k w_threads exact inuse_space --thread=$k &&
		{ grep '^Total (t$k): $((10 * k * 8192)) B\$' t$k || { cat t$k; false; }; } &&
		expect_w_threads_thread $k inuse_space | check_rows t$k
	"
done

for w in w_basic demo; do
	test_expect_success "$w: the sampled dump is sampled (1 in 4096)" "
		f=\$PROFILES/$w.sampled.heap &&
		head -n 1 \"\$f\" >header &&
		echo heap_v2/4096 >expect &&
		test_cmp expect header &&
		raw=\$(awk '/^@/ { s = 1; next } s && \$1 == \"t*:\" { n += \$2 } END { print n + 0 }' \"\$f\") &&
		echo \"raw sampled objects: \$raw\" &&
		test \"\$raw\" -gt 0 &&
		test \"\$raw\" -lt \$(( ${w^^}_INUSE_OBJECTS / 2 ))
	"
	test_expect_success "$w: jeprof unsamples the sampled dump as spec section 2 says" "
		for mode in inuse_space inuse_objects; do
			jeprof_report r $w sampled \$mode &&
			total=\$(heap_sum \"\$PROFILES/$w.sampled.heap\" \$mode) &&
			got=\$(report_total r) &&
			echo \"\$mode: jeprof \$got, heap_sum \$total\" &&
			# jeprof sums in Perl hash order: allow 1 in the truncated total
			awk -v a=\"\$got\" -v b=\"\${total%.*}\" 'BEGIN { d = a - b; exit !(d <= 1 && d >= -1) }' ||
			return 1
		done
	"
	test_expect_success "$w: the unsampled estimate is near the truth" "
		jeprof_report r $w sampled inuse_space &&
		main=\$(report_row r main) &&
		echo \"main: \$main, true cum \$${w^^}_INUSE_BYTES\" &&
		awk -v v=\"\${main#* }\" -v t=\$${w^^}_INUSE_BYTES 'BEGIN { exit !(v > 0.7 * t && v < 1.3 * t) }'
	"
done

test_done

#!/bin/bash
test_description='jheap reports what the workloads allocated

jheap is checked against values computed by arithmetic from the workload
tables (tests/workloads.sh, the comment tables in testdata/), not against
jeprof.  jheap removes allocator frames, so each workload function is the
leaf of its own allocations: its FLAT is what it allocated, for C and C++
alike.  The Total line must equal the unsampled sum of the dump'"'"'s records
(heap_sum), the flat column must add up to it, and rows must be sorted by
value, then name in byte order.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/workloads.sh"

test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test_need_profiles


# jheap_report OUT NAME VARIANT MODE [more flags]
jheap_report() {
	local out=$1 name=$2 variant=$3 mode=$4
	shift 4
	# shellcheck disable=SC2046
	"$JHEAP" --text $(mode_flags "$mode") "$@" \
		"$(workload_binary "$name")" "$PROFILES/$name.$variant.heap" >"$out" 2>"$out.err" || {
		echo "jheap failed (exit $?): $JHEAP --text $(mode_flags "$mode") $* $name $variant"
		cat "$out.err"
		return 1
	}
}

# sum_of_flat FILE: the flat column added up.
sum_of_flat() {
	awk '$1 !~ /^Total/ && NF >= 6 { s += $1 } END { printf "%.0f\n", s }' "$1"
}

# check_sorted FILE: rows by flat descending, then name ascending (bytes).
check_sorted() {
	awk '
	$1 ~ /^Total/ || NF < 6 { next }
	{
		name = $0
		for (i = 0; i < 5; i++) sub(/^ *[^ ]+/, "", name)
		sub(/^ /, "", name)
		v = $1 + 0
		if (n++ && (v > pv || (v == pv && name < pn))) {
			printf "row %d out of order: \"%s\" (%s) after \"%s\" (%s)\n", n, name, $1, pn, pv
			bad = 1
		}
		pv = v; pn = name
	}
	END { exit bad }' "$1"
}

# check_workload NAME EXPECT VARIANT MODE
check_workload() {
	local name=$1 expect=$2 variant=$3 mode=$4 total
	jheap_report report "$name" "$variant" "$mode" || return 1
	total=$(heap_sum "$PROFILES/$name.$variant.heap" "$mode") || return 1
	check_total report "${total%.*}" &&
	"expect_${expect}_$mode" | check_rows report &&
	check_sorted report &&
	flat=$(sum_of_flat report) &&
	{ [ "$flat" = "${total%.*}" ] || { echo "sum of flat $flat, Total ${total%.*}"; return 1; }; }
}

while read -r w variant mode label; do
	test_expect_success "$w: --$mode flat and cum from the table ($label profile)" "
		check_workload $w $(workload_table $w) $variant $mode
	"
done < <(workload_cases)

test_expect_success 'main cum is the table total (w_basic, w_cpp, w_shlib, demo)' '
	jheap_report basic w_basic exact inuse_space &&
	check_row basic main 327680 $W_BASIC_INUSE_BYTES &&
	jheap_report cpp w_cpp exact inuse_space &&
	check_row cpp main 0 $W_CPP_INUSE_BYTES &&
	jheap_report shlib w_shlib exact inuse_space &&
	check_row shlib main 0 $W_SHLIB_INUSE_BYTES &&
	jheap_report demo demo exact inuse_space &&
	check_row demo main 0 $DEMO_INUSE_BYTES
'

test_expect_success 'w_cpp: the inlined make_buf is the leaf of fill_buffers'"'"' blocks' '
	jheap_report r w_cpp exact inuse_space &&
	check_row r make_buf $((64 * 4096)) $((64 * 4096)) &&
	check_row r fill_buffers 0 $((64 * 4096))
'

test_expect_success 'no allocator frame is shown (C, C++, shared library)' '
	for w in w_basic w_cpp w_shlib w_threads demo; do
		jheap_report r $w exact inuse_space || return 1
		if grep -E " (malloc|calloc|realloc|free|posix_memalign|aligned_alloc|operator new(\[\])?|malloc_usable_size|je_[a-z_]+|prof_[a-z_]+|imalloc[a-z_]*|fallback_impl|newImpl|void\* [a-z_]+)( \(inline\))?\$|libjemalloc" r; then
			echo "allocator frames in the $w report"
			return 1
		fi
	done
'

test_expect_success 'default unit is MB, %.1f of the byte total' '
	"$JHEAP" --text "$PROFILES/w_basic" "$PROFILES/w_basic.exact.heap" >r &&
	total=$(heap_sum "$PROFILES/w_basic.exact.heap" inuse_space) &&
	echo "Total: $(awk -v t=$total "BEGIN { printf \"%.1f\", t / 1048576 }") MB" >expect &&
	head -n 1 r >actual &&
	test_cmp expect actual
'

test_expect_success 'the same input gives the same output, byte for byte' '
	"$JHEAP" --text --show_bytes "$PROFILES/w_cpp" "$PROFILES/w_cpp.exact.heap" >one &&
	"$JHEAP" --text --show_bytes "$PROFILES/w_cpp" "$PROFILES/w_cpp.exact.heap" >two &&
	test_cmp one two
'

for w in w_basic demo; do
	for mode in inuse_space inuse_objects; do
		test_expect_success "$w: sampled profile, Total is the unsampled sum (--$mode)" "
			jheap_report r $w sampled $mode &&
			total=\$(heap_sum \"\$PROFILES/$w.sampled.heap\" $mode) &&
			check_total r \"\${total%.*}\"
		"
	done
done

for k in 1 2 3 4; do
	test_expect_success "w_threads: --thread=$k shows worker-$k's blocks only" "
		jheap_report r w_threads exact inuse_space --thread=$k &&
		{ grep '^Total (t$k worker-$k): $((10 * k * 8192)) B\$' r || { cat r; false; }; } &&
		expect_w_threads_thread $k inuse_space | check_rows r &&
		check_row r main none none
	"
done

# --lines: allocation sites and call sites on the right source lines.
test_expect_success 'w_basic --lines: allocation and call sites' '
	jheap_report r.raw w_basic exact inuse_space --lines &&
	lines_normalize <r.raw >r &&
	check_rows r <<-EOF
	$((100 * 10240)) $((100 * 10240)) alloc_malloc w_basic.c:$(src_line w_basic.c "hold(malloc(10000))")
	$((10 * 229376)) $((10 * 229376)) alloc_realloc w_basic.c:$(src_line w_basic.c "hold(realloc(p, 200000))")
	$((20 * 3072)) $((20 * 3072)) alloc_memalign w_basic.c:$(src_line w_basic.c "posix_memalign(&p, 64, 3000)")
	$((12 * 2048)) $((12 * 2048)) recurse w_basic.c:$(src_line w_basic.c "hold(malloc(2000))")
	0 $((8 * 2048)) recurse w_basic.c:$(src_line w_basic.c "recurse(depth - 1);")
	0 $((30 * 5120)) caller_a w_basic.c:$(src_line w_basic.c "leaf_alloc(30);")
	0 $((70 * 5120)) caller_b w_basic.c:$(src_line w_basic.c "leaf_alloc(70);")
	0 $((12 * 2048)) main w_basic.c:$(src_line w_basic.c "recurse(3);")
	327680 327680 main w_basic.c:$(src_line w_basic.c "hold(malloc(300000))")
	EOF
'

test_expect_success 'w_cpp --lines: inline frame and template method lines' '
	jheap_report r.raw w_cpp exact inuse_space --lines &&
	lines_normalize <r.raw >r &&
	check_rows r <<-EOF
	$((64 * 4096)) $((64 * 4096)) make_buf (inline) w_cpp.cc:$(src_line w_cpp.cc "char *p = new char[n];")
	0 $((64 * 4096)) fill_buffers w_cpp.cc:$(src_line w_cpp.cc "hold(make_buf(4000));")
	$((200 * 256)) $((200 * 256)) ns::Holder::add w_cpp.cc:$(src_line w_cpp.cc "T *t = new T;")
	$((30 * 10240)) $((30 * 10240)) make_ints w_cpp.cc:$(src_line w_cpp.cc "int *p = new int[2500];")
	EOF
'

test_expect_success 'w_shlib --lines: the shared library'"'"'s own source lines' '
	jheap_report r.raw w_shlib exact inuse_space --lines &&
	lines_normalize <r.raw >r &&
	check_rows r <<-EOF
	$((25 * 20480)) $((25 * 20480)) wshared_alloc_blocks w_shlib_lib.c:$(src_line w_shlib_lib.c "hold(malloc(20000));")
	$((10 * 40960)) $((10 * 40960)) wshared_inner w_shlib_lib.c:$(src_line w_shlib_lib.c "hold(malloc(40000));")
	0 $((10 * 40960)) wshared_alloc_nested w_shlib_lib.c:$(src_line w_shlib_lib.c "wshared_inner(10);")
	EOF
'

test_done

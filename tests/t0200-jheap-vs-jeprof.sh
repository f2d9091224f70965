#!/bin/bash
test_description='jheap agrees with jeprof on the same dumps and binaries

Differential test: jheap and the installed jeprof read the same generated
dump with the same binary, in the integer modes (--show_bytes,
--inuse_objects, --alloc_space --show_bytes, --alloc_objects).  Compared:
the "Total:" line, byte for byte, and the flat and cum values of the
workload'"'"'s own functions (those symbolized from DWARF in the workload binary
or libwshared.so).

Rules where jheap deliberately differs from jeprof, applied here:
 1. Allocator frames.  jheap removes every frame inside libjemalloc and every
    skip-listed name, so the user function is the leaf.  jeprof names
    frames of Debian'"'"'s stripped libjemalloc after the nearest exported
    symbol (spec 3.3): C malloc/calloc/realloc/posix_memalign come out
    right by accident, but for C++ new the leaf is "malloc_usable_size".
    So for w_cpp only CUM is compared (jheap'"'"'s FLAT is checked against the
    tables in t0210); for the C workloads FLAT and CUM are both compared.
 2. Rows of libc/libstdc++/ld.so frames are not compared: jeprof names them
    from nm tables ("std::__throw_ios_failure@@GLIBCXX_3.4.26" is really
    libstdc++'"'"'s emergency-pool constructor), jheap from debug info.
 3. Inline frames: jeprof'"'"'s addr2line pass names an inlined callee after
    its caller ("fill_buffers (inline)" instead of make_buf, spec 6 #7), so
    rows marked "(inline)" are not compared.
 4. Names are compared as jeprof shortens them (ShortFunctionName); a jheap
    row matches when its name, shortened the same way, is equal.
 5. --lines: the file part is compared by base name, without
    "(discriminator N)" (addr2line and libdw print paths differently).
 6. Sampled dumps: values are sums of unsampled doubles, printed truncated;
    jeprof adds them in Perl hash order, so each value may differ by 1.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/workloads.sh"

test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test_have_prog "$JEPROF" || test_skip "jeprof not found (install libjemalloc-dev)"
test_need_profiles


# report TOOL OUT NAME VARIANT MODE [more flags]: TOOL is jeprof or jheap.
report() {
	local tool=$1 out=$2 name=$3 variant=$4 mode=$5
	shift 5
	set -- --text $(mode_flags "$mode") "$@" \
		"$(workload_binary "$name")" "$PROFILES/$name.$variant.heap"
	if [ "$tool" = jeprof ]; then
		test_jeprof "$out" "$@"
	else
		"$JHEAP" "$@" >"$out" 2>"$out.err" || {
			echo "jheap failed (exit $?): $JHEAP $*"
			cat "$out.err"
			return 1
		}
	fi
}

# same_values A B TOL: "flat cum" pairs equal within TOL; "-" ignores flat.
same_values() {
	awk -v a="$1" -v b="$2" -v tol="$3" -v flat="$4" 'BEGIN {
		if (a == "" || b == "") exit !(a == b)
		split(a, x, " "); split(b, y, " ")
		d = x[2] - y[2]; if (d < -tol || d > tol) exit 1
		if (flat == "flat") { d = x[1] - y[1]; if (d < -tol || d > tol) exit 1 }
		exit 0
	}'
}

# compare_rows JEPROF JHEAP WHAT TOL NAME...: WHAT is "flat" (flat and cum)
# or "cum" (cum only).
compare_rows() {
	local je=$1 jh=$2 what=$3 tol=$4 n a b rc=0
	shift 4
	for n in "$@"; do
		a=$(report_row "$je" "$n")
		b=$(report_row "$jh" "$n")
		if ! same_values "$a" "$b" "$tol" "$what"; then
			echo "row '$n': jeprof '${a:-no row}', jheap '${b:-no row}' (comparing $what)"
			rc=1
		fi
	done
	return $rc
}

# same_total JEPROF JHEAP TOL
# jheap adds the thread's name to a --thread heading ("Total (t1 worker-1):"
# where jeprof prints "Total (t1):"); the name is dropped before comparing.
same_total() {
	local a b
	a=$(grep -m1 '^Total' "$1" | sed 's/^Total (t\([0-9]*\) [^)]*)/Total (t\1)/')
	b=$(grep -m1 '^Total' "$2" | sed 's/^Total (t\([0-9]*\) [^)]*)/Total (t\1)/')
	[ -n "$a" ] && [ "$a" = "$b" ] && return 0
	# with a tolerance: same words, numbers within it
	if [ "$3" -gt 0 ] && [ -n "$a" ] && [ -n "$b" ] &&
		awk -v a="$a" -v b="$b" -v t="$3" 'BEGIN {
			na = split(a, x, " "); nb = split(b, y, " ")
			if (na != nb) exit 1
			for (i = 1; i <= na; i++) {
				if (x[i] ~ /^[0-9.]+$/) { d = x[i] - y[i]; if (d < -t || d > t) exit 1 }
				else if (x[i] != y[i]) exit 1
			}
			exit 0
		}'; then
		return 0
	fi
	echo "jeprof: '$a'"
	echo "jheap:  '$b'"
	return 1
}

# The workload's own function names, from its expectation table.
functions_of() {
	"expect_$1_inuse_space" | cut -d' ' -f3- | sort -u
}

# what_for NAME: w_cpp compares cum only (rule 1).
what_for() {
	case $1 in w_cpp) echo cum ;; *) echo flat ;; esac
}

# differ NAME VARIANT MODE TOL [flags]
differ() {
	local name=$1 variant=$2 mode=$3 tol=$4 e
	shift 4
	e=$(workload_table "$name")
	report jeprof je "$name" "$variant" "$mode" "$@" &&
	report jheap jh "$name" "$variant" "$mode" "$@" &&
	same_total je jh "$tol" &&
	compare_rows je jh "$(what_for "$name")" "$tol" $(functions_of "$e")
}

# Fill the jeprof cache in parallel first (same runs as the tests below).
while read -r w variant mode _; do
	test_jeprof_bg report jeprof /dev/null $w $variant $mode
done < <(workload_cases)
for w in w_basic demo; do
	for mode in inuse_space inuse_objects; do
		test_jeprof_bg report jeprof /dev/null $w sampled $mode
	done
done
for w in w_basic w_cpp w_shlib demo; do
	test_jeprof_bg report jeprof /dev/null $w exact inuse_space --lines
done
for k in 1 2 3 4; do
	test_jeprof_bg report jeprof /dev/null w_threads exact inuse_space --thread=$k
done
test_jeprof_wait

while read -r w variant mode label; do
	test_expect_success "$w: jheap = jeprof, --$mode ($label profile)" "
		differ $w $variant $mode 0
	"
done < <(workload_cases)

for w in w_basic demo; do
	for mode in inuse_space inuse_objects; do
		test_expect_success "$w: jheap = jeprof, --$mode (sampled profile, unsampled)" "
			differ $w sampled $mode 1
		"
	done
done

for k in 1 2 3 4; do
	test_expect_success "w_threads: jheap = jeprof, --thread=$k" "
		differ w_threads exact inuse_space 0 --thread=$k
	"
done

# --lines: every jeprof row of a workload function (rule 3: not inline
# rows) has the same values in jheap's report, after rule 5.
differ_lines() {
	local name=$1 what fns
	what=$(what_for "$name")
	report jeprof je.raw "$name" exact inuse_space --lines &&
	report jheap jh.raw "$name" exact inuse_space --lines &&
	same_total je.raw jh.raw 0 &&
	lines_normalize <je.raw >je &&
	lines_normalize <jh.raw >jh &&
	fns=$(functions_of "$name" | sed 's/$/ /') &&
	awk -v fns="$fns" '
		BEGIN { n = split(fns, f, "\n") }
		NF >= 6 && !/\(inline\)/ {
			name = $0
			for (i = 0; i < 5; i++) sub(/^ *[^ ]+/, "", name)
			sub(/^ /, "", name)
			for (i = 1; i <= n; i++)
				if (f[i] != "" && index(name, f[i]) == 1) { print name; break }
		}' je | sort -u >rows &&
	test -s rows &&
	rc=0 &&
	while read -r row; do
		compare_rows je jh "$what" 0 "$row" || rc=1
	done <rows &&
	return $rc
}

for w in w_basic w_cpp w_shlib demo; do
	test_expect_success "$w: jheap = jeprof, --lines (exact profile)" "
		differ_lines $w
	"
done

test_done

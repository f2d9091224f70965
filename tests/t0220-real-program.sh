#!/bin/bash
test_description='a real program the project did not write (Debian python3.11-dbg): jheap agrees with jeprof'
. "$(dirname "$0")/lib.sh"

# python3.11d is Debian's debug build of CPython (-O0, full DWARF, not
# stripped).  With PYTHONMALLOC=malloc every object goes through jemalloc.
PY=/usr/bin/python3.11d
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
[ -x "$PY" ] || test_skip "python3.11-dbg is not installed"
test_have_prog "$JEPROF" || test_skip "no jeprof"

test_expect_success 'make interval dumps of python3.11d (sampled, prof_accum)' '
	PYTHONMALLOC=malloc LD_PRELOAD=$JEMALLOC \
	MALLOC_CONF=prof:true,lg_prof_interval:24,lg_prof_sample:10,prof_accum:true,prof_prefix:$TRASH_DIRECTORY/py \
	"$PY" -c "
import json, collections
d = [{\"k%d\" % i: list(range(i % 50))} for i in range(60000)]
s = json.dumps(d)
x = [s[i:i+100] for i in range(0, len(s), 100)]
c = collections.Counter(s)
" &&
	ls py.*.i*.heap >dumps && test $(wc -l <dumps) -ge 3
'

# compare MODE: every function both tools name must have the same flat and
# cum; rows only jeprof has must be one of its known misnamings:
#  - "name@hex": jeprof splits distinct functions sharing a short name
#    (static copies of one inline function in several files); jheap merges
#    them into one row, as pprof does;
#  - a libstdc++ address jeprof names after the nearest exported symbol
#    (std::__throw_ios_failure), which jheap shows as libstdc++.so.6+0x...;
#  - libc's internal aliases (__GI_*) that jeprof takes from nm where
#    jheap uses the DWARF name;
#  - a function jheap knows to be inlined ("name (inline)", from DWARF)
#    where jeprof, which reads no inline frames for stripped libraries,
#    shows "name": the values must still agree.
# One difference in flat is explained: where an allocator function is
# inlined into a function F (ld.so's own malloc and calloc wrappers),
# jheap cuts only the inline allocator frame and F is the leaf, while
# jeprof cuts the whole frame and gives the flat to F's caller.  Then the
# cums agree, and the flat jeprof has more on a function M is the sum of
# jheap's stacks whose leaf is in a function F (F itself or its inline
# frames) called from M, where F is a row jeprof has not (to within 1 per
# such stack: values are rounded per stack and per row).
# The sum is taken over every such F: with sampling, one caller may have
# one of them in one run and two in the next.
compare() {
	"$JHEAP" --text $1 "$PY" "$heap" >jheap.txt &&
	"$JHEAP" --collapsed $1 "$PY" "$heap" >jheap.stacks &&
	"$JEPROF" --text $1 "$PY" "$heap" >jeprof.txt 2>/dev/null &&
	head -n 1 jheap.txt >total.jheap && head -n 1 jeprof.txt >total.jeprof &&
	test_cmp total.jeprof total.jheap &&
	awk "
		FILENAME == \"jheap.stacks\" { v = \$NF; x = \$0; sub(/ -?[0-9]+\$/, \"\", x); st[FNR] = x; sv[FNR] = v; nst = FNR; next }
		FILENAME == \"jheap.txt\" { if (FNR > 1) { n = \$6; for (i = 7; i <= NF; i++) n = n \" \" \$i; f[n] = \$1; c[n] = \$4 } next }
		FNR > 1 {
			n = \$6; for (i = 7; i <= NF; i++) n = n \" \" \$i
			seen[n] = 1
			if (n in f && c[n] == \$4 && f[n] != \$1) { both++; moved[n] = \$1 - f[n] }
			else if (n in f) { both++; if (f[n] != \$1 || c[n] != \$4) { bad++; print \"differ:\", n, f[n], c[n], \"jeprof:\", \$1, \$4 } }
			else if ((n \" (inline)\") in f) { both++; if (f[n \" (inline)\"] != \$1 || c[n \" (inline)\"] != \$4) { bad++; print \"differ:\", n } }
			else if (n !~ /@[0-9a-f]+\$/ && n !~ /^std::__throw_ios_failure/ && n !~ /^__GI_/) { odd++; print \"jeprof only:\", n }
		}
		END {
			# per M: the stacks whose leaf function jeprof has not, called from M
			for (k = 1; k <= nst; k++) {
				nf = split(st[k], fr, \";\")
				j = nf; while (j > 1 && fr[j] ~ / [(]inline[)]\$/) j--
				if (j < 2 || (fr[j] in seen)) continue
				up = fr[j - 1]; sub(/ [(]inline[)]\$/, \"\", up)
				add[up] += sv[k]; cnt[up]++
			}
			for (m in moved) {
				d = add[m] - moved[m]; if (d < 0) d = -d
				if (!(m in add) || d > cnt[m]) { bad++; print \"differ:\", m, \"flat\", f[m], \"jeprof: +\" moved[m], \"under it in jheap:\", add[m] + 0 }
				else print \"moved:\", moved[m], \"from\", m, \"to\", cnt[m], \"leaves under it\"
			}
			print both + 0, bad + 0, odd + 0 > \"counts\"
		}" jheap.stacks jheap.txt jeprof.txt &&
	read both bad odd <counts &&
	echo "$1: $both functions compared, $bad differ, $odd unexplained" &&
	test "$both" -ge 100 && test "$bad" -eq 0 && test "$odd" -eq 0
}

for mode in --show_bytes --inuse_objects --alloc_space --alloc_objects; do
	test_expect_success "every function agrees with jeprof ($mode)" '
		heap=$(tail -n 1 dumps) && compare '$mode'
	'
done

test_expect_success 'the top rows are real python functions, no allocator frames' '
	heap=$(tail -n 1 dumps) &&
	"$JHEAP" --text --nodecount=5 "$PY" "$heap" >top &&
	sed -n 2p top | grep -q " _PyMem_RawMalloc\$" &&
	! grep -E " (malloc|calloc|realloc|je_|prof_|imalloc|operator new)" top
'

test_expect_success 'the binary is found from the dump when not given' '
	heap=$(tail -n 1 dumps) &&
	"$JHEAP" --text "$PY" "$heap" >with &&
	"$JHEAP" --text "$heap" >without &&
	test_cmp with without
'

test_expect_success 'one or two symbolizer threads give the same bytes' '
	heap=$(tail -n 1 dumps) &&
	JHEAP_THREADS=1 "$JHEAP" --lines --show_bytes "$PY" "$heap" >one &&
	JHEAP_THREADS=2 "$JHEAP" --lines --show_bytes "$PY" "$heap" >two &&
	test_cmp one two && test $(wc -l <one) -gt 500 &&
	JHEAP_THREADS=2 "$JHEAP" --proto -o two.pb.gz "$PY" "$heap" &&
	JHEAP_THREADS=1 "$JHEAP" --proto -o one.pb.gz "$PY" "$heap" &&
	cmp one.pb.gz two.pb.gz
'

test_expect_success 'several interval dumps are summed' '
	a=$(sed -n 1p dumps) && b=$(sed -n 2p dumps) &&
	"$JHEAP" --text --show_bytes "$a" "$b" | head -n 1 >sum &&
	"$JEPROF" --text --show_bytes "$PY" "$a" "$b" 2>/dev/null | head -n 1 >expected &&
	test_cmp expected sum
'

test_done

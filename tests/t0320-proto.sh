#!/bin/bash
test_description='--proto: gzipped pprof profile.proto, read by go tool pprof

The real client reads every file: go tool pprof -top, -traces and -raw
(-symbolize=none for the symbolized form).  Its numbers must be jheap'"'"'s
own --text numbers for the same dump:
 - -top with -unit=B -nodefraction=0: the total, and the flat value of every
   row, equal --text --show_bytes (rows compared by name, with pprof'"'"'s
   "(inline)"/"(partial-inline)" label and jheap'"'"'s " (inline)" suffix
   removed, jheap'"'"'s inline and non-inline rows of a name added up: pprof
   makes one node of them);
 - -sample_index=inuse_objects equals --text --inuse_objects, and the alloc
   types of a prof_accum dump equal --alloc_space/--alloc_objects.
Exact dumps (sampling period 1) must agree to the unit.  Sampled dumps are
written per stack truncated to integers while --text truncates the sums,
so there each value may differ by less than the number of stacks in the dump.
The --no-symbolize form is symbolized by pprof itself from the binaries
(go tool pprof for C; the standalone pprof of golang-github-google-pprof-dev,
built once into $BUILD_DIR/tools, for -O2 C++ with inline frames).'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/workloads.sh"

test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test_have_prog go || test_skip "go not found (install golang-go)"
test_need_profiles

TOOLS=$BUILD_DIR/tools
export HOME=$TRASH_DIRECTORY GOPATH=$TRASH_DIRECTORY/go GOCACHE=$TOOLS/gocache GOFLAGS=
export PPROF_BINARY_PATH=$TRASH_DIRECTORY/no-binaries PPROF_TMPDIR=$TRASH_DIRECTORY
mkdir -p "$TOOLS" || exit 1
GOSRC=/usr/share/gocode/src/github.com/google/pprof

# Tools built from pprof's own sources (package golang-github-google-pprof-dev):
# the standalone pprof, whose symbolizer handles C++ and inline frames, and
# protocheck below, which reads a file with pprof's profile package.
if [ -d "$GOSRC" ]; then
	test_step "building pprof and protocheck from golang-github-google-pprof-dev"
	if [ -x "$TOOLS/pprof" ] ||
		GO111MODULE=off GOPATH=/usr/share/gocode go build -o "$TOOLS/pprof" \
			github.com/google/pprof >"$TRASH_DIRECTORY/pprof-build.log" 2>&1; then
		test_set_prereq PPROF
	fi
	cat >protocheck.go <<'EOF'
// protocheck FILE: reads FILE with pprof's profile package and prints what
// t0320 checks: ids numbered 1..N in order, every mapping a real range
// holding its locations, and for each name on stdin whether drop_frames
// (anchored as pprof does) matches it.
package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"

	"github.com/google/pprof/profile"
)

func main() {
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	p, err := profile.Parse(f)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	ok := true
	for i, m := range p.Mapping {
		if m.ID != uint64(i+1) || m.Limit <= m.Start {
			fmt.Printf("mapping %d: id %d, range %#x-%#x\n", i, m.ID, m.Start, m.Limit)
			ok = false
		}
	}
	for i, l := range p.Location {
		if l.ID != uint64(i+1) {
			fmt.Printf("location %d has id %d\n", i, l.ID)
			ok = false
		}
		if m := l.Mapping; m != nil && (l.Address < m.Start || l.Address >= m.Limit) {
			fmt.Printf("location %d: %#x outside mapping %d\n", l.ID, l.Address, m.ID)
			ok = false
		}
	}
	for i, fn := range p.Function {
		if fn.ID != uint64(i+1) {
			fmt.Printf("function %d has id %d\n", i, fn.ID)
			ok = false
		}
	}
	if ok {
		fmt.Println("ids and ranges ok")
	}
	fmt.Printf("drop_frames set: %v\n", p.DropFrames != "")
	if p.DropFrames == "" {
		return
	}
	rx, err := regexp.Compile("^(" + p.DropFrames + ")$")
	if err != nil {
		fmt.Println("drop_frames does not compile:", err)
		os.Exit(1)
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fmt.Printf("%v %s\n", rx.MatchString(in.Text()), in.Text())
	}
}
EOF
	if GO111MODULE=off GOPATH=/usr/share/gocode go build -o protocheck protocheck.go \
		>protocheck-build.log 2>&1; then
		test_set_prereq PROTOCHECK
	fi
fi
if test_have_prog script; then
	test_set_prereq SCRIPT
fi

# proto NAME VARIANT OUT [flags]: jheap --proto of a workload dump.
proto() {
	local name=$1 variant=$2 out=$3
	shift 3
	jheap_into "$out" --proto "$@" "$(workload_binary "$name")" "$PROFILES/$name.$variant.heap"
}

# text NAME VARIANT OUT [flags]: jheap --text of the same.
text() {
	local name=$1 variant=$2 out=$3
	shift 3
	jheap_into "$out" --text "$@" "$(workload_binary "$name")" "$PROFILES/$name.$variant.heap"
}

# pp ARGS...: go tool pprof, its stderr kept in pp.err.
pp() {
	go tool pprof "$@" 2>pp.err || {
		echo "go tool pprof $* failed:"
		cat pp.err
		return 1
	}
}

# top_rows <pprof -top: "NAME<TAB>FLAT" for every nonzero flat, sorted.
top_rows() {
	awk '
	/^ *flat  *flat%/ { rows = 1; next }
	rows && NF >= 6 {
		flat = $1; sub(/B$/, "", flat)
		name = $0
		for (i = 0; i < 5; i++) sub(/^ *[^ ]+/, "", name)
		sub(/^  */, "", name)
		sub(/ \((partial-)?inline\)$/, "", name)
		if (flat != 0) print name "\t" flat
	}' | sort
}

# text_rows <jheap --text: the same from jheap'"'"'s rows, inline and
# non-inline rows of a name added up.
text_rows() {
	awk '
	$1 == "Total:" { next }
	NF >= 6 {
		name = $0
		for (i = 0; i < 5; i++) sub(/^ *[^ ]+/, "", name)
		sub(/^ /, "", name)
		sub(/ \(inline\)$/, "", name)
		sum[name] += $1
	}
	END { for (n in sum) if (sum[n] != 0) printf "%s\t%.0f\n", n, sum[n] }' | sort
}

# top_total <pprof -top: T of "Showing nodes accounting for X, P% of T total".
top_total() {
	sed -n 's/^Showing nodes accounting for .* of \(-*[0-9]*\)B* total$/\1/p'
}

# same_rows A B TOL: two "NAME<TAB>VALUE" lists name the same rows, values
# within TOL; with TOL "<N", each value of B (pprof's) is at most A's
# (jheap's) and less than N below it.
same_rows() {
	if [ "$3" = 0 ]; then
		test_cmp "$1" "$2"
		return
	fi
	awk -F'\t' -v tol="$3" '
	NR == FNR { a[$1] = $2; next }
	{ b[$1] = $2 }
	END {
		rc = 0
		below = tol ~ /^</
		if (below) tol = substr(tol, 2) + 0
		for (n in a) {
			if (!(n in b)) { print "only in " ARGV[1] ": " n; rc = 1; continue }
			d = a[n] - b[n]
			if (below ? (d < 0 || d >= tol) : (d < -tol || d > tol)) {
				print n ": " a[n] " vs " b[n]; rc = 1
			}
		}
		for (n in b) if (!(n in a)) { print "only in " ARGV[2] ": " n; rc = 1 }
		exit rc
	}' "$1" "$2"
}

# tolerance VARIANT NAME: 0 for exact dumps (sampling period 1: every
# value an integer).  A sampled dump's unsampled values have fractions: a
# pprof sample holds its stack's value truncated toward zero, and a --text
# row the sum of its stacks' values, truncated.  A pprof row (the sum of
# the truncated values) is an integer at most that sum, so at most the
# --text row, and less than the number of its stacks below it: "<N", N
# the number of stacks in the dump.  The totals are checked exactly (agree).
tolerance() {
	case $1 in
	sampled) echo "<$(grep -c '^@' "$PROFILES/$2.$1.heap")" ;;
	*) echo 0 ;;
	esac
}

# Every jheap run of the tests below, made in parallel first: --proto
# into NAME.VARIANT[.TAG].pb.gz, --text into NAME.VARIANT.MODE.txt (and
# .TAG.txt), each with a .log of failures.
# diff_job OUT FLAGS...: demo.sampled minus w_basic.exact, binaries from the maps
diff_job() {
	local out=$1
	shift
	jheap_into "$out" "$@" --base "$PROFILES/w_basic.exact.heap" "$PROFILES/demo.sampled.heap"
}

# job OUT CMD...: CMD in the background (its jheap runs are bounded by
# jheap_into, so "wait" below returns)
job() {
	local out=$1
	shift
	"$@" >"$out.log" 2>&1 &
}
prepare() {
	local w v m
	for w in w_basic w_cpp w_shlib w_threads demo; do
		for v in exact sampled accum; do
			case $v.$w in
			sampled.w_basic | sampled.demo | exact.* | accum.w_basic | accum.w_cpp | accum.demo) ;;
			*) continue ;;
			esac
			job $w.$v.pb.gz proto $w $v $w.$v.pb.gz
			case $v in
			accum) set -- alloc_space alloc_objects ;;
			*) set -- inuse_space inuse_objects ;;
			esac
			for m in "$@"; do
				job $w.$v.$m.txt text $w $v $w.$v.$m.txt $(mode_flags $m)
			done
		done
	done
	for w in w_basic w_shlib w_cpp; do
		job $w.exact.unsym.pb.gz proto $w exact $w.exact.unsym.pb.gz --no-symbolize
	done
	job w_basic.exact.keep.pb.gz proto w_basic exact w_basic.exact.keep.pb.gz --keep-allocator-frames
	job w_basic.exact.keep.txt text w_basic exact w_basic.exact.keep.txt --keep-allocator-frames --show_bytes
	job w_basic.accum.io.pb.gz proto w_basic accum w_basic.accum.io.pb.gz --inuse_objects
	job w_basic.accum.as.pb.gz proto w_basic accum w_basic.accum.as.pb.gz --alloc_space
	job demo.exact.again.pb.gz proto demo exact demo.exact.again.pb.gz
	for flt in --focus=caller_a --ignore=caller_a --exclude=leaf_alloc '--retain=main|leaf_alloc|caller_b'; do
		job w_basic.exact.$flt.pb.gz proto w_basic exact w_basic.exact.$flt.pb.gz "$flt"
		job w_basic.exact.$flt.txt text w_basic exact w_basic.exact.$flt.txt "$flt" --show_bytes
	done
	# the base is another program (so no BINARY: each dump names its
	# own), so that the diff surely has rows of both signs; sampled minus
	# exact of one program may come out all positive
	job demo.diff.pb.gz diff_job demo.diff.pb.gz --proto
	job demo.diff.txt diff_job demo.diff.txt --text --show_bytes
	job demo.same.pb.gz proto demo accum demo.same.pb.gz --base "$PROFILES/demo.exact.heap"
	wait
}
test_step "making the --proto and --text files of the checks below"
prepare

# made F...: the prepared files F were made without error.
made() {
	local f rc=0
	for f in "$@"; do
		if [ -s "$f.log" ] || [ ! -s "$f" ]; then
			echo "making $f failed:"
			cat "$f.log"
			rc=1
		fi
	done
	return $rc
}

# agree NAME VARIANT MODE: pprof -top of the --proto file = jheap --text.
agree() {
	local name=$1 variant=$2 mode=$3 tol pb=$1.$2.pb.gz t=$1.$2.$3.txt tt= pt= want_tt= want_pt=
	tol=$(tolerance "$variant" "$name")
	made "$pb" "$t" &&
	pp -symbolize=none -top -unit=B -nodefraction=0 -sample_index="$mode" "$pb" >top.txt &&
	grep -qx "Type: $mode" top.txt &&
	top_rows <top.txt >pprof.rows &&
	text_rows <"$t" >jheap.rows &&
	test -s jheap.rows &&
	same_rows jheap.rows pprof.rows "$tol" &&
	tt=$(report_total "$t") && pt=$(top_total <top.txt) &&
	# the totals from the dump itself: --text truncates the sum, pprof
	# adds the truncated values of the stacks
	want_tt=$(heap_sum "$PROFILES/$name.$variant.heap" "$mode" | sed "s/\..*//") &&
	want_pt=$(heap_sum "$PROFILES/$name.$variant.heap" "$mode" truncated) &&
	test "$tt" = "$want_tt" && test "$pt" = "$want_pt" || {
		echo "totals: jheap --text $tt, pprof $pt; from the dump: $want_tt and $want_pt"
		return 1
	}
}

for w in w_basic w_cpp w_shlib w_threads demo; do
	for mode in inuse_space inuse_objects; do
		test_expect_success "$w exact: pprof -top = jheap --text, $mode" "
			agree $w exact $mode
		"
	done
done
for w in w_basic demo; do
	for mode in inuse_space inuse_objects; do
		test_expect_success "$w sampled: pprof -top = jheap --text, $mode" "
			agree $w sampled $mode
		"
	done
done
for w in w_basic w_cpp demo; do
	for mode in alloc_space alloc_objects; do
		test_expect_success "$w prof_accum: pprof -top = jheap --text, $mode" "
			agree $w accum $mode
		"
	done
done

test_expect_success 'sample types: Go heap order with prof_accum, in-use only without' '
	made w_basic.accum.pb.gz w_basic.exact.pb.gz w_basic.sampled.pb.gz &&
	pp -symbolize=none -raw w_basic.accum.pb.gz >a.raw &&
	pp -symbolize=none -raw w_basic.exact.pb.gz >e.raw &&
	pp -symbolize=none -raw w_basic.sampled.pb.gz >s.raw &&
	grep -x "alloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes\[dflt\]" a.raw &&
	grep -x "inuse_objects/count inuse_space/bytes\[dflt\]" e.raw &&
	grep -x "PeriodType: space bytes" e.raw &&
	grep -x "Period: $(sed -n "1s|^heap_v2/||p" "$PROFILES/w_basic.exact.heap")" e.raw &&
	grep -x "Period: $(sed -n "1s|^heap_v2/||p" "$PROFILES/w_basic.sampled.heap")" s.raw
'

test_expect_success 'default_sample_type is the value chosen on the command line' '
	made w_basic.accum.io.pb.gz w_basic.accum.as.pb.gz w_basic.accum.alloc_space.txt &&
	pp -symbolize=none -raw w_basic.accum.io.pb.gz | grep -x "alloc_objects/count alloc_space/bytes inuse_objects/count\[dflt\] inuse_space/bytes" &&
	pp -symbolize=none -top w_basic.accum.io.pb.gz | grep -x "Type: inuse_objects" &&
	pp -symbolize=none -top -unit=B -nodefraction=0 w_basic.accum.as.pb.gz >top.txt &&
	grep -x "Type: alloc_space" top.txt &&
	top_rows <top.txt >pprof.rows &&
	text_rows <w_basic.accum.alloc_space.txt >jheap.rows &&
	test_cmp jheap.rows pprof.rows
'

test_expect_success 'w_cpp: inline frames show as (inline), innermost first' '
	made w_cpp.exact.pb.gz &&
	pp -symbolize=none -traces w_cpp.exact.pb.gz >traces &&
	grep -A1 "make_buf (inline)\$" traces | tail -1 | grep "^ *fill_buffers\$" &&
	grep "std::vector::push_back (inline)\$" traces &&
	pp -symbolize=none -raw w_cpp.exact.pb.gz >raw &&
	sed -n "/^Locations/,/^Mappings/p" raw >locs &&
	grep -A1 " make_buf .*w_cpp.cc:" locs | tail -1 | grep "^  *fill_buffers .*w_cpp.cc:"
'

test_expect_success 'w_threads: one sample per thread, labelled, not counted twice' '
	made w_threads.exact.pb.gz w_threads.exact.inuse_space.txt &&
	pp -symbolize=none -raw w_threads.exact.pb.gz >raw &&
	for k in 1 2 3 4; do
		grep -x "  *thread:\[t$k\] thread_name:\[worker-$k\]" raw || return 1
		pp -symbolize=none -top -unit=B -nodefraction=0 -tagfocus="thread=^t$k\$" w_threads.exact.pb.gz |
			top_rows >k.rows &&
		printf "worker\t%s\n" "$(expect_w_threads_thread $k inuse_space | cut -d" " -f1)" >want &&
		test_cmp want k.rows || return 1
	done &&
	pp -symbolize=none -top -unit=B w_threads.exact.pb.gz | top_total >pt &&
	report_total w_threads.exact.inuse_space.txt >tt &&
	test_cmp tt pt
'

test_expect_success '--thread=3: that thread'"'"'s samples only, labelled' '
	"$JHEAP" --proto --thread=3 "$PROFILES/w_threads" "$PROFILES/w_threads.exact.heap" >t3.pb.gz &&
	pp -symbolize=none -raw t3.pb.gz >raw &&
	grep -x "  *thread:\[t3\] thread_name:\[worker-3\]" raw &&
	! grep "thread:\[t[0124]\]" raw &&
	pp -symbolize=none -top -unit=B -nodefraction=0 t3.pb.gz | top_rows >rows &&
	printf "worker\t%s\n" "$(expect_w_threads_thread 3 inuse_space | cut -d" " -f1)" >want &&
	test_cmp want rows
'

test_expect_success 'two runs give the same bytes; gzip header has no time stamp' '
	made demo.exact.pb.gz demo.exact.again.pb.gz &&
	cmp demo.exact.pb.gz demo.exact.again.pb.gz &&
	"$JHEAP" --proto -o c.pb.gz "$PROFILES/demo" "$PROFILES/demo.exact.heap" &&
	cmp demo.exact.pb.gz c.pb.gz &&
	test "$(od -An -tx1 -N8 c.pb.gz | tr -d " ")" = 1f8b080000000000
'

test_expect_success SCRIPT 'refuses to write to a terminal and says to use -o' '
	script -qec "\"$JHEAP\" --proto \"$PROFILES/demo.exact.heap\"; echo rc=\$?" /dev/null >tty.out </dev/null &&
	grep "terminal" tty.out && grep -e "-o FILE" tty.out && grep "rc=2" tty.out &&
	! grep -a "$(printf "\037\213")" tty.out
'

# drop_frames only where pprof symbolizes (--no-symbolize): a symbolized
# profile is cut already, and pprof's cut (up to the outermost match)
# would also cut a program's frames above an allocator callback.
test_expect_success PROTOCHECK 'ids are 1..N, mappings are real ranges, drop_frames is the allocator list' '
	made w_cpp.exact.pb.gz w_shlib.exact.unsym.pb.gz &&
	cat >names <<-\EOF &&
	malloc
	calloc
	operator new
	operator new[]
	je_malloc_default
	_rjem_mallocx
	void* fallback_impl
	prof_backtrace_impl
	malloc foo
	__rust_alloc
	__rustc::__rust_realloc
	<rheap::Je as core::alloc::global::GlobalAlloc>::alloc
	alloc::alloc::Global::alloc_impl
	_rjem_je_prof_tctx_create
	tcmalloc::Foo
	alloc::raw_vec::RawVecInner::finish_grow
	<rheap::Je as core::alloc::global::GlobalAlloc>::alloc::{{closure}}
	xmalloc
	my_malloc
	operator new foo
	main
	std::vector::push_back
	EOF
	./protocheck w_shlib.exact.unsym.pb.gz <names >actual &&
	cat >expect <<-\EOF &&
	ids and ranges ok
	drop_frames set: true
	true malloc
	true calloc
	true operator new
	true operator new[]
	true je_malloc_default
	true _rjem_mallocx
	true void* fallback_impl
	true prof_backtrace_impl
	true malloc foo
	true __rust_alloc
	true __rustc::__rust_realloc
	true <rheap::Je as core::alloc::global::GlobalAlloc>::alloc
	true alloc::alloc::Global::alloc_impl
	true _rjem_je_prof_tctx_create
	true tcmalloc::Foo
	false alloc::raw_vec::RawVecInner::finish_grow
	false <rheap::Je as core::alloc::global::GlobalAlloc>::alloc::{{closure}}
	false xmalloc
	false my_malloc
	false operator new foo
	false main
	false std::vector::push_back
	EOF
	test_cmp expect actual &&
	./protocheck w_cpp.exact.pb.gz </dev/null >actual &&
	printf "ids and ranges ok\ndrop_frames set: false\n" >expect &&
	test_cmp expect actual
'

test_expect_success PROTOCHECK '--keep-allocator-frames: whole stacks, no drop_frames' '
	made w_basic.exact.keep.pb.gz w_basic.exact.keep.txt &&
	./protocheck w_basic.exact.keep.pb.gz </dev/null >actual &&
	printf "ids and ranges ok\ndrop_frames set: false\n" >expect &&
	test_cmp expect actual &&
	pp -symbolize=none -top -unit=B -nodefraction=0 w_basic.exact.keep.pb.gz | top_rows >pprof.rows &&
	grep "^libjemalloc" pprof.rows &&
	text_rows <w_basic.exact.keep.txt >jheap.rows &&
	test_cmp jheap.rows pprof.rows
'

# The sampled run minus the exact one: net changes of both signs.  Each
# pprof sample is truncated on its own (toward zero: the base's samples
# are negative), so a row, which adds samples of both signs, may differ
# from --text's in either direction, by less than the number of stacks of
# both dumps.  The totals are exact: pprof's is the sum of the truncated
# values of each dump's stacks, --text's the truncated difference of the
# two sums (heap_sum).  The accum run minus the exact one: the workload
# keeps the same blocks in use, so every net value is 0.
test_expect_success '--base: Go diff_base form, net values = jheap --text --base' '
	made demo.diff.pb.gz demo.diff.txt demo.same.pb.gz &&
	tol=$(cat "$PROFILES/demo.sampled.heap" "$PROFILES/w_basic.exact.heap" | grep -c "^@") &&
	pp -symbolize=none -raw demo.diff.pb.gz >raw &&
	grep -x "  *pprof::base:\[true\]" raw &&
	pp -symbolize=none -top -unit=B -nodefraction=0 demo.diff.pb.gz >top.txt &&
	top_rows <top.txt >pprof.rows &&
	text_rows <demo.diff.txt >jheap.rows &&
	grep "	-" jheap.rows &&
	same_rows jheap.rows pprof.rows $tol &&
	net=$(sed -n "s/^Showing nodes accounting for \(-*[0-9]*\)B,.*/\1/p" top.txt) &&
	total=$(report_total demo.diff.txt) &&
	p=$(heap_sum "$PROFILES/demo.sampled.heap" inuse_space) &&
	b=$(heap_sum "$PROFILES/w_basic.exact.heap" inuse_space) &&
	want_total=$(awk -v p="$p" -v b="$b" "BEGIN { printf \"%d\\n\", p - b }") &&
	p=$(heap_sum "$PROFILES/demo.sampled.heap" inuse_space truncated) &&
	b=$(heap_sum "$PROFILES/w_basic.exact.heap" inuse_space truncated) &&
	echo "totals: --text $total, pprof $net; from the dumps: $want_total and $((p - b))" &&
	test "$total" = "$want_total" && test "$net" = "$((p - b))" &&
	pp -symbolize=none -raw demo.same.pb.gz | grep -x "  *pprof::base:\[true\]" &&
	pp -symbolize=none -top -unit=B -nodefraction=0 demo.same.pb.gz >same.txt &&
	top_rows <same.txt >same.rows &&
	test_cmp /dev/null same.rows
'

# raw_samples <go tool pprof -raw: one line per sample, "LEAF V1 V2...",
# LEAF the function of its first location, sorted.
raw_samples() {
	awk '
	/^Samples:/ { s = 1; next }
	/^Locations/ { s = 0; l = 1; next }
	/^Mappings/ { l = 0 }
	s && /^ *-?[0-9]+( +-?[0-9]+)*: / {
		split($0, a, ":"); v = a[1]; gsub(/^ +| +$/, "", v); gsub(/ +/, " ", v)
		split(a[2], ids, " "); n++; vals[n] = v; leaf[n] = ids[1]; next
	}
	l && /^ *[0-9]+: 0x/ { id = $1; sub(/:$/, "", id); name[id] = $4 }
	END { for (i = 1; i <= n; i++) print name[leaf[i]], vals[i] }' | sort
}

# unsampled_stacks SIGN <HEAP: for each record of a symbolized heap_v2
# dump, "LEAF OBJECTS BYTES": its in-use values unsampled as jeprof does
# (spec section 2.1), times SIGN, truncated toward zero (awk's int()).
# Prints "fractions: N" on standard error, N the values whose fraction is
# one half or more: where rounding would give another number.
unsampled_stacks() {
	awk -v sign="$1" '
	/^--- symbol/ { sym = 1; next }
	sym && /^0x/ { a = $1; sub(/^0x0*/, "", a); name[a] = $2 }
	/^---$/ { sym = 0 }
	/^heap_v2\// { r = substr($0, 9) + 0 }
	/^@/ { leaf = $2; sub(/^0x0*/, "", leaf); next }
	leaf != "" && $1 == "t*:" {
		line = $0; gsub(/[\[\]:]/, " ", line); split(line, f, " ")
		n = f[2]; b = f[3]
		if (n != 0) { sc = 1 / (1 - exp(-((b / n) / r))); n *= sc; b *= sc }
		n *= sign; b *= sign
		if (n - int(n) >= 0.5 || int(n) - n >= 0.5) half++
		if (b - int(b) >= 0.5 || int(b) - b >= 0.5) half++
		print name[leaf], int(n), int(b)
		leaf = ""
	}
	END { print "fractions: " half + 0 > "/dev/stderr" }' | sort
}

# Values with fractions: a pprof value is an integer, and jheap truncates
# each stack's unsampled value toward zero, as its --text does (jeprof's
# %d).  The reference is the unsampling formula in awk, truncated by awk;
# the dumps are chosen so that values have fractions of one half or more
# (where rounding would differ), and the --base makes them negative
# (where rounding down would differ).
test_expect_success 'values with a fraction: each pprof sample truncated toward zero, as go tool pprof -raw reads it' '
	cat >frac.heap <<-\EOF &&
	--- symbol
	binary=./frac
	0x0000555500001233 main
	0x0000555500001249 grow
	0x0000555500001259 shrink
	---
	--- heap
	heap_v2/524288
	@ 0x555500001249 0x555500001234
	  t*: 2: 7776 [0: 0]
	@ 0x555500001259 0x555500001234
	  t*: 1: 100 [0: 0]
	EOF
	cat >fracbase.heap <<-\EOF &&
	--- symbol
	binary=./frac
	0x0000555500001233 main
	0x0000555500001269 gone
	---
	--- heap
	heap_v2/524288
	@ 0x555500001269 0x555500001234
	  t*: 2: 7776 [0: 0]
	EOF
	unsampled_stacks 1 <frac.heap >expect 2>fractions &&
	grep -x "fractions: [2-9]" fractions &&
	"$JHEAP" --proto frac.heap >frac.pb.gz &&
	pp -symbolize=none -raw frac.pb.gz | raw_samples >actual &&
	test_cmp expect actual &&
	unsampled_stacks -1 <fracbase.heap >>expect 2>fractions &&
	grep -x "fractions: [2-9]" fractions &&
	sort -o expect expect &&
	"$JHEAP" --proto --base fracbase.heap frac.heap >diff.pb.gz &&
	pp -symbolize=none -raw diff.pb.gz | raw_samples >actual &&
	test_cmp expect actual
'

for flt in --focus=caller_a --ignore=caller_a --exclude=leaf_alloc '--retain=main|leaf_alloc|caller_b'; do
	test_expect_success "$flt: the stacks and frames --text keeps" '
		f=w_basic.exact.$flt &&
		made $f.pb.gz $f.txt &&
		pp -symbolize=none -top -unit=B -nodefraction=0 $f.pb.gz | top_rows >pprof.rows &&
		text_rows <$f.txt >jheap.rows &&
		test_cmp jheap.rows pprof.rows
	'
done

# --no-symbolize: addresses and mappings only; pprof symbolizes them.
test_expect_success '--no-symbolize: no functions, has_* unset, real mapping ranges' '
	made w_basic.exact.unsym.pb.gz &&
	pp -symbolize=none -raw w_basic.exact.unsym.pb.gz >raw &&
	sed -n "/^Locations/,/^Mappings/p" raw | sed "1d;\$d" >locs &&
	test -s locs &&
	! grep -v "^ *[0-9]*: 0x[0-9a-f]* M=[0-9]* *\$" locs &&
	sed -n "/^Mappings/,\$p" raw | sed 1d >maps &&
	grep "/w_basic *\$" maps | head -1 | grep "^1: " &&
	! grep "\[FN\]" maps &&
	! grep "/0x0/" maps
'

gopprof() {
	go tool pprof "$@"
}

# unsym_agree NAME TOOL: TOOL symbolizes the --no-symbolize file; the flat
# values of the workload'"'"'s own functions equal jheap --text'"'"'s.
unsym_agree() {
	local name=$1 tool=$2 n
	made $name.exact.unsym.pb.gz $name.exact.inuse_space.txt &&
	"$tool" -symbolize=local -top -unit=B -nodefraction=0 $name.exact.unsym.pb.gz >top.txt 2>pp.err &&
	top_rows <top.txt >pprof.rows &&
	text_rows <$name.exact.inuse_space.txt >jheap.rows &&
	"expect_${name}_inuse_space" | cut -d" " -f3- | sort -u >fns &&
	n=$(grep -c . fns) &&
	awk -F"\t" "NR == FNR { f[\$0] = 1; next } \$1 in f" fns jheap.rows >want &&
	awk -F"\t" "NR == FNR { f[\$0] = 1; next } \$1 in f" fns pprof.rows >got &&
	test -s want &&
	test_cmp want got
}

test_expect_success '--no-symbolize: go tool pprof names w_basic functions from the binary' '
	unsym_agree w_basic gopprof
'
test_expect_success '--no-symbolize: go tool pprof names w_shlib functions (shared library too)' '
	unsym_agree w_shlib gopprof
'
test_expect_success PPROF '--no-symbolize: standalone pprof symbolizes -O2 C++ with inline frames' '
	unsym_agree w_cpp "$TOOLS/pprof" &&
	"$TOOLS/pprof" -symbolize=local -traces w_cpp.exact.unsym.pb.gz >traces 2>pp.err &&
	grep -A1 "make_buf (inline)\$" traces | tail -1 | grep "^ *fill_buffers\$"
'

# Goldens from fixed dumps (no binary needed), checked by hand:
# v2_accum.heap: 4 types; the libjemalloc leaf cut; caller addresses - 1
# (0x555500001234 -> 1233, ...1300 -> 12ff, ...1250 -> 124f); mapping as in
# the maps (r-xp at offset 0x1000, path with a space, " (deleted)" gone).
# symbolized.heap: "outer--inner" is one location, inner (inline) first.
# maps.heap (below): two adjacent r-xp lines of one file are one Mapping,
# a third one apart is another; [vdso]; an address outside every mapping
# has none; two threads split one stack.
FIXTURES=$SRCDIR/testdata/parse
golden_raw() {
	pp -symbolize=none -raw "$1" | sed "/^Time: /d" >"$2"
}
# The fixtures' objects are not on this machine: exit 1 (a degraded
# result), with a warning naming each (sort -u: one line per object), and
# no second one asking whether the program that cannot be opened is the
# right one.
test_expect_success 'golden: v2_accum.heap' '
	{ (cd "$FIXTURES" && "$JHEAP" --proto v2_accum.heap) >p.pb.gz 2>err; test $? -eq 1; } &&
	cat >expect.err <<-\EOF &&
	jheap: warning: cannot open '"'"'/opt/my app/server'"'"': No such file or directory; its frames are shown as server+0xOFFSET
	jheap: warning: cannot open '"'"'/usr/lib/libjemalloc.so.2'"'"': No such file or directory; its frames are shown as libjemalloc.so.2+0xOFFSET
	EOF
	sort -u err >actual.err && test_cmp expect.err actual.err &&
	golden_raw p.pb.gz actual &&
	test_golden proto-v2_accum.raw.txt actual
'
test_expect_success 'golden: symbolized.heap' '
	(cd "$FIXTURES" && "$JHEAP" --proto symbolized.heap) >p.pb.gz 2>err &&
	golden_raw p.pb.gz actual &&
	test_golden proto-symbolized.raw.txt actual
'
test_expect_success 'golden: split mappings, vdso, threads (maps.heap)' '
	cat >maps.heap <<-\EOF &&
	heap_v2/1
	  t*: 5: 5120 [0: 0]
	  t1: 3: 3072 [0: 0] main
	  t2: 2: 2048 [0: 0]
	@ 0x400010 0x401020 0x500030 0x7ffc00000100 0x600000
	  t*: 5: 5120 [0: 0]
	  t1: 3: 3072 [0: 0]
	  t2: 2: 2048 [0: 0]

	MAPPED_LIBRARIES:
	00400000-00401000 r-xp 00001000 fe:00 7   /opt/app/bin
	00401000-00402000 r-xp 00002000 fe:00 7   /opt/app/bin
	00402000-00403000 r--p 00003000 fe:00 7   /opt/app/bin
	00500000-00501000 r-xp 00008000 fe:00 7   /opt/app/bin
	7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0   [vdso]
	EOF
	{ "$JHEAP" --proto maps.heap >p.pb.gz 2>err; test $? -eq 1; } &&
	cat >expect.err <<-\EOF &&
	jheap: warning: cannot open '"'"'/opt/app/bin'"'"': No such file or directory; its frames are shown as bin+0xOFFSET
	EOF
	sort -u err >actual.err && test_cmp expect.err actual.err &&
	golden_raw p.pb.gz actual &&
	test_golden proto-maps.raw.txt actual
'

test_done

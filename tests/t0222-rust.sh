#!/bin/bash
test_description='a Rust program behind a #[global_allocator] over jemalloc'"'"'s mallocx: the leaf is the program'"'"'s code or its container

Built offline by cargo from Debian'"'"'s librust-jemalloc-sys-dev (jemalloc 5
under the _rjem_ prefix, with profiling, MALLOC_CONF spelt
_RJEM_MALLOC_CONF), once with rustc'"'"'s default symbol mangling (legacy;
the standard library'"'"'s may be v0) and once with v0.
Rust'"'"'s allocation glue (__rustc::__rust_alloc, the GlobalAlloc impl,
alloc::alloc::alloc, alloc::alloc::Global) is cut like the allocator, so
no such frame is a leaf; no name loses its "<T as Trait>" to read
"::method"; each leaf is llvm-symbolizer'"'"'s first frame that is not glue.'
. "$(dirname "$0")/lib.sh"

LEAFCHECK=$TEST_DIRECTORY/tools/leafcheck.py
BUILD_RHEAP=$TEST_DIRECTORY/tools/build-rheap.sh
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
why=$(bash "$BUILD_RHEAP" --check) || test_skip "$why"
test_have_prog llvm-symbolizer && test_have_prog c++filt && test_have_prog python3 &&
	test_set_prereq SYMBOLIZER
test_have_prog "$JEPROF" && test_set_prereq JEPROF

# testdata/rheap, built offline and kept in build/rust-target: jemalloc's
# own build takes a minute or two the first time
test_expect_success 'build the program offline (legacy and v0 mangling)' '
	bash "$BUILD_RHEAP" rheap-legacy &&
	bash "$BUILD_RHEAP" --v0 rheap-v0 &&
	nm rheap-legacy | grep -q " _ZN5rheap8grow_vec" &&
	nm rheap-v0 | grep -q " _RNvCs.*5rheap8grow_vec" &&
	nm rheap-v0 | grep -q " _rjem_mallocx"
'

test_expect_success 'jemalloc-sys has profiling: each build writes a dump' '
	for m in legacy v0; do
		_RJEM_MALLOC_CONF=prof:true,lg_prof_sample:0,prof_prefix:$TRASH_DIRECTORY/$m \
			./rheap-$m >/dev/null &&
		mv $m.*.heap $m.heap &&
		head -n 1 $m.heap | grep -q "^heap_v2/1\$" || return 1
	done
'

# Rust's allocation glue, in the short names jheap shows
GLUE="_rjem_|je_|__rust|__rdl_|__rg_|GlobalAlloc>::|alloc::alloc::|Global>?::|Allocator>::"

for m in legacy v0; do
	test_expect_success "$m: no glue in the top rows, no name starting with ::" '
		"$JHEAP" --text --nodecount=8 ./rheap-'$m' '$m'.heap >top &&
		"$JHEAP" --text ./rheap-'$m' '$m'.heap >all &&
		! awk "NR > 1 {print \$6}" top | grep -E "^($GLUE)" &&
		! awk "NR > 1 {print \$6}" all | grep "^::" &&
		# the containers and the program are the leaves
		grep -E " alloc::raw_vec::([A-Za-z]+::)?finish_grow\$" top &&
		grep -E " hashbrown::[^ ]+( \(inline\))?\$" top &&
		grep -E " <rheap::Square as rheap::Shape>::build\$" all
	'

	test_expect_success SYMBOLIZER "$m: every leaf is llvm-symbolizer's first frame that is not glue" '
		python3 "$LEAFCHECK" tag '$m'.heap tagged.heap &&
		"$JHEAP" --collapsed ./rheap-'$m' tagged.heap >tagged.collapsed &&
		python3 "$LEAFCHECK" measure jemalloc rust tagged.heap tagged.collapsed >agree &&
		cat agree &&
		grep -q "^agree .* (100.0%)\$" agree
	'

	test_expect_success JEPROF "$m: the total is jeprof's" '
		"$JHEAP" --text --show_bytes ./rheap-'$m' '$m'.heap | head -n 1 >total.jheap &&
		"$JEPROF" --text --show_bytes ./rheap-'$m' '$m'.heap 2>/dev/null | head -n 1 >total.jeprof &&
		grep -q "^Total: [1-9]" total.jheap &&
		test_cmp total.jeprof total.jheap
	'
done

test_expect_success '--keep-allocator-frames: the glue and jemalloc are the leaves' '
	"$JHEAP" --text --keep-allocator-frames ./rheap-v0 v0.heap >keep &&
	sed -n 2p keep | grep -q " _rjem_je_prof_backtrace\$" &&
	grep -q " <rheap::Je as core::alloc::global::GlobalAlloc>::alloc (inline)\$" keep &&
	grep -q " __rustc::__rust_alloc (inline)\$" keep
'

test_done

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
REGISTRY=/usr/share/cargo/registry
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
CARGO=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
[ -x "$CARGO" ] || test_skip "no cargo (Debian's cargo, or rustup's in ~/.cargo/bin)"
ls -d $REGISTRY/jemalloc-sys-0.* >/dev/null 2>&1 ||
	test_skip "no jemalloc-sys in $REGISTRY (librust-jemalloc-sys-dev)"
test_have_prog make && test_have_prog cc || test_skip "no make or C compiler (jemalloc is built from source)"
test_have_prog llvm-symbolizer && test_have_prog c++filt && test_have_prog python3 &&
	test_set_prereq SYMBOLIZER
test_have_prog "$JEPROF" && test_set_prereq JEPROF

# Built in the build folder, kept between runs: jemalloc's own build
# takes most of a minute.
export CARGO_TARGET_DIR=$BUILD_DIR/rust-target
SRC=$BUILD_DIR/rust-src

test_expect_success 'build the program offline (legacy and v0 mangling)' '
	mkdir -p "$SRC/src" "$SRC/.cargo" &&
	cat >"$SRC/.cargo/config.toml" <<-EOF &&
	[source.crates-io]
	replace-with = "debian"
	[source.debian]
	directory = "$REGISTRY"
	[net]
	offline = true
	EOF
	cat >"$SRC/Cargo.toml" <<-\EOF &&
	[package]
	name = "rheap"
	version = "0.1.0"
	edition = "2021"

	[dependencies]
	jemalloc-sys = { version = "0.3", features = ["profiling"] }

	[profile.release]
	debug = true
	EOF
	cat >"$SRC/src/main.rs" <<-\EOF &&
	use std::alloc::{GlobalAlloc, Layout};
	use std::collections::{BTreeMap, HashMap};
	use std::os::raw::c_void;

	struct Je;

	fn flags(l: Layout) -> i32 {
	    if l.align() <= 16 { 0 } else { l.align().trailing_zeros() as i32 }
	}

	unsafe impl GlobalAlloc for Je {
	    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
	        jemalloc_sys::mallocx(l.size(), flags(l)) as *mut u8
	    }
	    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
	        jemalloc_sys::sdallocx(p as *mut c_void, l.size(), flags(l))
	    }
	    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
	        jemalloc_sys::rallocx(p as *mut c_void, n, flags(l)) as *mut u8
	    }
	}

	#[global_allocator]
	static GLOBAL: Je = Je;

	trait Shape { fn build(&self, n: usize) -> Vec<u64>; }
	struct Square;
	impl Shape for Square {
	    #[inline(never)]
	    fn build(&self, n: usize) -> Vec<u64> { (0..n as u64).map(|i| i * i).collect() }
	}

	#[inline(never)]
	fn grow_vec(n: usize) -> Vec<u32> { let mut v = Vec::new(); for i in 0..n { v.push(i as u32); } v }

	#[inline(never)]
	fn fill_map(n: usize) -> HashMap<u64, String> { (0..n as u64).map(|i| (i, format!("value-{}", i))).collect() }

	#[inline(never)]
	fn fill_tree(n: usize) -> BTreeMap<u32, Box<[u8; 48]>> { (0..n as u32).map(|i| (i, Box::new([i as u8; 48]))).collect() }

	fn main() {
	    let a = grow_vec(300_000);
	    let b = fill_map(20_000);
	    let c = fill_tree(20_000);
	    let d = Square.build(100_000);
	    let s: String = std::iter::repeat("abc").take(50_000).collect();
	    unsafe {
	        jemalloc_sys::mallctl(b"prof.dump\0".as_ptr() as *const _, std::ptr::null_mut(),
	                              std::ptr::null_mut(), std::ptr::null_mut(), 0);
	    }
	    println!("{} {} {} {} {}", a.len(), b.len(), c.len(), d.len(), s.len());
	}
	EOF
	# a lock file of another cargo version may not be readable by this one
	rm -f "$SRC/Cargo.lock" &&
	(cd "$SRC" &&
	 "$CARGO" rustc --release --offline --quiet &&
	 cp "$CARGO_TARGET_DIR/release/rheap" "$TRASH_DIRECTORY/rheap-legacy" &&
	 "$CARGO" rustc --release --offline --quiet -- -C symbol-mangling-version=v0 &&
	 cp "$CARGO_TARGET_DIR/release/rheap" "$TRASH_DIRECTORY/rheap-v0") >build.log 2>&1 ||
	{ cat build.log; false; } &&
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

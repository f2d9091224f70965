#!/bin/sh
# Build the object files tests/unit/test_symcache.c looks at.
# Usage: build-fixtures.sh OUTDIR [SRCDIR]
# SRCDIR defaults to testdata/unit next to this script.  Variants a compiler
# on this machine cannot build are left out; the test skips what is missing.
set -e
out=$1
src=${2:-$(dirname "$0")/../../testdata/unit}
if [ -z "$out" ]; then
	echo "usage: $0 OUTDIR [SRCDIR]" >&2
	exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$(cd "$src" && pwd)
cp "$src/fix_c.c" "$src/fix_cxx.cc" "$src/fix_lib.c" "$src/fix_many.c" "$out/"
cd "$out"

CC=${CC:-cc}
have() { command -v "$1" >/dev/null 2>&1; }

# C at -O0: DWARF 5 (gcc 12 default) and 4, PIE and a plain ET_EXEC.
$CC -O0 -g -o c_O0 fix_c.c
$CC -O0 -gdwarf-4 -o c_O0_dw4 fix_c.c
$CC -O0 -g -no-pie -fno-pie -o c_nopie fix_c.c
# Without a build id, and without DWARF (names from .symtab): the
# persistent cache knows it by its size, inode and modification time alone
# (tests/unit/test_diskcache.c replaces it in place).
$CC -O0 -Wl,--build-id=none -o c_nobid fix_c.c
# One unit of many functions (partial unit indexes that become full ones),
# and that unit with another in DWARF 4 (test_linetab makes them share one
# line table).
$CC -O2 -g -o c_many fix_many.c
$CC -O2 -gdwarf-4 -o c_two fix_many.c fix_lib.c

# C++ at -O2 with inlining, from each compiler and DWARF version.
g++ -O2 -g -o cxx_gcc fix_cxx.cc
g++ -O2 -gdwarf-4 -o cxx_gcc4 fix_cxx.cc
if have clang++; then
	clang++ -O2 -g -o cxx_clang fix_cxx.cc
	clang++ -O2 -gdwarf-4 -o cxx_clang4 fix_cxx.cc
fi
# Split DWARF: the binary keeps skeleton units, the rest is in the .dwo
# files beside the objects.
g++ -O2 -g -gsplit-dwarf -c -o cxx_split.o fix_cxx.cc
g++ -o cxx_split cxx_split.o
if have clang++; then
	clang++ -O2 -g -gsplit-dwarf -c -o cxx_clang_split.o fix_cxx.cc
	clang++ -o cxx_clang_split cxx_clang_split.o
fi

# A shared library, and a copy stripped to its .dynsym.
$CC -O2 -g -fPIC -shared -o lib.so fix_lib.c
strip -s -o lib_s.so lib.so

# Separate debug info.  cxx_nodebug has no debug sections and no debuglink:
# only its build id leads to bid/.build-id/xx/yyyy.debug.  cxx_link carries
# a .gnu_debuglink to dl/cxx_link.debug; sys/ holds the same file as
# sys/<absolute path of cxx_link>, the layout only jheap's own fallback reads.
strip --strip-debug -o cxx_nodebug cxx_gcc
objcopy --only-keep-debug cxx_gcc cxx_gcc.debug
id=$(readelf -n cxx_gcc | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p')
if [ -n "$id" ]; then
	echo "$id" > cxx_gcc.buildid
	d=bid/.build-id/$(echo "$id" | cut -c1-2)
	mkdir -p "$d"
	cp cxx_gcc.debug "$d/$(echo "$id" | cut -c3-).debug"
fi
mkdir -p dl "sys$out"
cp cxx_gcc.debug dl/cxx_link.debug
objcopy --add-gnu-debuglink=dl/cxx_link.debug cxx_nodebug cxx_link
cp cxx_gcc.debug "sys$out/cxx_link"
rm cxx_gcc.debug

printf 'not an object file\n' > notelf.txt

# Real Rust symbols for test_demangle, when rustc is here.
if have rustc; then
	cat > rustlib.rs <<'RS'
pub mod inner { pub struct S<T>(pub T); impl<T: Copy> S<T> { #[inline(never)] pub fn get(&self) -> T { self.0 } } }
#[inline(never)] pub fn foo(x: u32) -> u32 { x * 7 }
pub fn use_it() -> u32 { inner::S(5u32).get() + foo(3) }
RS
	if rustc --crate-type=lib -O -C symbol-mangling-version=v0 --emit=obj \
		-o rust_v0.o rustlib.rs 2>/dev/null &&
	   RUSTC_BOOTSTRAP=1 rustc --crate-type=lib -O -Z unstable-options \
		-C symbol-mangling-version=legacy --emit=obj -o rust_legacy.o rustlib.rs 2>/dev/null; then
		nm rust_v0.o rust_legacy.o | awk 'NF == 3 && $3 ~ /^_[RZ]/ { print $3 }' > rust_syms.txt
	fi
fi
touch .built
exit 0

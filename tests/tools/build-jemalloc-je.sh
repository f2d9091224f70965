#!/bin/bash
# tests/tools/build-jemalloc-je.sh [--check]: build jemalloc as Redis bundles it, with
# every public name under the "je_" prefix (je_malloc, je_mallctl; its
# settings then come from JE_MALLOC_CONF), with profiling (--enable-prof),
# from the jemalloc source in Debian's librust-jemalloc-sys-dev (jemalloc
# 5.1; no network).  Prints the folder that holds lib/libjemalloc_pic.a
# (to link statically, position-independent) and
# include/jemalloc/jemalloc.h.
#
# Kept in build/jemalloc-je under the source tree, shared by every BUILD
# folder (it does not depend on how jheap is built): configure and make
# take about a minute, once.  A lock serializes builds.  Exits 1 with
# the build's output when it fails; 77 when the source or make is missing
# (the caller skips).  --check builds nothing: exits 0 when it could.
set -u
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
crate=$(ls -d /usr/share/cargo/registry/jemalloc-sys-0.* 2>/dev/null | tail -n 1)
[ -n "$crate" ] && [ -f "$crate/configure/configure" ] ||
	{ echo "no jemalloc source in /usr/share/cargo/registry (librust-jemalloc-sys-dev)"; exit 77; }
command -v make >/dev/null && command -v cc >/dev/null || { echo "no make or cc"; exit 77; }
[ "${1:-}" = --check ] && exit 0

top=$srcdir/build/jemalloc-je
mkdir -p "$top" || exit 1
exec 9>"$top/.lock"
command -v flock >/dev/null && flock 9
# Redis builds its copy with -O3 -g3 -funroll-loops (jemalloc's own
# flags); -O2 -g1 takes half the time and changes nothing tested here
flags="-O2 -g1 -fno-unroll-loops"
# built from this crate's copy: another version of the package, or other
# flags, rebuild it
if [ "$(cat "$top/.done" 2>/dev/null)" != "$crate $flags" ]; then
	rm -rf "$top/src" "$top/obj" "$top/.done"
	cp -R "$crate/jemalloc" "$top/src" &&
	cp "$crate/configure/configure" "$top/src/configure" &&
	mkdir "$top/obj" || exit 1
	if ! (cd "$top/obj" &&
	      sh ../src/configure --with-jemalloc-prefix=je_ --enable-prof --disable-cxx &&
	      make -j2 EXTRA_CFLAGS="$flags" lib/libjemalloc_pic.a) >"$top/build.log" 2>&1; then
		cat "$top/build.log"
		exit 1
	fi
	echo "$crate $flags" >"$top/.done"
fi
echo "$top/obj"

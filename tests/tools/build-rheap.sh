#!/bin/bash
# tests/tools/build-rheap.sh [--v0] [--no-profiling] OUT: build the Rust test
# program testdata/rheap offline with cargo against Debian's
# librust-jemalloc-sys-dev (/usr/share/cargo/registry) and copy it to OUT.
#
#   --v0            rustc's v0 symbol mangling (default: rustc's default,
#                   legacy)
#   --no-profiling  jemalloc without --enable-prof (jemalloc-sys's own
#                   default; rheap turns its "profiling" feature on)
#   --check         build nothing: exit 0 when it could, else print why
#                   not and exit 77 (the caller skips)
#
# The build is kept in build/rust-target under the source tree, shared by
# every BUILD folder (the program does not depend on how jheap is built):
# jemalloc's own build takes a minute or two, once per feature set.  A
# lock serializes builds, so tests running at once do not copy each
# other's program.  Exits 1 with cargo's output when the build fails;
# 77 when cargo or the crate is missing (the caller skips).
set -u
v0= features= check= out=
for a in "$@"; do
	case $a in
	--check) check=1 ;;
	--v0) v0=1 ;;
	--no-profiling) features=--no-default-features ;;
	-*) echo "build-rheap.sh: unknown option '$a'" >&2; exit 2 ;;
	/*) out=$a ;;
	*) out=$PWD/$a ;;
	esac
done
[ -n "$check$out" ] || { echo "usage: build-rheap.sh [--check] [--v0] [--no-profiling] OUT" >&2; exit 2; }

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/../.." && pwd)
registry=/usr/share/cargo/registry
cargo=$(command -v cargo || echo "$HOME/.cargo/bin/cargo")
[ -x "$cargo" ] || { echo "no cargo (Debian's cargo, or rustup's in ~/.cargo/bin)"; exit 77; }
ls -d $registry/jemalloc-sys-0.* >/dev/null 2>&1 ||
	{ echo "no jemalloc-sys in $registry (librust-jemalloc-sys-dev)"; exit 77; }
command -v make >/dev/null && command -v cc >/dev/null ||
	{ echo "no make or C compiler (jemalloc is built from source)"; exit 77; }
[ -n "$check" ] && exit 0

cache=$srcdir/build/rust-target
src=$cache/rheap-src
mkdir -p "$src/.cargo" || exit 1
exec 9>"$cache/.lock"
command -v flock >/dev/null && flock 9

# the sources with their times, so that cargo rebuilds only what changed
cp -pR "$srcdir/testdata/rheap/." "$src/" &&
cat >"$src/.cargo/config.toml" <<EOF || exit 1
[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "$registry"
[net]
offline = true
EOF
# a lock file of another cargo version may not be readable by this one
rm -f "$src/Cargo.lock"
flags=()
[ -n "$v0" ] && flags=(-- -C symbol-mangling-version=v0)
if ! (cd "$src" && CARGO_TARGET_DIR=$cache "$cargo" rustc --release --offline --quiet \
	$features "${flags[@]}") >"$cache/build.log" 2>&1; then
	cat "$cache/build.log"
	exit 1
fi
cp "$cache/release/rheap" "$out"

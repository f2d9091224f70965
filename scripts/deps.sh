#!/bin/sh
# Install the Debian packages jheap needs to build and test, but only the
# missing ones.  libcurl4 and libedit2 are loaded with dlopen at run time
# (their -dev packages give only the headers to the build), so they are
# listed by their own names.  Quiet when nothing is missing.  Works without a terminal
# (CI=true, stdin closed): apt runs non-interactively.
#
# Usage: scripts/deps.sh [--check]
#   --check   only report missing packages (exit 1 if any), install nothing.

PACKAGES="
build-essential
pkg-config
libdw-dev
libelf-dev
zlib1g-dev
uthash-dev
libiberty-dev
libjemalloc2
libjemalloc-dev
elfutils
binutils
libc6-dbg
g++
libpcre2-dev
libcurl4-openssl-dev
libcurl4
curl
openssl
libedit-dev
libedit2
libmicrohttpd-dev
libmicrohttpd12
nodejs
graphviz
valgrind
golang-go
golang-github-google-pprof-dev
python3.11-dbg
libxml2-utils
librsvg2-bin
python3
time
redis-server
redis-tools
varnish
nghttp2-server
nghttp2-client
llvm
clang
lld
chromium
libgoogle-perftools4
librust-jemalloc-sys-dev
"

set -u

check_only=
case "${1:-}" in
--check) check_only=1 ;;
"") ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps.sh: dpkg-query not found; this script supports Debian/Ubuntu only." >&2
	echo "deps.sh: install the equivalents of:" $PACKAGES >&2
	exit 1
fi

missing=
for p in $PACKAGES; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) || status=
	case "$status" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
missing=${missing# }

[ -z "$missing" ] && exit 0

if [ -n "$check_only" ]; then
	echo "deps.sh: missing packages: $missing" >&2
	exit 1
fi

if [ "$(id -u)" = 0 ]; then
	as_root=
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	as_root="sudo -n"
else
	echo "deps.sh: missing packages: $missing" >&2
	echo "deps.sh: not root and no password-less sudo; run as root:" >&2
	echo "  apt-get update && apt-get install -y --no-install-recommends $missing" >&2
	exit 1
fi

echo "deps.sh: installing: $missing" >&2
export DEBIAN_FRONTEND=noninteractive
# env(1) carries DEBIAN_FRONTEND through sudo, which may reset the environment.
$as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null >&2 || {
	echo "deps.sh: apt-get update failed" >&2
	exit 1
}
# shellcheck disable=SC2086
$as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing </dev/null >&2 || {
	echo "deps.sh: apt-get install failed for: $missing" >&2
	exit 1
}
exit 0

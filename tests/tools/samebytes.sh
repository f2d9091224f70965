#!/bin/bash
# tests/tools/samebytes.sh: are a refactoring's reports byte-identical to
# the build before it?  Not a test (make check does not run it): a tool
# for changes that must not change any output (issue 25's layout work).
#
#   samebytes.sh save DIR [JHEAP]    run every case with JHEAP (default
#                                    build/jheap), keep the results in DIR
#   samebytes.sh check DIR [JHEAP]   run every case again and cmp each
#                                    result with DIR's; prints the count of
#                                    identical results and the names of the
#                                    others; exits 1 when one differs
#
# A case's result is three or four files: standard output, standard error,
# the exit status, and the file it wrote with -o (or "> FILE" in the
# shell).  Every case runs twice: "cold", with an empty persistent symbol
# cache before each run, and "warm", with the cache that a --text run of
# every dump filled first.
#
# What it covers, on every dump tests/mkprofiles.sh makes (PROFILES,
# default build/profiles; made when missing):
#   - every output mode: text, collapsed, flamegraph, dot, svg, proto,
#     speedscope, callgrind, raw, traces, tree, peek, list, disasm,
#     weblist (-o FILE, BROWSER=true), growth, symbols, and the shell;
#   - the four values and the four granularities, --cum, --nodecount,
#     --nodefraction (the "Dropping nodes" lines), --show_bytes,
#     --full-names, --keep-allocator-frames, --allocator, --no-symbolize;
#   - --focus, --ignore, --retain, --exclude;
#   - --base (another dump of the same program, and the dump itself),
#     --drop_negative;
#   - --thread=N (the dump's first thread), --thread='*', a missing
#     thread, --thread with --base;
#   - --growth over each program's dumps;
#   - option combinations that are refused (messages and exit status).
# The environment is fixed (LC_ALL=C, HOME, XDG_CACHE_HOME and
# XDG_STATE_HOME in a scratch folder, the working folder the same each
# run) so that two runs of one build give the same bytes.
set -u
export LC_ALL=C

usage() {
	echo "usage: $0 save|check DIR [JHEAP]" >&2
	exit 2
}
[ $# -ge 2 ] || usage
ACTION=$1
case $ACTION in save | check) ;; *) usage ;; esac
SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
DIR=$2
case $DIR in /*) ;; *) DIR=$PWD/$DIR ;; esac
JHEAP=${3:-$SRCDIR/build/jheap}
case $JHEAP in /*) ;; *) JHEAP=$PWD/$JHEAP ;; esac
PROFILES=${PROFILES:-$SRCDIR/build/profiles}
[ -x "$JHEAP" ] || { echo "$0: no jheap at $JHEAP" >&2; exit 2; }
bash "$SRCDIR/tests/mkprofiles.sh" "$PROFILES" >/dev/null 2>&1 ||
	{ echo "$0: tests/mkprofiles.sh failed" >&2; exit 1; }

# The scratch folder has the same name for every run, so that paths in
# messages ("opening out.html") are the same.
SCRATCH=$SRCDIR/build/samebytes-scratch
rm -rf "$SCRATCH"
mkdir -p "$SCRATCH/cwd" || exit 1
export HOME=$SCRATCH/home XDG_CACHE_HOME=$SCRATCH/cache XDG_STATE_HOME=$SCRATCH/state
export BROWSER=true TMPDIR=$SCRATCH/tmp
mkdir -p "$HOME" "$TMPDIR"
unset JHEAP_DEBUG JHEAP_PROGRESS_AFTER

if [ "$ACTION" = save ]; then
	rm -rf "$DIR"
	OUT=$DIR
else
	[ -d "$DIR" ] || { echo "$0: no saved results in $DIR" >&2; exit 2; }
	OUT=$SCRATCH/new
fi
mkdir -p "$OUT" || exit 1

PASS=
# run NAME [STDIN-FILE] -- ARGS...: one case.
run() {
	local name=$1 in=/dev/null
	shift
	if [ "$1" != -- ]; then
		in=$1
		shift
	fi
	shift
	local o=$OUT/$PASS/$name
	[ "$PASS" = cold ] && rm -rf "$XDG_CACHE_HOME"
	rm -rf "$SCRATCH/cwd" && mkdir "$SCRATCH/cwd"
	(cd "$SCRATCH/cwd" && "$JHEAP" "$@" <"$in" >"$o.out" 2>"$o.err"; echo $? >"$o.rc")
	local f
	for f in "$SCRATCH"/cwd/*; do
		[ -f "$f" ] && mv "$f" "$o.file.${f##*/}"
	done
}

# The first thread's number in a dump ("  t3: ..."), or nothing.
first_thread() {
	sed -n 's/^ *t\([0-9][0-9]*\): .*/\1/p' "$1" | head -n 1
}

# cases PROFILE BINARY OTHER: every case of one dump; OTHER is another
# dump of the same program (for --base), or empty.
cases() {
	local p=$1 b=$2 other=$3 n m v g t
	n=$(basename "$p" .heap)
	for m in text collapsed flamegraph dot svg proto speedscope callgrind raw traces tree; do
		run "$n.$m" -- --$m "$b" "$p"
	done
	run "$n.peek" -- --peek=main "$b" "$p"
	run "$n.list" -- --list=main "$b" "$p"
	run "$n.disasm" -- --disasm='^main$' "$b" "$p"
	run "$n.weblist" -- --weblist='^main$' -o out.html "$b" "$p"
	run "$n.nobinary" -- --text "$p"
	run "$n.o-proto" -- --proto -o out.pb.gz "$b" "$p"
	for v in inuse_objects alloc_space alloc_objects; do
		for m in text collapsed dot proto traces tree callgrind speedscope; do
			run "$n.$v.$m" -- --$m --$v "$b" "$p"
		done
	done
	for g in lines files addresses; do
		for m in text collapsed dot callgrind traces proto speedscope raw; do
			run "$n.$g.$m" -- --$m --$g "$b" "$p"
		done
	done
	run "$n.cum" -- --text --cum "$b" "$p"
	run "$n.nodecount" -- --text --nodecount=5 "$b" "$p"
	run "$n.nodecount-dot" -- --dot --nodecount=5 "$b" "$p"
	run "$n.nodefraction" -- --text --nodefraction=0.01 "$b" "$p"
	run "$n.nodefraction-q" -- --text -q --nodefraction=0.01 "$b" "$p"
	run "$n.fractions-dot" -- --dot --nodefraction=0.05 --edgefraction=0.02 --maxdegree=3 "$b" "$p"
	run "$n.show_bytes" -- --text --show_bytes "$b" "$p"
	run "$n.full-names" -- --text --full-names "$b" "$p"
	run "$n.keep-alloc" -- --collapsed --keep-allocator-frames "$b" "$p"
	run "$n.keep-alloc-text" -- --text --keep-allocator-frames "$b" "$p"
	run "$n.allocator" -- --text --allocator='^alloc_|xmalloc|leaf' "$b" "$p"
	run "$n.nosym" -- --text --no-symbolize "$b" "$p"
	run "$n.nosym-collapsed" -- --collapsed --no-symbolize "$p"
	for m in text collapsed dot tree traces proto; do
		run "$n.focus.$m" -- --$m --focus='alloc|leaf|cache' "$b" "$p"
		run "$n.ignore.$m" -- --$m --ignore='many|recurse|worker' "$b" "$p"
	done
	run "$n.retain" -- --text --retain='main|alloc' "$b" "$p"
	run "$n.exclude" -- --collapsed --exclude='^main$' "$b" "$p"
	run "$n.filters-lines" -- --text --lines --focus='main' --ignore='calloc' "$b" "$p"
	run "$n.badre" -- --text --focus='(' "$b" "$p"
	run "$n.selfbase" -- --text --base="$p" "$b" "$p"
	if [ -n "$other" ]; then
		for m in text collapsed dot proto traces tree speedscope callgrind flamegraph raw; do
			run "$n.base.$m" -- --$m --base="$other" "$b" "$p"
		done
		run "$n.base.drop" -- --text --drop_negative --base="$other" "$b" "$p"
		run "$n.base.objects" -- --text --inuse_objects --base="$other" "$b" "$p"
	fi
	t=$(first_thread "$p")
	if [ -n "$t" ]; then
		for m in text collapsed dot proto traces tree speedscope callgrind flamegraph raw; do
			run "$n.thread.$m" -- --$m --thread="$t" "$b" "$p"
		done
		run "$n.thread.list" -- --list=main --thread="$t" "$b" "$p"
		run "$n.thread.disasm" -- --disasm='^main$' --thread="$t" "$b" "$p"
		run "$n.thread.focus" -- --text --focus=main --thread="$t" "$b" "$p"
		run "$n.thread.lines" -- --text --lines --thread="$t" "$b" "$p"
		run "$n.thread.objects" -- --text --inuse_objects --thread="$t" "$b" "$p"
		for m in text collapsed dot traces tree callgrind proto; do
			run "$n.threads.$m" -- --$m --thread='*' "$b" "$p"
		done
		run "$n.threads.focus" -- --text --focus=main --thread='*' "$b" "$p"
		[ -n "$other" ] && run "$n.thread.base" -- --text --thread="$t" --base="$other" "$b" "$p"
		[ -n "$other" ] && run "$n.threads.base" -- --text --thread='*' --base="$other" "$b" "$p"
	fi
	run "$n.nothread" -- --text --thread=987654 "$b" "$p"
	# the shell: the same reports through its commands
	# (settings back and forth: the driver keeps the last aggregates)
	printf '%s\n' top 'top 3 main' text 'focus=alloc' tree 'traces' inuse_objects lines text \
		'focus=' functions 'thread='"${t:-0}" text collapsed 'thread=' text 'thread='"${t:-0}" \
		text 'thread=*' tree 'thread=' 'peek main' 'list main' 'collapsed > s.txt' options \
		'bogus' quit >"$SCRATCH/shell.in"
	run "$n.shell" "$SCRATCH/shell.in" -- --interactive "$b" "$p"
}

# Refused combinations, once.
refusals() {
	local p=$PROFILES/w_threads.exact.heap b=$PROFILES/w_threads
	run refuse.interactive-text -- --interactive --text "$b" "$p"
	run refuse.interactive-o -- --interactive -o x "$b" "$p"
	run refuse.growth-base -- --growth --base="$p" "$b" "$p" "$p"
	run refuse.growth-thread -- --growth --thread=1 "$b" "$p" "$p"
	run refuse.growth-raw -- --growth --raw "$b" "$p" "$p"
	run refuse.growth-list -- --growth --list=main "$b" "$p" "$p"
	run refuse.growth-one -- --growth "$b" "$p"
	run refuse.threads-proto -- --proto --thread='*' "$b" "$p"
	run refuse.threads-speedscope -- --speedscope --thread='*' "$b" "$p"
	run refuse.threads-raw -- --raw --thread='*' "$b" "$p"
	run refuse.two-modes -- --text --dot "$b" "$p"
	run refuse.two-values -- --inuse_space --alloc_space "$b" "$p"
	run refuse.bad-thread -- --thread=x "$b" "$p"
	run refuse.noprofile -- --text "$b"
	run refuse.elf-second -- --text "$p" "$b"
	run refuse.unknown -- --txet "$b" "$p"
	run refuse.raw-base -- --raw --base="$p" "$b" "$p"
	run refuse.alloc-exact -- --alloc_space "$b" "$p"
	run refuse.o-input -- --text -o "$p" "$b" "$p"
}

# growth over each program's dumps, and --symbols on each program
series() {
	local b list
	for b in w_basic w_basic_nopie w_cpp w_shlib w_threads demo; do
		list=$(ls "$PROFILES/$b".*.heap)
		# shellcheck disable=SC2086
		for m in text collapsed flamegraph proto dot callgrind speedscope; do
			run "$b.growth.$m" -- --growth --$m "$PROFILES/$b" $list
		done
		{
			sed -n '/^MAPPED_LIBRARIES:/,$p' "$PROFILES/$b.exact.heap" | tail -n +2
			grep -o '0x[0-9a-f]*' "$PROFILES/$b.exact.heap" | head -n 60
			echo 0x1
		} >"$SCRATCH/symbols.in"
		run "$b.symbols" "$SCRATCH/symbols.in" -- --symbols "$PROFILES/$b"
	done
}

# other DUMP: another dump of the same program, or nothing.
other() {
	local n=$(basename "$1" .heap)
	local prog=${n%.*} kind=${n##*.}
	case $kind in
	exact) [ -f "$PROFILES/$prog.accum.heap" ] && echo "$PROFILES/$prog.accum.heap" ;;
	*) echo "$PROFILES/$prog.exact.heap" ;;
	esac
}

for PASS in cold warm; do
	mkdir -p "$OUT/$PASS"
	if [ "$PASS" = warm ]; then
		rm -rf "$XDG_CACHE_HOME"
		while read -r p b; do
			"$JHEAP" --text "$b" "$p" >/dev/null 2>&1
		done <"$PROFILES/MANIFEST"
	fi
	while read -r p b; do
		cases "$p" "$b" "$(other "$p")"
	done <"$PROFILES/MANIFEST"
	series
	refusals
done

[ "$ACTION" = save ] && {
	echo "samebytes: $(find "$OUT" -type f | wc -l) results saved in $DIR"
	exit 0
}
same=0 differ=0 names=
while read -r f; do
	rel=${f#"$DIR"/}
	if cmp -s "$f" "$OUT/$rel"; then
		same=$((same + 1))
	else
		differ=$((differ + 1))
		names="$names $rel"
	fi
done < <(find "$DIR" -type f | sort)
extra=$(cd "$OUT" && find . -type f | while read -r f; do [ -f "$DIR/${f#./}" ] || echo "${f#./}"; done)
for f in $extra; do
	differ=$((differ + 1))
	names="$names $f(new)"
done
echo "samebytes: $same identical, $differ different"
[ $differ -eq 0 ] || { printf '  %s\n' $names | head -n 40; exit 1; }
exit 0

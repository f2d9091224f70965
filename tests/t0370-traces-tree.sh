#!/bin/bash
test_description='--traces, --tree and --peek against go tool pprof and jeprof

Rules checked (output/traces.c, output/tree.c, and tests/tools/pprofcmp.py
for the ways jheap differs on purpose):
 - --traces: the layout of pprof -traces (File:, Type:, one block per stack
   between separator lines, the value beside the leaf); the stacks and
   their values are those pprof -traces prints for the --proto file of the
   same dump, added up per stack (pprof prints a block per sample and per
   thread; jheap one per distinct stack, none of value 0);
 - the stacks through main, root first, are those of jeprof --collapsed on
   the same dump, with its <hex> tags removed and equal stacks added up
   (jeprof has no traces output; its collapsed stacks carry the same facts);
 - blocks are sorted by value, then by their frames;
 - --tree: the entries of pprof -tree (with pprof'"'"'s trimming off), the
   same flat, cum, percentages, callers and callees with their weights,
   " (inline)" removed from names and the functions jheap shows both
   inlined and not left out (pprof makes one node of them);
 - --peek=RE: the entries of pprof -peek=RE; no match is an error;
 - in values of objects and of accumulated counts too, and with --thread.'
. "$(dirname "$0")/lib.sh"

test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test_have_prog python3 || test_skip "python3 not found (apt-get install python3)"
test_need_profiles

test_have_prog go && test_set_prereq GO
test_have_prog "$JEPROF" && test_set_prereq JEPROF
export HOME=$TRASH_DIRECTORY GOPATH=$TRASH_DIRECTORY/go GOCACHE=$BUILD_DIR/tools/gocache GOFLAGS=
export PPROF_BINARY_PATH=$TRASH_DIRECTORY/no-binaries PPROF_TMPDIR=$TRASH_DIRECTORY
CMP="python3 $TEST_DIRECTORY/tools/pprofcmp.py"
P=$PROFILES

# pp OUT ARGS...: go tool pprof ARGS into OUT.
pp() {
	local out=$1
	shift
	go tool pprof "$@" >"$out" 2>pp.err || { echo "go tool pprof $* failed:"; cat pp.err; return 1; }
}

test_expect_success 'the layout of pprof -traces' '
	"$JHEAP" --traces "$P/demo.exact.heap" >out &&
	sed -n 1,2p out >head &&
	printf "File: demo\nType: inuse_space\n" >expect &&
	test_cmp expect head &&
	sed -n 3p out | grep -x -- "-----------+-------------------------------------------------------" &&
	sed -n 4p out | grep -E "^ {7}2\.0   cache_store_value\$" &&
	sed -n 5p out | grep -E "^ {13}cache_insert\$" &&
	tail -n 1 out | grep -x -- "-----------+-------------------------------------------------------"
'

test_expect_success 'blocks by value, then by their frames; one per stack' '
	"$JHEAP" --traces --show_bytes "$P/w_basic.exact.heap" >out &&
	awk "/^ *[0-9-]+   / { print \$1 }" out >values &&
	sort -n -r -s values >sorted &&
	test_cmp sorted values &&
	"$JHEAP" --traces --show_bytes --files "$P/w_basic.exact.heap" >files &&
	test $(grep -c "^-----------+" files) -lt $(grep -c "^-----------+" out) &&
	"$JHEAP" --text --show_bytes --files "$P/w_basic.exact.heap" | sed -n "s/^Total: \([0-9]*\) B\$/\1/p" >total &&
	awk "/^ *[0-9-]+   / { s += \$1 } END { print s }" files >sum &&
	test_cmp total sum
'

for spec in w_basic.exact w_cpp.exact w_shlib.exact w_threads.exact demo.exact \
	w_basic.accum:alloc demo.accum:alloc; do
	heap=$P/${spec%%:*}.heap
	values="inuse_space inuse_objects"
	case $spec in *:alloc) values="alloc_space alloc_objects" ;; esac
	name=${spec%%:*}
	for v in $values; do
		test_expect_success GO "$name --$v: --traces and --tree agree with pprof" "
			\"\$JHEAP\" --proto -o $name.pb.gz \"$heap\" &&
			pp t.pp -traces -unit=B -sample_index=$v $name.pb.gz &&
			\"\$JHEAP\" --traces --show_bytes --$v \"$heap\" >t.jh &&
			\$CMP traces t.jh t.pp &&
			pp r.pp -tree -nodecount=0 -nodefraction=0 -edgefraction=0 -unit=B -sample_index=$v $name.pb.gz &&
			\"\$JHEAP\" --tree --show_bytes --$v \"$heap\" >r.jh &&
			\$CMP tree r.jh r.pp
		"
	done
done

test_expect_success GO '--peek=RE: the entries of pprof -peek' '
	"$JHEAP" --proto -o demo.pb.gz "$P/demo.exact.heap" &&
	pp k.pp -peek="cache_" -unit=B demo.pb.gz &&
	"$JHEAP" --peek="cache_" --show_bytes "$P/demo.exact.heap" >k.jh &&
	test $(grep -c "| cache_" k.jh) -eq 5 &&
	$CMP tree k.jh k.pp
'

test_expect_success GO '--thread=N: the stacks of pprof -tagfocus=thread=tN' '
	"$JHEAP" --proto -o thr.pb.gz "$P/w_threads.exact.heap" &&
	"$JHEAP" --traces --show_bytes --thread=1 "$P/w_threads.exact.heap" >t.jh &&
	grep -E "^ +thread:  t1( |\$)" t.jh &&
	pp t.pp -traces -unit=B -tagfocus=thread=t1 thr.pb.gz &&
	$CMP traces t.jh t.pp
'

test_expect_success 'the comparison fails on other stacks and other trees' '
	"$JHEAP" --traces --show_bytes "$P/w_basic.exact.heap" >a &&
	"$JHEAP" --traces --show_bytes "$P/demo.exact.heap" >b &&
	! $CMP traces a b >/dev/null &&
	"$JHEAP" --tree --show_bytes "$P/w_basic.exact.heap" >a &&
	"$JHEAP" --tree --show_bytes --inuse_objects "$P/w_basic.exact.heap" >b &&
	! $CMP tree a b >/dev/null
'

# jeprof prints one line per address-level stack with <hex> tags: with
# the tags removed and equal stacks added up, the stacks through main of
# the C workloads (no inlining) are jheap'"'"'s blocks, root first.
for w in w_basic demo w_shlib; do
	test_expect_success JEPROF "$w: the stacks of --traces are jeprof --collapsed's" "
		test_jeprof jp --collapsed \"\$P/$w\" \"\$P/$w.exact.heap\" &&
		sed -E 's/<[0-9a-f]{16}>//g' jp |
			awk '{ n = \$NF; sub(/ [-0-9]+\$/, \"\"); s[\$0] += n } END { for (k in s) if (s[k]) print k, s[k] }' |
			grep -E '(^|;)main(;| )' | LC_ALL=C sort >expect &&
		\"\$JHEAP\" --traces --show_bytes \"\$P/$w.exact.heap\" >t &&
		awk -v sep='-----------+-------------------------------------------------------' '
			function flush() { if (n) { s = f[n]; for (i = n - 1; i >= 1; i--) s = s \";\" f[i]; print s, v } n = 0 }
			\$0 == sep { flush(); next }
			/^File: |^Type: / { next }
			{ val = substr(\$0, 1, 10); fr = substr(\$0, 14); if (val ~ /[0-9]/) v = val + 0; f[++n] = fr }
			END { flush() }' t | grep -E '(^|;)main(;| )' | LC_ALL=C sort >actual &&
		test -s actual &&
		test_cmp expect actual
	"
done

test_expect_success '--peek with no match, or a bad expression: an error' '
	"$JHEAP" --peek=no_such_function "$P/demo.exact.heap" >out 2>err
	test $? -eq 2 && grep "^jheap: --peek: no function matches .no_such_function." err &&
	"$JHEAP" --peek="(" "$P/demo.exact.heap" >out 2>err
	test $? -eq 2 && grep "^jheap: --peek: bad regular expression" err
'

test_expect_success '--thread=* writes a --traces and a --tree per thread' '
	"$JHEAP" --traces --thread="*" "$P/w_threads.exact.heap" >out &&
	test $(grep -c "^Type: " out) -gt 1 &&
	"$JHEAP" --tree --thread="*" "$P/w_threads.exact.heap" >out &&
	test $(grep -c "^Type: " out) -gt 1
'

test_expect_success '--traces: [allocator] and [no frames] blocks, one thread or two' '
	write_symbolized &&
	printf "@\n  t*: 1: 48 [0: 0]\n" >>prof.heap &&
	JHEAP_THREADS=1 "$JHEAP" --traces --show_bytes prof.heap >one &&
	JHEAP_THREADS=2 "$JHEAP" --traces --show_bytes prof.heap >two &&
	test_cmp one two &&
	sep="-----------+-------------------------------------------------------" &&
	{
		printf "File: prog\nType: inuse_space\n%s\n" "$sep" &&
		printf "%10s   %s\n%s\n" 1000 "[allocator]" "$sep" &&
		printf "%10s   %s\n" 128 "it'"'"'s&\"q\"" &&
		printf "%13s%s\n" "" "semi;colon 12" "" tmpl::f "" main &&
		printf "%s\n%10s   %s\n%13s%s\n%s\n" "$sep" 96 "operator>" "" main "$sep" &&
		printf "%10s   %s\n" 64 "operator<" &&
		printf "%13s%s\n" "" main "" "inner (inline)" "" outer &&
		printf "%s\n%10s   %s\n%s\n" "$sep" 48 "[no frames]" "$sep" &&
		printf "%10s   %s\n%s\n" 32 main::run "$sep"
	} >expect &&
	test_cmp expect one
'

# Samples that show the same frames (here two addresses of one file) are
# one block even when the two threads that gather the stacks each see one
test_expect_success '--traces: one thread or two give the same bytes, stacks merged across them' '
	for heap in "$P"/*.exact.heap "$P"/*.accum.heap; do
		for opt in --lines --files "--focus=main --show_bytes"; do
			JHEAP_THREADS=1 "$JHEAP" --traces $opt "$heap" >one &&
			JHEAP_THREADS=2 "$JHEAP" --traces $opt "$heap" >two &&
			test_cmp one two || return 1
		done
	done &&
	JHEAP_THREADS=2 "$JHEAP" --traces --show_bytes --files "$P/w_basic.exact.heap" >files &&
	JHEAP_THREADS=2 "$JHEAP" --traces --show_bytes "$P/w_basic.exact.heap" >out &&
	test $(grep -c "^-----------+" files) -lt $(grep -c "^-----------+" out) &&
	"$JHEAP" --text --show_bytes --files "$P/w_basic.exact.heap" | sed -n "s/^Total: \([0-9]*\) B\$/\1/p" >total &&
	awk "/^ *[0-9-]+   / { s += \$1 } END { print s }" files >sum &&
	test_cmp total sum
'

test_done

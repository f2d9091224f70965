#!/bin/bash
test_description='the interactive shell, driven as a person would, in a pseudo-terminal

Rules checked (cli/shell.c, cli/lineedit.c):
 - with no output option and standard input and output on a terminal, jheap
   opens the shell; with either of them elsewhere it prints --text;
   --interactive opens it anyway and reads plain lines;
 - every report command prints, byte for byte, what the option it stands
   for prints with the same settings (top N = --text --nodecount=N, text,
   traces, tree, peek, list, disasm, dot, collapsed, callgrind, speedscope,
   raw; words after a command are --focus, -words --ignore, --options
   settings of that command alone);
 - settings (inuse_objects, lines, focus=, show_bytes, nodecount=, cum,
   thread=, alloc_space, base=) apply to the commands after them and print
   nothing; "> FILE" writes a report to FILE as -o does;
 - web, flamegraph and weblist write the report to a file and open it with
   $BROWSER (the same bytes as --svg, --flamegraph, --weblist);
 - Tab completes commands, settings, function names and files, and lists
   the candidates when several remain; the history is kept between runs
   under $XDG_STATE_HOME/jheap; Ctrl-C drops the line being typed;
 - quit, exit and Ctrl-D end the shell with status 0.
ptyshell.py runs jheap on a pseudo-terminal of its own and types.'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_have_prog python3 || test_skip "python3 is needed to drive a pseudo-terminal (apt-get install python3)"
test_need_profiles

PTY="python3 $TEST_DIRECTORY/tools/ptyshell.py --timeout 60"
# the shell's history and libedit's ~/.editrc: this script's own
export XDG_STATE_HOME=$TRASH_DIRECTORY/state HOME=$TRASH_DIRECTORY
export JHEAP_PROGRESS_AFTER=1000
P=$PROFILES

# check_commands NAME [JHEAP ARGS...] <SPEC: each line of SPEC is
# "COMMAND|OPTIONS": the shell's COMMAND must print what "jheap OPTIONS
# ARGS" prints (standard output and error), or nothing when OPTIONS is
# empty (a setting).  One shell runs all of SPEC's commands in turn.
check_commands() {
	local name=$1 i=0 cmd opts
	shift
	rm -rf "$name" && mkdir "$name" || return 1
	while IFS='|' read -r cmd opts; do
		i=$((i + 1))
		printf 'cmd %s/%d.shell %s\n' "$name" $i "$cmd" >>"$name/script"
		printf '%s\n' "$cmd" >"$name/$i.cmd"
		if [ -z "$opts" ]; then
			: >"$name/$i.expect"
		else
			# shellcheck disable=SC2086
			"$JHEAP" $opts "$@" </dev/null >"$name/$i.expect" 2>&1
		fi
	done
	printf 'keys quit\\r\nexit 0\n' >>"$name/script"
	$PTY "$name/script" -- "$JHEAP" "$@" || return 1
	for k in $(seq 1 $i); do
		test_cmp "$name/$k.expect" "$name/$k.shell" ||
			{ echo "in '$(cat "$name/$k.cmd")'"; return 1; }
	done
}

test_expect_success 'reports: the same bytes as the options (demo, no BINARY)' '
	check_commands demo "$P/demo.exact.heap" <<-EOF
	top|--text --nodecount=10
	top 3|--text --nodecount=3
	top5 --cum|--text --nodecount=5 --cum
	text|--text
	traces|--traces
	tree|--tree
	peek cache_|--peek=cache_
	list cache_store_value|--list=cache_store_value
	disasm cache_store_value|--disasm=cache_store_value
	top 2|--text --nodecount=2
	dot|--dot
	collapsed|--collapsed
	callgrind|--callgrind
	speedscope|--speedscope
	raw|--raw
	top cache -parse|--text --nodecount=10 --focus=cache --ignore=parse
	tree --cum --show_bytes|--tree --cum --show_bytes
	traces main handle -parse --lines|--traces --focus=main|handle --ignore=parse --lines
	EOF
'

test_expect_success 'settings apply to the reports after them (C++, with BINARY)' '
	check_commands cpp "$P/w_cpp" "$P/w_cpp.exact.heap" <<-EOF
	inuse_objects|
	lines|
	top|--inuse_objects --lines --text --nodecount=10
	functions|
	focus=make|
	text|--inuse_objects --focus=make --text
	tree|--inuse_objects --focus=make --tree
	show_bytes|
	focus=|
	inuse_space|
	nodecount=4|
	text|--show_bytes --nodecount=4 --text
	traces|--show_bytes --nodecount=4 --traces
	nodecount=|
	cum|
	top 3|--show_bytes --cum --text --nodecount=3
	cum=false show_bytes=false|
	exclude=std:: retain=.|
	collapsed|--exclude=std:: --retain=. --collapsed
	exclude= retain=|
	sample_index=inuse_objects|
	dot|--inuse_objects --dot
	focus make nodecount 2|
	top|--inuse_objects --focus=make --nodecount=2 --text
	EOF
'

test_expect_success 'allocator= moves the cut, and clears (demo: xmalloc wraps malloc)' '
	check_commands alloc "$P/demo.exact.heap" <<-EOF
	allocator=xmalloc|
	top|--allocator=xmalloc --text --nodecount=10
	collapsed|--allocator=xmalloc --collapsed
	allocator=|
	top|--text --nodecount=10
	EOF
'

test_expect_success 'thread=, alloc_space and base= (threads, accum, two dumps)' '
	check_commands threads "$P/w_threads.exact.heap" <<-EOF
	thread=0|
	top|--thread=0 --text --nodecount=10
	thread=*|
	text|--thread=* --text
	thread=|
	text|--text
	EOF
	check_commands accum "$P/w_basic.accum.heap" <<-EOF
	alloc_space|
	top|--alloc_space --text --nodecount=10
	alloc_objects|
	traces|--alloc_objects --traces
	EOF
	check_commands base "$P/w_basic.exact.heap" <<-EOF
	base=$P/w_basic.sampled.heap|
	text|--base=$P/w_basic.sampled.heap --text
	show_bytes|
	collapsed|--base=$P/w_basic.sampled.heap --show_bytes --collapsed
	base=|
	text|--show_bytes --text
	EOF
'

test_expect_success 'a setting the profile cannot give is refused, the one before kept' '
	check_commands noalloc "$P/w_basic.exact.heap" <<-EOF
	lines|
	top 3|--lines --text --nodecount=3
	EOF
	cat >refuse.script <<-EOF &&
	cmd alloc.out alloc_space
	cmd top.out top 3
	cmd re.out focus=(
	cmd top2.out top 3
	cmd bad.out frobnicate
	keys quit\r
	exit 0
	EOF
	$PTY refuse.script -- "$JHEAP" "$P/w_basic.exact.heap" &&
	grep "^jheap: alloc_space: the profile has no allocation counts" alloc.out &&
	grep "^jheap: focus: bad regular expression" re.out &&
	grep "^jheap: unknown command .frobnicate." bad.out &&
	"$JHEAP" --text --nodecount=3 "$P/w_basic.exact.heap" >expect &&
	test_cmp expect top.out &&
	test_cmp expect top2.out
'

# a browser that keeps a copy of what it is given, under its base name
mkdir browsed &&
cat >browser.sh <<-EOF
#!/bin/sh
cp "\$1" "$TRASH_DIRECTORY/browsed/.tmp.\$\$" &&
mv "$TRASH_DIRECTORY/browsed/.tmp.\$\$" "$TRASH_DIRECTORY/browsed/\$(basename "\$1")"
EOF
chmod +x browser.sh

# browsed OUT: the copy of the file that the "jheap: opening FILE" line of
# OUT names, once the browser has made it (it renames a whole copy into
# place).
browsed() {
	local f
	f=$(sed -n "s|^jheap: opening \(.*\)\$|\1|p" "$1") &&
	test -n "$f" || { echo "no 'opening' line in $1"; return 1; }
	test_wait "$TEST_WAIT" "the browser to copy $f" test -e "browsed/$(basename "$f")" &&
	cat "browsed/$(basename "$f")"
}

test_have_prog dot && test_set_prereq GRAPHVIZ

test_expect_success GRAPHVIZ 'web, flamegraph, weblist: the files the options write, opened with $BROWSER' '
	cat >web.script <<-EOF &&
	cmd web.out web
	cmd fg.out flamegraph
	cmd wl.out weblist cache_store
	keys quit\r
	exit 0
	EOF
	BROWSER="/nonexistent/browser:$TRASH_DIRECTORY/browser.sh %s" $PTY web.script -- "$JHEAP" "$P/demo.exact.heap" &&
	"$JHEAP" --svg "$P/demo.exact.heap" >svg 2>/dev/null &&
	"$JHEAP" --flamegraph "$P/demo.exact.heap" >fg &&
	browsed web.out >web.got && test_cmp svg web.got &&
	browsed fg.out >fg.got && test_cmp fg fg.got &&
	grep "^jheap: opening ${TMPDIR:-/tmp}/jheap-[A-Za-z0-9]*\.svg\$" web.out &&
	browsed wl.out >wl.got &&
	grep "<!DOCTYPE html>" wl.got && grep "cache_store_value" wl.got &&
	BROWSER="$TRASH_DIRECTORY/browser.sh" "$JHEAP" --weblist=cache_store "$P/demo.exact.heap" 2>wl1.out &&
	browsed wl1.out >wl1.got && test_cmp wl1.got wl.got &&
	BROWSER="$TRASH_DIRECTORY/browser.sh" "$JHEAP" --web "$P/demo.exact.heap" 2>web1.out &&
	browsed web1.out >web1.got && test_cmp svg web1.got
'

test_expect_success GRAPHVIZ '"> FILE" writes what -o FILE writes; binary reports need one' '
	cat >files.script <<-EOF &&
	cmd proto.out proto
	cmd - proto > shell.pb.gz
	cmd - svg >shell.svg
	cmd - collapsed > shell.folded
	cmd - dot > shell.dot
	cmd - top 3 > shell.top
	cmd - callgrind shell.cg
	cmd gv.out gv
	cmd over.out text > $P/demo.exact.heap
	keys quit\r
	exit 0
	EOF
	$PTY files.script -- "$JHEAP" "$P/demo.exact.heap" &&
	grep "^jheap: proto writes binary data: name a file, as in .proto > heap.pb.gz." proto.out &&
	grep "^jheap: refusing to write the report over the input" over.out &&
	grep "^jheap: gv is jeprof.s viewer: .web. shows the call graph" gv.out &&
	for f in "proto pb.gz" "svg svg" "collapsed folded" "dot dot" "callgrind cg"; do
		set -- $f &&
		"$JHEAP" --$1 -o oneshot.$2 "$P/demo.exact.heap" 2>/dev/null &&
		test_cmp oneshot.$2 shell.$2 || return 1
	done &&
	"$JHEAP" --text --nodecount=3 "$P/demo.exact.heap" >oneshot.top &&
	test_cmp oneshot.top shell.top
'

test_expect_success 'Tab completes commands, settings, function names and files' '
	: >old-base-for-tab.heap &&
	cat >tab.script <<-EOF &&
	prompt
	keys lis\tcache_st\t\r
	prompt
	keys foc\txmal\t\r
	prompt
	keys list cache_\t
	expect (?s)cache_store_value.*\(jheap\) list cache_
	screen listing.out
	keys \x15\r
	prompt
	keys proto > old-base-f\t
	expect or-tab.heap
	keys \x15\r
	cmd opts.out options
	keys quit\r
	exit 0
	EOF
	$PTY --transcript tab.log tab.script -- "$JHEAP" "$P/demo.exact.heap" &&
	"$JHEAP" --list=cache_store_value "$P/demo.exact.heap" >expect &&
	grep -F "ROUTINE ====================== cache_store_value in" tab.log &&
	grep -E "^  focus +xmalloc\$" opts.out &&
	for n in cache_get cache_init cache_insert cache_new_entry cache_store_value; do
		grep -q "$n" listing.out || { echo "$n not listed"; return 1; }
	done
'

test_expect_success 'the history is kept between runs; Up brings the last line back' '
	rm -rf state &&
	printf "cmd - top 2\nkeys quit\\\\r\nexit 0\n" >h1.script &&
	$PTY h1.script -- "$JHEAP" "$P/demo.exact.heap" &&
	test -f state/jheap/history &&
	grep -x "top\\\\0402" state/jheap/history &&
	test "$(stat -c %a state/jheap)" = 700 &&
	printf "prompt\nkeys \\\\x1b[A\\\\x1b[A\\\\r\nexpect (?s)xmalloc.*[(]jheap[)] \nscreen h2.out\nkeys quit\\\\r\nexit 0\n" >h2.script &&
	$PTY h2.script -- "$JHEAP" "$P/demo.exact.heap" &&
	"$JHEAP" --text --nodecount=2 "$P/demo.exact.heap" >expect &&
	tr -d "\r" <h2.out | grep -F -x -f expect >got &&
	test_cmp expect got
'

test_expect_success 'quit, exit, Ctrl-D end the shell with status 0; Ctrl-C drops a line' '
	printf "keys quit\\\\r\nexit 0\n" >q1 &&
	printf "keys exit\\\\r\nexit 0\n" >q2 &&
	printf "prompt\nkeys \\\\x04\nexit 0\n" >q3 &&
	for s in q1 q2 q3; do
		$PTY $s -- "$JHEAP" "$P/demo.exact.heap" || return 1
	done &&
	cat >cc.script <<-EOF &&
	prompt
	keys top 3\x03
	cmd cc.out top 2
	keys quit\r
	exit 0
	EOF
	$PTY cc.script -- "$JHEAP" "$P/demo.exact.heap" &&
	"$JHEAP" --text --nodecount=2 "$P/demo.exact.heap" >expect &&
	test_cmp expect cc.out
'

test_expect_success 'help lists the commands and explains one' '
	cat >help.script <<-EOF &&
	cmd help.out help
	cmd helptop.out help top
	cmd helpfocus.out help focus
	keys quit\r
	exit 0
	EOF
	$PTY help.script -- "$JHEAP" "$P/demo.exact.heap" &&
	for c in top text traces tree peek list disasm weblist web svg flamegraph dot proto; do
		grep -q "^  $c " help.out || { echo "help lacks $c"; return 1; }
	done &&
	grep "The same as jheap --text --nodecount=N" helptop.out &&
	grep "The same as jheap --focus=RE" helpfocus.out
'

test_expect_success 'no terminal, no shell: --text as before' '
	"$JHEAP" --text "$P/demo.exact.heap" >expect &&
	"$JHEAP" "$P/demo.exact.heap" </dev/null >out &&
	test_cmp expect out &&
	printf "exit 0\n" >nt1.script &&
	printf "expect Total:\nexit 0\n" >nt.script &&
	$PTY --transcript out1 nt1.script -- sh -c "\"$JHEAP\" \"$P/demo.exact.heap\" >piped.out" &&
	test_cmp expect piped.out &&
	$PTY --transcript out2 nt.script -- sh -c "\"$JHEAP\" \"$P/demo.exact.heap\" </dev/null" &&
	! grep -F "(jheap)" out1 out2 &&
	tr -d "\r" <out2 >out2.lf &&
	test_cmp expect out2.lf
'

test_expect_success '--interactive: the shell on plain lines, without a terminal' '
	printf "top 3\ninuse_objects\ntraces\nquit\ntop\n" |
		"$JHEAP" --interactive "$P/demo.exact.heap" >out 2>err &&
	{ "$JHEAP" --text --nodecount=3 "$P/demo.exact.heap" &&
	  "$JHEAP" --traces --inuse_objects "$P/demo.exact.heap"; } >expect &&
	test_cmp expect out &&
	! grep -F "(jheap)" err &&
	printf "top 1\n" | "$JHEAP" --interactive "$P/demo.exact.heap" >eof.out &&
	"$JHEAP" --text --nodecount=1 "$P/demo.exact.heap" >expect1 &&
	test_cmp expect1 eof.out &&
	"$JHEAP" --interactive --dot "$P/demo.exact.heap" 2>err </dev/null
	test $? -eq 2 && grep "does not combine" err
'

test_done

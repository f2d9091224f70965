#!/bin/bash
test_description='the option rules: one table of valid and invalid command lines'
. "$(dirname "$0")/lib.sh"

# Which options combine is decided in one place (cli_check() in
# cli/options.c; an option's own value in cli_parse()).  Each line below
# is a command line, the exit status it must give and the first line it
# must print on standard error ("-": nothing at all; -q keeps the note
# about a stripped libstdc++ out of the way).  @B@ is a workload
# program, @P@ and @Q@ two of its dumps, @T@ a thread of @P@.  The
# messages were read and judged by hand: each names the option at fault
# and what to do instead.

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_need_profiles
B=$PROFILES/w_threads
P=$PROFILES/w_threads.exact.heap
Q=$PROFILES/w_threads.accum.heap
T=$(sed -n 's/^ *t\([0-9][0-9]*\): .*/\1/p' "$P" | sed -n 2p)

# status | arguments | first line of stderr
cat >table <<'EOF'
0 | --text @B@ @P@ | -
0 | @P@ | -
0 | --dot --nodefraction=0 --edgefraction=0 @B@ @P@ | -
0 | --proto -o out.pb.gz @B@ @P@ | -
0 | --inuse_objects --lines @B@ @P@ | -
0 | --alloc_space --addresses @B@ @Q@ | -
0 | --text --text @B@ @P@ | -
0 | --thread=@T@ --proto -o t.pb.gz @B@ @P@ | -
0 | --thread=@T@ --speedscope @B@ @P@ | -
0 | -q --thread=* --text @B@ @P@ | -
0 | -q --thread=* --collapsed @B@ @P@ | -
0 | -q --thread=* --callgrind @B@ @P@ | -
0 | --thread=@T@ --base=@Q@ --text @B@ @P@ | -
0 | --growth --text @B@ @P@ @P@ | -
0 | --growth --proto -o g.pb.gz @B@ @P@ @P@ | -
0 | --interactive @B@ @P@ | -
0 | --interactive --thread=* --base=@Q@ @B@ @P@ | -
0 | --peek=worker --focus=worker --cum @B@ @P@ | -
0 | -q --nodefraction=0.5 @B@ @P@ | -
2 | --text --dot @B@ @P@ | jheap: specify only one output format
2 | --list=main --tree @B@ @P@ | jheap: specify only one output format
2 | --inuse_space --alloc_space @B@ @P@ | jheap: specify at most one of --inuse_space, --inuse_objects, --alloc_space, --alloc_objects, --churn, --churn_objects
2 | --lines --files @B@ @P@ | jheap: specify at most one of --functions, --lines, --files, --addresses
2 | --thread=x @B@ @P@ | jheap: --thread expects a thread number or '*', not 'x'
2 | --thread=-1 @B@ @P@ | jheap: --thread expects a thread number or '*', not '-1'
2 | --nodecount=many @B@ @P@ | jheap: --nodecount expects a number of rows, not 'many'
2 | --nodefraction=-1 @B@ @P@ | jheap: --nodefraction expects a non-negative number, not '-1'
2 | --seconds=90000 @B@ @P@ | jheap: --seconds expects a whole number of seconds (0 to 86400), not '90000'
2 | --txet @B@ @P@ | jheap: unknown option '--txet'; the nearest jheap has is '--text'
2 | --cum=yes @B@ @P@ | jheap: option '--cum' takes no value
2 | @B@ @P@ --focus | jheap: option '--focus' needs a value (RE)
2 | --text @B@ | jheap: no profile given
2 | --text | jheap: no profile given
2 | --text @P@ @B@ | jheap: '@B@' is an ELF file, not a heap profile; only the first argument may be the program
2 | --interactive --text @B@ @P@ | jheap: --interactive opens the shell; it does not combine with an output format, -o or --growth
2 | --interactive -o x @B@ @P@ | jheap: --interactive opens the shell; it does not combine with an output format, -o or --growth
2 | --interactive --growth @B@ @P@ @Q@ | jheap: --interactive opens the shell; it does not combine with an output format, -o or --growth
2 | --growth --base=@Q@ @B@ @P@ @Q@ | jheap: --growth reads a series of dumps of one process; it does not combine with --base or --thread
2 | --growth --thread=1 @B@ @P@ @Q@ | jheap: --growth reads a series of dumps of one process; it does not combine with --base or --thread
2 | --growth --thread=* --text @B@ @P@ @Q@ | jheap: --growth reads a series of dumps of one process; it does not combine with --base or --thread
2 | --growth --raw @B@ @P@ @Q@ | jheap: --growth works with --text, --collapsed, --flamegraph, --proto, --dot, --callgrind and --speedscope
2 | --growth --list=main @B@ @P@ @Q@ | jheap: --growth works with --text, --collapsed, --flamegraph, --proto, --dot, --callgrind and --speedscope
2 | --growth @B@ @P@ | jheap: --growth reads a series: two or more dumps of one process (1 given)
2 | --timeline --base=@Q@ @B@ @P@ @P@ | jheap: --timeline is a report of its own: one row per dump of a series; it does not combine with --growth, --peak, --base or --thread
2 | --timeline --peak @B@ @P@ @P@ | jheap: --timeline is a report of its own: one row per dump of a series; it does not combine with --growth, --peak, --base or --thread
2 | --peak --growth @B@ @P@ @P@ | jheap: --peak reports one dump, --growth fits a series: pick one
2 | --timeline --thread=1 @B@ @P@ @P@ | jheap: --timeline is a report of its own: one row per dump of a series; it does not combine with --growth, --peak, --base or --thread
2 | --all-dumps @B@ @P@ | jheap: --all-dumps says which dumps --growth fits; it goes with --growth
2 | --growth @B@ | jheap: no profile given
2 | --thread=* --proto @B@ @P@ | jheap: --thread='*' writes one report per thread and works with --text, --traces, --tree, --dot, --collapsed and --callgrind; pick one thread for this format
2 | --thread=* --flamegraph @B@ @P@ | jheap: --thread='*' writes one report per thread and works with --text, --traces, --tree, --dot, --collapsed and --callgrind; pick one thread for this format
2 | --thread=* --list=main @B@ @P@ | jheap: --thread='*' writes one report per thread and works with --text, --traces, --tree, --dot, --collapsed and --callgrind; pick one thread for this format
1 | --thread=* --proto @B@ /nonexistent.heap | jheap: cannot open '/nonexistent.heap': No such file or directory
2 | --pid=4242 | jheap: --pid goes with --http=[HOST]:PORT
2 | --no_browser @B@ @P@ | jheap: --no_browser goes with --http=[HOST]:PORT
2 | --http=127.0.0.1:0 --text @B@ @P@ | jheap: --http serves every view; it does not combine with an output format, -o, --growth or --interactive
2 | --http=127.0.0.1:0 --interactive @B@ @P@ | jheap: --http serves every view; it does not combine with an output format, -o, --growth or --interactive
2 | --http=127.0.0.1:0 --pid=x | jheap: --pid=PID takes the dumps of process PID (a number), without PROFILE or --base
2 | --http=127.0.0.1:0 --pid=4242 @P@ | jheap: --pid=PID takes the dumps of process PID (a number), without PROFILE or --base
2 | --http=127.0.0.1:0 @B@ | jheap: no profile given
EOF

# run_line STATUS ARGS MESSAGE: one line of the table.
run_line() {
	local want=$1 args=$2 msg=$3 rc
	args=${args//@B@/$B} args=${args//@P@/$P} args=${args//@Q@/$Q} args=${args//@T@/$T}
	msg=${msg//@B@/$B}
	read -r -a argv <<<"$args"
	"$JHEAP" "${argv[@]}" </dev/null >out 2>err
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "jheap $args: exit status $rc, expected $want"
		cat err
		return 1
	fi
	if [ "$msg" = - ]; then
		[ ! -s err ] || { echo "jheap $args: stderr should be empty:"; cat err; return 1; }
	else
		[ "$(head -n 1 err)" = "$msg" ] || {
			echo "jheap $args: stderr should start with: $msg"
			cat err
			return 1
		}
	fi
}

test_expect_success 'the table has valid and invalid lines' '
	test $(grep -c "^0 " table) -ge 15 &&
	test $(grep -c "^2 " table) -ge 25 &&
	test -n "$T"
'

while IFS='|' read -r status args msg; do
	status=${status// /} args=${args# } args=${args% } msg=${msg# }
	test_expect_success "exit $status: jheap $args" "$(printf 'run_line %q %q %q' "$status" "$args" "$msg")"
done <table

test_expect_success 'a usage error of the command line also points at --help' '
	"$JHEAP" --text --dot "$P" 2>err
	test $? -eq 2 &&
	sed -n 2p err >hint &&
	echo "Try '"'"'jheap --help'"'"' for more information." >expect &&
	test_cmp expect hint
'

test_expect_success 'the shell applies the same rules to its settings' '
	printf "%s\n" "thread=*" speedscope "flamegraph > x.svg" collapsed >in &&
	"$JHEAP" --interactive "$B" "$P" <in >out 2>err &&
	grep -c "^jheap: --thread=.\*. writes one report per thread" err >n &&
	echo 2 >expect && test_cmp expect n &&
	! test -e x.svg &&
	grep -q ";worker " out
'

test_done

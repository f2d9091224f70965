#!/bin/bash
test_description='an allocator that calls back into the program: only the leading run of allocator frames is cut

Redis'"'"'s MEMORY MALLOC-STATS calls jemalloc'"'"'s malloc_stats_print, which
calls Redis'"'"'s write callback, which allocates: the stack reads
malloc (jemalloc) <- the callback'"'"'s frames <- malloc_stats_print
(jemalloc) <- memoryCommand.  The cut stops at the first frame that is
not the allocator'"'"'s, so the callback'"'"'s path stays, as in jeprof (which
does not know malloc_stats_print for an allocator function).  Debian'"'"'s
redis-server, linked with Debian'"'"'s libjemalloc, on a unix socket only.'
. "$(dirname "$0")/lib.sh"

JEMALLOC_SO=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_have_prog redis-server && test_have_prog redis-cli || test_skip "no redis-server or redis-cli (redis-server, redis-tools)"
ldd "$(command -v redis-server)" | grep -q libjemalloc || test_skip "this redis-server is not linked with libjemalloc"
test_have_prog "$JEPROF" && test_set_prereq JEPROF

test_expect_success 'a dump of redis-server after MEMORY MALLOC-STATS' '
	MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_accum:true,prof_prefix:$TRASH_DIRECTORY/r \
		test_bg redis 600 redis-server --port 0 --unixsocket "$TRASH_DIRECTORY/redis.sock" --save "" \
		--appendonly no --daemonize no &&
	test_wait 120 "redis-server to listen on redis.sock" test -S redis.sock &&
	for i in 1 2 3; do timeout 120 redis-cli -s redis.sock MEMORY MALLOC-STATS >/dev/null || return 1; done &&
	{ timeout 120 redis-cli -s redis.sock SHUTDOWN NOSAVE; test_bg_wait redis; } &&
	mv r.*.f.heap redis.heap &&
	grep -q "^MAPPED_LIBRARIES:" redis.heap
'

test_expect_success 'the callback'"'"'s path under malloc_stats_print stays' '
	"$JHEAP" --collapsed --alloc_space redis.heap >collapsed &&
	grep ";memoryCommand;malloc_stats_print;" collapsed >stats &&
	cat stats &&
	grep -q ";memoryCommand;malloc_stats_print;libjemalloc.so.2+0x[0-9a-f]*;[^ ]*;zmalloc_usable [1-9][0-9]*\$" stats &&
	! grep -q ";memoryCommand [0-9]*\$" collapsed
'

test_expect_success JEPROF 'the same path and values as jeprof' '
	"$JEPROF" --collapsed --alloc_space "$(command -v redis-server)" redis.heap 2>/dev/null |
		sed "s/<[0-9a-f]*>//g" >jeprof.collapsed &&
	# jeprof names jemalloc'"'"'s stripped code after a nearby export
	grep ";memoryCommand;malloc_stats_print;" jeprof.collapsed |
		sed "s/;malloc_stats_print;[^;]*;/;malloc_stats_print;X;/; s/.*;memoryCommand;/memoryCommand;/" |
		sort >want &&
	sed "s/;malloc_stats_print;[^;]*;/;malloc_stats_print;X;/; s/.*;memoryCommand;/memoryCommand;/" stats |
		sort >got &&
	test -s want && test_cmp want got &&
	for mode in --alloc_space --inuse_space; do
		"$JHEAP" --text --show_bytes $mode redis.heap >jheap.txt &&
		"$JEPROF" --text --show_bytes $mode "$(command -v redis-server)" redis.heap >jeprof.txt 2>/dev/null &&
		head -n 1 jeprof.txt >total.jeprof && head -n 1 jheap.txt >total.jheap &&
		test_cmp total.jeprof total.jheap &&
		for f in memoryCommand zmalloc_usable; do
			grep " $f\$" jheap.txt | awk "{print \$1, \$4}" >row.jheap &&
			grep " $f\$" jeprof.txt | awk "{print \$1, \$4}" >row.jeprof &&
			test_cmp row.jeprof row.jheap || return 1
		done || return 1
	done
'

test_done

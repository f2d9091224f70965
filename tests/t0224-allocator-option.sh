#!/bin/bash
test_description='--allocator: the program'"'"'s own malloc wrappers are cut like the allocator

Programs wrap malloc (Redis'"'"'s zmalloc family, BIND'"'"'s isc__mem_get, the
demo'"'"'s xmalloc), and a report then puts most bytes on the wrapper.
With --allocator=RE a stack is cut through its innermost frame whose
short name RE matches, and the run of matching frames above it, so the
bytes go to the wrappers'"'"' callers.  tests/tools/alloccount.py counts the
flat values again from --traces of the same dump without the option.
The demo workload, and Debian'"'"'s redis-server (linked with Debian'"'"'s
libjemalloc) under redis-benchmark on a unix socket.'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_need_profiles
P=$PROFILES
TOOLS=$SRCDIR/tests/tools
if test_have_prog redis-server && test_have_prog redis-benchmark &&
	ldd "$(command -v redis-server)" | grep -q libjemalloc; then
	test_set_prereq REDIS
fi
ZRE='^z(try)?(malloc|calloc|realloc)'

test_expect_success 'demo: xmalloc'"'"'s bytes go to pool_init, as counted from --traces' '
	"$JHEAP" --traces --show_bytes "$P/demo.exact.heap" >traces &&
	"$JHEAP" --text --show_bytes "$P/demo.exact.heap" >plain &&
	grep -q " xmalloc\$" plain &&
	"$JHEAP" --text --show_bytes --allocator=xmalloc "$P/demo.exact.heap" >text &&
	python3 "$TOOLS/alloccount.py" xmalloc traces text &&
	! grep -q " xmalloc\$" text &&
	grep -q "^  *524288 .* pool_init\$" text &&
	head -n 1 plain >plain.total && head -n 1 text >text.total &&
	test_cmp plain.total text.total
'

test_expect_success 'the check counts: the plain report fails it' '
	! python3 "$TOOLS/alloccount.py" xmalloc traces plain
'

test_expect_success 'demo: every report format cuts the wrapper' '
	for fmt in --collapsed --traces --tree --callgrind --dot; do
		"$JHEAP" $fmt --allocator=xmalloc "$P/demo.exact.heap" >out 2>err || return 1
		! grep -q "xmalloc" out || { echo "xmalloc in $fmt"; return 1; }
	done
'

test_expect_success 'a pattern that matches nothing changes nothing' '
	"$JHEAP" --collapsed "$P/demo.exact.heap" >plain.collapsed &&
	"$JHEAP" --collapsed --allocator="^no_such_function\$" "$P/demo.exact.heap" >none.collapsed &&
	test_cmp plain.collapsed none.collapsed
'

test_expect_success 'a bad pattern: usage error naming --allocator' '
	{ "$JHEAP" --text --allocator="(" "$P/demo.exact.heap" >out 2>err; rc=$?; } ;
	cat err &&
	test "$rc" = 2 &&
	grep -q "allocator" err
'

test_expect_success REDIS 'a dump of redis-server under redis-benchmark' '
	MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$TRASH_DIRECTORY/r \
		test_bg redis 600 redis-server --port 0 --unixsocket "$TRASH_DIRECTORY/redis.sock" --save "" \
		--appendonly no --daemonize no &&
	test_wait 120 "redis-server to listen on redis.sock" test -S redis.sock &&
	timeout 300 redis-benchmark -s redis.sock -n 3000 -r 2000 -q -t set,lpush,sadd,hset >bench.log &&
	{ timeout 120 redis-cli -s redis.sock SHUTDOWN NOSAVE; test_bg_wait redis; } &&
	mv r.*.f.heap redis.heap &&
	grep -q "^MAPPED_LIBRARIES:" redis.heap
'

test_expect_success REDIS 'redis: the top rows are zmalloc wrappers without the option' '
	"$JHEAP" --text --show_bytes --nodecount=3 redis.heap >plain &&
	cat plain &&
	sed -n "2,3p" plain | grep -E -q " z(try)?(malloc|calloc|realloc)[a-z_]*\$"
'

test_expect_success REDIS 'redis: --allocator gives the wrappers'"'"' bytes to their callers' '
	"$JHEAP" --traces --show_bytes redis.heap >traces &&
	"$JHEAP" --text --show_bytes --allocator="$ZRE" redis.heap >text &&
	python3 "$TOOLS/alloccount.py" "$ZRE" traces text &&
	head -n 4 text &&
	! sed -n "2,4p" text | grep -E -q " z(try)?(malloc|calloc|realloc)"
'

test_done

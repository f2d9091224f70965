#!/bin/bash
test_description='jheap record on Debian'"'"'s redis-server under redis-benchmark (loopback, a free port)'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

test_have_prog redis-server && test_have_prog redis-benchmark && test_have_prog redis-cli ||
	test_skip "redis-server, redis-benchmark and redis-cli are needed (apt-get install redis-server redis-tools: scripts/deps.sh)"
test_have_prog python3 || test_skip "python3 is needed to find a free port"

# free_port: a port of 127.0.0.1 nobody listens on (bound and released;
# redis cannot be told to pick one itself: port 0 turns TCP off).
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# bench ARGS...: redis-benchmark on our server, quietly
bench() {
	redis-benchmark -h 127.0.0.1 -p "$(cat port)" -q "$@" >>bench.log 2>&1
}

# objects MODE DUMP: the Total of jheap --MODE (a count of objects)
objects() {
	"$JHEAP" --$1 "$2" >objects.out && report_total objects.out
}

test_expect_success 'redis-server starts under jheap record, with its own jemalloc' '
	for try in 1 2 3; do
		free_port >port &&
		bg redis "$JHEAP" record --accum --dir=dumps -- redis-server --port "$(cat port)" \
			--bind 127.0.0.1 --save "" --appendonly no --daemonize no --logfile "" &&
		for i in $(seq 100); do
			redis-cli -h 127.0.0.1 -p "$(cat port)" ping 2>/dev/null | grep -q PONG && break
			kill -0 $(cat redis.pid) 2>/dev/null || break
			sleep 0.1
		done
		redis-cli -h 127.0.0.1 -p "$(cat port)" ping 2>/dev/null | grep -q PONG && break
		kill $(cat redis.pid) 2>/dev/null; sleep 0.2   # the port was taken meanwhile: again
	done &&
	grep "^jheap: recording process $(cat redis.pid) (redis-server) with its own jemalloc" redis.err &&
	! grep -q "x86_64-linux-gnu/libjemalloc.so.2.*preload" redis.err &&
	"$JHEAP" ctl $(cat redis.pid) status >status &&
	grep "^jemalloc: 5\..* (mallctl in .*libjemalloc.so.2)\$" status &&
	grep "^profiling: enabled\$" status && grep "^accum: yes" status
'

test_expect_success 'a dump on demand after redis-benchmark: the values are redis'"'"'s' '
	bench -t set -n 20000 -r 100000 -d 256 &&
	d1=$("$JHEAP" dump $(cat redis.pid)) && echo "$d1" >d1 &&
	case $d1 in "$TRASH_DIRECTORY"/dumps/redis-server.$(cat redis.pid).*.m*.heap) ;; *) false ;; esac &&
	"$JHEAP" --show_bytes "$d1" >r1 &&
	check_total r1 "$(heap_sum "$d1" inuse_space | cut -d. -f1)" &&
	grep -E " (zmalloc|zmalloc_usable|ztrymalloc_usable)\$" r1 &&
	grep -E " (aeMain|aeProcessEvents)\$" r1 &&
	test "$(objects alloc_objects "$d1")" -gt 0
'

test_expect_success 'profiling off: an interval of redis-benchmark adds no samples' '
	"$JHEAP" ctl $(cat redis.pid) off | grep "is inactive (it was active)" &&
	bench -t set,lpush -n 20000 -r 1000000 -d 256 &&
	d2=$("$JHEAP" dump $(cat redis.pid)) && echo "$d2" >d2 &&
	test "$(objects alloc_objects "$d2")" = "$(objects alloc_objects "$(cat d1)")" &&
	"$JHEAP" --alloc_space --show_bytes --base "$(cat d1)" "$d2" >off &&
	check_total off 0
'

test_expect_success 'profiling on again: the next interval is sampled' '
	"$JHEAP" ctl $(cat redis.pid) on | grep "is active (it was inactive)" &&
	bench -t set,lpush -n 20000 -r 1000000 -d 256 &&
	d3=$("$JHEAP" dump $(cat redis.pid)) && echo "$d3" >d3 &&
	a2=$(objects alloc_objects "$(cat d2)") && a3=$(objects alloc_objects "$d3") &&
	test "$a3" -gt "$a2" &&
	"$JHEAP" --alloc_space --show_bytes --base "$(cat d2)" "$d3" >on &&
	test "$(report_total on)" -gt 1000000 &&
	grep -E " (lpushCommand|pushGenericCommand|listTypePush|quicklistPush.*)\$" on
'

test_expect_success 'jheap dump PID --base=EARLIER --text: what the interval kept' '
	"$JHEAP" dump $(cat redis.pid) --base="$(cat d1)" --text --show_bytes >grow 2>err &&
	grep "^jheap: process $(cat redis.pid) dumped its heap to " err &&
	test "$(report_total grow)" -gt 0
'

test_expect_success 'reset: a dump right after it holds nothing sampled before' '
	"$JHEAP" ctl $(cat redis.pid) reset | grep "reset" &&
	d4=$("$JHEAP" dump $(cat redis.pid)) &&
	test "$(objects alloc_objects "$d4")" -lt "$(objects alloc_objects "$(cat d3)")"
'

test_expect_success 'redis shuts down: a final dump, no socket left' '
	pid=$(cat redis.pid) && sock=$(ctl_socket $pid) &&
	{ redis-cli -h 127.0.0.1 -p "$(cat port)" shutdown nosave >/dev/null 2>&1; true; } &&
	for i in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done &&
	! kill -0 $pid 2>/dev/null &&
	ls dumps/redis-server.$pid.*.f.heap &&
	! test -e "$sock"
'

test_done

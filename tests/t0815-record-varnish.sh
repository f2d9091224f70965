#!/bin/bash
test_description='jheap record on Debian'"'"'s varnishd: a daemon that closes every descriptor and drops root

varnishd (linked with Debian'"'"'s libjemalloc) is a manager process that
closes every descriptor as it starts and runs as user varnish, and a
child (cache-main) that does the same and runs as user vcache.  The
control library listens again each time, quietly, where jheap looks for it; both
processes dump on demand while varnish serves files from a Python
backend, all on loopback.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

test_have_prog varnishd || test -x /usr/sbin/varnishd ||
	test_skip "varnishd is needed (apt-get install varnish: scripts/deps.sh)"
test_have_prog /usr/bin/python3 && test_have_prog curl && test_have_prog varnishadm ||
	test_skip "/usr/bin/python3, curl and varnishadm are needed"
[ "$(id -u)" = 0 ] || test_skip "varnishd drops root to its own users: the test runs as root"
test_have_prog llvm-symbolizer && test_set_prereq LLVM
VARNISHD=$(command -v varnishd || echo /usr/sbin/varnishd)

# Both servers bind port 0 and say which port they got: no port is probed,
# released and then taken by someone else meanwhile.
test_expect_success 'varnishd serves files from a backend under jheap record' '
	mkdir -p www &&
	for i in $(seq 1 200); do head -c $((1000 + i * 37)) /dev/zero | tr "\\0" x >www/f$i.txt; done &&
	bg web /usr/bin/python3 -u -m http.server 0 --bind 127.0.0.1 --directory www &&
	wait_line web.out "^Serving HTTP on 127.0.0.1 port [0-9]" 30 &&
	sed -n "s/^Serving HTTP on 127.0.0.1 port \([0-9]*\) .*/\1/p" web.out >bport &&
	bg v "$JHEAP" record --sample=1 --dir="$TRASH_DIRECTORY/dumps" --dump-group=varnish -- "$VARNISHD" -F -n "$TRASH_DIRECTORY/vwork" \
		-a 127.0.0.1:0 -b 127.0.0.1:"$(cat bport)" -s malloc,32m &&
	# the port varnishd bound, from its command line interface
	for i in $(seq 300); do
		varnishadm -n "$TRASH_DIRECTORY/vwork" debug.listen_address >addr 2>/dev/null &&
			grep -q "^a0 127.0.0.1 [0-9]" addr && break
		kill -0 $(cat v.pid) 2>/dev/null || break
		sleep 0.1
	done &&
	sed -n "s/^a0 127.0.0.1 \([0-9]*\)\$/\1/p" addr >vport && test -s vport ||
		{ echo "varnishd did not say which port it listens on:"; cat addr v.err; false; } &&
	for i in $(seq 100); do
		curl -s -o /dev/null http://127.0.0.1:"$(cat vport)"/f1.txt && break
		sleep 0.1
	done &&
	for k in 1 2; do
		for i in $(seq 1 200); do
			curl -s -o /dev/null http://127.0.0.1:"$(cat vport)"/f$i.txt || return 1
		done
	done &&
	# the library stays quiet on the standard error of the program (varnish
	# shows what its compiler prints there as warnings)
	! grep jheap-ctl v.err
'

test_expect_success 'the manager (user varnish) dumps on demand: its heap, with its parameter table' '
	mpid=$(cat v.pid) &&
	test "$(stat -c %U /proc/$mpid)" = varnish &&
	path=$("$JHEAP" dump $mpid) &&
	case $path in "$TRASH_DIRECTORY"/dumps/varnishd.$mpid.*.m*.heap) ;; *) false ;; esac &&
	test "$(stat -c "%U %a" "$path")" = "varnish 600" &&
	head -n 1 "$path" | grep "^heap_v2/1\$" &&
	grep -c "^@ 0x" "$path" >samples && test "$(cat samples)" -gt 10 &&
	sed -n "/^MAPPED_LIBRARIES:\$/,\$p" "$path" | grep " $VARNISHD\$" &&
	"$JHEAP" --show_bytes "$path" >m.txt && head -n 3 m.txt &&
	# MCF_AddParams fills the manager'"'"'s table of parameters (mgt_param.c)
	grep " MCF_AddParams\$" m.txt
'

test_expect_success 'the child (cache-main, user vcache) dumps on demand, with the objects it caches' '
	cpid=$(pgrep -P $(cat v.pid) -x cache-main) &&
	test "$(stat -c %U /proc/$cpid)" = vcache &&
	path=$("$JHEAP" dump $cpid) && echo "$path" >child && test -s "$path" &&
	"$JHEAP" --show_bytes "$path" >c.txt && head -n 4 c.txt &&
	total=$(sed -n "s/^Total: \\([0-9]*\\) B\$/\\1/p" c.txt) &&
	# 400 fetches of 200 files of 1 to 8.4 KB: the cache holds them
	test "$total" -gt 800000
'

test_expect_success LLVM 'the child'"'"'s leaf names agree with llvm-symbolizer' '
	python3 "$TEST_DIRECTORY/tools/leafnames.py" -v "$JHEAP" "$(cat child)" >names && cat names &&
	grep -q " wrong=0\$" names
'

test_expect_success 'a dump folder the daemon may not write in: the message says why' '
	cpid=$(pgrep -P $(cat v.pid) -x cache-main) &&
	chmod 750 dumps &&
	expect_fail 1 "it runs as user $(id -u vcache), who may not write in $TRASH_DIRECTORY/dumps" dump $cpid &&
	chmod 770 dumps
'

test_expect_success 'stop varnishd' '
	kill -TERM $(cat v.pid) &&
	for i in $(seq 100); do kill -0 $(cat v.pid) 2>/dev/null || break; sleep 0.1; done &&
	! kill -0 $(cat v.pid) 2>/dev/null
'

test_done

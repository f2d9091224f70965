#!/bin/bash
test_description='jheap record on Debian'"'"'s nginx: a master and two workers under load (a unix socket)

nginx allocates through ngx_alloc and ngx_memalign, under its pools'"'"' static
helpers (ngx_palloc_large, ngx_palloc_block: unnamed in Debian'"'"'s stripped
binary, nginx+0xSTART) and ngx_pcalloc.  A worker'"'"'s report gets one hint
line whose --allocator option, pasted, puts nginx'"'"'s own code in the first
rows; the workers are forked from the master, so their dumps are named
nginx.PID, and a sum of the three says that what the master allocated
before fork is counted once per process.  Load: curl over the socket,
5000 requests (a static file, gzip, return, rewrite), in well under a
second.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || test_skip "nginx is needed (apt-get install nginx: scripts/deps.sh)"
test_have_prog curl || test_skip "curl is needed (scripts/deps.sh)"

# own_rows FILE N: how many of the first N rows of the --text report FILE
# are nginx's own functions (exported ngx_* names, or nginx+0xSTART)
own_rows() {
	sed -n "2,$(($2 + 1))p" "$1" | awk '{ print $6 }' | grep -c -E "^(ngx_[a-z0-9_]+|nginx\+0x[0-9a-f]+)\$"
}

# wait_file PATH: wait (60 s) until PATH exists, while nginx runs
wait_file() {
	local i
	for ((i = 0; i < 1200; i++)); do
		test -e "$1" && return 0
		kill -0 "$(cat ng.pid)" 2>/dev/null || { echo "nginx ended:"; cat ng.err logs/*.log; return 1; }
		sleep 0.05
	done
	echo "no $1 after 60 s"; cat ng.err
	return 1
}

# wait_workers MASTER: wait (60 s) until MASTER has two children
wait_workers() {
	local i
	for ((i = 0; i < 1200; i++)); do
		test "$(pgrep -P "$1" | wc -l)" = 2 && return 0
		sleep 0.05
	done
	echo "nginx $1 did not start two workers"
	return 1
}

# hint_re ERR: the pattern of the hint line in ERR
hint_re() {
	sed -n "s/^jheap: hint: .*; to charge \(its\|their\) callers: --allocator='\(.*\)'\$/\2/p" "$1"
}

# cut_check DUMP [OPTIONS]: the hint for DUMP, pasted, leaves no hinted
# function in the first five rows and at least two of nginx's own
cut_check() {
	local dump=$1
	shift
	"$JHEAP" --text "$@" "$dump" >plain 2>err &&
	re=$(hint_re err) && test -n "$re" &&
	echo "$re" | grep -q "nginx\\\\+0x" &&
	"$JHEAP" --text --nodecount=5 "$@" --allocator="$re" "$dump" >cut 2>err2 &&
	cat cut &&
	! grep -q "warning" err2 &&
	for f in $(sed -n "2,6p" cut | awk "{ print \$6 }"); do
		! echo "$f" | grep -q -E "$re" || { echo "$f is hinted but still a first row"; return 1; }
	done &&
	test "$(own_rows cut 5)" -ge 2
}

test_expect_success 'nginx under jheap record: a master and two workers on a unix socket' '
	mkdir html tmp logs &&
	seq 1 3000 >html/big.txt && echo hello >html/index.html &&
	if [ "$(id -u)" = 0 ]; then user="user root root;"; else user=; fi &&
	cat >nginx.conf <<-EOF &&
	worker_processes 2;
	$user
	error_log $PWD/logs/error.log;
	pid $PWD/nginx.pid;
	events { worker_connections 64; }
	http {
		access_log $PWD/logs/access.log;
		client_body_temp_path $PWD/tmp;
		proxy_temp_path $PWD/tmp;
		fastcgi_temp_path $PWD/tmp;
		uwsgi_temp_path $PWD/tmp;
		scgi_temp_path $PWD/tmp;
		gzip on; gzip_min_length 1; gzip_types text/plain;
		server {
			listen unix:$PWD/s.sock;
			root $PWD/html;
			add_header X-Test jheap;
			location /api/ { default_type text/plain; return 200 "api \$uri \$args\n"; }
			location /old/ { rewrite ^/old/(.*)\$ /new/\$1 last; }
			location /new/ { default_type text/plain; return 200 "new \$uri\n"; }
			location / { try_files \$uri \$uri/index.html =404; }
		}
	}
	EOF
	bg ng timeout -k 5 300 "$JHEAP" record --accum --sample=1 --dir=dumps -- \
		"$NGINX" -p "$PWD" -c "$PWD/nginx.conf" -e "$PWD/logs/stderr.log" -g "daemon off;" &&
	wait_file s.sock &&
	master=$(pgrep -P "$(cat ng.pid)") && echo "$master" >master && forget_pid "$master" &&
	wait_workers "$master" &&
	pgrep -P "$master" >workers &&
	for w in $(cat workers); do forget_pid "$w"; done &&
	grep -q "^jheap: recording process $master (nginx)" ng.err
'

test_expect_success 'load: 5000 requests over the socket, answered' '
	timeout 120 curl -s --unix-socket s.sock --compressed --parallel --parallel-max 8 \
		-w "%{http_code}\n" -o /dev/null \
		"http://x/{api/a,old/b,index.html,big.txt,missing}?[1-1000]" >codes &&
	test "$(grep -c "^200\$" codes)" = 4000 &&
	test "$(grep -c "^404\$" codes)" = 1000
'

test_expect_success 'a dump of the master and of each worker, named nginx.PID' '
	for p in $(cat master workers); do
		d=$("$JHEAP" dump $p) || return 1
		case $d in "$TRASH_DIRECTORY"/dumps/nginx.$p.*.m0.heap) ;; *) echo "dump $d"; return 1 ;; esac
		echo "$d" >>dumps.list
	done &&
	test "$(wc -l <dumps.list)" = 3
'

test_expect_success 'a worker: the hint, pasted, puts nginx'"'"'s own code first (in use)' '
	w=$(sed -n 2p dumps.list) &&
	cut_check "$w" &&
	grep -q "^jheap: hint: .* (ngx_memalign, ngx_alloc, nginx+0x" err
'

test_expect_success 'a worker: the same over all it allocated (--alloc_space: gzip, requests)' '
	cut_check "$(sed -n 2p dumps.list)" --alloc_space
'

test_expect_success 'master and workers summed: what the master allocated before fork counted once per process' '
	"$JHEAP" --text $(cat dumps.list) >sum 2>err &&
	pids=$(cat master workers | tr "\n" " " | sed "s/ \$//; s/ /, /g") &&
	grep -q "^jheap: note: .*: 3 dumps of processes forked from one another ($pids: their program and libraries at the same addresses)" err &&
	! grep -q "warning" err
'

test_expect_success 'stop nginx: each process writes its final dump, named nginx.PID' '
	kill -QUIT "$(cat master)" &&
	wait_gone "$(cat master)" 60 &&
	for p in $(cat master workers); do
		ls dumps/nginx.$p.*.f.heap || return 1
	done &&
	test "$(ls dumps | grep -v "^nginx\." | wc -l)" = 0
'

test_done

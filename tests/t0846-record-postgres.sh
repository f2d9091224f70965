#!/bin/bash
test_description='jheap record on Debian'"'"'s PostgreSQL: backends under pgbench and an autovacuum worker (a unix socket)

A scratch cluster (initdb, as the postgres user when the tests run as
root) listens only on a unix socket in the scratch folder.  PostgreSQL
allocates through palloc and MemoryContextAlloc over AllocSetAlloc, which
Debian'"'"'s stripped binary leaves unnamed (postgres+0xSTART): a backend'"'"'s
report gets one hint line whose --allocator option, pasted, puts
PostgreSQL'"'"'s own code in the first rows.  Autovacuum workers are forked
from the postmaster'"'"'s SIGUSR1 handler, so their stacks run through the
signal trampoline: their dumps read without a warning and with exit
status 0, with __restore_rt and select named.  Backends and workers are
forked from the postmaster: their dumps are named postgres.PID and a sum
of them says what it counts once per process.  Load: pgbench -T 3.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

PGBIN=
for d in /usr/lib/postgresql/*/bin; do
	[ -x "$d/postgres" ] && [ -x "$d/initdb" ] && [ -x "$d/pgbench" ] && PGBIN=$d
done
[ -n "$PGBIN" ] || test_skip "PostgreSQL is needed (apt-get install postgresql: scripts/deps.sh)"
if [ "$(id -u)" = 0 ]; then
	id postgres >/dev/null 2>&1 || test_skip "no postgres user to run the server as"
	test_have_prog setpriv || test_skip "setpriv is needed to run the server as postgres"
	AS="setpriv --reuid=postgres --regid=postgres --clear-groups -- env -u XDG_RUNTIME_DIR"
else
	AS=env
fi

# own_rows FILE N: how many of the first N rows of FILE are PostgreSQL's
# own functions (exported by the postgres binary, or postgres+0xSTART)
own_rows() {
	sed -n "2,$(($2 + 1))p" "$1" | awk '{ print $6 }' | while read -r f; do
		case $f in postgres+0x*) echo "$f" ;; *) grep -qx "$f" exported && echo "$f" ;; esac
	done | wc -l
}

hint_re() {
	sed -n "s/^jheap: hint: .*; to charge \(its\|their\) callers: --allocator='\(.*\)'\$/\2/p" "$1"
}

# dumps_with NAME: the final dumps whose stacks hold the function NAME;
# each dump is read once (an autovacuum worker exits, and writes a dump,
# every second), its frames kept in FILE.frames
dumps_with() {
	local f
	for f in pg/dumps/postgres.*.f.heap; do
		[ -e "$f" ] || continue
		[ -e "$f.frames" ] ||
			"$JHEAP" --traces "$f" 2>/dev/null | sed -n "s/^ *//p" | sort -u >"$f.frames"
		grep -qx -- "$1" "$f.frames" && echo "$f"
	done
	return 0
}

# wait_for SECS WHAT CMD...: CMD until it prints something, while the
# server runs
wait_for() {
	local secs=$1 what=$2 i out
	shift 2
	for ((i = 0; i < secs * 5; i++)); do
		out=$("$@") && [ -n "$out" ] && { echo "$out"; return 0; }
		kill -0 "$(cat pg.pid)" 2>/dev/null || { echo "postgres ended" >&2; cat pg.err >&2; return 1; }
		sleep 0.2
	done
	echo "no $what after $secs s" >&2
	return 1
}

test_expect_success 'a scratch cluster under jheap record, on a unix socket only' '
	nm -D --defined-only "$PGBIN/postgres" | awk "\$2 == \"T\" { print \$3 }" >exported &&
	mkdir pg && { [ "$(id -u)" != 0 ] || chown postgres pg; } &&
	$AS "$PGBIN/initdb" -D "$PWD/pg/data" -A trust -U postgres --no-sync >pg/initdb.log 2>&1 &&
	bg pg timeout -k 5 300 $AS "$JHEAP" record --sample=4K --dir="$PWD/pg/dumps" -- \
		"$PGBIN/postgres" -D "$PWD/pg/data" -c listen_addresses= -c unix_socket_directories="$PWD/pg" \
		-c autovacuum_naptime=1 -c fsync=off -c max_connections=10 -c shared_buffers=16MB &&
	for i in $(seq 600); do
		test -S pg/.s.PGSQL.5432 && break
		kill -0 "$(cat pg.pid)" 2>/dev/null || { cat pg.err; false; } || return 1
		sleep 0.1
	done &&
	test -S pg/.s.PGSQL.5432 &&
	master=$(pgrep -P "$(cat pg.pid)") && echo "$master" >postmaster.pid && forget_pid "$master" &&
	grep -q "^jheap: recording process [0-9]* (postgres)" pg.err
'

test_expect_success 'pgbench: 3 s of load from two clients' '
	$AS "$PGBIN/pgbench" -h "$PWD/pg" -U postgres -i -s 1 postgres >init.log 2>&1 &&
	timeout 120 $AS "$PGBIN/pgbench" -h "$PWD/pg" -U postgres -c 2 -T 3 postgres >bench.log 2>&1 &&
	grep -q "^tps = " bench.log
'

test_expect_success 'a backend'"'"'s final dump: the hint, pasted, puts PostgreSQL'"'"'s own code first' '
	b=$(wait_for 60 "backend dump" dumps_with PostgresMain | head -n 1) &&
	echo "$b" >backend &&
	"$JHEAP" --text "$b" >plain 2>err &&
	cat err &&
	re=$(hint_re err) && test -n "$re" &&
	echo "$re" | grep -q "postgres\\\\+0x" && echo "$re" | grep -q "palloc" &&
	"$JHEAP" --text --nodecount=5 --allocator="$re" "$b" >cut 2>err2 &&
	cat cut &&
	for f in $(sed -n "2,6p" cut | awk "{ print \$6 }"); do
		! echo "$f" | grep -q -E "$re" || { echo "$f is hinted but still a first row"; return 1; }
	done &&
	test "$(own_rows cut 5)" -ge 3
'

test_expect_success 'an autovacuum worker (forked in a signal handler): no warning, exit 0, the trampoline named' '
	w=$(wait_for 120 "autovacuum worker dump" dumps_with StartAutoVacWorker | head -n 1) &&
	echo "$w" >worker &&
	"$JHEAP" --text "$w" >text 2>err &&
	cat err &&
	! grep -q "warning" err &&
	"$JHEAP" --traces "$w" >traces 2>err &&
	grep -q "^ *__restore_rt\$" traces &&
	grep -q -E "^ *(__)?select\$" traces &&
	! grep -q "^ *libc\.so\.6+0x" traces
'

test_expect_success 'the postmaster'"'"'s children are named postgres.PID; a sum of two says what it counts twice' '
	case $(cat backend) in pg/dumps/postgres.[0-9]*.f.heap) ;; *) false ;; esac &&
	"$JHEAP" --text "$(cat backend)" "$(cat worker)" >sum 2>err &&
	grep -q "^jheap: note: .*: 2 dumps of processes forked from one another ([0-9]*, [0-9]*: their program and libraries at the same addresses)" err &&
	! grep -q "warning" err
'

test_expect_success 'stop the server (fast shutdown)' '
	kill -INT "$(cat postmaster.pid)" &&
	wait_gone "$(cat postmaster.pid)" 60 &&
	ls pg/dumps/postgres.$(cat postmaster.pid).*.f.heap
'

test_done

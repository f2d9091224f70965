#!/bin/bash
test_description='signal frames: the trampoline and the pc it interrupted are looked up as they are

testdata/w_sigfork.c allocates in a SIGUSR1 handler that interrupted
select(), and forks there a child that allocates too, as PostgreSQL'"'"'s
postmaster starts its autovacuum workers; both dumps (Debian'"'"'s
libjemalloc, whose unwinder is libgcc'"'"'s) hold stacks that run through
glibc'"'"'s __restore_rt.  Looked up minus one, as return addresses are,
the trampoline falls before its function and the interrupted pc (after
select'"'"'s syscall) follows no call: a false "libc.so.6 may have
changed" and exit status 1.  As gdb and libunwind read them, both are
looked up at their addresses: exit 0, no warning, the frames named as
llvm-symbolizer names those addresses (with libc6-dbg'"'"'s debug file).'
. "$(dirname "$0")/lib.sh"

JEMALLOC_SO=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
[ -f "$JEMALLOC_SO" ] || test_skip "no $JEMALLOC_SO (libjemalloc2)"
test "$(uname -m)" = x86_64 || test_skip "the workload reads x86-64 registers"
test_have_prog cc || test_skip "no C compiler"
LIBC=/usr/lib/x86_64-linux-gnu/libc.so.6

test_expect_success 'w_sigfork under libjemalloc: a dump of the parent and of the child forked in the handler' '
	cc -O0 -g -pthread -o w_sigfork "$SRCDIR/testdata/w_sigfork.c" -ldl &&
	mkdir dumps &&
	timeout 120 env LD_PRELOAD=$JEMALLOC_SO \
		MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$PWD/dumps/w ./w_sigfork &&
	ls dumps/w.*.heap >list &&
	test $(wc -l <list) = 2 &&
	for f in $(cat list); do
		if "$JHEAP" --traces "$f" 2>/dev/null | grep -q " child_work$"; then
			cp "$f" child.heap
		else
			cp "$f" parent.heap
		fi
	done &&
	test -f child.heap && test -f parent.heap
'

# child_work and handler_alloc allocate under on_signal <- the trampoline
# <- select <- wait_loop <- main
stack_through_handler() {
	"$JHEAP" --traces "$1" >traces 2>err || { cat err; return 1; }
	awk -v leaf="$2" "
		function check() { if (n >= 6 && f[1] == leaf && f[2] == \"on_signal\" &&
			f[3] == \"__restore_rt\" && (f[4] == \"select\" || f[4] == \"__select\") &&
			f[5] == \"wait_loop\" && f[6] == \"main\") ok = 1 }
		/^-----/ { check(); n = 0; next }
		{ n++; f[n] = (\$1 ~ /^[0-9.]+\$/ && NF >= 2) ? \$2 : \$1 }
		END { check(); exit !ok }" traces || { echo "no $2 <- on_signal <- __restore_rt <- select <- wait_loop <- main:"; cat traces; return 1; }
}

test_expect_success 'the parent: exit 0, no warning, handler_alloc <- on_signal <- __restore_rt <- select' '
	"$JHEAP" parent.heap >out 2>err &&
	! grep -q "may have changed\|warning" err &&
	stack_through_handler parent.heap handler_alloc
'

test_expect_success 'the child forked in the handler: the same, for child_work and handler_alloc' '
	"$JHEAP" child.heap >out 2>err &&
	! grep -q "may have changed\|warning" err &&
	stack_through_handler child.heap child_work &&
	stack_through_handler child.heap handler_alloc
'

test_expect_success 'a sum of both: exit 0, no warning' '
	"$JHEAP" parent.heap child.heap >out 2>err &&
	! grep -q "warning" err &&
	grep -q " on_signal$" out
'

test_expect_success 'the looked-up pcs are the addresses themselves, named as llvm-symbolizer names them' '
	test_have_prog llvm-symbolizer || { echo "(no llvm-symbolizer: pcs checked only)"; }
	"$JHEAP" --raw child.heap >raw 2>/dev/null &&
	base=$(awk "/ r-xp / && \$NF == \"$LIBC\" { split(\$1, a, \"-\"); print a[1], \$3; exit }" child.heap) &&
	test -n "$base" &&
	set -- $base &&
	for name in __restore_rt select; do
		pc=$(awk -v n="$name" "\$2 == n || \$2 == \"__\" n { print \$1; exit }" raw) &&
		test -n "$pc" || { echo "no $name in --raw"; return 1; }
		# the dump holds the address itself: the pc is not one less
		addr=$(printf "0x%x" $((pc))) &&
		grep -q "^@.* $addr\( \|\$\)" child.heap ||
			{ echo "$name: pc $pc is not an address of the dump"; return 1; }
		off=$(printf "0x%x" $(( pc - 0x$1 + 0x$2 ))) &&
		if test_have_prog llvm-symbolizer; then
			# the debug file itself: llvm-symbolizer takes names
			# that DWARF lacks (__restore_rt is assembly) from the
			# symbol table of the file it is given
			bid=$(readelf -n "$LIBC" | sed -n "s/.*Build ID: //p") &&
			dbg=/usr/lib/debug/.build-id/$(echo $bid | cut -c1-2)/$(echo $bid | cut -c3-).debug &&
			test -f "$dbg" || dbg=$LIBC
			llvm-symbolizer --obj="$dbg" "$off" | head -n 1 >llvm &&
			echo "$name at $off: llvm-symbolizer says $(cat llvm)" &&
			grep -qx "$name" llvm || return 1
		fi
	done
'

test_expect_success 'the same workload without the fix would doubt libc: the call check still runs on other return addresses' '
	# a copy of the dump whose trampoline address is moved one byte on
	# is no trampoline: its frames are return addresses again
	tramp=$(awk "\$2 == \"__restore_rt\" { print \$1; exit }" raw) &&
	moved=$(printf "0x%x" $(( tramp + 1 ))) && tramp=$(printf "0x%x" $((tramp))) &&
	sed "s/$tramp/$moved/g" child.heap >moved.heap &&
	! cmp -s child.heap moved.heap &&
	"$JHEAP" moved.heap >out 2>err
	test $? -le 1 && grep -q "libc.so.6. may have changed since the dump was written" err
'

test_done

#!/bin/bash
test_description='jheap record follows the program it starts, not the programs that one starts (unless --children)

preload/family.c: the recorded process, in every image it execs into,
and its children by fork alone are recorded; a program started with exec
from a child of fork gets the caller'"'"'s own LD_PRELOAD and MALLOC_CONF back
(the library'"'"'s fork handler) and loads nothing; one started by vfork or
posix_spawn (Python'"'"'s subprocess, glibc'"'"'s system) loads the library,
which turns itself off: no sampling, no dump, no socket, and the
caller'"'"'s variables back for its own children.  --children records them
all.  Every recorded image names its dumps after its own program
(jemalloc'"'"'s prof.prefix): sh -c "exec sqlite3 ..." writes sqlite3.PID.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

test_have_prog sqlite3 || test_skip "sqlite3 is needed (scripts/deps.sh)"
test_have_prog perl || test_skip "perl is needed"

# only FILE...: the dumps in d/ are exactly these names, with any pid
only() {
	ls d | sed "s/\.[0-9]*\.[0-9]*\.f\.heap\$//" | sort >got &&
	printf "%s\n" "$@" | sort >want &&
	test_cmp want got
}

test_expect_success 'sh starts sqlite3 and env, then becomes sqlite3: only the last is recorded' '
	rm -rf d &&
	MALLOC_CONF=narenas:2 "$JHEAP" record -q --dir=d -- \
		sh -c "sqlite3 :memory: \"select 1\" >/dev/null; env >child.env; exec sqlite3 :memory: \"select 2\"" >out &&
	grep -qx 2 out &&
	only sqlite3 &&
	ls d/sqlite3.*.0.f.heap
'

test_expect_success 'the child'"'"'s environment is the caller'"'"'s own' '
	grep -qx "MALLOC_CONF=narenas:2" child.env &&
	! grep -q "^LD_PRELOAD=" child.env &&
	! grep -q "^JHEAP_CTL_" child.env &&
	! grep -q "^_RJEM_MALLOC_CONF=\|^JE_MALLOC_CONF=" child.env
'

test_expect_success 'a caller'"'"'s own LD_PRELOAD is kept for the children' '
	rm -rf d &&
	libm=$(ldd "$(command -v perl)" | sed -n "s/^.*libm\.so\.6 => \([^ ]*\) .*/\1/p") &&
	test -n "$libm" &&
	# the preload of the caller comes before the runtime of the sanitizer in a
	# sanitized build of jheap (make check SANITIZE=...): let it be
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	LD_PRELOAD=$libm "$JHEAP" record -q --dir=d -- \
		perl -e "system(q{env >child2.env}); exit 0" &&
	grep -qx "LD_PRELOAD=$libm" child2.env &&
	! grep -q "^MALLOC_CONF=" child2.env &&
	only perl
'

test_expect_success 'Python'"'"'s subprocess (vfork): the child turns itself off, its own children get the caller'"'"'s environment' '
	rm -rf d &&
	"$JHEAP" record -q --dir=d -- /usr/bin/python3 -c "
import subprocess
subprocess.run([\"sh\", \"-c\", \"env >spawn.env; sqlite3 :memory: \\\"select 3\\\"\"], check=True)
" >out &&
	grep -qx 3 out &&
	only python3 &&
	! grep -q "^LD_PRELOAD=\|^MALLOC_CONF=\|^JHEAP_CTL_" spawn.env
'

test_expect_success '--children: each program recorded, its dumps named after it' '
	rm -rf d &&
	"$JHEAP" record -q --children --dir=d -- \
		perl -e "system(q{sqlite3 :memory: \"select 4\"}); exit 0" >out &&
	grep -qx 4 out &&
	only perl sqlite3 &&
	"$JHEAP" --text d/sqlite3.*.heap >text 2>err &&
	test "$(report_total text)" != ""
'

test_expect_success 'the recorded program'"'"'s forks stay recorded, under its name' '
	rm -rf d &&
	"$JHEAP" record -q --dir=d -- perl -e "my \$x = q{a} x 100000; if (my \$p = fork) { waitpid(\$p, 0) } else { my \$y = q{b} x 200000; exit 0 }" &&
	test "$(ls d | wc -l)" = 2 &&
	only perl perl
'

test_done

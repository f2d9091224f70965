# tests/lib.sh: a small test library in the style of git's t/test-lib.sh.
# A test script sources it, runs test_expect_success blocks and ends with
# test_done:
#
#   #!/bin/bash
#   test_description='what this script covers'
#   . "$(dirname "$0")/lib.sh"
#   test_expect_success 'total is right' '
#       "$JHEAP" --text x y >actual &&
#       test_cmp expected actual
#   '
#   test_done
#
# Each body runs in a subshell (variables it sets do not survive it; files
# do) inside the script's own scratch directory, $TRASH_DIRECTORY, which is
# emptied when the script starts and kept afterwards for inspection.
# Output of a failed body is printed, prefixed with "# "; -v (or VERBOSE=1)
# prints the output of every body.
#
# Environment (all optional):
#   JHEAP     the jheap binary            (default <srcdir>/build/jheap)
#   PROFILES  the generated profiles       (default <srcdir>/build/profiles;
#             made by tests/mkprofiles.sh when missing or out of date)
#   JEPROF    the reference jeprof        (default jeprof)
#   UPDATE=1  test_golden rewrites the golden files instead of comparing
#   TEST_RESULTS_DIR  where test_done writes <script>.counts (for run.sh)
#   BUILD_DIR the build directory          (default <srcdir>/build; scratch
#             directories go to BUILD_DIR/trash/<script>)
#   VERBOSE=1 same as -v
# <srcdir> is the directory above tests/, which is also $(pwd) when the
# tests run from the top of the tree (make check).
#
# Helpers: test_expect_success [PREREQ] DESC BODY, test_skip REASON (skip the
# rest of the script), test_set_prereq / test_have_prereq, test_have_prog,
# test_cmp, test_golden NAME ACTUAL, test_normalize (paths -> @TRASH@,
# @PROFILES@, @BUILD@, @SRCDIR@), test_need_profiles, test_jeprof (cached
# jeprof run), test_jeprof_bg / test_jeprof_wait, report_total, report_row,
# check_row(s), check_total, heap_sum (jeprof's unsampled total of a dump),
# expect_fail STATUS PATTERN ARGS (jheap fails so, with that message);
# background processes and waits, with deadlines and no fixed sleeps:
# test_bg, test_bg_line, test_bg_port, test_bg_until, test_bg_wait,
# test_bg_stop, test_wait, test_wait_line; test_step names a long step
# (tests/tools/heartbeat.sh says when one lasts 30 s).
#
# The caller's JHEAP_* (but JHEAP), DEBUGINFOD_* and XDG_* are cleared,
# and "python3" is /usr/bin/python3 whatever the caller's PATH holds.

set -u
export LC_ALL=C
unset CDPATH

TEST_NAME=$(basename "$0" .sh)
TEST_DIRECTORY=$(cd "$(dirname "$0")" && pwd)
SRCDIR=$(cd "$TEST_DIRECTORY/.." && pwd)
GOLDEN_DIR=$TEST_DIRECTORY/golden

# Make a path absolute against the directory the script was started from:
# the tests cd into their scratch directory.
test_abspath_() {
	case $1 in
	/*) printf '%s\n' "$1" ;;
	*) printf '%s\n' "$PWD/$1" ;;
	esac
}

BUILD_DIR=$(test_abspath_ "${BUILD_DIR:-$SRCDIR/build}")
JHEAP=$(test_abspath_ "${JHEAP:-$BUILD_DIR/jheap}")
PROFILES=$(test_abspath_ "${PROFILES:-$BUILD_DIR/profiles}")
JEPROF=${JEPROF:-jeprof}
UPDATE=${UPDATE:-}
VERBOSE=${VERBOSE:-}
TEST_RESULTS_DIR=${TEST_RESULTS_DIR:-}
export JHEAP PROFILES JEPROF BUILD_DIR SRCDIR

while [ $# -gt 0 ]; do
	case $1 in
	-v | --verbose) VERBOSE=1 ;;
	*) echo "$0: unknown option '$1'" >&2; exit 2 ;;
	esac
	shift
done

TRASH_DIRECTORY=$BUILD_DIR/trash/$TEST_NAME
rm -rf "$TRASH_DIRECTORY"
mkdir -p "$TRASH_DIRECTORY" || { echo "$0: cannot create $TRASH_DIRECTORY" >&2; exit 1; }
cd "$TRASH_DIRECTORY" || exit 1
# A clean environment: what the caller set for jheap (JHEAP_*, but not
# JHEAP, the binary under test), for libdebuginfod (DEBUGINFOD_*) or the
# XDG folders changes what jheap does, so none of it reaches the tests.
for v in $(compgen -e); do
	case $v in
	JHEAP) ;;
	JHEAP_* | DEBUGINFOD_* | XDG_*) unset "$v" ;;
	esac
done
unset v
# jheap's persistent symbol cache: one per script, shared by its tests (so
# that every script also runs jheap on a warm cache), never the user's.
export XDG_CACHE_HOME="$TRASH_DIRECTORY/.cache"
# "python3" is Debian's /usr/bin/python3 (what scripts/deps.sh installs),
# whatever comes first on the caller's PATH: a version manager's shim there
# can take seconds to start.  The tools' "#!/usr/bin/env python3" too.
if [ -x /usr/bin/python3 ]; then
	mkdir -p "$TRASH_DIRECTORY/.bin" &&
		ln -sf /usr/bin/python3 "$TRASH_DIRECTORY/.bin/python3" &&
		PATH=$TRASH_DIRECTORY/.bin:$PATH
fi

test_count=0
test_passed=0
test_failed=0
test_skipped=0
test_prereqs_=" "
test_failed_names_=

say() {
	printf '%s\n' "$*"
}

# test_set_prereq NAME: mark a prerequisite as satisfied.
test_set_prereq() {
	test_prereqs_="$test_prereqs_$1 "
}

# test_have_prereq A,B,...: true when all are set ("!A" means A is not).
test_have_prereq() {
	local p IFS=,
	for p in $1; do
		case $p in
		!*) case $test_prereqs_ in *" ${p#!} "*) return 1 ;; esac ;;
		*) case $test_prereqs_ in *" $p "*) ;; *) return 1 ;; esac ;;
		esac
	done
	return 0
}

test_ok_() {
	test_passed=$((test_passed + 1))
	say "ok $test_count - $1"
}

test_failure_() {
	test_failed=$((test_failed + 1))
	test_failed_names_="$test_failed_names_ $test_count"
	say "not ok $test_count - $1"
	if [ -z "$VERBOSE" ] && [ -s "$2" ]; then
		sed 's/^/#	/' "$2"
	fi
	say "#	in $TEST_NAME.sh, scratch directory $TRASH_DIRECTORY"
}

test_skip_one_() {
	test_skipped=$((test_skipped + 1))
	say "ok $test_count # skip $1 ($2)"
}

# Run a test body inside a function, so that "return 1" works in it.
test_eval_() {
	eval "$1"
}

# test_expect_success [PREREQ] 'description' 'body'
test_expect_success() {
	local prereq= desc body out rc
	if [ $# -eq 3 ]; then
		prereq=$1
		shift
	fi
	if [ $# -ne 2 ]; then
		echo "bug in $TEST_NAME.sh: test_expect_success needs 2 or 3 arguments" >&2
		exit 1
	fi
	desc=$1 body=$2
	test_count=$((test_count + 1))
	if [ -n "$prereq" ] && ! test_have_prereq "$prereq"; then
		test_skip_one_ "$desc" "missing $prereq"
		return 0
	fi
	out=$TRASH_DIRECTORY/.out.$test_count
	TEST_BG_FILE_=$TRASH_DIRECTORY/.bg.$test_count
	test_step "test $test_count ($desc)"
	if [ -n "$VERBOSE" ]; then
		say "# $desc"
		(cd "$TRASH_DIRECTORY" && test_eval_ "$body") 2>&1 </dev/null | tee "$out"
		rc=${PIPESTATUS[0]}
	else
		(cd "$TRASH_DIRECTORY" && test_eval_ "$body") >"$out" 2>&1 </dev/null
		rc=$?
	fi
	test_bg_stop_ "$TEST_BG_FILE_" >>"$out" 2>&1
	TEST_BG_FILE_=$TEST_BG_SCRIPT_
	test_step "after test $test_count ($desc)"
	if [ "$rc" -eq 0 ]; then
		test_ok_ "$desc"
	else
		test_failure_ "$desc" "$out"
	fi
	return 0
}

# test_skip 'reason': skip the rest of the script (a missing tool or
# binary), counting one skipped test, and exit.
test_skip() {
	test_count=$((test_count + 1))
	test_skip_one_ "$TEST_NAME" "$1"
	test_done
}

# test_done: print the counts, record them for run.sh and exit.
test_done() {
	if [ -n "$TEST_RESULTS_DIR" ]; then
		mkdir -p "$TEST_RESULTS_DIR" &&
			echo "$test_passed $test_failed $test_skipped" >"$TEST_RESULTS_DIR/$TEST_NAME.counts"
	fi
	say "1..$test_count"
	if [ "$test_failed" -gt 0 ]; then
		say "# $TEST_NAME: failed $test_failed of $test_count:$test_failed_names_"
	fi
	say "# $TEST_NAME: $test_passed passed, $test_failed failed, $test_skipped skipped"
	[ "$test_failed" -eq 0 ] && exit 0
	exit 1
}

# test_cmp EXPECTED ACTUAL
test_cmp() {
	diff -u "$1" "$2"
}

# test_golden NAME ACTUAL: compare ACTUAL with tests/golden/NAME; with
# UPDATE=1 rewrite the golden file instead.  Name goldens after the flags
# that made them (e.g. w_basic.exact--text--show_bytes).  Normalize paths
# first (test_normalize).
test_golden() {
	local golden=$GOLDEN_DIR/$1
	if [ -n "$UPDATE" ]; then
		mkdir -p "$GOLDEN_DIR" && cp "$2" "$golden" &&
			echo "updated $golden"
		return
	fi
	if [ ! -f "$golden" ]; then
		echo "no golden file $golden; run with UPDATE=1 to create it"
		return 1
	fi
	diff -u "$golden" "$2"
}

# Escape a string for the left side of a sed s||| command.
test_sed_quote_() {
	printf '%s\n' "$1" | sed 's/[][\.*^$|/]/\\&/g'
}

# test_normalize <in >out: replace this machine's paths with placeholders,
# longest first: @TRASH@, @PROFILES@, @BUILD@, @SRCDIR@.
test_normalize() {
	sed -e "s|$(test_sed_quote_ "$TRASH_DIRECTORY")|@TRASH@|g" \
		-e "s|$(test_sed_quote_ "$PROFILES")|@PROFILES@|g" \
		-e "s|$(test_sed_quote_ "$BUILD_DIR")|@BUILD@|g" \
		-e "s|$(test_sed_quote_ "$SRCDIR")|@SRCDIR@|g"
}

# test_have_prog PROG: true when PROG is on $PATH (or an executable path).
test_have_prog() {
	command -v "$1" >/dev/null 2>&1
}

# ---------------------------------------------------------------------
# Background processes and waiting.  No fixed sleep stands in for "ready":
# a test waits for the thing itself (a line in a file, a port that
# listens), with a generous deadline, and fails saying what did not happen.
# Every background process is bounded in time and stopped when the test
# body that started it ends, failure included (or the script, for one
# started outside a body).  Messages go to standard error, so that
# "port=$(test_bg_line ...)" keeps only the answer.

# TEST_WAIT: the default deadline of the waits, in seconds
TEST_WAIT=120
# the processes test_bg started: "PID START-TIME" lines, one file per test
# body (test_expect_success sets it) and one for the script itself
TEST_BG_SCRIPT_=$TRASH_DIRECTORY/.bg.script
TEST_BG_FILE_=$TEST_BG_SCRIPT_

# test_proc_start_ PID: the start time of process PID (field 22 of its
# stat), or false when it has ended (a zombie has ended): with the pid, it
# names one process even after the pid is reused.
test_proc_start_() {
	local st
	{ read -r st <"/proc/$1/stat"; } 2>/dev/null || return 1
	st=${st##*) }
	set -- $st
	case $1 in Z | X) return 1 ;; esac
	printf '%s\n' "${20}"
}

# test_bg NAME SECS CMD...: start CMD in the background under timeout(1):
# SIGTERM after SECS seconds, SIGKILL 5 s after any SIGTERM it ignores.
# Standard input /dev/null, output in NAME.out, errors in NAME.err, the
# pid (timeout's: CMD is its child, in its process group) in NAME.pid.
# test_bg_stop NAME stops it earlier; the end of the test body does.
test_bg() {
	local name=$1 secs=$2 pid
	shift 2
	rm -f "$name.out" "$name.err" "$name.pid"
	timeout -k 5 "$secs" "$@" >"$name.out" 2>"$name.err" </dev/null &
	pid=$!
	echo "$pid" >"$name.pid"
	echo "$pid $(test_proc_start_ "$pid")" >>"$TEST_BG_FILE_"
}

# test_bg_alive NAME: the process test_bg NAME started still runs
test_bg_alive() {
	local pid start
	{ read -r pid <"$1.pid"; } 2>/dev/null || return 1
	start=$(test_proc_start_ "$pid") || return 1
	grep -qx "$pid $start" "$TEST_BG_FILE_" "$TEST_BG_SCRIPT_" 2>/dev/null
}

# test_bg_wait NAME [SECS]: wait until the process test_bg NAME started
# has ended by itself; when this shell started it, its exit status (124:
# timeout(1) stopped it) is in NAME.status
test_bg_wait() {
	local pid
	{ read -r pid <"$1.pid"; } 2>/dev/null || { echo "no process $1" >&2; return 1; }
	test_wait "${2:-$TEST_WAIT}" "$1 to end" test_bg_ended_ "$1" || return 1
	wait "$pid" 2>/dev/null
	echo $? >"$1.status"
}
test_bg_ended_() {
	! test_bg_alive "$1"
}

# test_bg_stop NAME: SIGTERM to the process test_bg NAME started (timeout
# passes it on to CMD's process group) and wait until it has ended
test_bg_stop() {
	local pid f=$TRASH_DIRECTORY/.bg.one
	{ read -r pid <"$1.pid"; } 2>/dev/null || return 0
	grep "^$pid " "$TEST_BG_FILE_" "$TEST_BG_SCRIPT_" 2>/dev/null | sed "s/^[^:]*://" >"$f"
	test_bg_stop_ "$f"
}

# test_bg_stop_ FILE: stop the processes FILE lists that still run (the
# same pid and start time), and wait until they have ended
test_bg_stop_() {
	local f=$1 pid start i alive=
	[ -s "$f" ] || { rm -f "$f"; return 0; }
	while read -r pid start; do
		[ -n "$start" ] && [ "$(test_proc_start_ "$pid")" = "$start" ] &&
			kill -TERM "$pid" 2>/dev/null
	done <"$f"
	for ((i = 0; i < 400; i++)); do
		alive=
		while read -r pid start; do
			[ -n "$start" ] && [ "$(test_proc_start_ "$pid")" = "$start" ] &&
				alive="$alive $pid"
		done <"$f"
		[ -z "$alive" ] && break
		sleep 0.05
	done
	if [ -n "$alive" ]; then
		say "# $TEST_NAME: background processes still running after SIGTERM:$alive; killing them" >&2
		for pid in $alive; do
			kill -KILL "$pid" 2>/dev/null
		done
	fi
	rm -f "$f"
}

# test_step TEXT: what the script does now.  When one step lasts 30 s,
# tests/tools/heartbeat.sh says so (and every 30 s after), so that "make
# check" is never silent for long.  test_expect_success and
# test_need_profiles name their steps; a long step outside a test body, or
# a long part of one, should say what it is.
TEST_STEP_FILE_=$TRASH_DIRECTORY/.step
TEST_STEP_NOW_=
test_step() {
	[ "$*" = "$TEST_STEP_NOW_" ] && return 0   # the same step goes on
	TEST_STEP_NOW_=$*
	printf '%s %s\n' "$EPOCHSECONDS" "$TEST_NAME: $*" >"$TEST_STEP_FILE_.tmp" &&
		mv -f "$TEST_STEP_FILE_.tmp" "$TEST_STEP_FILE_"
}
test_step "setting up"
# the heartbeat counts as a background process of the script
(bash "$TEST_DIRECTORY/tools/heartbeat.sh" $$ "$TEST_STEP_FILE_" </dev/null 2>/dev/null &
	echo "$! $(test_proc_start_ $!)" >>"$TEST_BG_SCRIPT_")
trap 'test_bg_stop_ "$TEST_BG_SCRIPT_"' EXIT

# test_wait SECS WHAT CMD...: run CMD (its output dropped) until it
# succeeds; after SECS seconds, fail saying that WHAT did not happen
test_wait() {
	local secs=$1 what=$2 end
	shift 2
	end=$((SECONDS + secs))
	until "$@" >/dev/null 2>&1; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "timed out after $secs s waiting for $what" >&2
			return 1
		fi
		sleep 0.05
	done
}

# test_file_line_ FILE REGEX: print the first complete line (one that ends
# with a newline: the writer may be in the middle of the next) of FILE
# that matches the extended REGEX; false when there is none
test_file_line_() {
	local data
	data=$(cat "$1" 2>/dev/null; printf x) || return 1
	data=${data%x}
	case $data in *$'\n'*) ;; *) return 1 ;; esac
	data=${data%"${data##*$'\n'}"}
	grep -E -m 1 -- "$2" <<<"${data%$'\n'}"
}

# test_wait_line FILE REGEX [SECS]: wait until a complete line of FILE
# matches REGEX (grep -E), and print it
test_wait_line() {
	local end=$((SECONDS + ${3:-$TEST_WAIT}))
	until test_file_line_ "$1" "$2"; do
		if [ "$SECONDS" -ge "$end" ]; then
			echo "timed out after ${3:-$TEST_WAIT} s waiting for a line matching '$2' in $1:" >&2
			tail -n 20 "$1" >&2 2>/dev/null
			return 1
		fi
		sleep 0.05
	done
}

# test_bg_until NAME WHAT CMD...: run CMD (its output dropped) until it
# succeeds, while the process of test_bg NAME runs; fail, saying that WHAT
# did not happen, when that process ends first or after $TEST_WAIT s
test_bg_until() {
	local name=$1 what=$2 end=$((SECONDS + TEST_WAIT))
	shift 2
	until "$@" >/dev/null 2>&1; do
		if ! test_bg_alive "$name"; then
			"$@" >/dev/null 2>&1 && return 0
			echo "$name ended before $what; its output and errors:" >&2
			tail -n 20 "$name.out" "$name.err" >&2
			return 1
		fi
		if [ "$SECONDS" -ge "$end" ]; then
			echo "timed out after $TEST_WAIT s waiting for $what; the output and errors of $name:" >&2
			tail -n 20 "$name.out" "$name.err" >&2
			return 1
		fi
		sleep 0.05
	done
}

# test_bg_line NAME REGEX: wait until a complete line of NAME.out (the
# output of test_bg NAME) matches REGEX, and print it; fail at once when
# the process has ended without writing it
test_bg_line() {
	test_bg_until "$1" "$1 to print a line matching '$2'" test_file_line_ "$1.out" "$2" &&
		test_file_line_ "$1.out" "$2"
}

# test_bg_port NAME [SECS]: the TCP port the process of test_bg NAME (or
# a child of it) listens on, once it does: for a server told to bind port
# 0 that does not say which port it got
test_bg_port() {
	local pid
	read -r pid <"$1.pid" || return 1
	/usr/bin/python3 "$TEST_DIRECTORY/tools/listenport.py" "$pid" "${2:-$TEST_WAIT}" || {
		echo "$1 does not listen; its output and errors:" >&2
		tail -n 20 "$1.out" "$1.err" >&2
		return 1
	}
}

# expect_fail STATUS PATTERN ARGS...: jheap exits STATUS with one message
# matching PATTERN on stderr, and is not killed by a signal.
expect_fail() {
	local want=$1 pat=$2 rc
	shift 2
	"$JHEAP" "$@" >out 2>err
	rc=$?
	if [ $rc -ne "$want" ]; then
		echo "exit status $rc, expected $want"; cat err; return 1
	fi
	grep -E -- "$pat" err || { echo "stderr does not match $pat:"; cat err; return 1; }
}

# test_need_profiles: make sure $PROFILES holds the workload dumps (runs
# tests/mkprofiles.sh, which returns at once when they are up to date).
# Failing to make them is a test failure, and ends the script.
test_need_profiles() {
	local log=$TRASH_DIRECTORY/.mkprofiles.log
	test_count=$((test_count + 1))
	test_step "making the workload dumps (tests/mkprofiles.sh $PROFILES)"
	if "$TEST_DIRECTORY/mkprofiles.sh" "$PROFILES" >"$log" 2>&1; then
		test_ok_ "workload profiles are ready in $PROFILES"
	else
		test_failure_ "tests/mkprofiles.sh $PROFILES" "$log"
		test_done
	fi
}

# ---------------------------------------------------------------------
# Text-report helpers.  A report (jeprof's and jheap's --text) is
#   Total: <value> <unit>
#   rows "%8s %6s %6s %8s %6s %s": flat flat% sum% cum cum% name

# test_jeprof OUT ARGS...: run "$JEPROF ARGS..." into OUT (stdout only),
# cached under $PROFILES/jeprof-cache (mkprofiles.sh empties it when it
# makes new dumps): jeprof takes most of a second per run.
test_jeprof() {
	local out=$1 key cache f newest= last tag
	shift
	key=$(printf '%s\n' "$@" | md5sum) || return 1
	eval "last=\${$#}"
	cache=$PROFILES/jeprof-cache/${last##*/}.${key%% *}.txt
	for f in "$@"; do
		if [ -f "$f" ] && { [ -z "$newest" ] || [ "$f" -nt "$newest" ]; }; then
			newest=$f
		fi
	done
	if [ ! -s "$cache" ] || { [ -n "$newest" ] && [ "$newest" -nt "$cache" ]; }; then
		mkdir -p "$PROFILES/jeprof-cache" || return 1
		# per-process names: test_jeprof_bg may run the same key twice.
		# ($BASHPID is read once: in a redirection it is the child's.)
		tag=$BASHPID
		"$JEPROF" "$@" >"$cache.tmp.$tag" 2>"$cache.err.$tag" || {
			echo "jeprof failed: $JEPROF $*"
			cat "$cache.err.$tag"
			rm -f "$cache.tmp.$tag" "$cache.err.$tag"
			return 1
		}
		mv -f "$cache.tmp.$tag" "$cache"
		rm -f "$cache.err.$tag"
	fi
	cp "$cache" "$out"
}

# test_jeprof_bg CMD ARGS...: run CMD (a function that ends up calling
# test_jeprof) in the background to fill the jeprof cache, at most
# $TEST_JOBS (default: twice the CPUs) at once; test_jeprof_wait waits for
# all.  A cold cache otherwise costs most of a second per jeprof run.
test_jeprof_bg() {
	local max=${TEST_JOBS:-$((2 * $(nproc 2>/dev/null || echo 2)))}
	test_step "running jeprof for the checks below (test_jeprof_bg)"
	while [ "$(jobs -rp | wc -l)" -ge "$max" ]; do
		wait -n
	done
	("$@" >/dev/null 2>&1 </dev/null) &
}

test_jeprof_wait() {
	wait
}

# report_total FILE: the number on the "Total:" line (first one).
report_total() {
	awk '$1 == "Total:" { print $2; exit }' "$1"
}

# report_row FILE NAME: print "flat cum" of the row named exactly NAME, or
# nothing.  When no row has that exact name, a row whose name shortens to
# NAME (jeprof's ShortFunctionName: argument lists, template arguments
# and <addr> tags removed) is used; if several rows match, their values
# are added.
report_row() {
	awk -v want="$2" '
	function shorten(s,   t) {
		while (1) {
			t = s
			gsub(/\([^()]*\)( const)?/, "", s)
			if (s == t) break
		}
		while (1) {
			t = s
			gsub(/<[^<>]*>/, "", s)
			if (s == t) break
		}
		# s/^.*\s+(\w+::)/$1/: drop a return type before "word::"
		while (match(s, /[ \t]+[A-Za-z0-9_]+::/)) {
			s = substr(s, RSTART)
			sub(/^[ \t]+/, "", s)
		}
		sub(/[ \t]+$/, "", s)
		return s
	}
	$1 == "Total:" || $1 == "Total" { next }
	NF >= 6 {
		name = $0
		for (i = 0; i < 5; i++)
			sub(/^ *[^ ]+/, "", name)
		sub(/^ /, "", name)
		if (name == want) {
			ef += $1; ec += $4
			if (!exact++) { es = $1 " " $4 }
		} else if (shorten(name) == want) {
			sf += $1; sc += $4
			if (!short++) { ss = $1 " " $4 }
		}
	}
	END {
		# one row: its own strings; several: the sums
		if (exact == 1) print es
		else if (exact) printf "%.10g %.10g\n", ef, ec
		else if (short == 1) print ss
		else if (short) printf "%.10g %.10g\n", sf, sc
	}' "$1"
}

# check_row FILE NAME FLAT CUM: the row NAME has these values; "-" skips
# one; FLAT "none" means there must be no such row.  Prints what differs.
check_row() {
	local got flat cum
	got=$(report_row "$1" "$2")
	if [ "$3" = none ]; then
		[ -z "$got" ] && return 0
		echo "$1: expected no row '$2', got flat/cum $got"
		return 1
	fi
	if [ -z "$got" ]; then
		echo "$1: no row '$2' (expected flat $3, cum $4)"
		return 1
	fi
	flat=${got% *} cum=${got#* }
	if { [ "$3" != - ] && [ "$flat" != "$3" ]; } || { [ "$4" != - ] && [ "$cum" != "$4" ]; }; then
		echo "$1: row '$2': expected flat $3 cum $4, got flat $flat cum $cum"
		return 1
	fi
}

# check_rows FILE <<EOF with lines "FLAT CUM NAME..." (NAME may contain
# spaces; "-" skips a value).  Checks every line, then fails if any differed.
check_rows() {
	local f flat cum name rc=0
	f=$1
	while read -r flat cum name; do
		case $flat in '' | '#'*) continue ;; esac
		check_row "$f" "$name" "$flat" "$cum" || rc=1
	done
	return $rc
}

# check_total FILE VALUE: the Total: line shows VALUE.
check_total() {
	local got
	got=$(report_total "$1")
	if [ "$got" != "$2" ]; then
		echo "$1: expected Total $2, got '${got}'"
		return 1
	fi
}

# heap_sum FILE MODE: the total jeprof should report for a heap_v2 FILE,
# computed from the "t*" line of every stack record with jeprof's
# unsampling (spec section 2.1: per record and per pair, in doubles).
# MODE: inuse_space, inuse_objects, alloc_space or alloc_objects.
# Prints the sum with 3 decimals (jeprof prints it truncated: %d).  With
# a third argument "truncated", each record's value is truncated toward
# zero before it is added (as a pprof file holds it), and the sum printed
# as an integer.
heap_sum() {
	awk -v mode="$2" -v trunc="${3:-}" '
	NR == 1 {
		if ($0 !~ /^heap_v2\/[0-9]+/) { print "not a heap_v2 file" > "/dev/stderr"; exit 2 }
		r = substr($0, 9) + 0
	}
	/^MAPPED_LIBRARIES:/ { exit }
	/^@/ { instack = 1; next }
	instack && $1 == "t*:" {
		# t*: n1: s1 [n2: s2]
		line = $0
		gsub(/[\[\]:]/, " ", line)
		split(line, f, " ")
		n1 = f[2]; s1 = f[3]; n2 = f[4]; s2 = f[5]
		if (mode ~ /^inuse/) { n = n1; s = s1 } else { n = n2; s = s2 }
		if (n != 0) {
			scale = 1 / (1 - exp(-((s / n) / r)))
			n *= scale; s *= scale
		}
		v = (mode ~ /objects$/) ? n : s
		sum += trunc != "" ? int(v) : v
	}
	END { printf trunc != "" ? "%d\n" : "%.3f\n", sum }' "$1"
}

# test_npm_speedscope: install the pinned speedscope and ajv npm packages
# (tests/speedscope/package-lock.json) into $BUILD_DIR/npm/speedscope
# unless they are there; false without node/npm or the registry.
test_npm_speedscope() {
	local NPM_DIR=$BUILD_DIR/npm/speedscope
	local src=$TEST_DIRECTORY/speedscope
	test_have_prog node && test_have_prog npm || return 1
	if cmp -s "$src/package-lock.json" "$NPM_DIR/package-lock.json" &&
		[ -f "$NPM_DIR/node_modules/speedscope/dist/release/file-format-schema.json" ] &&
		[ -f "$NPM_DIR/node_modules/ajv/package.json" ]; then
		return 0
	fi
	test_step "installing speedscope and ajv from npm (npm ci, at most 300 s; log in $TRASH_DIRECTORY/npm.log)"
	mkdir -p "$NPM_DIR" &&
		cp "$src/package.json" "$src/package-lock.json" "$NPM_DIR/" &&
		timeout -k 5 300 npm ci --prefix "$NPM_DIR" --no-audit --no-fund --ignore-scripts \
			--fetch-timeout=60000 --fetch-retries=2 \
			>"$TRASH_DIRECTORY/npm.log" 2>&1 || {
		say "# npm ci failed, or took more than 300 s (exit status $?): see $TRASH_DIRECTORY/npm.log"
		return 1
	}
}

# Hand-written fixtures shared by the output tests (in the current folder).

# A symbolized profile (spec 4.6) written by hand: names that need
# sanitizing, a stack made of allocator frames only, a root "main::run"
# whose line sorts before "main;..." (':' < ';') though its frame sorts
# after "main", and a base profile.
# Values are bytes of heap_v2/1 records (unsampling changes them by less
# than 1e-9).
write_symbolized() {
	cat >prof.heap <<-\EOF
	--- symbol
	binary=./prog
	0x0000555500001233 main
	0x0000555500001249 outer--inner
	0x0000555500001259 tmpl<a&b>::f(char const*, "q")
	0x0000555500001269 semi;colon 12
	0x000055550000127a it's&"q"
	0x0000555500002010 operator<
	0x0000555500002020 operator>
	0x0000555500003000 malloc
	0x0000555500004000 main::run
	---
	--- heap
	heap_v2/1
	@ 0x555500002010 0x555500001234 0x55550000124a
	  t*: 1: 64 [0: 0]
	@ 0x55550000127a 0x55550000126a 0x55550000125a 0x555500001234
	  t*: 2: 128 [0: 0]
	@ 0x555500002020 0x555500001234
	  t*: 3: 96 [0: 0]
	@ 0x555500003000
	  t*: 1: 1000 [0: 0]
	@ 0x555500004000
	  t*: 1: 32 [0: 0]
	EOF
	sed -e "s/t\*: 2: 128/t*: 1: 64/" -e "s/t\*: 3: 96/t*: 6: 192/" \
		-e "/^@ 0x555500002010/,+1d" prof.heap >base.heap
}

# write_weird: a symbolized profile whose names have quotes, backslashes,
# '&', an invalid UTF-8 byte and a control character (weird.heap).
write_weird() {
	printf -- "--- symbol\nbinary=./we\"ird\\\\prog\n" >weird.heap &&
	printf "0x0000555500001233 main\n" >>weird.heap &&
	printf "0x0000555500001249 say\"hi\\\\there--op&amp;<b>\n" >>weird.heap &&
	printf "0x0000555500001300 bad\377utf8\n" >>weird.heap &&
	printf "0x0000555500001400 ctl\001x\n" >>weird.heap &&
	printf "0x0000555500001500 ns::Cls<int>::f(a, b)\n" >>weird.heap &&
	printf -- "---\n--- heap\nheap_v2/1\n" >>weird.heap &&
	printf "@ 0x555500001400 0x555500001501 0x555500001301 0x555500001234 0x55550000124a\n" >>weird.heap &&
	printf "  t*: 1: 64 [0: 0]\n" >>weird.heap &&
	printf "@ 0x555500001300 0x55550000124a\n  t*: 1: 32 [0: 0]\n" >>weird.heap
}

# jheap_into OUT ARGS...: "$JHEAP" ARGS with standard output in OUT and
# standard error in OUT.err; on failure prints the command and its errors.
# A run is stopped after 10 minutes (exit 124): a hang fails, never waits.
jheap_into() {
	local out=$1 rc
	shift
	timeout -k 5 600 "$JHEAP" "$@" >"$out" 2>"$out.err" && return 0
	rc=$?
	[ "$rc" = 124 ] && echo "jheap did not end within 10 minutes"
	echo "jheap failed (exit $rc): $JHEAP $*"
	cat "$out.err"
	return 1
}

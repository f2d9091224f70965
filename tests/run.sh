#!/bin/bash
# tests/run.sh [SCRIPT...]: run the command-line tests (every
# tests/t[0-9]*.sh, in order, or the scripts given) and print the summary
# line "N passed, N failed" (plus ", N skipped" when some were skipped).
# With UNIT_TESTS (the unit test programs, space-separated; make check
# sets it) and no SCRIPT, the unit tests run first, after the workload
# dumps are made (test_parse_split reads them), and the summary counts
# their tests too: "N passed, N failed (M of them unit tests)".
# Exits non-zero when a test failed or a script died without finishing.
# The environment (JHEAP, PROFILES, JEPROF, UPDATE, VERBOSE...) passes
# through to the scripts; see tests/lib.sh.
set -u
export LC_ALL=C

TEST_DIRECTORY=$(cd "$(dirname "$0")" && pwd)
SRCDIR=$(cd "$TEST_DIRECTORY/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$SRCDIR/build}
case $BUILD_DIR in /*) ;; *) BUILD_DIR=$PWD/$BUILD_DIR ;; esac
export BUILD_DIR

TEST_RESULTS_DIR=$BUILD_DIR/test-results
rm -rf "$TEST_RESULTS_DIR"
mkdir -p "$TEST_RESULTS_DIR" || exit 1
export TEST_RESULTS_DIR

if [ $# -gt 0 ]; then
	# paths, or names under tests/ with or without .sh ("t0100" works too)
	scripts=()
	for a in "$@"; do
		if [ -f "$a" ]; then
			scripts+=("$a")
		elif [ -f "$TEST_DIRECTORY/$a" ]; then
			scripts+=("$TEST_DIRECTORY/$a")
		else
			m=("$TEST_DIRECTORY/${a%.sh}"*.sh)
			scripts+=("${m[@]}")
		fi
	done
else
	scripts=("$TEST_DIRECTORY"/t[0-9]*.sh)
fi

# What run.sh itself does (the scripts have their own): a step that
# lasts 30 s is named every 30 s by tests/tools/heartbeat.sh.
STEP_FILE=$TEST_RESULTS_DIR/.run-step
step() {
	printf '%s %s\n' "$EPOCHSECONDS" "run.sh: $*" >"$STEP_FILE.tmp" && mv -f "$STEP_FILE.tmp" "$STEP_FILE"
}
: >"$STEP_FILE"
bash "$TEST_DIRECTORY/tools/heartbeat.sh" $$ "$STEP_FILE" </dev/null 2>/dev/null &
heartbeat=$!
trap 'kill $heartbeat 2>/dev/null' EXIT

passed=0 failed=0 skipped=0 broken= units=0
if [ -n "${UNIT_TESTS:-}" ] && [ $# -eq 0 ]; then
	PROFILES=${PROFILES:-$BUILD_DIR/profiles}
	export PROFILES
	echo "*** making the workload dumps (tests/mkprofiles.sh, log in $TEST_RESULTS_DIR/mkprofiles.log) ***"
	step "making the workload dumps (tests/mkprofiles.sh)"
	if ! bash "$TEST_DIRECTORY/mkprofiles.sh" "$PROFILES" >"$TEST_RESULTS_DIR/mkprofiles.log" 2>&1; then
		echo "run.sh: tests/mkprofiles.sh failed (see $TEST_RESULTS_DIR/mkprofiles.log)" >&2
	fi
	for u in $UNIT_TESTS; do
		name=$(basename "$u")
		echo "*** unit: $name ***"
		step "unit test $name"
		"$u" >"$TEST_RESULTS_DIR/$name.out" 2>&1
		rc=$?
		cat "$TEST_RESULTS_DIR/$name.out"
		# the program's last words: "FILE: N passed, N failed"
		counts=$(sed -n 's/^.*: \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p' \
			"$TEST_RESULTS_DIR/$name.out" | tail -n 1)
		if [ -z "$counts" ]; then
			echo "run.sh: $name exited with status $rc without its summary line" >&2
			broken="$broken $name"
			continue
		fi
		read -r p f <<<"$counts"
		passed=$((passed + p)) failed=$((failed + f)) units=$((units + p + f))
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			broken="$broken $name"
		fi
	done
fi
for t in "${scripts[@]}"; do
	[ -f "$t" ] || { echo "run.sh: no test script '$t'" >&2; broken="$broken $t"; continue; }
	name=$(basename "$t" .sh)
	echo "*** $name ***"
	: >"$STEP_FILE"    # the script names its own steps
	bash "$t"
	rc=$?
	counts=$TEST_RESULTS_DIR/$name.counts
	if [ -f "$counts" ]; then
		read -r p f s <"$counts"
		passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
		if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
			broken="$broken $name"
		fi
	else
		echo "run.sh: $name exited with status $rc before test_done" >&2
		broken="$broken $name"
	fi
done

summary="$passed passed, $((failed + $(echo $broken | wc -w))) failed"
[ "$skipped" -gt 0 ] && summary="$summary, $skipped skipped"
[ "$units" -gt 0 ] && summary="$summary ($units of them unit tests)"
[ -n "$broken" ] && echo "run.sh: scripts that did not finish cleanly:$broken" >&2
echo "$summary"
[ "$failed" -eq 0 ] && [ -z "$broken" ]

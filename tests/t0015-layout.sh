#!/bin/bash
test_description='includes point one way; no source file is past 1,000 lines'
. "$(dirname "$0")/lib.sh"

# The rules of the source tree, for a newcomer to rely on:
#
#   lib/        leaf utilities that know nothing of profiles (errors,
#               arrays, hashing, escaping, safe files, threads): lib/ only
#   analyzer/   the model and what fills and reads it (parsers,
#               aggregate): lib/ and analyzer/
#   symbolize/  object files, libdw, caches: lib/, analyzer/, symbolize/
#   output/     one file per format: lib/, analyzer/ and output/, never
#               the symbolizer
#   cli/        the driver, the network, the terminal: anything
#   preload/    the control library loaded into a profiled program, a
#               shared library of its own: preload/ only
#
# Only cli/ prints: the other folders return codes with messages and
# pass warnings to callbacks (check_quiet).
#
# System headers (<...>) are free.  A quoted include must name its folder
# ("analyzer/profile.h"), so that where it points can be told; so must an
# angle-bracket one that names one of the folders above.  And no .c or .h
# file in those folders is past 1,000 lines.

FOLDERS="lib analyzer symbolize output cli preload"
MAX_LINES=1000

# allowed FOLDER: the folders FOLDER may include from ("*": any).
allowed() {
	case $1 in
	lib) echo "lib" ;;
	analyzer) echo "lib analyzer" ;;
	symbolize) echo "lib analyzer symbolize" ;;
	output) echo "lib analyzer output" ;;
	cli) echo "*" ;;
	preload) echo "preload" ;;
	esac
}

# check_includes ROOT: prints "FILE:LINE: includes PATH (FOLDER/ may include
# only ...)" for each include under ROOT that breaks the rules; fails when
# there is one.
check_includes() {
	local root=$1 dir ok f bad=0
	for dir in $FOLDERS; do
		ok=$(allowed "$dir")
		for f in "$root/$dir"/*.c "$root/$dir"/*.h; do
			[ -f "$f" ] || continue
			awk -v file="$dir/${f##*/}" -v dir="$dir" -v ok="$ok" -v folders="$FOLDERS tests" '
				BEGIN {
					n = split(ok, a, " "); for (i = 1; i <= n; i++) allow[a[i]] = 1
					n = split(folders, b, " "); for (i = 1; i <= n; i++) ours[b[i]] = 1
				}
				/^[ \t]*#[ \t]*include[ \t]*["<]/ {
					line = $0
					sub(/^[ \t]*#[ \t]*include[ \t]*/, "", line)
					quoted = substr(line, 1, 1) == "\""
					path = substr(line, 2)
					sub(/[">].*/, "", path)
					top = path
					if (index(top, "/")) sub(/\/.*/, "", top); else top = ""
					if (!quoted && !(top in ours))
						next             # a system header
					if (top == "") {
						printf "%s:%d: includes \"%s\" without its folder\n", file, FNR, path
						bad = 1
					} else if (!("*" in allow) && !(top in allow)) {
						printf "%s:%d: includes %s (%s/ may include only %s)\n", file, FNR, path, dir, ok
						bad = 1
					}
				}
				END { exit bad }' "$f" || bad=1
		done
	done
	return $bad
}

# check_sizes ROOT: prints "FILE: N lines" for each file under ROOT past
# MAX_LINES; fails when there is one.
check_sizes() {
	local root=$1 dir f n bad=0
	for dir in $FOLDERS; do
		for f in "$root/$dir"/*.c "$root/$dir"/*.h; do
			[ -f "$f" ] || continue
			n=$(wc -l <"$f")
			if [ "$n" -gt "$MAX_LINES" ]; then
				echo "$dir/${f##*/}: $n lines (at most $MAX_LINES; split it by concept)"
				bad=1
			fi
		done
	done
	return $bad
}

# The checks themselves first, on a small tree: one that keeps every rule,
# then one break of each rule at a time.
# tree NAME: a tree whose files include only what they may.
tree() {
	rm -rf "$1" && mkdir -p "$1" && (
		cd "$1" && mkdir $FOLDERS &&
		printf '#include <stdio.h>\n#include "analyzer/b.h"\n#include "lib/u.h"\n' >analyzer/a.c &&
		printf '#include <stdint.h>\n#include "lib/v.h"\n' >lib/u.h &&
		printf '#include "analyzer/a.h"\n  #  include "symbolize/s.h"\n' >symbolize/s.c &&
		printf '#include "analyzer/a.h"\n#include "output/o.h"\n#include <zlib.h>\n' >output/o.c &&
		printf '#include "symbolize/s.h"\n#include "output/o.h"\n#include "cli/c.h"\n' >cli/c.c &&
		printf '#include <dlfcn.h>\n#include "preload/p.h"\n' >preload/p.c &&
		printf '#include <stdint.h>\n/* #include "output/o.h" in a comment */\n' >analyzer/b.h &&
		i=0 && while [ $i -lt $MAX_LINES ]; do echo "int x$i;"; i=$((i + 1)); done >output/long.c
	)
}

test_expect_success 'the checks pass a tree that keeps the rules' '
	tree good &&
	check_includes good &&
	check_sizes good
'

# breaks RULE FILE LINE: the good tree with LINE appended to FILE fails the
# include check, and names FILE.
breaks() {
	tree "bad-$1" &&
	echo "$3" >>"bad-$1/$2" &&
	! check_includes "bad-$1" >out &&
	cat out &&
	test $(wc -l <out) -eq 1 &&
	grep "^$2:" out
}

test_expect_success 'lib/ including analyzer/ fails' '
	breaks l2a lib/u.h "#include \"analyzer/b.h\""
'
test_expect_success 'analyzer/ including symbolize/ fails' '
	breaks a2s analyzer/a.c "#include \"symbolize/s.h\""
'
test_expect_success 'analyzer/ including output/ (from a header) fails' '
	breaks a2o analyzer/b.h "#include \"output/o.h\""
'
test_expect_success 'analyzer/ including cli/ fails' '
	breaks a2c analyzer/a.c "#include \"cli/c.h\""
'
test_expect_success 'symbolize/ including output/ fails' '
	breaks s2o symbolize/s.c "#include \"output/o.h\""
'
test_expect_success 'output/ including symbolize/ fails' '
	breaks o2s output/o.c "#include \"symbolize/s.h\""
'
test_expect_success 'preload/ including analyzer/ fails' '
	breaks p2a preload/p.c "#include \"lib/errors.h\""
'
test_expect_success 'an include without its folder fails' '
	breaks nofolder output/o.c "#include \"o.h\""
'
test_expect_success 'an angle-bracket include of one of the folders fails' '
	breaks angle analyzer/a.c "#include <symbolize/s.h>"
'
test_expect_success 'a file of 1,001 lines fails the size check' '
	tree big &&
	echo "int y;" >>big/output/long.c &&
	! check_sizes big >out &&
	grep "^output/long.c: 1001 lines" out
'

test_expect_success 'jheap keeps the include rules' '
	check_includes "$SRCDIR"
'

test_expect_success 'no source file is past 1,000 lines' '
	check_sizes "$SRCDIR"
'

# check_quiet ROOT: only cli/ prints: a file of lib/, analyzer/,
# symbolize/ or output/ that names stderr (or perror) fails, since what
# goes wrong goes up as a code with a message, and warnings and notes
# through a callback.
check_quiet() {
	local dir found bad=0
	for dir in lib analyzer symbolize output; do
		# (grep's status is 2 when a pattern of files matches none)
		found=$(grep -n -w -s -e stderr -e perror "$1/$dir"/*.c "$1/$dir"/*.h)
		[ -z "$found" ] || { echo "$found"; bad=1; }
	done
	return $bad
}

test_expect_success 'the check for printing fails a library file that prints' '
	tree loud &&
	printf "void f(void) { fputs(\"x\", stderr); }\n" >>loud/output/o.c &&
	! check_quiet loud >out &&
	grep "output/o.c:4:" out
'

test_expect_success 'only cli/ prints to standard error' '
	check_quiet "$SRCDIR"
'

test_done

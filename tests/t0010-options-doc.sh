#!/bin/bash
test_description='--help, the man page and the option table name the same options'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"

# Long option names from the table in analyzer/cli.c: lines like
#	{ "show_bytes", 0, O_SHOW_BYTES, ...
test_expect_success 'the option table is readable' '
	sed -n "s/^	{ \"\([a-z_-]*\)\", .*/\1/p" "$SRCDIR/analyzer/cli.c" | sort -u >table &&
	test $(wc -l <table) -gt 15
'

test_expect_success '--help lists every option of the table' '
	"$JHEAP" --help >help &&
	grep "^  *-" help | grep -o -- "--[a-z][a-z_-]*" | sed "s/^--//" | sort -u >help.names &&
	test_cmp table help.names
'

# The man page documents each option as a .TP entry whose next line starts
# with .B/.BI/.BR and names the option (with \- escapes).
test_expect_success 'the man page documents every option of the table' '
	awk "prev == \".TP\" && /^\.B/ { print } { prev = \$0 }" "$SRCDIR/man/jheap.1" |
		sed "s/\\\\-/-/g" | grep -o -- "--[a-z][a-z_-]*" | sed "s/^--//" | sort -u >man.names &&
	test_cmp table man.names
'

test_expect_success 'every option of the table is accepted' '
	while read -r name; do
		"$JHEAP" --$name=1 --help >/dev/null 2>err ||
		"$JHEAP" --$name --help >/dev/null 2>>err || { cat err; return 1; }
	done <table
'

test_expect_success 'an unknown option is a usage error (status 2)' '
	"$JHEAP" --no-such-option x.heap 2>err
	test $? -eq 2 && grep "unknown option" err
'

test_done

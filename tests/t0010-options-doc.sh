#!/bin/bash
test_description='--help, the man page and the option table name the same options'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"

# Long option names from the table in cli/options.c: lines like
#	{ "show_bytes", 0, O_SHOW_BYTES, ...
test_expect_success 'the option table is readable' '
	sed -n "s/^	{ \"\([a-z_-]*\)\", .*/\1/p" "$SRCDIR/cli/options.c" | sort -u >table &&
	test $(wc -l <table) -gt 15
'

test_expect_success '--help lists every option of the table' '
	"$JHEAP" --help >help &&
	grep "^  *-" help | grep -o -- "--[a-z][a-z_-]*" | sed "s/^--//" | sort -u >help.names &&
	test_cmp table help.names
'

# The man page documents each option as a .TP entry whose next line starts
# with .B/.BI/.BR and names the option (with \- escapes).  The analysis
# options are those outside the section PROFILING A RUNNING PROGRAM, which
# holds one subsection (.SS "jheap SUB ...") per subcommand.
# man_options SUBCOMMAND: the long options documented for it ("" for the
# analysis).
man_options() {
	awk -v want="$1" "
		/^\.SH / { sub_ = \"\"; in_sub = (\$0 ~ /PROFILING A RUNNING PROGRAM/) }
		/^\.SS / { sub_ = \$3 }
		prev == \".TP\" && /^\.B/ && ((want == \"\" && !in_sub) || (in_sub && sub_ == want)) { print }
		{ prev = \$0 }" "$SRCDIR/man/jheap.1" |
		sed "s/\\\\-/-/g" | grep -o -- "--[a-z][a-z_-]*" | sed "s/^--//" | sort -u
}

test_expect_success 'the man page documents every option of the table' '
	man_options "" >man.names &&
	test_cmp table man.names
'

test_expect_success 'every option of the table is accepted' '
	while read -r name; do
		"$JHEAP" --$name=1 --help >/dev/null 2>err ||
		"$JHEAP" --$name --help >/dev/null 2>>err || { cat err; return 1; }
	done <table
'

# The subcommands: each has its table (record in cli/record.c; dump and ctl
# share cli/dump.c's), its --help and its man page subsection.
for sub in record dump ctl; do
	case $sub in record) src=cli/record.c ;; *) src=cli/dump.c ;; esac
	test_expect_success "jheap $sub: --help, the man page and its table agree" '
		sed -n "s/^	{ \"\([a-z_-]*\)\", .*/\1/p" "$SRCDIR/'$src'" | sort -u >sub.table &&
		test $(wc -l <sub.table) -ge 2 &&
		"$JHEAP" '$sub' --help >sub.help &&
		head -n 1 sub.help | grep "^Usage: jheap '$sub' " &&
		grep "^  *-" sub.help | grep -o -- "--[a-z][a-z_-]*" | sed "s/^--//" | sort -u >sub.help.names &&
		test_cmp sub.table sub.help.names &&
		man_options '$sub' >sub.man &&
		test_cmp sub.table sub.man &&
		while read -r name; do
			"$JHEAP" '$sub' --$name=1 --help >/dev/null 2>err ||
			"$JHEAP" '$sub' --$name --help >/dev/null 2>>err || { cat err; return 1; }
		done <sub.table
	'
done

test_expect_success 'jheap --help names the subcommands' '
	"$JHEAP" --help >help &&
	grep "^   or: jheap record \[OPTIONS\] \[--\] PROGRAM \[ARGS...\]\$" help &&
	grep "^   or: jheap dump \[OPTIONS\] PID \[REPORT OPTIONS\]" help &&
	grep "^   or: jheap ctl \[OPTIONS\] PID on|off|reset|sample SIZE|status|dump|peaks on|off\$" help
'

test_expect_success 'an unknown option is a usage error (status 2)' '
	"$JHEAP" --no-such-option x.heap 2>err
	test $? -eq 2 && grep "unknown option" err
'

test_done

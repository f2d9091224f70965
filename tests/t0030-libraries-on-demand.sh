#!/bin/bash
test_description='libcurl and libedit are loaded only by the runs that use them

jheap opens libcurl.so.4 (fetching a URL) and libedit.so.2 (the shell on a
terminal) with dlopen when they are first needed (lib/dynlib.c):
linked, they and the thirty-odd libraries libcurl needs were loaded and
initialised by every run, --version included.  Checked with the dynamic
loader'"'"'s own record (LD_DEBUG=files):
 - --version and a --text report load neither, nor what libcurl needs;
 - a URL loads libcurl (and not libedit); the shell on a terminal loads
   libedit (and not libcurl); --interactive on plain lines loads neither;
 - without libcurl (JHEAP_TEST_LIBDIR, the test hook, names an empty
   folder) a URL is exit status 1 with one line naming libcurl.so.4 and
   the Debian package libcurl4; a libcurl.so.4 that lacks its functions
   is named with the first one missing;
 - without libedit the shell warns once, naming libedit.so.2 and libedit2,
   and reads plain lines: reports as with libedit, Ctrl-C drops a line,
   no history is written.'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_need_profiles

P=$PROFILES
# libdw loads libdebuginfod (and with it libcurl) when this is set
unset DEBUGINFOD_URLS
export XDG_STATE_HOME=$TRASH_DIRECTORY/state HOME=$TRASH_DIRECTORY
export JHEAP_TMPDIR=$TRASH_DIRECTORY/saved
PTY="python3 $TEST_DIRECTORY/tools/ptyshell.py --timeout 60"
test_have_prog python3 && test_set_prereq PYTHON3
test_have_prog cc && test_set_prereq CC

# loaded LOG: the names of the shared objects the dynamic loader opened,
# one a line, from LD_DEBUG=files output in the files LOG.*
loaded() {
	sed -n "s/.*file=\([^ ]*\) .*/\1/p" "$1".* | sed "s|.*/||" | sort -u
}

# one_line FILE: FILE holds exactly one line
one_line() {
	test "$(wc -l <"$1")" -eq 1 || { echo "$1 holds not one line:"; cat "$1"; return 1; }
}

# A port nothing listens on, for a URL jheap tries and fails to fetch:
# closed.py binds it (port 0: the kernel picks) and does not listen, so
# connections are refused, and keeps it while the test runs so that no
# other process can take it.
cat >closed.py <<-\EOF
import socket, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1], flush=True)
time.sleep(600)
EOF

test_expect_success '--version and --text load neither libcurl nor libedit (nor libmicrohttpd)' '
	LD_DEBUG=files LD_DEBUG_OUTPUT=$PWD/ld.version "$JHEAP" --version >/dev/null &&
	LD_DEBUG=files LD_DEBUG_OUTPUT=$PWD/ld.text "$JHEAP" --text "$P/w_cpp" "$P/w_cpp.exact.heap" >report &&
	grep -q "^Total: " report &&
	for run in version text; do
		loaded ld.$run >$run.libs &&
		# the record works: it names a library jheap links
		grep -qx "libdw.so.1" $run.libs &&
		! grep -E "^lib(curl|edit|microhttpd|ssl|crypto|gnutls|gssapi_krb5|ldap|ssh2|nghttp2|tinfo)[.-]" $run.libs ||
		{ echo "--$run:"; cat $run.libs; return 1; }
	done
'

test_expect_success PYTHON3 'a URL loads libcurl, not libedit' '
	test_bg closed 300 python3 closed.py &&
	port=$(test_bg_line closed "^[0-9]+\$") &&
	{ LD_DEBUG=files LD_DEBUG_OUTPUT=$PWD/ld.url "$JHEAP" "http://127.0.0.1:$port/pprof/heap" 2>err
	  test $? -eq 1; } &&
	grep "^jheap: cannot fetch .http://127.0.0.1:$port/pprof/heap.: " err &&
	loaded ld.url >url.libs &&
	grep -qx "libcurl.so.4" url.libs &&
	! grep -q "^libedit" url.libs
'

test_expect_success PYTHON3 'the shell on a terminal loads libedit, not libcurl; plain lines load neither' '
	printf "prompt\nkeys quit\\\\r\nexit 0\n" >quit.script &&
	LD_DEBUG=files LD_DEBUG_OUTPUT=$PWD/ld.shell $PTY quit.script -- "$JHEAP" "$P/demo.exact.heap" &&
	loaded ld.shell >shell.libs &&
	grep -qx "libedit.so.2" shell.libs &&
	! grep -q "^libcurl" shell.libs &&
	echo "top 1" | LD_DEBUG=files LD_DEBUG_OUTPUT=$PWD/ld.plain "$JHEAP" --interactive "$P/demo.exact.heap" >plain.out &&
	grep -q "^Total: " plain.out &&
	loaded ld.plain >plain.libs &&
	grep -qx "libdw.so.1" plain.libs &&
	! grep -E "^lib(curl|edit)[.]" plain.libs
'

test_expect_success 'without libcurl: exit 1, one line naming libcurl.so.4 and libcurl4' '
	mkdir -p nolibs &&
	JHEAP_TEST_LIBDIR=$PWD/nolibs expect_fail 1 "^jheap: fetching URLs needs libcurl \(libcurl\.so\.4, Debian package libcurl4\): .*/nolibs/libcurl\.so\.4: cannot open shared object file: No such file or directory\$" \
		"http://127.0.0.1:1/pprof/heap" &&
	one_line err &&
	test ! -s out
'

test_expect_success CC 'a libcurl.so.4 without its functions: the first one missing is named' '
	mkdir -p wrong &&
	echo "int not_curl(void) { return 0; }" >wrong/not_curl.c &&
	cc -shared -fPIC -o wrong/libcurl.so.4 wrong/not_curl.c &&
	LD_LIBRARY_PATH=$PWD/wrong expect_fail 1 "^jheap: fetching URLs needs libcurl \(libcurl\.so\.4, Debian package libcurl4\): .*/wrong/libcurl\.so\.4 has no curl_global_init\$" \
		"http://127.0.0.1:1/pprof/heap" &&
	one_line err
'

test_expect_success PYTHON3 'without libedit: a warning, then plain lines; Ctrl-C drops a line; no history' '
	mkdir -p nolibs &&
	cat >plain.script <<-EOF &&
	prompt
	keys top 3\x03
	cmd top2.out top 2
	keys quit\r
	exit 0
	EOF
	XDG_STATE_HOME=$PWD/plain-state JHEAP_TEST_LIBDIR=$PWD/nolibs $PTY --plain --transcript plain.transcript plain.script -- "$JHEAP" "$P/demo.exact.heap" &&
	"$JHEAP" --text --nodecount=2 "$P/demo.exact.heap" >expect &&
	test_cmp expect top2.out &&
	tr -d "\r" <plain.transcript >transcript &&
	grep "^jheap: warning: " transcript >warnings &&
	one_line warnings &&
	grep -x "jheap: warning: line editing needs libedit (libedit\.so\.2, Debian package libedit2): .*/nolibs/libedit\.so\.2: cannot open shared object file: No such file or directory; reading plain lines, without history or completion" warnings &&
	test ! -e plain-state/jheap/history
'

test_done

#!/bin/bash
test_description='profiles from servers: jheap BINARY http://host:port/...

A test server (tests/tools/pprof_server.py, 127.0.0.1 only, a port the
system picks) answers as Databend (/debug/mem/pprof/profile?seconds=N),
gperftools and brpc (/pprof/heap, /pprof/symbol) and libmtev
(/mtev/heap_profile?trigger_dump=true) do, with the workloads'"'"' real
dumps.  The report from each URL equals the report from the file served;
every failure (HTTP 404 with an HTML page, an HTML page with 200, an empty
body, a hung server, a body over the limit with and without a length, a
redirect loop, no server) is exit status 1 with the documented message
naming the URL.  Also: jeprof'"'"'s URL rules as seen by the server (the
paths requested), host:port without a scheme and a local file of that
name winning, --base URL URL, the saved file (where, its name, read again
offline), names from /pprof/symbol when the program is not on this
machine (equal to a symbol-table-only copy of the binary given as BINARY),
a proxy through http_proxy, https against a certificate the system does
not trust and one given in SSL_CERT_FILE, and the progress line on a
terminal.  URLs with a user and password: the server gets them, and
nothing jheap prints or writes (messages, the saved file'"'"'s name, every
output) holds them.  A gzip bomb is refused at the limit of what a
compressed answer may inflate to (the server logs how much of it was
sent), a header too large is said to be one, and --raw (also with -o)
works on a URL.'
. "$(dirname "$0")/lib.sh"

test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test -x /usr/bin/python3 || test_skip "no /usr/bin/python3 for the test server"
test_need_profiles

P=$PROFILES
SERVER=$TEST_DIRECTORY/tools/pprof_server.py
export JHEAP_TMPDIR=$TRASH_DIRECTORY/saved

# The program as the server's machine has it, and a dump naming it there.
sed "s|$P/w_cpp\$|/srv/remote/w_cpp|" "$P/w_cpp.exact.heap" >remote.heap
"$JHEAP" --raw "$P/w_cpp" "$P/w_cpp.exact.heap" >symbolized.heap 2>/dev/null
"$JHEAP" --proto -o w_cpp.pb.gz "$P/w_cpp" "$P/w_cpp.exact.heap" 2>/dev/null
gzip -c "$P/w_threads.exact.heap" >w_threads.heap.gz

# start_server PORTFILE LOG ARGS...: runs the server in the background
# (test_bg PORTFILE.server; at most an hour, for the servers that serve
# the whole script), until it has written its port in PORTFILE.
start_server() {
	local portfile=$1
	rm -f "$portfile"
	test_bg "$portfile.server" 3600 python3 "$SERVER" "$@" &&
	test_bg_until "$portfile.server" "the server to write its port in $portfile" test -s "$portfile"
}
# The user and password /auth/ pages want; in a URL the ':' and '@' of
# the password are percent-encoded.
AUTH_USER=alice
AUTH_PASS='pa:ss@w0rd'
AUTH_URLPASS='pa%3Ass%40w0rd'

start_server port log \
	--page /pprof/heap="$P/w_cpp.exact.heap" \
	--page /debug/mem/pprof/profile="$P/w_basic.exact.heap" \
	--page /pprof/profile="$P/w_basic.exact.heap" \
	--page /x/pprof/growth="$P/w_basic.exact.heap" \
	--page /mtev/heap_profile="$P/w_shlib.exact.heap" \
	--page /a/pprof/heap="$P/w_basic.exact.heap" \
	--page /b/pprof/heap="$P/w_basic.accum.heap" \
	--page /gz/pprof/heap=w_threads.heap.gz \
	--page /proto/pprof/heap=w_cpp.pb.gz \
	--page /sym/pprof/heap=symbolized.heap \
	--page /gperf/pprof/heap="$SRCDIR/testdata/parse/gperf_v1.heap" \
	--page /remote/pprof/heap=remote.heap \
	--page /nosym/pprof/heap=remote.heap \
	--symbols remote.heap /srv/remote/w_cpp "$P/w_cpp" \
	--auth "$AUTH_USER:$AUTH_PASS" ||
	test_skip "the test server does not start"
PORT=$(cat port)
U=http://127.0.0.1:$PORT

# requested PATTERN: the server was asked for exactly this (GET PATH)
requested() {
	grep -qxF -- "$1" log || { echo "the server was not asked for '$1':"; cat log; return 1; }
}

# same URL FILE [ARGS...]: the report from URL equals the one from FILE
same() {
	local url=$1 file=$2
	shift 2
	"$JHEAP" "$@" "$file" >want 2>want.err &&
	"$JHEAP" "$@" "$url" >got 2>got.err &&
	test_cmp want got || { cat got.err; return 1; }
}

test_expect_success 'Databend: BINARY http://host:port/debug/mem fetches /debug/mem/pprof/profile?seconds=30' '
	same "$U/debug/mem" "$P/w_basic.exact.heap" "$P/w_basic" &&
	requested "GET /debug/mem/pprof/profile?seconds=30" &&
	grep -q "^Total: " got
'

test_expect_success '--seconds=N asks for N seconds and waits for the server' '
	start=$(date +%s.%N) &&
	same "$U/debug/mem/" "$P/w_basic.exact.heap" "$P/w_basic" --seconds=2 &&
	end=$(date +%s.%N) &&
	requested "GET /debug/mem/pprof/profile?seconds=2" &&
	awk -v a=$start -v b=$end "BEGIN { exit !(b - a >= 2) }"
'

test_expect_success 'Databend curl form: a URL with a query string is fetched as written' '
	same "$U/debug/mem/pprof/profile?seconds=0" "$P/w_basic.exact.heap" &&
	requested "GET /debug/mem/pprof/profile?seconds=0"
'

test_expect_success 'libmtev: host:port/mtev/heap_profile?trigger_dump=true as written' '
	same "127.0.0.1:$PORT/mtev/heap_profile?trigger_dump=true" "$P/w_shlib.exact.heap" &&
	requested "GET /mtev/heap_profile?trigger_dump=true"
'

test_expect_success 'gperftools: /pprof/heap is fetched as given; no /pprof/symbol when the files are here' '
	: >log &&
	same "$U/pprof/heap" "$P/w_cpp.exact.heap" &&
	same "$U/pprof/heap" "$P/w_cpp.exact.heap" --collapsed --lines &&
	requested "GET /pprof/heap" &&
	! grep symbol log
'

# jeprof 5.3.0 given the same arguments asks the server for the same
# pages, and names its saved files the same but for the time.
test_have_prog "$JEPROF" && test_have_prog curl && test_set_prereq JEPROF
test_expect_success JEPROF 'the pages jeprof asks for, jheap asks for; the same saved names' '
	for f in "127.0.0.1:$PORT/debug/mem" "$U/debug/mem/" "127.0.0.1:$PORT" "$U/pprof/heap" \
		 "127.0.0.1:$PORT/x/pprof/growth"; do
		: >log &&
		JEPROF_TMPDIR=$PWD/jp "$JEPROF" --text "$P/w_basic" "$f" >/dev/null 2>jp.err &&
		head -n 1 log >jeprof.req &&
		: >log && rm -rf saved &&
		{ "$JHEAP" "$P/w_basic" "$f" >/dev/null 2>jh.err || :; } &&
		head -n 1 log >jheap.req &&
		test_cmp jeprof.req jheap.req &&
		sed -n "s|^Wrote profile to $PWD/jp/||p" jp.err | sed "s/^\([^.]*\)\.[0-9]*\./\1.TIME./" >jeprof.name &&
		sed -n "s|^jheap: saved .* to $JHEAP_TMPDIR/||p" jh.err | sed "s/^\([^.]*\)\.[0-9]*\./\1.TIME./" >jheap.name &&
		test -s jheap.name && test_cmp jeprof.name jheap.name || { cat jp.err jh.err; return 1; }
	done &&
	: >log &&
	JEPROF_TMPDIR=$PWD/jp "$JEPROF" --text "$U/remote/pprof/heap" >/dev/null 2>jp.err
	head -n 1 log >jeprof.req &&
	grep -x "GET /remote/pprof/symbol" jeprof.req &&
	: >log &&
	"$JHEAP" "$U/remote/pprof/heap" >/dev/null 2>jh.err &&
	grep symbol log | head -n 1 >jheap.req &&
	test_cmp jeprof.req jheap.req
'

test_expect_success 'host:port/path without a scheme is a URL when no file has that name' '
	same "127.0.0.1:$PORT/pprof/heap" "$P/w_cpp.exact.heap"
'

test_expect_success 'a local file of that name wins, and nothing is fetched' '
	mkdir -p "127.0.0.1:$PORT/pprof" &&
	cp "$P/w_basic.exact.heap" "127.0.0.1:$PORT/pprof/heap" &&
	: >log &&
	same "127.0.0.1:$PORT/pprof/heap" "$P/w_basic.exact.heap" &&
	test ! -s log
'

test_expect_success 'the body is told by its content: gzip, pprof, symbolized, gperftools' '
	same "$U/gz/pprof/heap" w_threads.heap.gz &&
	same "$U/proto/pprof/heap" w_cpp.pb.gz &&
	same "$U/sym/pprof/heap" symbolized.heap &&
	same "$U/gperf/pprof/heap" "$SRCDIR/testdata/parse/gperf_v1.heap" --no-symbolize
'

test_expect_success '--base URL URL equals --base FILE FILE' '
	same "$U/b/pprof/heap" "$P/w_basic.accum.heap" --base "$U/a/pprof/heap" &&
	"$JHEAP" --base "$P/w_basic.exact.heap" "$P/w_basic.accum.heap" >want2 &&
	test_cmp want2 got &&
	requested "GET /a/pprof/heap" && requested "GET /b/pprof/heap"
'

test_expect_success 'saved in $JHEAP_TMPDIR as PROGRAM.TIME.HOST.PAGE, path on stderr, atomically' '
	rm -rf saved &&
	"$JHEAP" "$U/pprof/heap" >got 2>err &&
	path=$(sed -n "s|^jheap: saved $U/pprof/heap to ||p" err) &&
	test -n "$path" &&
	case $path in "$JHEAP_TMPDIR"/w_cpp.[0-9]*.127.0.0.1.pprof.heap) ;; *) echo "name: $path"; false ;; esac &&
	cmp "$path" "$P/w_cpp.exact.heap" &&
	test $(ls -A saved | wc -l) = 1
'

test_expect_success 'the saved file is analyzed again offline, also as a --base' '
	path=$(ls saved/w_cpp.*) &&
	"$JHEAP" "$path" >again &&
	"$JHEAP" "$P/w_cpp.exact.heap" >want && test_cmp want again &&
	"$JHEAP" --base "$path" "$P/w_cpp.exact.heap" >diff &&
	grep -q "^Total: 0.0 MB" diff
'

test_expect_success 'two fetches in one second keep both files; the sum is reported' '
	rm -rf saved &&
	"$JHEAP" "$U/pprof/heap" "$U/pprof/heap" >got 2>err &&
	"$JHEAP" "$P/w_cpp.exact.heap" "$P/w_cpp.exact.heap" >want && test_cmp want got &&
	test $(grep -c "^jheap: saved " err) = 2 &&
	test $(ls -A saved | wc -l) = 2
'

test_expect_success 'without JHEAP_TMPDIR: ~/jheap' '
	rm -rf home && mkdir home &&
	(unset JHEAP_TMPDIR; HOME=$PWD/home "$JHEAP" "$U/pprof/heap" >/dev/null 2>err) &&
	ls home/jheap/w_cpp.*.127.0.0.1.pprof.heap &&
	grep -q "saved .* to $PWD/home/jheap/w_cpp" err
'

test_expect_success 'a folder that cannot be made: a warning, the report anyway' '
	: >not-a-folder &&
	JHEAP_TMPDIR=$PWD/not-a-folder/x "$JHEAP" "$U/pprof/heap" >got 2>err &&
	"$JHEAP" "$P/w_cpp.exact.heap" >want && test_cmp want got &&
	grep -q "warning: the profile from $U/pprof/heap is not saved: cannot create" err
'

# The names /pprof/symbol gives are those of the program'"'"'s symbol table
# (the server runs nm): a copy with the symbol table only, given as
# BINARY, must name every frame the same.
test_expect_success 'no BINARY, the program not here: names from /pprof/symbol, demangled' '
	: >log &&
	"$JHEAP" "$U/remote/pprof/heap" >got 2>err &&
	n=$(sed -n "s/^POST \/remote\/pprof\/symbol \([0-9]*\) addresses$/\1/p" log) &&
	test "$n" -gt 0 &&
	grep -q "^jheap: names of $n of $n addresses from $U/remote/pprof/symbol$" err &&
	! grep warning err &&
	requested "GET /remote/pprof/symbol" &&
	cp "$P/w_cpp" w_cpp.symtab && strip --strip-debug w_cpp.symtab &&
	"$JHEAP" w_cpp.symtab remote.heap >want &&
	test_cmp want got &&
	grep -q " ns::Holder::add$" got && ! grep -q "w_cpp+0x" got && ! grep -q "_Z" got
'

test_expect_success '--full-names: the demangled names whole (the server sends _ZN2ns6HolderI6WidgetE3addEi)' '
	"$JHEAP" --full-names "$U/remote/pprof/heap" >got 2>/dev/null &&
	"$JHEAP" --full-names w_cpp.symtab remote.heap >want &&
	test_cmp want got &&
	grep -q " ns::Holder<Widget>::add(int)$" got
'

test_expect_success 'a server without /pprof/symbol: module+offset and how to get names' '
	: >log &&
	"$JHEAP" "$U/nosym/pprof/heap" >got 2>err
	test $? = 1 &&
	grep -q "w_cpp+0x" got &&
	grep -q "^jheap: warning: no names from the server: cannot fetch .$U/nosym/pprof/symbol.: HTTP 404 Not Found" err &&
	grep -q "addresses in files that are not on this machine (such as ./srv/remote/w_cpp.) have no names: copy the program here" err &&
	! grep -q "^POST" log
'

test_expect_success 'with a BINARY, names come from it, not from the server' '
	: >log &&
	"$JHEAP" "$P/w_cpp" "$U/remote/pprof/heap" >got 2>err &&
	"$JHEAP" "$P/w_cpp" remote.heap >want && test_cmp want got &&
	! grep symbol log
'

test_expect_success 'HTML 404: exit 1, the URL and the status' '
	expect_fail 1 "^jheap: cannot fetch .$U/missing/pprof/heap.: HTTP 404 Not Found\$" "$U/missing/pprof/heap" &&
	test $(wc -l <err) = 1
'

test_expect_success 'a path without a known page gets /pprof/profile (jeprof): its 404 names that URL' '
	expect_fail 1 "cannot fetch .$U/mtev/heap_profile/pprof/profile\\?seconds=30.: HTTP 404" "$U/mtev/heap_profile"
'

test_expect_success 'an HTTP error with a text body shows its first line' '
	expect_fail 1 "HTTP 400 Bad Request: trigger_dump=true is needed\$" "$U/mtev/heap_profile?x=1"
'

test_expect_success 'an HTML page with 200: not a profile, with its title' '
	expect_fail 1 "^jheap: $U/html/pprof/heap: the server answered HTTP 200 OK with an HTML page \(.Welcome to the dashboard.\), not a profile\$" "$U/html/pprof/heap"
'

test_expect_success 'an empty body: not a profile' '
	expect_fail 1 "^jheap: $U/empty/pprof/heap: the server answered HTTP 200 OK with nothing, not a profile\$" "$U/empty/pprof/heap"
'

# The server answers /slow/ after 60 s: without the limit, jheap would get
# that answer (not a profile) and say something else.
test_expect_success 'a hung server: the time limit (JHEAP_FETCH_TIMEOUT=1 for the test)' '
	JHEAP_FETCH_TIMEOUT=1 expect_fail 1 "^jheap: cannot fetch .$U/slow/pprof/heap.: no complete answer within the time limit of 1 s" "$U/slow/pprof/heap"
'

test_expect_success 'a body over the limit, announced by Content-Length' '
	JHEAP_FETCH_MAX_BYTES=1048576 expect_fail 1 "^jheap: cannot fetch .$U/big/pprof/heap.: the answer is larger than the limit of 1048576 bytes\$" "$U/big/pprof/heap"
'

test_expect_success 'an endless body without a length: stopped at the limit while receiving' '
	JHEAP_FETCH_MAX_BYTES=1048576 expect_fail 1 "^jheap: cannot fetch .$U/endless/pprof/heap.: the answer is larger than the limit of 1048576 bytes\$" "$U/endless/pprof/heap"
'

test_expect_success 'a redirect is followed; a redirect loop is an error' '
	same "$U/redirect/pprof/heap" "$P/w_cpp.exact.heap" &&
	expect_fail 1 "^jheap: cannot fetch .$U/loop/pprof/heap.: more than 10 redirects \(a redirect loop\?\)\$" "$U/loop/pprof/heap"
'

test_expect_success 'no server: exit 1, the URL and the reason' '
	free=$(/usr/bin/python3 -c "import socket; s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1])") &&
	expect_fail 1 "^jheap: cannot fetch .http://127.0.0.1:$free/pprof/heap.: .*(onnect|refused)" "127.0.0.1:$free/pprof/heap"
'

test_expect_success 'http_proxy is used' '
	: >log &&
	http_proxy=$U same "http://remote.invalid/pprof/heap" "$P/w_cpp.exact.heap" &&
	requested "PROXY http://remote.invalid/pprof/heap"
'

test_expect_success '--seconds takes a whole number' '
	expect_fail 2 "--seconds expects a whole number of seconds" --seconds=-1 "$U/debug/mem" &&
	expect_fail 2 "--seconds expects a whole number of seconds" --seconds=x "$U/debug/mem"
'

test_expect_success '--quiet: no saved line' '
	"$JHEAP" --quiet "$U/pprof/heap" >/dev/null 2>err &&
	test ! -s err
'

test_expect_success 'standard input: curl -s URL | jheap BINARY -' '
	if test_have_prog curl; then
		curl -s "$U/pprof/heap" | "$JHEAP" "$P/w_cpp" - >got
	else
		"$JHEAP" "$P/w_cpp" - <"$P/w_cpp.exact.heap" >got
	fi &&
	"$JHEAP" "$P/w_cpp" "$P/w_cpp.exact.heap" >want && test_cmp want got
'

if test_have_prog script; then
	test_set_prereq TTY
fi
test_expect_success TTY 'a terminal shows the wait ("be patient"), then the report' '
	script -qfec "JHEAP_PROGRESS_AFTER=0 \"$JHEAP\" --seconds=2 \"$P/w_basic\" \"$U/debug/mem\" >report" /dev/null </dev/null >tty.out &&
	grep -q "jheap: fetching \.\.\..*/pprof/profile?seconds=2: [0-9] of 2 s, be patient\.\.\." tty.out &&
	tr "\r" "\n" <tty.out | sed "s/^\x1b\[K//" | grep "^jheap: fetching" >lines &&
	awk "length > 79 { print; bad = 1 } END { exit bad }" lines &&
	"$JHEAP" "$P/w_basic" "$P/w_basic.exact.heap" >want && test_cmp want report
'

test_expect_success 'no terminal: no progress line, only the saved line' '
	JHEAP_PROGRESS_AFTER=0 "$JHEAP" "$U/pprof/heap" >/dev/null 2>err &&
	test $(wc -l <err) = 1 && grep -q "^jheap: saved " err
'

if test_have_prog valgrind && ! nm "$JHEAP" 2>/dev/null | grep -q __asan_init; then
	test_set_prereq VALGRIND
fi
test_expect_success VALGRIND 'valgrind: a fetch, names from /pprof/symbol, an error page: no errors, no leaks' '
	for u in "$U/remote/pprof/heap" "$U/missing/pprof/heap"; do
		valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
			--show-leak-kinds=definite "$JHEAP" --no-cache "$u" >out 2>err
		test $? != 99 && ! grep "==[0-9]*==" err || { cat err; return 1; }
	done
'

# --- user and password in the URL: sent, never shown (issue 24) ---

# no_secret FILE...: none of the files holds the user or the password
no_secret() {
	! grep -a -l -e "$AUTH_USER" -e "w0rd" -e "$AUTH_URLPASS" "$@" ||
		{ echo "the user or password is in the files above"; return 1; }
}

test_expect_success 'a user and password in the URL are sent; no message nor saved name shows them' '
	rm -rf saved && : >log &&
	A=http://$AUTH_USER:$AUTH_URLPASS@127.0.0.1:$PORT &&
	"$JHEAP" "$P/w_cpp.exact.heap" >want &&
	"$JHEAP" "$A/auth/pprof/heap" >got 2>err &&
	test_cmp want got &&
	grep -qx "AUTH ok" log && ! grep "AUTH missing\|AUTH wrong" log &&
	grep -q "^jheap: saved $U/auth/pprof/heap to $JHEAP_TMPDIR/w_cpp\.[0-9]*\.127\.0\.0\.1\.pprof\.heap$" err &&
	ls saved >names &&
	no_secret err got names saved/*
'

test_expect_success 'without the password the server refuses (the test server checks it)' '
	expect_fail 1 "^jheap: cannot fetch .$U/auth/pprof/heap.: HTTP 401 Unauthorized" "$U/auth/pprof/heap" &&
	grep -qx "AUTH missing" log &&
	expect_fail 1 "^jheap: cannot fetch .$U/auth/pprof/heap.: HTTP 401" "http://$AUTH_USER:nope@127.0.0.1:$PORT/auth/pprof/heap" &&
	grep -qx "AUTH wrong" log && no_secret err
'

test_expect_success 'an unencoded @ in the password: everything up to the last @ is dropped' '
	"$JHEAP" "http://$AUTH_USER:pa%3Ass@w0rd@127.0.0.1:$PORT/auth/pprof/heap" >out 2>err
	test $? = 1 &&
	grep -q "^jheap: cannot fetch .$U/auth/pprof/heap.: " err &&
	no_secret err
'

test_expect_success 'names from /pprof/symbol with the password: the POST carries it, the note does not' '
	: >log &&
	A=http://$AUTH_USER:$AUTH_URLPASS@127.0.0.1:$PORT &&
	"$JHEAP" "$A/auth/remote/pprof/heap" >got 2>err &&
	n=$(sed -n "s/^POST \/auth\/remote\/pprof\/symbol \([0-9]*\) addresses$/\1/p" log) &&
	test "$n" -gt 0 &&
	test $(grep -c "^AUTH ok" log) = 3 &&
	grep -q "^jheap: names of $n of $n addresses from $U/auth/remote/pprof/symbol$" err &&
	"$JHEAP" w_cpp.symtab remote.heap >want && test_cmp want got &&
	no_secret err got
'

test_expect_success 'errors, warnings and the progress line name the URL without the password' '
	A=http://$AUTH_USER:$AUTH_URLPASS@127.0.0.1:$PORT &&
	expect_fail 1 "^jheap: cannot fetch .$U/auth/missing/pprof/heap.: HTTP 404" "$A/auth/missing/pprof/heap" &&
	no_secret err &&
	expect_fail 1 "^jheap: $U/auth/html/pprof/heap: the server answered HTTP 200 OK with an HTML page" "$A/auth/html/pprof/heap" &&
	no_secret err &&
	"$JHEAP" "$A/auth/nosym/pprof/heap" >out 2>err
	test $? = 1 && grep -q "no names from the server: cannot fetch .$U/auth/nosym/pprof/symbol.: HTTP 404" err &&
	no_secret err &&
	"$JHEAP" --base "$A/auth/pprof/heap" "$P/w_basic.exact.heap" >out 2>err &&
	grep -q "the base profile .$U/auth/pprof/heap. is of" err && no_secret err &&
	expect_fail 1 "^jheap: .http:///pprof/heap.: no host in the URL" "http://$AUTH_USER:$AUTH_URLPASS@/pprof/heap" &&
	no_secret err &&
	if test_have_prog script; then
		script -qfec "JHEAP_PROGRESS_AFTER=0 \"$JHEAP\" --seconds=1 \"$P/w_basic\" \"$A/auth/debug/mem\" >report" /dev/null </dev/null >tty.out &&
		grep -q "be patient" tty.out && no_secret tty.out report
	fi
'

test_expect_success 'every output of a URL with a password holds none of it; --proto names the saved copy' '
	A=http://$AUTH_USER:$AUTH_URLPASS@127.0.0.1:$PORT &&
	for m in --text --collapsed --callgrind --speedscope --dot --traces --raw; do
		rm -rf saved &&
		"$JHEAP" $m "$P/w_cpp" "$A/auth/pprof/heap" >"out$m" 2>err &&
		no_secret "out$m" err saved/* || { echo "with $m"; return 1; }
	done &&
	rm -rf saved &&
	"$JHEAP" --proto -o got.pb.gz "$P/w_cpp" "$A/auth/pprof/heap" 2>err &&
	gzip -dc got.pb.gz >got.pb &&
	no_secret got.pb err &&
	saved=$(ls saved/w_cpp.*) &&
	grep -a -q "jheap: $PWD/$saved" got.pb &&
	grep -q "^desc: Profile: $PWD/saved/w_cpp\." out--callgrind
'

# --- robustness of fetching (issue 24) ---

test_expect_success 'a gzip bomb is refused at 256 MiB inflated, while it inflates' '
	: >log &&
	expect_fail 1 "^jheap: cannot fetch .$U/bomb/pprof/heap.: the answer inflates to more than 256 MiB \(Content-Encoding: gzip\), the most a compressed profile may hold\$" "$U/bomb/pprof/heap" &&
	test $(wc -l <err) = 1 &&
	for i in $(seq 300); do grep -q "^BOMB sent" log && break; sleep 0.1; done &&
	sent=$(sed -n "s/^BOMB sent \([0-9]*\) of \([0-9]*\) bytes$/\1 \2/p" log) &&
	test -n "$sent" || { echo "the server did not log the end of the bomb:"; cat log; return 1; } &&
	set -- $sent &&
	echo "sent $1 of $2 bytes" &&
	test $(( $1 * 8 )) -lt $2
'

test_expect_success 'a smaller JHEAP_FETCH_MAX_BYTES counts inflated bytes too' '
	JHEAP_FETCH_MAX_BYTES=1048576 expect_fail 1 "^jheap: cannot fetch .$U/bomb/pprof/heap.: the answer is larger than the limit of 1048576 bytes\$" "$U/bomb/pprof/heap"
'

test_expect_success 'a compressed answer within the limit is read (Content-Encoding: gzip)' '
	: >log &&
	same "$U/enc/pprof/heap" "$P/w_cpp.exact.heap" &&
	requested "GET /enc/pprof/heap"
'

test_expect_success 'a 1 MiB response header: "response header too large", not "out of memory"' '
	expect_fail 1 "^jheap: cannot fetch .$U/bighdr/pprof/heap.: response header too large" "$U/bighdr/pprof/heap" &&
	! grep -q "memory" err &&
	expect_fail 1 "^jheap: cannot fetch .$U/manyhdrs/pprof/heap.: response header too large" "$U/manyhdrs/pprof/heap"
'

test_expect_success '--raw URL writes what --raw FILE writes, from the saved copy' '
	rm -rf saved &&
	"$JHEAP" --raw "$P/w_cpp" "$P/w_cpp.exact.heap" >want 2>/dev/null &&
	"$JHEAP" --raw "$P/w_cpp" "$U/pprof/heap" >got 2>err &&
	test_cmp want got &&
	! grep -q "cannot open" err &&
	"$JHEAP" --raw "$U/pprof/heap" >got2 2>/dev/null &&
	"$JHEAP" --raw "$P/w_cpp.exact.heap" >want2 2>/dev/null && test_cmp want2 got2 &&
	"$JHEAP" got >again && "$JHEAP" "$P/w_cpp" "$P/w_cpp.exact.heap" >want3 && test_cmp want3 again
'

test_expect_success '--raw -o FILE with a URL, and with a password in it' '
	rm -f got.raw &&
	"$JHEAP" --raw -o got.raw "$P/w_cpp" "$U/pprof/heap" 2>err &&
	"$JHEAP" --raw "$P/w_cpp" "$P/w_cpp.exact.heap" >want 2>/dev/null &&
	test_cmp want got.raw &&
	rm -f got.raw &&
	"$JHEAP" --raw -o got.raw "$P/w_cpp" "http://$AUTH_USER:$AUTH_URLPASS@127.0.0.1:$PORT/auth/pprof/heap" 2>err &&
	test_cmp want got.raw && no_secret got.raw err
'

test_expect_success '--raw URL when the copy cannot be saved: a message saying so' '
	: >not-a-folder &&
	JHEAP_TMPDIR=$PWD/not-a-folder/x expect_fail 1 "^jheap: --raw copies the profile from its saved copy, and the profile from .$U/pprof/heap. was not saved" --raw "$P/w_cpp" "$U/pprof/heap"
'

if test_have_prog openssl; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
		-keyout key.pem -out cert.pem -days 2 -subj /CN=127.0.0.1 \
		-addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1 &&
	start_server tlsport tlslog --tls cert.pem key.pem --page /pprof/heap="$P/w_cpp.exact.heap" &&
	test_set_prereq TLS
fi

test_expect_success TLS 'https: a certificate the system does not trust is refused' '
	S=https://127.0.0.1:$(cat tlsport) &&
	expect_fail 1 "^jheap: cannot fetch .$S/pprof/heap.: .*certificate" "$S/pprof/heap"
'

test_expect_success TLS 'https: SSL_CERT_FILE names the certificate to trust' '
	S=https://127.0.0.1:$(cat tlsport) &&
	SSL_CERT_FILE=$PWD/cert.pem same "$S/pprof/heap" "$P/w_cpp.exact.heap" &&
	grep -qx "GET /pprof/heap" tlslog
'

test_done

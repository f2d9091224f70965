#!/bin/bash
test_description='the web UI (--http): pprof URLs, views equal to the command line, diff, timeline, live, hostile names, in chromium'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

test_need_profiles
D=$PROFILES/demo
H=$PROFILES/demo.exact.heap
UI="node $TEST_DIRECTORY/web/ui_test.js"

if test_have_prog curl && ldconfig -p | grep -q 'libmicrohttpd.so.12 '; then
	test_set_prereq HTTPD
else
	say "# skipping the server's tests: they need curl and libmicrohttpd12 (scripts/deps.sh)"
fi
if test_have_prog node && test_have_prog chromium; then
	test_set_prereq BROWSER
else
	say "# skipping the browser's tests: they need node and chromium (scripts/deps.sh)"
fi

# serve NAME ARGS...: jheap --http=127.0.0.1:0 ARGS in the background (its
# pid in NAME.pid, killed when the script ends); waits for the URL it
# prints and writes the base (http://127.0.0.1:PORT) to NAME.base
serve() {
	local name=$1
	shift
	bg "$name" "$JHEAP" --http=127.0.0.1:0 --no_browser "$@" &&
	wait_line "$name.err" "serving the web UI on http://127.0.0.1:[0-9]*/ui/" 120 &&
	sed -n 's|.*serving the web UI on \(http://127.0.0.1:[0-9]*\)/ui/.*|\1|p' "$name.err" >"$name.base" &&
	test -s "$name.base"
}

# stop NAME: Ctrl-C (SIGINT) ends the server cleanly, status 0
stop() {
	local pid
	pid=$(cat "$1.pid") &&
	kill -INT "$pid" &&
	for _ in $(seq 600); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done &&
	! kill -0 "$pid" 2>/dev/null &&
	grep -q "the web UI stopped" "$1.err"
}

# ui SCENARIO NAME [TAG]: the browser scenario against server NAME,
# bounded in time (TAG names the files of a scenario run more than once)
ui() {
	timeout 600 $UI "$1" "$(cat "$2.base")" "$TRASH_DIRECTORY" "${3:-$1}" >"ui-${3:-$1}.log" 2>&1
	local rc=$?
	cat "ui-${3:-$1}.log"
	return $rc
}

# run_copied FILE: runs the command line a page copied into FILE, with
# the jheap under test for its first word
run_copied() {
	local cmd
	cmd=$(cat "$1") &&
	case $cmd in "jheap "*) ;; *) echo "not a jheap command line: $cmd" >&2; return 1 ;; esac &&
	eval "\"\$JHEAP\" ${cmd#jheap }"
}

# serve_fails STATUS PATTERN ARGS...: jheap --http ARGS ends at once with
# STATUS and a message matching PATTERN (bounded: a server that starts
# instead is stopped by timeout, status 124)
serve_fails() {
	local want=$1 pat=$2 rc
	shift 2
	timeout 120 "$JHEAP" --http=127.0.0.1:0 --no_browser "$@" >out 2>err
	rc=$?
	test "$rc" = "$want" || { echo "exit status $rc, expected $want"; cat err; return 1; }
	grep -E -- "$pat" err || { echo "stderr does not match $pat:"; cat err; return 1; }
}

# get NAME PATH: the body of a GET; the status code in code
get() {
	curl -s --path-as-is -o body -w '%{http_code}' "$(cat "$1.base")$2" >code
}

test_expect_success HTTPD 'the server starts on a free port and prints its URL' '
	serve s "$D" "$H" &&
	base=$(cat s.base) && port=${base##*:} && test "$port" -gt 0 &&
	get s /ui/ && test "$(cat code)" = 200 && grep -q "<title>jheap</title>" body
'

test_expect_success HTTPD 'a strict Content-Security-Policy on every answer, nothing inline' '
	curl -s -D headers -o /dev/null "$(cat s.base)/ui/top" &&
	grep -i "^content-security-policy: default-src .none.; script-src .self.; style-src .self.;" headers &&
	! grep -i "unsafe-inline\|unsafe-eval" headers &&
	grep -i "^x-content-type-options: nosniff" headers &&
	get s /static/index.html && ! grep -i "<script>\|<style\| on[a-z]*=" body
'

test_expect_success HTTPD 'the Host header must name this server (DNS rebinding)' '
	base=$(cat s.base) && port=${base##*:} &&
	for h in "localhost:$port" "127.0.0.1:$port" "127.0.0.1" "LOCALHOST:$port"; do
		test "$(curl -s -o /dev/null -w "%{http_code}" -H "Host: $h" "$base/ui/")" = 200 || return 1
	done &&
	for h in "evil.example:$port" "evil.example" "127.0.0.1:1" "localhost.evil.example:$port" "127.0.0.1.evil:$port"; do
		test "$(curl -s -o out -w "%{http_code}" -H "Host: $h" "$base/data/top")" = 403 || return 1
		grep -q "does not name this server" out || return 1
	done &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -0 -H "Host:" "$base/ui/")" = 400
'

test_expect_success HTTPD 'a malformed parameter or regular expression is HTTP 400 with a message' '
	get s "/data/top?f=(" && test "$(cat code)" = 400 && grep "parameter f: --focus: bad regular expression" body &&
	get s "/ui/flamegraph?i=%5B" && test "$(cat code)" = 400 && grep "parameter i:" body &&
	get s "/data/top?si=inuse_bogus" && test "$(cat code)" = 400 && grep "si=.inuse_bogus.: expects inuse_space" body &&
	get s "/data/top?g=words" && test "$(cat code)" = 400 &&
	get s "/data/top?t=x" && test "$(cat code)" = 400 &&
	get s "/data/top?zz=1" && test "$(cat code)" = 400 && grep "unknown parameter .zz." body &&
	get s "/data/top?f=a&f=b" && test "$(cat code)" = 400 && grep "given twice" body &&
	get s "/data/top?d=1" && test "$(cat code)" = 400 && grep "not one" body &&
	get s "/data/peek" && test "$(cat code)" = 400 &&
	get s "/data/top?f=$(printf "%05000d" 0)" && test "$(cat code)" = 400 && grep "longer than 4096" body
'

test_expect_success HTTPD 'no URL reads a file: unknown paths are 404, a POST needs X-Jheap' '
	for p in /static/../../etc/passwd /static/%2e%2e/x /etc/passwd /ui/../../etc/passwd /data/../static/app.js /static/; do
		get s "$p" && test "$(cat code)" = 404 || return 1
		! grep -q "root:" body || return 1
	done &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -X POST "$(cat s.base)/api/dump")" = 403 &&
	test "$(curl -s -o /dev/null -w "%{http_code}" -X DELETE "$(cat s.base)/ui/")" = 405
'

# the --text table again from the JSON of Top: same layout, same columns
cat >top2text.py <<'PY'
import json, sys
d = json.load(sys.stdin)
print("Total: %s %s" % (d["total_text"], d["unit"]))
for r in d["rows"]:
    print("%8s %6s %6s %8s %6s %s" % (r[3], r[4], r[5], r[6], r[7], r[0]))
PY
# --collapsed again from the flame graph's tree: each node's own value on
# its path (with --base "before after")
cat >flame2folded.py <<'PY'
import json, sys
d = json.load(sys.stdin)
nodes, names = d["nodes"], d["names"]
kids = [[] for _ in nodes]
for i, n in enumerate(nodes):
    if n[1] >= 0: kids[n[1]].append(i)
path = [None] * len(nodes)
lines = []
for i, n in enumerate(nodes):
    if i == 0: path[i] = []; continue
    assert n[6] == 0, "a merged node in a small profile"
    path[i] = path[n[1]] + [names[n[0]]]
    own = n[2] - sum(nodes[k][2] for k in kids[i])
    before = n[4] - sum(nodes[k][4] for k in kids[i])
    if round(own) or round(before):
        lines.append(";".join(path[i]) + (" %.0f %.0f" % (before, own) if d["diff"] else " %.0f" % own))
print("\n".join(sorted(lines)))
PY

test_expect_success HTTPD 'Top is --text, for several settings' '
	for q in "" "?si=inuse_objects" "?g=lines" "?f=cache&sort=cum" "?i=xmalloc&h=main" "?s=cache" "?si=inuse_objects&g=files"; do
		opts=$(/usr/bin/python3 -c "import sys, urllib.parse as u
m = {\"f\": \"--focus\", \"i\": \"--ignore\", \"h\": \"--exclude\", \"s\": \"--retain\"}
q = u.parse_qs(sys.argv[1].lstrip(\"?\"))
out = []
for k, v in q.items():
    if k in m: out.append(m[k] + \"=\" + v[0])
    elif k == \"si\" or k == \"g\": out.append(\"--\" + v[0])
    elif k == \"sort\" and v[0] == \"cum\": out.append(\"--cum\")
print(\" \".join(out))" "$q") &&
		get s "/data/top$q" && test "$(cat code)" = 200 &&
		/usr/bin/python3 top2text.py <body >web.txt &&
		"$JHEAP" --text $opts "$D" "$H" >cli.txt &&
		test_cmp cli.txt web.txt || return 1
	done
'

test_expect_success HTTPD 'the flame graph sums to --collapsed' '
	for q in "" "?si=inuse_objects" "?g=lines&i=xmalloc"; do
		opts=$(echo "$q" | sed "s/?si=/--/; s/?g=/--/; s/&i=/ --ignore=/") &&
		get s "/data/flame$q" && test "$(cat code)" = 200 &&
		/usr/bin/python3 flame2folded.py <body >web.txt &&
		"$JHEAP" --collapsed $opts "$D" "$H" | sort >cli.txt &&
		test_cmp cli.txt web.txt || return 1
	done
'

# sum_of FRAME: the sum of the --collapsed lines (on stdin) with FRAME
cat >sum_of.awk <<'AWK'
{ v = $NF; sub(/ [^ ]*$/, ""); n = split($0, f, ";"); for (i = 1; i <= n; i++) if (f[i] == frame) { s += v; break } }
END { print s + 0 }
AWK

T=$PROFILES/w_threads
test_expect_success HTTPD 'the flame graph of one thread sums to --collapsed --thread' '
	serve thr "$T" "$T.exact.heap" &&
	for q in "?t=2" "?t=4&si=inuse_objects" "?t=0"; do
		opts=$(echo "$q" | sed "s/?t=/--thread=/; s/&si=/ --/") &&
		get thr "/data/flame$q" && test "$(cat code)" = 200 &&
		/usr/bin/python3 flame2folded.py <body >web.txt &&
		"$JHEAP" --collapsed $opts "$T" "$T.exact.heap" | sort >cli.txt &&
		test -s cli.txt && test_cmp cli.txt web.txt || return 1
	done &&
	get thr "/data/flame" && /usr/bin/python3 flame2folded.py <body >all.txt &&
	! test_cmp all.txt web.txt >/dev/null
'

test_expect_success HTTPD,BROWSER 'a thread picked in chromium: the flame graph is its share, a reload keeps it' '
	ui thread thr &&
	"$JHEAP" --collapsed --thread=2 "$T" "$T.exact.heap" | awk -v frame=worker -f sum_of.awk >expected &&
	test_cmp expected thread-matched.txt && test_cmp expected thread-matched-reload.txt &&
	"$JHEAP" --collapsed "$T" "$T.exact.heap" | awk -v frame=worker -f sum_of.awk >all &&
	! test_cmp all expected >/dev/null &&
	stop thr
'

test_expect_success HTTPD 'the flame graph is the same with one thread and two (two halves joined in order)' '
	JHEAP_THREADS=1 serve one "$D" "$H" &&
	JHEAP_THREADS=2 serve two "$D" "$H" &&
	for q in "" "?si=inuse_objects" "?g=lines&i=xmalloc" "?f=cache"; do
		get one "/data/flame$q" && test "$(cat code)" = 200 && mv body one.json &&
		get two "/data/flame$q" && test "$(cat code)" = 200 &&
		cmp one.json body || return 1
	done &&
	stop one && stop two
'

test_expect_success HTTPD 'the graph is --svg; peek, source and disasm are --peek, --list and --weblist' '
	get s "/data/graph?f=cache" && "$JHEAP" --svg --focus=cache "$D" "$H" >cli.svg && cmp cli.svg body &&
	get s "/data/peek?f=%5Ecache_get%24" && "$JHEAP" --peek="^cache_get\$" "$D" "$H" >cli.txt && test_cmp cli.txt body &&
	get s "/data/source?f=%5Ecache_store_value%24" && "$JHEAP" --list="^cache_store_value\$" "$D" "$H" >cli.txt && test_cmp cli.txt body &&
	get s "/data/disasm?f=%5Ecache_store_value%24" && "$JHEAP" --weblist="^cache_store_value\$" -o cli.html "$D" "$H" && cmp cli.html body &&
	curl -s -D h -o /dev/null "$(cat s.base)/data/disasm?f=%5Ecache_store_value%24" && grep -i "content-security-policy: .*sandbox" h
'

test_expect_success HTTPD '100 concurrent requests, each answered right' '
	base=$(cat s.base) &&
	for q in "" "?si=inuse_objects" "?f=cache" "?g=lines"; do
		curl -s "$base/data/top$q" >"ref$(echo "$q" | md5sum | cut -c1-8)" || return 1
	done &&
	for k in $(seq 100); do
		case $((k % 4)) in 0) q="" ;; 1) q="?si=inuse_objects" ;; 2) q="?f=cache" ;; 3) q="?g=lines" ;; esac
		echo "$k $(echo "$q" | md5sum | cut -c1-8) $base/data/top$q"
	done >reqs &&
	xargs -P 100 -L 1 sh -c "curl -s --max-time 120 -o got.\$0 \"\$2\" && cmp -s got.\$0 ref\$1 || echo \"wrong answer \$0\"" <reqs >wrong &&
	test_must_be_empty_() { test ! -s "$1" || { cat "$1"; return 1; }; } && test_must_be_empty_ wrong &&
	test "$(ls got.* | wc -l)" = 100 &&
	get s /data/top && test "$(cat code)" = 200
'

test_expect_success HTTPD,BROWSER 'Top in chromium: sort, a row menu, focus, search, reload and back' '
	ui top s &&
	"$JHEAP" --text "$D" "$H" | tail -n +2 >expected && test_cmp expected top.txt &&
	"$JHEAP" --text --cum "$D" "$H" | tail -n +2 >expected && test_cmp expected top-cum.txt &&
	"$JHEAP" --text --cum --focus="^cache_store_value\$" "$D" "$H" | tail -n +2 >expected && test_cmp expected top-focus.txt &&
	grep -F -- "jheap --text --cum $D $H" cmd.txt
'

test_expect_success HTTPD,BROWSER 'the graph in chromium: a node menu focuses' '
	ui graph s && echo "^handle_request\$" >expected && test_cmp expected graph-focus-param.txt
'

test_expect_success HTTPD,BROWSER 'the flame graph in chromium: search, zoom, hover, sandwich' '
	ui flame s &&
	"$JHEAP" --collapsed "$D" "$H" | awk "/;cache_get;/ || /;cache_init/ { s += \$NF } END { print s }" >expected &&
	test_cmp expected flame-matched.txt &&
	"$JHEAP" --text --show_bytes "$D" "$H" | awk "\$6 == \"cache_insert\" { print \$4 }" >v &&
	grep -F "inuse_space: $(/usr/bin/python3 -c "import sys; v=int(sys.argv[1]); print(\"%.2f MiB\" % (v / 1048576) if v >= 1048576 else \"%.2f KiB\" % (v / 1024))" "$(cat v)")" flame-tip.txt &&
	grep "^inuse_objects: [0-9]* objects" flame-tip.txt
'

test_expect_success HTTPD,BROWSER 'peek, source and disassembly in chromium' '
	ui views s &&
	"$JHEAP" --peek="^cache_get\$" "$D" "$H" >expected && test_cmp expected peek.txt &&
	"$JHEAP" --list="^cache_store_value\$" "$D" "$H" >expected && test_cmp expected source.txt
'

A=$PROFILES/demo.accum.heap
test_expect_success HTTPD 'si=churn_space and churn_objects: --churn and --churn_objects, refused as the command line refuses them' '
	serve acc "$D" "$A" &&
	get acc "/data/top?si=churn_space" && test "$(cat code)" = 200 &&
	/usr/bin/python3 top2text.py <body >web.txt &&
	"$JHEAP" --text --churn "$D" "$A" >cli.txt && test_cmp cli.txt web.txt &&
	get acc "/data/top?si=churn_objects&sort=cum" && /usr/bin/python3 top2text.py <body >web.txt &&
	"$JHEAP" --text --churn_objects --cum "$D" "$A" >cli.txt && test_cmp cli.txt web.txt &&
	for si in churn_space churn_objects; do
		opt=$(test $si = churn_space && echo --churn || echo --churn_objects) &&
		get acc "/data/flame?si=$si" && test "$(cat code)" = 200 &&
		/usr/bin/python3 flame2folded.py <body >web.txt &&
		"$JHEAP" --collapsed $opt "$D" "$A" | sort >cli.txt &&
		test -s cli.txt && test_cmp cli.txt web.txt || return 1
	done &&
	for si in churn_space churn_objects alloc_space; do
		opt=$(case $si in churn_space) echo --churn ;; churn_objects) echo --churn_objects ;; *) echo --alloc_space ;; esac) &&
		get s "/data/top?si=$si" && test "$(cat code)" = 400 &&
		{ "$JHEAP" --text $opt "$D" "$H" >/dev/null 2>err; test $? = 1; } &&
		test_cmp err body &&
		get s "/data/flame?si=$si" && test "$(cat code)" = 400 && test_cmp err body || return 1
	done &&
	grep "^jheap: --alloc_space: the profile has no allocation counts" err &&
	get s "/data/top?si=churn" && test "$(cat code)" = 400 && grep "churn_space or churn_objects" body
'

test_expect_success HTTPD,BROWSER 'churn in chromium: offered with allocation counts, Top and the flame graph are --churn' '
	ui churn acc &&
	"$JHEAP" --text --churn "$D" "$A" | tail -n +2 >expected && test_cmp expected churn-top.txt &&
	grep -F -- "jheap --text --churn " churn-cmd.txt &&
	"$JHEAP" --collapsed --churn "$D" "$A" | awk -v frame=log_request -f sum_of.awk >expected &&
	test_cmp expected churn-matched.txt &&
	stop acc
'

test_expect_success HTTPD 'Ctrl-C ends the server cleanly' '
	stop s
'

# --- the command line's view settings: the first page's URL --------------
# each of these options changes the demo's --text (checked by hand: the
# table without any one of them differs)
C1="--focus=init --allocator=xmalloc --exclude=start --show_bytes --nodecount=4 --cum"
C1NF="--allocator=xmalloc --exclude=start --show_bytes --nodecount=4 --cum"
C2="--focus=init --allocator=xmalloc --exclude=start --inuse_objects --nodecount=4 --lines"
test_expect_success HTTPD 'a page without parameters is sent to the command line'"'"'s settings, which the URL then holds' '
	serve cl $C1 "$D" "$H" &&
	q="f=init&h=start&a=xmalloc&sort=cum" &&
	for p in /ui/top /ui/ /ui/flamegraph /ui/timeline; do
		curl -s -o /dev/null -D h "$(cat cl.base)$p" && tr -d "\r" <h >hh &&
		grep "^HTTP/1.1 302" hh && grep -x "Location: $p?$q" hh || return 1
	done &&
	for p in / /ui; do
		curl -s -o /dev/null -D h "$(cat cl.base)$p" && tr -d "\r" <h >hh &&
		grep -x "Location: /ui/?$q" hh || return 1
	done &&
	get cl "/ui/top?$q" && test "$(cat code)" = 200 && grep -q "<title>jheap</title>" body &&
	get cl "/ui/top?f=" && test "$(cat code)" = 200 &&
	get cl "/data/top?$q" && /usr/bin/python3 top2text.py <body >web.txt &&
	"$JHEAP" --text $C1 "$D" "$H" >cli.txt && test_cmp cli.txt web.txt &&
	get cl "/data/top?f=&h=start&a=xmalloc&sort=cum" && /usr/bin/python3 top2text.py <body >web.txt &&
	"$JHEAP" --text $C1NF "$D" "$H" >cli.txt && test_cmp cli.txt web.txt &&
	get cl "/data/top" && /usr/bin/python3 top2text.py <body >web.txt &&
	"$JHEAP" --text --show_bytes --nodecount=4 "$D" "$H" >cli.txt && test_cmp cli.txt web.txt &&
	get cl /data/info && grep -F "\"args\":[\"--show_bytes\",\"--nodecount=4\"]" body &&
	serve cl2 $C2 "$D" "$H" &&
	curl -s -o /dev/null -D h "$(cat cl2.base)/ui/" && tr -d "\r" <h >hh &&
	grep -x "Location: /ui/?si=inuse_objects&g=lines&f=init&h=start&a=xmalloc" hh &&
	get cl2 "/data/top?si=inuse_objects&g=lines&f=init&h=start&a=xmalloc" && /usr/bin/python3 top2text.py <body >web.txt &&
	"$JHEAP" --text $C2 "$D" "$H" >cli.txt && test_cmp cli.txt web.txt &&
	stop cl2 &&
	serve plain "$D" "$H" &&
	get plain /ui/top && test "$(cat code)" = 200 &&
	stop plain
'

test_expect_success HTTPD,BROWSER 'in chromium: the first page shows the command line'"'"'s view; its copied command writes that Top; a cleared focus stays cleared' '
	ui cmdline cl cl &&
	echo "?f=init&h=start&a=xmalloc&sort=cum" >expected && test_cmp expected cl-url.txt &&
	"$JHEAP" --text $C1 "$D" "$H" | tail -n +2 >expected && test_cmp expected cl-top.txt &&
	run_copied cl-cmd.txt | tail -n +2 >copied && test_cmp cl-top.txt copied &&
	"$JHEAP" --text $C1NF "$D" "$H" | tail -n +2 >expected && test_cmp expected cl-top-nofocus.txt &&
	run_copied cl-cmd-nofocus.txt | tail -n +2 >copied && test_cmp cl-top-nofocus.txt copied &&
	grep -F -- "--allocator=xmalloc" cl-cmd.txt && grep -F -- "--focus=init" cl-cmd.txt &&
	! grep -F -- "--focus" cl-cmd-nofocus.txt &&
	echo "Every view: --show_bytes --nodecount=4" >expected && test_cmp expected cl-every.txt &&
	stop cl
'

test_expect_success HTTPD 'a view setting the command line would refuse ends the server at start, as the command line ends' '
	serve_fails 2 "^jheap: --focus: bad regular expression" --focus="(" "$D" "$H" &&
	serve_fails 2 "^jheap: --tagignore: bad regular expression" --tagignore="k=(" "$D" "$H" &&
	serve_fails 1 "^jheap: --alloc_space: the profile has no allocation counts" --alloc_space "$D" "$H" &&
	serve_fails 1 "^jheap: the profile has no thread 9 " --thread=9 "$D" "$H" &&
	serve_fails 2 "^jheap: --thread=.\*. writes one report per thread; the web UI shows every thread or one" --thread="*" "$D" "$H" &&
	serve_fails 2 "^jheap: --focus: longer than the 4096 bytes" --focus="$(printf "%05000d" 0)" "$D" "$H"
'

# two signals of different kinds are never merged: the first stops the
# server, the second is still pending when it has stopped (timeout(1)
# passes a Ctrl-C on to the process and to its group: two of them)
test_expect_success HTTPD 'a second signal while the server stops: still a clean stop, status 0' '
	serve twice "$D" "$H" &&
	pid=$(cat twice.pid) &&
	kill -HUP "$pid" && kill -TERM "$pid" 2>/dev/null;
	wait "$pid"; st=$? &&
	echo "status $st" && test "$st" = 0 &&
	grep -q "the web UI stopped" twice.err
'

# --- a diff (--base) ----------------------------------------------------
test_expect_success 'build the workloads of the diff and the series' '
	cc -O0 -g -o w_phases "$SRCDIR/testdata/w_phases.c" &&
	cc -O0 -g -o w_growth "$SRCDIR/testdata/w_growth.c" -ldl &&
	LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$TRASH_DIRECTORY/pa ./w_phases 20 30 &&
	LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$TRASH_DIRECTORY/pb ./w_phases 10 45 &&
	LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,lg_prof_sample:0,prof_prefix:$TRASH_DIRECTORY/g ./w_growth &&
	ls pa.*.heap pb.*.heap >/dev/null && test "$(ls g.*.m*.heap | wc -l)" -ge 5
'

L="--label-from-path=(?<run>p[ab])\."
test_expect_success HTTPD 'with labels: the flame graph with tf and ti sums to --collapsed --tagfocus, --tagignore' '
	serve lab "$L" ./w_phases pa.*.heap pb.*.heap &&
	for q in "?tf=run%3Dpa" "?ti=run%3Dpa" "?tf=pb" "?tf=run%3Dp&ti=run%3Db&si=inuse_objects"; do
		opts=$(echo "$q" | sed "s/%3D/=/g; s/?tf=/--tagfocus=/; s/?ti=/--tagignore=/; s/&ti=/ --tagignore=/; s/&si=/ --/") &&
		get lab "/data/flame$q" && test "$(cat code)" = 200 &&
		/usr/bin/python3 flame2folded.py <body >web.txt &&
		"$JHEAP" --collapsed "$L" $opts ./w_phases pa.*.heap pb.*.heap | sort >cli.txt &&
		test -s cli.txt && test_cmp cli.txt web.txt || return 1
	done &&
	get lab "/data/top?tf=run%3Dpa" && /usr/bin/python3 top2text.py <body >web.txt &&
	"$JHEAP" --text "$L" --tagfocus=run=pa ./w_phases pa.*.heap pb.*.heap >cli.txt && test_cmp cli.txt web.txt &&
	get lab "/data/flame?tf=run%3D%28" && test "$(cat code)" = 400 && grep "parameter tf: --tagfocus: bad regular expression" body
'

test_expect_success HTTPD,BROWSER 'a tag focus typed in chromium: the flame graph of the samples it keeps' '
	ui tags lab &&
	"$JHEAP" --collapsed "$L" --tagfocus=run=pa ./w_phases pa.*.heap pb.*.heap | awk -v frame=phase1 -f sum_of.awk >expected &&
	test_cmp expected tags-matched.txt &&
	"$JHEAP" --collapsed "$L" ./w_phases pa.*.heap pb.*.heap | awk -v frame=phase1 -f sum_of.awk >all &&
	! test_cmp all expected >/dev/null &&
	grep -F -- "--tagfocus=run=pa" tags-cmd.txt && grep -F -- "--label-from-path=" tags-cmd.txt &&
	stop lab
'

test_expect_success HTTPD 'with --base: Top is --text --base, the flame graph --collapsed --base' '
	serve diff --base pa.*.heap ./w_phases pb.*.heap &&
	get diff /data/top && /usr/bin/python3 top2text.py <body >web.txt &&
	"$JHEAP" --text --base pa.*.heap ./w_phases pb.*.heap >cli.txt && test_cmp cli.txt web.txt &&
	grep -q "^ *-" web.txt &&
	get diff /data/flame && /usr/bin/python3 flame2folded.py <body >web.txt &&
	"$JHEAP" --collapsed --base pa.*.heap ./w_phases pb.*.heap | sort >cli.txt && test_cmp cli.txt web.txt
'

# a label holds for the profiles after it, --base ones too: the copied
# command gives each the same labels (here the base "old", the newer
# profile "new" and "x"), so --tagignore drops the same samples
LB="--label side=old --base pa.*.heap --label side=new ./w_phases --label x=1 pb.*.heap"
test_expect_success HTTPD,BROWSER 'with --base, --label and --tagignore: the copied command writes Top' '
	serve clb --tagignore=side=old --maxdegree=3 $LB &&
	ui cmdline clb clb &&
	echo "?ti=side%3Dold" >expected && test_cmp expected clb-url.txt &&
	"$JHEAP" --text --tagignore=side=old $LB | tail -n +2 >expected && test_cmp expected clb-top.txt &&
	"$JHEAP" --text $LB | tail -n +2 >all && ! test_cmp all expected >/dev/null &&
	run_copied clb-cmd.txt | tail -n +2 >copied && test_cmp clb-top.txt copied &&
	grep -F -- "--tagignore=side=old --maxdegree=3 --label=side=old --base=pa." clb-cmd.txt &&
	stop clb
'

test_expect_success HTTPD,BROWSER 'the diff in chromium: signed rows, red and blue frames and nodes' '
	ui diff diff &&
	"$JHEAP" --text --base pa.*.heap ./w_phases pb.*.heap | tail -n +2 >expected && test_cmp expected diff-top.txt &&
	grep "=rgb(255, [0-9]*, [0-9]*)$" diff-colors.txt | grep -v "=rgb(255, 255, 255)" &&
	grep "=rgb([0-9]*, [0-9]*, 255)$" diff-colors.txt &&
	grep "^phase1=#a8c8f0" diff-graph.txt && grep "^phase2=#f4b0a8" diff-graph.txt &&
	stop diff
'

# --- a series of dumps: the timeline -------------------------------------
test_expect_success HTTPD 'a series: each dump as the command line shows it alone, and two dumps as --base' '
	serve ser ./w_growth g.*.m*.heap &&
	get ser /data/timeline && n=$(/usr/bin/python3 -c "import json,sys; print(len(json.load(sys.stdin)[\"dumps\"]))" <body) &&
	test "$n" = "$(ls g.*.m*.heap | wc -l)" &&
	files=$(ls g.*.m*.heap | sort -t. -k3,3n) && set -- $files &&
	get ser "/data/top?d=2&si=inuse_objects" && /usr/bin/python3 top2text.py <body >web.txt &&
	"$JHEAP" --text --inuse_objects ./w_growth $3 >cli.txt && test_cmp cli.txt web.txt &&
	get ser "/data/top?d=4&b=1" && /usr/bin/python3 top2text.py <body >web.txt &&
	"$JHEAP" --text --base $2 ./w_growth $5 >cli.txt && test_cmp cli.txt web.txt &&
	get ser "/data/top" && /usr/bin/python3 top2text.py <body >web.txt &&
	eval "last=\${$#}" && "$JHEAP" --text ./w_growth $last >cli.txt && test_cmp cli.txt web.txt &&
	get ser /data/growth && "$JHEAP" --growth ./w_growth $files >cli.txt && test_cmp cli.txt body &&
	/usr/bin/python3 -c "
import json, subprocess, sys
d = json.load(open(\"body\")) if False else None
" &&
	get ser /data/timeline && /usr/bin/python3 - "$JHEAP" $files <<-\PY
	import json, subprocess, sys
	t = json.load(open("body"))
	for dump, path in zip(t["dumps"], sys.argv[2:]):
	    out = subprocess.run([sys.argv[1], "--text", "--show_bytes", "./w_growth", path], capture_output=True, text=True).stdout
	    total = int(out.split()[1])
	    assert dump["path"] == path, (dump["path"], path)
	    assert int(dump["inuse_space"]) == total, (path, dump["inuse_space"], total)
	PY
'

test_expect_success HTTPD,BROWSER 'the timeline in chromium: a click opens a dump in every view, Shift-click and a click (or Compare) their diff' '
	ui timeline ser &&
	files=$(ls g.*.m*.heap | sort -t. -k3,3n) && set -- $files && n=$# &&
	test "$(cat timeline-points.txt)" = "$n" &&
	"$JHEAP" --growth ./w_growth $files >expected && test_cmp expected timeline-growth.txt &&
	eval "last=\${$n}" &&
	"$JHEAP" --text ./w_growth $3 | tail -n +2 >expected && test_cmp expected timeline-dump2.txt &&
	"$JHEAP" --collapsed ./w_growth $3 | awk -v frame=build_cache -f sum_of.awk >expected &&
	test_cmp expected timeline-dump2-flame.txt &&
	"$JHEAP" --text --base $2 ./w_growth $last | tail -n +2 >expected && test_cmp expected timeline-diff.txt &&
	"$JHEAP" --text --base $1 ./w_growth $4 | tail -n +2 >expected && test_cmp expected timeline-diff03.txt &&
	stop ser
'

test_expect_success HTTPD 'a thread of one dump of a series is --thread=N on that dump alone' '
	cc -O0 -g -pthread -o w_threads "$SRCDIR/testdata/w_threads.c" -ldl &&
	LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,lg_prof_sample:0,lg_prof_interval:17,prof_prefix:$TRASH_DIRECTORY/tt ./w_threads &&
	files=$(ls tt.*.heap | sort -t. -k3,3n) && set -- $files && test $# -ge 3 &&
	eval "last=\${$#}" && n=$(($# - 1)) &&
	serve tser ./w_threads $files &&
	for t in 0 2 4; do
		get tser "/data/top?d=$n&t=$t" && test "$(cat code)" = 200 &&
		/usr/bin/python3 top2text.py <body | tail -n +2 >web.txt &&
		"$JHEAP" --text --thread=$t ./w_threads $last | tail -n +2 >cli.txt &&
		test -s cli.txt && test_cmp cli.txt web.txt &&
		get tser "/data/flame?d=$n&t=$t&si=inuse_objects" && test "$(cat code)" = 200 &&
		/usr/bin/python3 flame2folded.py <body >web.txt &&
		"$JHEAP" --collapsed --inuse_objects --thread=$t ./w_threads $last | sort >cli.txt &&
		test_cmp cli.txt web.txt || return 1
	done &&
	get tser "/data/top?d=$n&b=1&t=1" && test "$(cat code)" = 200 &&
	/usr/bin/python3 top2text.py <body | tail -n +2 >web.txt &&
	"$JHEAP" --text --thread=1 --base $2 ./w_threads $last | tail -n +2 >cli.txt && test_cmp cli.txt web.txt &&
	get tser "/data/top?d=0&t=4" && test "$(cat code)" = 400 &&
	grep "parameter t: the dump .$(basename $1). has no thread 4" body &&
	! "$JHEAP" --text --thread=4 ./w_threads $1 2>err && grep "no thread 4" err
'

test_expect_success HTTPD,BROWSER 'a series started with --thread and --focus: the last dump'"'"'s Top, and the copied command writes it' '
	files=$(ls tt.*.heap | sort -t. -k3,3n) && set -- $files && eval "last=\${$#}" &&
	serve tcl --thread=0 --focus=main --inuse_objects ./w_threads $files &&
	ui cmdline tcl tcl &&
	echo "?si=inuse_objects&f=main&t=0" >expected && test_cmp expected tcl-url.txt &&
	"$JHEAP" --text --thread=0 --focus=main --inuse_objects ./w_threads $last | tail -n +2 >expected &&
	test_cmp expected tcl-top.txt &&
	run_copied tcl-cmd.txt | tail -n +2 >copied && test_cmp tcl-top.txt copied &&
	"$JHEAP" --text --thread=0 --inuse_objects ./w_threads $last | tail -n +2 >expected &&
	test_cmp expected tcl-top-nofocus.txt &&
	run_copied tcl-cmd-nofocus.txt | tail -n +2 >copied && test_cmp tcl-top-nofocus.txt copied &&
	stop tcl
'

test_expect_success HTTPD,BROWSER 'a thread of one dump in chromium: the last point, thread 4 from the menu' '
	ui seriesthread tser &&
	files=$(ls tt.*.heap | sort -t. -k3,3n) && set -- $files && eval "last=\${$#}" &&
	"$JHEAP" --text --thread=4 ./w_threads $last | tail -n +2 >expected && test_cmp expected series-thread-top.txt &&
	"$JHEAP" --collapsed --thread=4 ./w_threads $last | awk -v frame=worker -f sum_of.awk >expected &&
	test_cmp expected series-thread-matched.txt &&
	stop tser
'

test_expect_success HTTPD 'a dump folder is a series too' '
	mkdir -p folder && cp g.*.m*.heap folder/ &&
	serve fold ./w_growth folder &&
	get fold /data/timeline && test "$(grep -o "\"name\"" body | wc -l)" = "$(ls folder | wc -l)" &&
	stop fold
'

test_expect_success HTTPD 'a series with --peak: the first page is the dump --peak reports' '
	"$JHEAP" --text --peak ./w_growth g.*.m*.heap >cli.txt 2>err &&
	k=$(sed -n "s/.*(dump \([0-9]*\) in order).*/\1/p" err) && test -n "$k" && k=$((k - 1)) &&
	serve pk --peak ./w_growth g.*.m*.heap &&
	curl -s -o /dev/null -D h "$(cat pk.base)/ui/top" && tr -d "\r" <h >hh &&
	grep -x "Location: /ui/top?d=$k" hh &&
	get pk "/data/top?d=$k" && /usr/bin/python3 top2text.py <body >web.txt && test_cmp cli.txt web.txt &&
	get pk "/data/top" && /usr/bin/python3 top2text.py <body >web.txt && ! test_cmp cli.txt web.txt >/dev/null &&
	stop pk
'

# --- live: a program under jheap record ------------------------------------
test_expect_success HTTPD,BROWSER 'live: the timeline grows with Dump now and with jheap dump' '
	cc -O0 -g -o w_ctl "$SRCDIR/testdata/w_ctl.c" &&
	bg prog "$JHEAP" record -q --sample=1 --dir=live -- ./w_ctl && wait_line prog.out "^ready\$" &&
	pid=$(cat prog.pid) &&
	serve lv ./w_ctl --pid=$pid &&
	bg liveui timeout 600 node "$TEST_DIRECTORY/web/ui_test.js" live "$(cat lv.base)" "$TRASH_DIRECTORY" &&
	ui=$(cat liveui.pid) &&
	for _ in $(seq 1200); do test -e live-ready && break; kill -0 $ui 2>/dev/null || break; sleep 0.1; done &&
	cat liveui.out liveui.err && test -e live-ready &&
	"$JHEAP" dump $pid >dumped &&
	for _ in $(seq 3000); do kill -0 $ui 2>/dev/null || break; sleep 0.1; done &&
	cat liveui.out liveui.err && ! kill -0 $ui 2>/dev/null &&
	test -s live-2.txt && ! grep "not ok" liveui.err &&
	test "$(ls live/*.heap | wc -l)" -ge 3 &&
	stop lv
'

# --- hostile names ------------------------------------------------------
test_expect_success HTTPD,BROWSER 'hostile names, file names and source lines run no script in any view' '
	mkdir -p hostile &&
	name="h<img src=x onerror=window.__jheap_pwned=7>\"q" &&
	cat >"hostile/$name.c" <<-\EOF &&
	#include <stdlib.h>
	/* </pre><script>window.__jheap_pwned=8</script><img src=x onerror="window.__jheap_pwned=9"> */
	void *keep[16];
	__attribute__((noinline)) void grab(int i) { keep[i] = malloc(4096 * (i + 1)); } /* ]]></svg><script>window.__jheap_pwned=10</script> */
	int main(void) { for (int i = 0; i < 8; i++) grab(i); return 0; }
	EOF
	(cd hostile && cc -O0 -g -o prog "$name.c") &&
	LD_PRELOAD=$JEMALLOC MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:$TRASH_DIRECTORY/hostile/d hostile/prog &&
	dump=$(ls hostile/d.*.heap) &&
	{
		printf "%s\n" "--- symbol" "binary=hostile" &&
		i=0 &&
		for n in "<script>window.__jheap_pwned=1</script>" "\"><img src=x onerror=\"window.__jheap_pwned=2\">" \
			"</svg><script>window.__jheap_pwned=3</script>" "]]><script>window.__jheap_pwned=4</script>" \
			"javascript:window.__jheap_pwned=5" "a$(printf "\342\200\250")b$(printf "\342\200\251")c\"});window.__jheap_pwned=6;//" \
			"<style>*{display:none}</style>" "{{constructor.constructor(\"window.__jheap_pwned=11\")()}}"; do
			printf "0x%x %s\n" $((0x5000 + i * 16)) "$n"; i=$((i + 1))
		done &&
		printf "%s\n" "---" "--- heap" "heap_v2/1" "  t*: 9: 9000 [0: 0]" &&
		for k in 0 1 2 3 4 5 6 7; do
			printf "@ 0x%x 0x%x\n  t*: 1: %d [0: 0]\n" $((0x5000 + k * 16)) $((0x5001 + ((k + 1) % 8) * 16)) $((1000000 * (k + 1)))
		done
	} >hostile.sym &&
	"$JHEAP" --text --full-names hostile.sym | grep -F "<script>window.__jheap_pwned=1</script>" &&
	serve hs --full-names hostile.sym &&
	get hs "/data/top" && grep -F "\\u003cscript\\u003e" body && ! grep -F "<script>" body &&
	get hs "/data/flame" && ! grep -F "<" body && grep -F "\\u2028" body &&
	ui hostile hs &&
	stop hs &&
	serve hf hostile/prog "$dump" &&
	get hf "/data/source?f=grab" && grep -F "</pre><script>" body &&
	ui hostile hf &&
	stop hf
'

test_expect_success HTTPD 'a HOST that is not loopback gets a warning; a bad --http a usage error' '
	expect_fail 2 "--http expects \[HOST\]:PORT" --http=8080 "$D" "$H" &&
	expect_fail 2 "is not a port" --http=:99999 "$D" "$H" &&
	expect_fail 2 "goes with --http" --no_browser "$D" "$H" &&
	expect_fail 2 "does not combine" --http=:0 --text "$D" "$H" &&
	addr=$(hostname -I 2>/dev/null | awk "{print \$1}") &&
	if test -n "$addr"; then
		bg pub "$JHEAP" --http="$addr:0" --no_browser "$D" "$H" &&
		wait_line pub.err "serving the web UI" 120 &&
		grep "warning: the web UI listens on $addr: everyone who can reach it can read the profile, its function names and its source files" pub.err &&
		stop pub
	fi
'

test_expect_success 'without libmicrohttpd: exit 1, naming the library and its package' '
	mkdir -p nolib &&
	JHEAP_TEST_LIBDIR=$TRASH_DIRECTORY/nolib "$JHEAP" --http=127.0.0.1:0 --no_browser "$D" "$H" >out 2>err; test $? = 1 &&
	grep "^jheap: --http needs GNU libmicrohttpd (libmicrohttpd.so.12, Debian package libmicrohttpd12): " err
'

test_expect_success HTTPD 'the browser is opened with $BROWSER unless --no_browser' '
	cat >browser.sh <<-EOF &&
	#!/bin/sh
	echo "\$1" >"$TRASH_DIRECTORY/opened"
	EOF
	chmod +x browser.sh &&
	BROWSER=$TRASH_DIRECTORY/browser.sh bg op "$JHEAP" --http=127.0.0.1:0 "$D" "$H" &&
	wait_line op.err "serving the web UI" 120 &&
	for _ in $(seq 600); do test -s opened && break; sleep 0.05; done &&
	grep "^http://127.0.0.1:[0-9]*/ui/\$" opened &&
	stop op
'

test_done

#!/bin/bash
test_description='jheap record on node (--perf-basic-prof), an HTTP server on 127.0.0.1 under load

The server keeps buffers made five ways (Buffer.alloc, Buffer.allocUnsafe,
new ArrayBuffer and its slice, structuredClone, a Float64Array) and zlib
output.  Their bytes come through node'"'"'s NodeArrayBufferAllocator under
V8'"'"'s Heap::AllocateExternalBackingStore and BackingStore::Allocate, which
three paths call: one hint line whose --allocator option, pasted, puts
the code that asked for the buffers first.  Names keep "(anonymous
namespace)" whole; the stacks end in V8'"'"'s builtins and JIT code, and a
note says so.  Port 0; load: 1000 requests from curl.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/record-lib.sh"

NODE=$(command -v node || command -v nodejs) || test_skip "node is needed (apt-get install nodejs: scripts/deps.sh)"
test_have_prog curl || test_skip "curl is needed (scripts/deps.sh)"
# node writes /tmp/perf-PID.map: gone with the script
trap 'rm -f "/tmp/perf-$(cat "$TRASH_DIRECTORY/node.pid.real" 2>/dev/null).map"; stop_background_' EXIT

hint_re() {
	sed -n "s/^jheap: hint: .*; to charge \(its\|their\) callers: --allocator='\(.*\)'\$/\2/p" "$1"
}

test_expect_success 'node --perf-basic-prof under jheap record, on a port of its own' '
	cat >server.js <<-\EOF &&
	const http = require("http");
	const zlib = require("zlib");
	const kept = [];
	function keep(x) { kept.push(x); if (kept.length > 600) kept.shift(); }
	const srv = http.createServer((req, res) => {
	  const n = req.url.length;
	  keep(Buffer.alloc(16384 + n));
	  keep(Buffer.allocUnsafe(32768 + n));
	  const ab = new ArrayBuffer(8192 + n);
	  keep(ab.slice(0, 4096 + n));
	  keep(structuredClone(new Uint8Array(6144 + n)));
	  keep(new Float64Array(2048 + n));
	  keep(zlib.deflateSync(Buffer.from(req.url.repeat(200))));
	  res.end("ok");
	});
	srv.listen(0, "127.0.0.1", () => { console.log("port " + srv.address().port); });
	EOF
	bg node timeout -k 5 300 "$JHEAP" record --sample=4K --dir=dumps -- "$NODE" --perf-basic-prof server.js &&
	wait_line node.out "^port [0-9]*\$" 60 &&
	port=$(sed -n "s/^port //p" node.out) && echo "$port" >port &&
	pid=$(pgrep -P "$(cat node.pid)") && echo "$pid" >node.pid.real && forget_pid "$pid" &&
	grep -q "^jheap: recording process $pid (node)" node.err
'

test_expect_success 'load: 1000 requests, answered' '
	timeout 120 curl -s -w "%{http_code}\n" -o /dev/null "http://127.0.0.1:$(cat port)/[1-1000]" >codes &&
	test "$(grep -c "^200\$" codes)" = 1000
'

test_expect_success 'a dump: the hint names the ArrayBuffer allocator; pasted, the callers come first' '
	d=$("$JHEAP" dump "$(cat node.pid.real)") && echo "$d" >dump &&
	"$JHEAP" --text "$d" >plain 2>err &&
	cat err &&
	re=$(hint_re err) && test -n "$re" &&
	echo "$re" | grep -q "NodeArrayBufferAllocator::Allocate" &&
	echo "$re" | grep -q "BackingStore::Allocate" &&
	"$JHEAP" --text --nodecount=5 --allocator="$re" "$d" >cut 2>err2 &&
	cat cut &&
	! grep -q "NodeArrayBufferAllocator\|BackingStore::Allocate" cut &&
	sed -n "2,3p" cut | awk "{ print \$6 }" >top &&
	grep -q -E "^(v8|node)::" top &&
	test "$(sed -n 2p cut | awk "{ print \$2 }" | tr -d %)" != 0.0
'

# node_objects: the files node runs from (the program, and libnode when
# it is linked with it, as Debian'"'"'s is)
node_objects() {
	echo "$NODE"
	ldd "$NODE" | sed -n "s/^.*libnode[^ ]* => \([^ ]*\) .*/\1/p"
}

# node_names PATTERN: how many of the symbols of node'"'"'s files match
# PATTERN (demangled; Debian'"'"'s libnode is stripped to its exports)
node_names() {
	for f in $(node_objects); do
		nm -C "$f" 2>/dev/null
		nm -DC "$f" 2>/dev/null
	done | grep -c -- "$1"
}

test_expect_success '(anonymous namespace) is kept whole in names' '
	"$JHEAP" --traces "$(cat dump)" >traces 2>/dev/null &&
	! grep -q -E "[A-Za-z_]::::" traces &&
	if test "$(node_names "(anonymous namespace)")" = 0; then
		echo "(node here names no function in an anonymous namespace: a stripped build, whose dbgsym package would)"
	else
		grep -q "(anonymous namespace)::" traces &&
		grep -q "(anonymous namespace)::" cut
	fi
'

test_expect_success 'the stacks end in V8'"'"'s builtins and JIT code: a note says so' '
	if test "$(node_names " Builtins_CallApiCallback\$")" = 0; then
		echo "(node here does not name its builtins: a stripped build)"
	else
		grep -q "^jheap: note: [0-9.]*% of the bytes have stacks that end in code compiled at run time or in a JavaScript engine.s builtins" err
	fi
'

test_expect_success 'stop node' '
	kill -TERM "$(cat node.pid.real)" &&
	wait_gone "$(cat node.pid.real)" 60
'

test_done

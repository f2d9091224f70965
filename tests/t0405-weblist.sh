#!/bin/bash
test_description='--weblist: each source line with its machine code underneath

Rules checked (output/weblist.c):
 - the page holds --list'"'"'s routines and lines, values included, in order;
 - under a line, instructions with their values exactly as --disasm
   shows them, every --disasm instruction once;
 - an instruction is under the line of the routine'"'"'s file that
   llvm-symbolizer --inlining gives as its outermost frame in that file
   (code inlined from elsewhere sits under its call), or after the
   routine'"'"'s lines when it has none there;
 - a function with no symbol of its own, or no objdump: the listing,
   with a note saying why there is no machine code;
 - in a browser (headless Chromium, optional), a line'"'"'s machine code is
   hidden until its line is clicked, and shown after.
tests/tools/weblistcheck.py reads the page and does the comparing.'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_have_prog python3 || test_skip "python3 is needed to read the page (apt-get install python3)"
test_have_prog objdump || test_skip "objdump is needed for the machine code (apt-get install binutils)"
test_need_profiles
test_have_prog llvm-symbolizer && test_set_prereq LLVM
CHROMIUM=
for c in chromium chromium-browser google-chrome; do
	if test_have_prog $c; then CHROMIUM=$c; test_set_prereq CHROMIUM; break; fi
done
P=$PROFILES
# the page is written with -o; the browser it would open is 'true'
export BROWSER=true
CHECK="python3 $TEST_DIRECTORY/tools/weblistcheck.py"

# weblist NAME RE OPTIONS...: the page, --list and --disasm of RE for
# workload NAME, then the checks (with llvm-symbolizer when there is one)
weblist() {
	local w=$1 re=$2 sym=
	shift 2
	"$JHEAP" "$@" --weblist="$re" -o "$w.html" "$P/$w" "$P/$w.exact.heap" 2>"$w.err" &&
	"$JHEAP" "$@" --list="$re" "$P/$w" "$P/$w.exact.heap" >"$w.list" &&
	"$JHEAP" "$@" --disasm="$re" "$P/$w" "$P/$w.exact.heap" >"$w.disasm" || return 1
	test_have_prereq LLVM && sym=llvm-symbolizer
	$CHECK "$w.html" "$w.list" "$w.disasm" "$P/$w" $sym
}

test_expect_success 'the workloads: lines as --list, instructions as --disasm, placed as llvm-symbolizer says' '
	weblist w_cpp "fill_buffers|make_ints|grow_vector|Holder" &&
	weblist w_basic "alloc_|caller_|leaf_alloc|many_small|recurse" --show_bytes &&
	weblist demo "cache_|parse_request|handle_request|server_run|pool_init" --inuse_objects &&
	weblist w_threads "^worker\$" &&
	weblist w_shlib "main_local_alloc" &&
	weblist w_basic "caller_|leaf_alloc" --focus=caller_b
'

test_expect_success 'inlined code is under its call: make_buf'"'"'s new[] under fill_buffers'"'"' line 78' '
	"$JHEAP" --show_bytes --weblist="^fill_buffers\$" -o fb.html "$P/w_cpp" "$P/w_cpp.exact.heap" 2>/dev/null &&
	line=$(grep -n "hold(make_buf(4000));" "$SRCDIR/testdata/w_cpp.cc" | cut -d: -f1) &&
	made=$(grep -n "char \*p = new char\[n\];" "$SRCDIR/testdata/w_cpp.cc" | cut -d: -f1) &&
	# the line: highlighted, 64 blocks of 4000 bytes (262144 in jemalloc size classes) as cum
	sed -n "/<details class=\"src hot\"><summary> *\. 262144 *$line: /,/<\/details>/p" fb.html >row &&
	grep -c "<span class=\"insn" row &&
	# under it, the call with the bytes, from make_buf'"'"'s line
	grep -E "<span class=\"insn hot\"> +262144 262144 +[0-9a-f]+: call +[0-9a-f]+ &lt;operator new\[\]" row &&
	grep "<span class=\"pos\">w_cpp.cc:$made</span>" row
'

test_expect_success 'no symbol of its own, no objdump: the listing with a note' '
	"$JHEAP" --weblist=make_buf -o mb.html "$P/w_cpp" "$P/w_cpp.exact.heap" 2>/dev/null &&
	grep "class=\"note\">No machine code: no function matching .make_buf. has a symbol of its own" mb.html &&
	grep -c "<div class=\"src" mb.html &&
	! grep -q "<details" mb.html &&
	mkdir -p nobin && ln -sf "$(type -P dirname)" nobin/dirname && ln -sf "$(type -P true)" nobin/true &&
	PATH=$TRASH_DIRECTORY/nobin "$JHEAP" --weblist=fill_buffers -o nb.html "$P/w_cpp" "$P/w_cpp.exact.heap" 2>/dev/null &&
	grep "class=\"note\">Machine code not shown: .*needs binutils. .objdump. program" nb.html &&
	grep "hold(make_buf(4000));" nb.html
'

# A script added to a copy of the page clicks the first highlighted line
# with code and writes what it saw into the document, which --dump-dom
# prints: visible before, visible after, the box grew, the element open.
test_expect_success CHROMIUM 'in a browser, a click on a line shows its machine code' '
	"$JHEAP" --weblist="^fill_buffers\$" -o page.html "$P/w_cpp" "$P/w_cpp.exact.heap" 2>/dev/null &&
	sed "s|</body>|<script>var d = document.querySelector(\"details.src.hot\"), a = d.querySelector(\".asm\"); var h0 = d.getBoundingClientRect().height, v0 = a.checkVisibility(); d.querySelector(\"summary\").click(); document.body.setAttribute(\"data-check\", v0 + \" \" + a.checkVisibility() + \" \" + (d.getBoundingClientRect().height > h0) + \" \" + d.open + \" \" + (a.textContent.indexOf(\"operator new\") >= 0));</script></body>|" page.html >click.html &&
	timeout 120 $CHROMIUM --headless --no-sandbox --disable-gpu --user-data-dir="$TRASH_DIRECTORY/chromium" \
		--dump-dom "file://$TRASH_DIRECTORY/click.html" >dom 2>chromium.err &&
	grep -o "data-check=\"[^\"]*\"" dom >seen &&
	echo "data-check=\"false true true true true\"" >expect &&
	test_cmp expect seen
'

test_done

#!/bin/bash
test_description='jheap --flamegraph writes a well-formed, self-contained SVG flame graph

Rules checked (output/flamegraph.c):
 - well-formed XML (xmllint, python3 xml.etree); one <g> per frame in
   <g id="frames">, each with a <title> (name, newline, numbers), a <rect>
   and a <text>; frames in depth-first order, fg:e the last descendant;
 - the frames are the call tree of --collapsed with the same flags: each
   frame'"'"'s value is the sum of the folded lines below its path, its rect is
   value/total of 1180 pixels wide, at depth = path length (root at the
   bottom); every path of 0.1% of the total or more is drawn and nothing
   smaller;
 - the root "all" spans the full width and its title states --text'"'"'s Total;
 - names are XML-escaped; with --base, width is the "after" value and the
   color the change (red grew, blue shrank, rgb(250,250,250) unchanged);
 - the embedded script zooms and searches (headless Chromium, optional);
 - two runs give the same bytes.'
. "$(dirname "$0")/lib.sh"

test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test_have_prog python3 || test_skip "python3 not found (needed to read the SVG)"
test_need_profiles

test_have_prog xmllint && test_set_prereq XMLLINT
test_have_prog rsvg-convert && test_set_prereq RSVG
CHROMIUM=
for c in chromium chromium-browser google-chrome; do
	if test_have_prog $c; then CHROMIUM=$c; test_set_prereq CHROMIUM; break; fi
done

# svg OUT ARGS...: jheap --flamegraph ARGS into OUT, failing on an error.
svg() {
	local out=$1
	shift
	jheap_into "$out" --flamegraph "$@"
}

folded() {
	local out=$1
	shift
	jheap_into "$out" --collapsed "$@"
}

cat >fgcheck.py <<-\EOF
"""fgcheck.py SVG [COLLAPSED]: checks a jheap flame graph; prints one line
per frame "DEPTH<TAB>PATH<TAB>VALUE<TAB>FILL" (PATH joined by ';') on stdout
and the root's title on the last line, "ROOT<TAB>...".  With COLLAPSED
(jheap --collapsed with the same flags), checks that the frames are its
call tree.  Exit 1 with messages on stderr when something is wrong."""
import sys
import xml.etree.ElementTree as ET

S = '{http://www.w3.org/2000/svg}'
FG = '{urn:x-jheap:flamegraph}'
W, XPAD, FRAME_H, BOTTOM, MIN_SHARE = 1180.0, 10.0, 16, 30, 0.001
errors = []


def err(msg):
    errors.append(msg)


doc = ET.parse(sys.argv[1]).getroot()
height = float(doc.get('height'))
box = [g for g in doc.iter(S + 'g') if g.get('id') == 'frames']
if len(box) != 1:
    sys.exit('no <g id="frames">')
frames = []
stack = []
for i, g in enumerate(box[0].findall(S + 'g')):
    title, rect, text = g.find(S + 'title'), g.find(S + 'rect'), g.find(S + 'text')
    if title is None or rect is None or text is None:
        err(f'frame {i}: missing title, rect or text')
        continue
    name, _, info = title.text.partition('\n')
    end = int(g.get(FG + 'e'))
    while stack and stack[-1]['end'] < i:
        stack.pop()
    path = (stack[-1]['path'] + (name,)) if stack else ()
    f = {'i': i, 'name': name, 'info': info, 'end': end, 'path': path,
         'v': float(g.get(FG + 'v')), 's': float(g.get(FG + 's')),
         'x': float(rect.get('x')), 'y': float(rect.get('y')),
         'w': float(rect.get('width')), 'fill': rect.get('fill'),
         'parent': stack[-1] if stack else None}
    frames.append(f)
    stack.append(f)
if not frames:
    sys.exit('no frames')
root = frames[0]
total = root['v']
if root['name'] != 'all' or root['path'] != () or root['end'] != len(frames) - 1:
    err(f'the first frame is not the root: {root["name"]!r}')
if abs(root['x'] - XPAD) > 0.005 or abs(root['w'] - W) > 0.005:
    err(f'root rect x={root["x"]} width={root["w"]}, not the full width')
for f in frames:
    depth = len(f['path'])
    if abs(f['y'] - (height - BOTTOM - (depth + 1) * FRAME_H)) > 0.01:
        err(f'{f["path"]}: y={f["y"]} is not depth {depth}')
    if f is root:
        continue
    if total > 0 and abs(f['w'] - f['v'] / total * W) > 0.011:
        err(f'{f["path"]}: width {f["w"]}, value {f["v"]} of {total}')
    if total > 0 and abs(f['x'] - (XPAD + f['s'] / total * W)) > 0.011:
        err(f'{f["path"]}: x {f["x"]}, start {f["s"]} of {total}')
    if f['v'] < MIN_SHARE * total:
        err(f'{f["path"]}: {f["v"]} is below 0.1% of {total} but drawn')
    p = f['parent']
    if f['s'] < p['s'] - 1e-6 or f['s'] + f['v'] > p['s'] + p['v'] + 1e-6 * max(1, total):
        err(f'{f["path"]}: outside its parent')
paths = {}
for f in frames:
    if f['path'] in paths:
        err(f'{f["path"]}: drawn twice')
    paths[f['path']] = f

if len(sys.argv) > 2:
    sums, counts = {}, {}
    nlines = 0
    with open(sys.argv[2], encoding='utf-8') as fh:
        for line in fh:
            stack_, _, after = line.rstrip('\n').rpartition(' ')
            if stack_.rpartition(' ')[2].isdigit():
                stack_ = stack_.rpartition(' ')[0]      # "stack BEFORE AFTER"
            names = tuple(stack_.split(';'))
            nlines += 1
            for k in range(1, len(names) + 1):
                sums[names[:k]] = sums.get(names[:k], 0) + int(after)
                counts[names[:k]] = counts.get(names[:k], 0) + 1
    ftotal = sum(v for k, v in sums.items() if len(k) == 1)
    if abs(ftotal - total) > nlines + 1e-6:
        err(f'root value {total}, the folded lines add up to {ftotal}')
    for path, v in sums.items():
        tol = counts[path] + 1e-6
        if path in paths:
            if abs(paths[path]['v'] - v) > tol:
                err(f'{path}: value {paths[path]["v"]}, folded lines say {v}')
        elif v - tol >= MIN_SHARE * total:
            err(f'{path}: {v} of {total} (>= 0.1%) is not drawn')
    for path in paths:
        if path and path not in sums:
            err(f'{path}: drawn but not a folded stack')

for e in errors:
    print(e, file=sys.stderr)
for f in frames:
    print(f'{len(f["path"])}\t{";".join(f["path"])}\t{f["v"]:.0f}\t{f["fill"]}')
print(f'ROOT\t{root["info"]}')
sys.exit(1 if errors else 0)
EOF

# check_tree ARGS...: the flame graph of ARGS is the call tree of
# --collapsed ARGS (fgcheck.py) and well formed for xmllint.
check_tree() {
	svg g.svg "$@" &&
	folded f.txt "$@" &&
	python3 "$TRASH_DIRECTORY/fgcheck.py" g.svg f.txt >frames &&
	if test_have_prereq XMLLINT; then xmllint --noout g.svg; fi
}

test_expect_success 'the demo profile: well formed, one frame per tree node' '
	check_tree "$PROFILES/demo.exact.heap" &&
	grep -c . frames >n && test $(cat n) -gt 10
'

for args in "$PROFILES/w_basic.exact.heap" "--inuse_objects $PROFILES/w_basic.exact.heap" \
	"$PROFILES/w_cpp.exact.heap" "--lines $PROFILES/w_cpp.exact.heap" \
	"$PROFILES/w_shlib.exact.heap" "$PROFILES/w_threads.exact.heap" \
	"--alloc_space $PROFILES/w_basic.accum.heap" "--inuse_objects $PROFILES/demo.sampled.heap" \
	"--base $PROFILES/w_basic.sampled.heap $PROFILES/w_basic.exact.heap"; do
	test_expect_success "the frames are the call tree of --collapsed ${args//$PROFILES\//}" "
		check_tree $args
	"
done

for flags in "" --show_bytes --inuse_objects; do
	test_expect_success "the root spans the width and states --text's Total (${flags:-MB})" "
		heap=\$PROFILES/w_basic.exact.heap &&
		svg g.svg $flags \"\$heap\" &&
		python3 \"\$TRASH_DIRECTORY/fgcheck.py\" g.svg >frames &&
		\"\$JHEAP\" --text $flags \"\$heap\" | head -n 1 >total &&
		grep '^Total: ' total &&
		grep -F \"ROOT	\$(cat total)\" frames &&
		grep -F \"ROOT	\$(cat total)\" frames | grep ', 100.00%\$'
	"
done

test_expect_success 'w_basic: the table'"'"'s frames with their bytes and share' '
	svg g.svg "$PROFILES/w_basic.exact.heap" &&
	python3 "$TRASH_DIRECTORY/fgcheck.py" g.svg >frames &&
	total=$("$JHEAP" --text --show_bytes "$PROFILES/w_basic.exact.heap" | awk "NR == 1 { print \$2 }") &&
	for row in "alloc_malloc $((100 * 10240))" "alloc_realloc $((10 * 229376))" \
		"caller_b;leaf_alloc $((70 * 5120))" "many_small $((10000 * 64))" \
		"recurse $((12 * 2048))" "recurse;recurse $((8 * 2048))"; do
		set -- $row
		grep -E "	[^	]*;main;$1	$2	" frames || { echo "no frame main;$1 of $2 bytes"; return 1; }
		pct=$(awk -v v=$2 -v t=$total "BEGIN { printf \"%.2f%%\", 100 * v / t }") &&
		grep -F -A1 "<title>${1##*;}" g.svg | grep -F "$2 B" | grep -F "$pct" >/dev/null ||
			{ echo "no title \"${1##*;}\" with $2 B, $pct"; return 1; }
	done
'

test_expect_success 'two runs give the same bytes' '
	svg one "$PROFILES/w_cpp.exact.heap" &&
	svg two "$PROFILES/w_cpp.exact.heap" &&
	test_cmp one two &&
	svg one --base "$PROFILES/demo.sampled.heap" "$PROFILES/demo.exact.heap" &&
	svg two --base "$PROFILES/demo.sampled.heap" "$PROFILES/demo.exact.heap" &&
	test_cmp one two
'

test_expect_success 'names with & < > " '"'"' are escaped and read back intact' '
	write_symbolized &&
	check_tree prof.heap &&
	grep -F "<title>it&apos;s&amp;&quot;q&quot;" g.svg &&
	grep -F "<title>operator&lt;" g.svg &&
	grep -F "<title>operator&gt;" g.svg &&
	grep -v "^ROOT" frames | cut -f 2 | sort >actual &&
	sort >expect <<-\EOF &&

	[allocator]
	main
	main::run
	main;operator>
	main;tmpl::f
	main;tmpl::f;semi:colon_12
	main;tmpl::f;semi:colon_12;it'"'"'s&"q"
	outer
	outer;inner (inline)
	outer;inner (inline);main
	outer;inner (inline);main;operator<
	EOF
	test_cmp expect actual
'

test_expect_success 'C++ templates with --full-names: < and > escaped' '
	check_tree --full-names "$PROFILES/w_cpp.exact.heap" &&
	grep -F "<title>ns::Holder&lt;Widget&gt;::add(int)" g.svg &&
	grep -F ";main;ns::Holder<Widget>::add(int)	" frames
'

test_expect_success 'golden: the symbolized profile, and its diff against the base' '
	write_symbolized &&
	svg actual prof.heap &&
	test_golden flamegraph-symbolized.svg actual &&
	svg actual --base prof.heap base.heap &&
	test_golden flamegraph-symbolized--base.svg actual
'

test_expect_success '--base: width is the after value, color the change' '
	write_symbolized &&
	check_tree --base prof.heap base.heap &&
	# main;operator> grew 96 -> 192, the most: full red; tmpl::f shrank
	# 128 -> 64: blue; [allocator] did not change: white; outer went to 0
	grep -E "^2	main;operator>	192	rgb\(255,0,0\)\$" frames &&
	grep -E "^2	main;tmpl::f	64	rgb\(([0-9]+),\\1,255\)\$" frames &&
	grep -E "^1	\[allocator\]	1000	rgb\(250,250,250\)\$" frames &&
	! grep "	outer" frames &&
	grep -F "after 192 B, before 96 B, change +96 B (+100.0%)" g.svg &&
	grep -E "^ROOT	after 1288 B = 1.3 KiB, before 1320 B = 1.3 KiB, change -32 B" frames
'

test_expect_success '--base with the same dump twice: nothing changed, all white' '
	heap=$PROFILES/demo.exact.heap &&
	check_tree --base "$heap" "$heap" &&
	cut -f 4 frames | grep -v "^\$" | sort -u >fills &&
	echo "rgb(250,250,250)" >expect &&
	test_cmp expect fills
'

test_expect_success 'frames under 0.1% of the total are left out, 0.1% and more drawn' '
	cat >small.heap <<-\EOF &&
	--- symbol
	binary=./small
	0x0000555500001233 main
	0x0000555500002000 big
	0x0000555500002100 small
	0x0000555500002200 tiny
	---
	--- heap
	heap_v2/1
	@ 0x555500002000 0x555500001234
	  t*: 1: 1000000 [0: 0]
	@ 0x555500002100 0x555500001234
	  t*: 1: 2000 [0: 0]
	@ 0x555500002200 0x555500001234
	  t*: 1: 500 [0: 0]
	EOF
	check_tree small.heap &&
	grep "^2	main;small	2000	" frames &&
	! grep "tiny" frames &&
	grep -E "^1	main	1002500	" frames
'

test_expect_success 'self-contained: no external reference, one inline script' '
	svg g.svg "$PROFILES/demo.exact.heap" &&
	! grep -E "(href|src)=|https?://[^w]|@import" g.svg &&
	test $(grep -c "<script" g.svg) = 1 &&
	grep -F "<script type=\"text/ecmascript\"><![CDATA[" g.svg
'

test_expect_success RSVG 'librsvg renders it at 1200 pixels wide' '
	svg g.svg "$PROFILES/w_cpp.exact.heap" &&
	rsvg-convert g.svg -o g.png &&
	python3 -c "import struct,sys; d=open(\"g.png\",\"rb\").read(24); w,h=struct.unpack(\">II\",d[16:24]); print(w,h); sys.exit(d[:8]!=b\"\\x89PNG\\r\\n\\x1a\\n\" or w!=1200)"
'

# Load the SVG in headless Chromium with a second script that clicks a
# frame, runs a search (window.prompt answered) and writes what it saw
# into the document; --dump-dom prints the result.
cat >inject.js <<-\EOF
var fr = document.getElementById("frames").getElementsByTagName("g"), k = -1, i;
for (i = 0; i < fr.length; i++)
	if (fr[i].getElementsByTagName("title")[0].textContent.split("\n")[0] === "caller_b")
		k = i;
fr[k].getElementsByTagName("rect")[0].dispatchEvent(new MouseEvent("click", { bubbles: true }));
window.prompt = function () { return "^(leaf_alloc|alloc_realloc)$"; };
document.getElementById("search").dispatchEvent(new MouseEvent("click", { bubbles: true }));
var hidden = 0;
for (i = 0; i < fr.length; i++)
	if (fr[i].style.display === "none")
		hidden++;
var o = document.createElementNS("http://www.w3.org/2000/svg", "text");
o.textContent = "RESULT width=" + fr[k].getElementsByTagName("rect")[0].getAttribute("width") +
	" hidden=" + hidden + " unzoom=" + document.getElementById("unzoom").style.display +
	" " + document.getElementById("matched").textContent + " END";
document.documentElement.appendChild(o);
EOF
cat >inject.py <<-\EOF
import sys
svg, js = open(sys.argv[1]).read(), open(sys.argv[2]).read()
tag = '<script type="text/ecmascript"><![CDATA[\n' + js + ']]></script>\n</svg>'
sys.stdout.write(svg.replace('</svg>', tag))
EOF

test_expect_success CHROMIUM 'in a browser, clicking zooms and Search highlights' '
	svg g.svg "$PROFILES/w_basic.exact.heap" &&
	python3 inject.py g.svg inject.js >zoom.svg &&
	timeout 120 $CHROMIUM --headless --no-sandbox --disable-gpu --user-data-dir="$TRASH_DIRECTORY/chromium" \
		--dump-dom "file://$TRASH_DIRECTORY/zoom.svg" >dom 2>chromium.err &&
	grep -o "RESULT.*END" dom >actual &&
	cat actual &&
	# leaf_alloc + alloc_realloc: (100 * 5120 + 10 * 229376) of the total
	total=$("$JHEAP" --text --show_bytes "$PROFILES/w_basic.exact.heap" | awk "NR == 1 { print \$2 }") &&
	pct=$(awk -v t=$total "BEGIN { printf \"%.1f\", 100 * (100 * 5120 + 10 * 229376) / t }") &&
	grep "^RESULT width=1180.00 hidden=[1-9][0-9]* unzoom= Matched: $pct% END\$" actual
'

test_expect_success XMLLINT 'docs/images/flamegraph.svg is a well-formed jheap flame graph' '
	xmllint --noout "$SRCDIR/docs/images/flamegraph.svg" &&
	python3 "$TRASH_DIRECTORY/fgcheck.py" "$SRCDIR/docs/images/flamegraph.svg" >frames &&
	grep "^ROOT	Total: " frames
'

test_done

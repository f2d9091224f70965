#!/bin/bash
test_description='--speedscope writes speedscope'"'"'s JSON file format

Every workload dump is written with --speedscope and read back:
 - by a JSON-schema validator (ajv) against the file-format schema that
   ships in the pinned speedscope npm package (tests/speedscope/), plus the
   rules the schema cannot state (frame indices in range, as many weights
   as samples, weights > 0, endValue = sum of weights, no duplicate frame);
 - per profile, the weights add up to the dump'"'"'s own total (heap_sum,
   arithmetic on the records); flat and cum per frame name, computed from
   the samples (root first, leaf last), are the workload tables'"'"' values;
   for inuse_space and inuse_objects, the total is --text'"'"'s Total and the
   flat and cum of every name are the rows of --text;
 - w_cpp: inline frames are separate frames with their own file and line
   (the function'"'"'s definition with --functions, the source line with
   --lines), checked against the line numbers in testdata/w_cpp.cc;
 - names with quotes, backslashes, control characters, UTF-8 and invalid
   bytes are escaped (golden file, and JSON.parse gives the names back);
 - two runs give the same bytes;
 - --base: differences, refused when negative unless --drop_negative;
 - when Debian'"'"'s chromium is installed, speedscope'"'"'s own page (the built
   app in the npm package, served on localhost) loads the file and shows the
   frame names and byte amounts.
The node parts are skipped when node/npm are missing or the npm packages
cannot be installed (offline); they are cached in build/npm/speedscope.'
. "$(dirname "$0")/lib.sh"
. "$TEST_DIRECTORY/workloads.sh"

test -x "$JHEAP" || test_skip "no jheap binary at $JHEAP yet (run make)"
test_need_profiles

NPM_DIR=$BUILD_DIR/npm/speedscope
CHECK_JS=$TEST_DIRECTORY/speedscope/check.js
export NODE_PATH=$NPM_DIR/node_modules

if test_npm_speedscope; then
	test_set_prereq NODE
else
	say "# node, npm or the npm packages are not available: skipping the node checks"
	[ -f "$TRASH_DIRECTORY/npm.log" ] && sed 's/^/#	/' "$TRASH_DIRECTORY/npm.log" | tail -5
fi
if test_have_prog chromium && test_have_prog python3 && test_have_prereq NODE; then
	test_set_prereq CHROMIUM
fi

check_js() {
	node "$CHECK_JS" "$@"
}

# speedscope OUT NAME VARIANT [flags]: jheap --speedscope on a workload dump.
speedscope() {
	local out=$1 name=$2 variant=$3
	shift 3
	"$JHEAP" --speedscope "$@" "$(workload_binary "$name")" \
		"$PROFILES/$name.$variant.heap" >"$out" 2>"$out.err" || {
		echo "jheap failed (exit $?): --speedscope $* $name.$variant"
		cat "$out.err"
		return 1
	}
}

# text OUT NAME VARIANT MODE: jheap --text in MODE's integer units.
text() {
	# shellcheck disable=SC2046
	"$JHEAP" --text $(mode_flags "$4") "$(workload_binary "$2")" \
		"$PROFILES/$2.$3.heap" >"$1" 2>"$1.err" || {
		echo "jheap --text failed on $2.$3 ($4)"
		cat "$1.err"
		return 1
	}
}

# rows_of REPORT: "flat cum name" of every row, by name.
rows_of() {
	awk '$1 != "Total:" && NF >= 6 {
		name = $0
		for (i = 0; i < 5; i++) sub(/^ *[^ ]+/, "", name)
		sub(/^ /, "", name)
		print $1, $4, name
	}' "$1" | sort
}

# same_rows A B TOL: same names, values within TOL (sampled dumps: the
# weights are added in another order, then truncated).
same_rows() {
	rows_of "$1" >rows.a && rows_of "$2" >rows.b &&
	awk -v tol="$3" '
		NR == FNR { k = $0; sub(/^[^ ]+ [^ ]+ /, "", k); a[k] = $1 " " $2; next }
		{
			k = $0; sub(/^[^ ]+ [^ ]+ /, "", k)
			if (!(k in a)) { print "only in speedscope: " $0; bad = 1; next }
			split(a[k], v, " ")
			d1 = v[1] - $1; d2 = v[2] - $2
			if (d1 < -tol || d1 > tol || d2 < -tol || d2 > tol) {
				print "row " k ": text " a[k] ", speedscope " $1 " " $2; bad = 1
			}
			delete a[k]
		}
		END { for (k in a) { print "only in --text: " k; bad = 1 } exit bad }
	' rows.a rows.b
}

# within A B TOL
within() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d >= -t && d <= t) }' || {
		echo "expected $1, got $2 (tolerance $3)"
		return 1
	}
}

# check_dump NAME VARIANT: the checks of one dump, on the file and the
# validator's results that the first test left in dumps/.
check_dump() {
	local name=$1 variant=$2 e tol=0 modes i mode total line unit
	local json=dumps/$1.$2.json
	e=$(workload_table "$name")
	[ "$variant" = sampled ] && tol=1
	modes="inuse_space inuse_objects"
	[ "$variant" = accum ] && modes="$modes alloc_space alloc_objects"
	test -f "$json.summary" || { echo "$json was not validated"; cat "$json.errors"; return 1; }
	cat "$json.summary" &&
	test "$(wc -l <"$json.summary")" = "$(echo $modes | wc -w)" || return 1
	i=0
	for mode in $modes; do
		# profile i is MODE, in this order, named "<program> MODE"
		line=$(sed -n "$((i + 1))p" "$json.summary")
		case $line in
		"$name $mode	"*) ;;
		*) echo "profile $i is '$line', expected $mode"; return 1 ;;
		esac
		case $mode in
		*_space) unit=bytes ;;
		*) unit=none ;;
		esac
		test "$(echo "$line" | cut -f2)" = "$unit" &&
		total=$(heap_sum "$PROFILES/$name.$variant.heap" "$mode") &&
		within "${total%.*}" "$(echo "$line" | cut -f3)" "$tol" &&
		# --text for the in-use values (jheap runs cost time; the alloc
		# profiles are checked against heap_sum and the tables only)
		case $mode in
		inuse_*)
			text report.$mode "$name" "$variant" "$mode" &&
			within "$(report_total report.$mode)" "$(echo "$line" | cut -f3)" "$tol" &&
			same_rows report.$mode "$json.rows.$i" "$tol" || return 1
			;;
		esac
		if [ "$variant" != sampled ]; then
			"expect_${e}_$mode" | check_rows "$json.rows.$i" || return 1
		fi
		i=$((i + 1))
	done
}

dumps=()
while read -r heap binary; do
	f=${heap##*/}
	dumps+=("${f%.heap}")
done <"$PROFILES/MANIFEST"

test_expect_success NODE 'every workload dump: --speedscope files pass the schema' '
	rm -rf dumps && mkdir dumps &&
	for d in "${dumps[@]}"; do
		speedscope "dumps/$d.json" "${d%%.*}" "${d#*.}" || return 1
	done &&
	check_js validate dumps/*.json
'

for d in "${dumps[@]}"; do
	test_expect_success NODE "$d: totals and rows equal --text and the workload table" "
		check_dump ${d%%.*} ${d#*.}
	"
done

test_expect_success NODE 'the chosen value is profile 0 (--alloc_space, --inuse_objects)' '
	speedscope a.json w_basic accum --alloc_space &&
	check_js validate a.json >a.sum &&
	cut -f1,2 a.sum >actual &&
	printf "%s\n" "w_basic alloc_space	bytes" "w_basic inuse_space	bytes" \
		"w_basic inuse_objects	none" "w_basic alloc_objects	none" >expected &&
	test_cmp expected actual &&
	speedscope o.json w_basic exact --inuse_objects &&
	check_js validate o.json | cut -f1,2 >actual &&
	printf "%s\n" "w_basic inuse_objects	none" "w_basic inuse_space	bytes" >expected &&
	test_cmp expected actual &&
	grep -q "\"activeProfileIndex\":0" o.json
'

test_expect_success NODE 'w_cpp: inline frames keep their own file and line' '
	speedscope f.json w_cpp exact &&
	check_js frames f.json >frames &&
	def=$(src_line w_cpp.cc "char *make_buf(std::size_t n)") &&
	fb=$(src_line w_cpp.cc "NOINLINE void fill_buffers()") &&
	grep -qx "make_buf (inline)	.*/testdata/w_cpp.cc	$def" frames &&
	grep -qx "fill_buffers	.*/testdata/w_cpp.cc	$fb" frames &&
	grep -qx "std::vector::push_back (inline)	.*/stl_vector.h	[0-9]*" frames &&
	grep -qx "std::__new_allocator::allocate (inline)	.*/new_allocator.h	[0-9]*" frames
'

test_expect_success NODE 'w_cpp --lines: frames are source lines, named as in --text' '
	speedscope l.json w_cpp exact --lines &&
	check_js validate l.json >/dev/null &&
	check_js frames l.json >frames &&
	call=$(src_line w_cpp.cc "hold(make_buf(4000));") &&
	grep -qx "fill_buffers /.*/testdata/w_cpp.cc:$call	/.*/testdata/w_cpp.cc	$call" frames &&
	grep -q "^make_buf (inline) /.*/testdata/w_cpp.cc:[0-9]*	" frames &&
	# every frame with a line has it in its name too
	awk -F "\t" "\$3 != \"\" && index(\$1, \$2 \":\" \$3) == 0 { print; bad = 1 } END { exit bad }" frames &&
	"$JHEAP" --text --show_bytes --lines "$PROFILES/w_cpp" "$PROFILES/w_cpp.exact.heap" >report &&
	check_js rows l.json 0 >rows &&
	same_rows report rows 0
'

test_expect_success 'two runs give the same bytes' '
	for flags in --lines --alloc_objects; do
		# shellcheck disable=SC2086
		speedscope one.json w_cpp accum $flags &&
		speedscope two.json w_cpp accum $flags &&
		cmp one.json two.json || return 1
	done &&
	speedscope one.json demo sampled --addresses &&
	speedscope two.json demo sampled --addresses &&
	cmp one.json two.json
'

# A symbolized profile whose names need escaping: a quote and a backslash,
# a tab and a control character, UTF-8 (passed through), two invalid bytes
# (U+FFFD), and an inline chain.
make_escape_profile() {
	printf -- "--- symbol\nbinary=/nonexistent/prog\n" &&
	printf "0x0000000000401000 quote\"back\\\\slash\n" &&
	printf "0x0000000000402000 tab\tand ctl\001 utf8 \303\251 \346\227\245\n" &&
	printf "0x0000000000403000 bad\377\376 byte\n" &&
	printf "0x0000000000404000 main--inl(int)--inner<T>\n---\n--- heap\nheap_v2/1\n" &&
	printf "  t*: 3: 300 [0: 0]\n@ 0x401000 0x402001 0x403001 0x404001\n  t*: 1: 100 [0: 0]\n" &&
	printf "@ 0x402000 0x404001\n  t*: 2: 200 [0: 0]\n"
}

test_expect_success 'names are escaped for JSON (golden)' '
	make_escape_profile >esc.heap &&
	"$JHEAP" --speedscope esc.heap >esc.json &&
	test_golden speedscope-escape.json esc.json
'

# The names as speedscope must read them: the invalid bytes as U+FFFD.
escape_names() {
	printf "bad\357\277\275\357\277\275 byte\ninl (inline)\ninner (inline)\nmain\n" &&
	printf "quote\"back\\\\slash\ntab\tand ctl\001 utf8 \303\251 \346\227\245\n"
}

test_expect_success NODE 'escaped names read back as the original strings' '
	check_js validate esc.json &&
	check_js names esc.json 0 >names &&
	escape_names >expected &&
	test_cmp expected names
'

test_expect_success NODE '--base: differences; negative ones refused unless --drop_negative' '
	"$JHEAP" --speedscope --base="$PROFILES/w_basic.exact.heap" \
		"$PROFILES/w_basic.exact.heap" >d.json &&
	check_js validate d.json >d.sum &&
	grep -qx "w_basic inuse_space (difference from --base)	bytes	0	0" d.sum &&
	{
		"$JHEAP" --speedscope --base="$PROFILES/w_cpp.exact.heap" \
			"$PROFILES/w_basic.exact.heap" >n.json 2>n.err
		test $? = 2
	} &&
	grep -q "drop_negative" n.err &&
	"$JHEAP" --speedscope --drop_negative --base="$PROFILES/w_cpp.exact.heap" \
		"$PROFILES/w_basic.exact.heap" >p.json &&
	"$JHEAP" --text --show_bytes --drop_negative --base="$PROFILES/w_cpp.exact.heap" \
		"$PROFILES/w_basic.exact.heap" >p.txt &&
	check_js validate p.json >p.sum &&
	within "$(report_total p.txt)" "$(head -1 p.sum | cut -f3)" 0 &&
	check_js rows p.json 0 >p.rows &&
	same_rows p.txt p.rows 0
'

# A stack with nothing but allocator frames: its weight goes to a frame
# "[allocator]" (as in --collapsed), so the total is still --text'"'"'s Total.
make_allocator_only_profile() {
	printf -- "--- symbol\nbinary=/opt/app/prog\n0x0000555500001233 main\n" &&
	printf "0x00007f0000001010 libjemalloc.so.2+0x1010\n---\n--- heap\nheap_v2/1\n" &&
	printf "  t*: 2: 128 [0: 0]\n@ 0x7f0000001010 0x555500001234\n  t*: 1: 64 [0: 0]\n" &&
	printf "@ 0x7f0000001010\n  t*: 1: 64 [0: 0]\nMAPPED_LIBRARIES:\n" &&
	printf "555500000000-555500002000 r-xp 00000000 00:00 0 /opt/app/prog\n" &&
	printf "7f0000000000-7f0000003000 r-xp 00000000 00:00 0 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n"
}

test_expect_success NODE 'a stack of allocator frames only keeps its weight' '
	make_allocator_only_profile >ao.heap &&
	"$JHEAP" --speedscope ao.heap >ao.json &&
	"$JHEAP" --text --show_bytes ao.heap >ao.txt &&
	check_total ao.txt 128 &&
	check_js validate ao.json >ao.sum &&
	test "$(head -1 ao.sum | cut -f3)" = 128 &&
	check_rows ao.json.rows.0 <<-EOF
	64 64 [allocator]
	64 64 main
	EOF
'

# serve_and_dump DIR URLPATH OUT: serve DIR on a free localhost port, load
# http://127.0.0.1:PORT/URLPATH in headless chromium, write the DOM to OUT.
serve_and_dump() {
	local dir=$1 page=$2 out=$3 port rc
	# port 0: the server binds a port the system picks, and says which
	test_bg srv 600 python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$dir" &&
	port=$(test_bg_line srv "^Serving HTTP on .* port [0-9]+ ") &&
	port=$(printf "%s\n" "$port" | sed "s/.* port \([0-9]*\) .*/\1/") || return 1
	rm -rf chrome-profile && mkdir chrome-profile
	page=$(printf "%s" "$page" | sed "s/@PORT@/$port/g")
	timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic \
		--no-first-run --disable-background-networking --disable-component-update \
		--disable-sync --user-data-dir="$PWD/chrome-profile" --window-size=1400,3000 \
		--virtual-time-budget=20000 --dump-dom "http://127.0.0.1:$port/$page" \
		>"$out" 2>chrome.err
	rc=$?
	test_bg_stop srv
	[ "$rc" = 0 ] || { echo "chromium failed ($rc)"; tail -5 chrome.err; return 1; }
}

test_expect_success CHROMIUM 'speedscope'"'"'s own page loads the file and shows the frames' '
	rm -rf web && mkdir web &&
	cp -R "$NPM_DIR/node_modules/speedscope/dist/release/." web/ &&
	speedscope web/w_cpp.json w_cpp exact &&
	serve_and_dump web "index.html#profileURL=http://127.0.0.1:@PORT@/w_cpp.json&view=sandwich" dom.html &&
	# the DOM text, one element per line, entities decoded
	sed -e "s/<[^>]*>/\n/g" dom.html | sed -e "s/&lt;/</g" -e "s/&gt;/>/g" \
		-e "s/&quot;/\"/g" -e "s/&#39;/'"'"'/g" -e "s/&amp;/\&/g" |
		grep -v "^[[:space:]]*$" >dom.txt &&
	grep -qx "w_cpp inuse_space *" dom.txt &&
	check_js names web/w_cpp.json 0 >names &&
	test -s names &&
	while read -r n; do
		grep -qxF "$n" dom.txt || { echo "frame \"$n\" is not on the page"; return 1; }
	done <names &&
	# sandwich rows are "total", "self", "name": make_ints allocated
	# 30 x 10240 B = 300 KiB itself, speedscope shows it in its byte units
	grep -B2 -x make_ints dom.txt >row &&
	test "$(sed -n 2p row)" = "300.00 KB (25%)"
'

test_done

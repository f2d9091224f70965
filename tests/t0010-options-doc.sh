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

# ---- each option's effect ------------------------------------------------
# For every option of the table, effect_NAME (NAME with '-' as '_') runs
# jheap with the option and checks what the option promises, against a
# reference outside jheap where there is one (the dump's own numbers by
# heap_sum, file magic, go tool pprof, python's json, graphviz) and else
# against the run without it.  A new option needs its effect_ here.
test_need_profiles
P=$PROFILES
H=$P/w_basic.exact.heap
A=$P/w_basic.accum.heap
B=$P/w_basic
write_symbolized
test_have_prog dot && test_set_prereq GRAPHVIZ
test_have_prog objdump && test_set_prereq OBJDUMP
test_have_prog go && test_set_prereq GO
test_have_prog script && test_set_prereq SCRIPT

# total FILE: the number of the Total: line
total() {
	report_total "$1"
}
# rows FILE: the report's rows (after Total:)
rows() {
	sed 1d "$1"
}
# want_sum FILE MODE: jeprof's unsampled total of a dump, truncated
want_sum() {
	heap_sum "$1" "$2" | sed "s/\\..*//"
}
# folded_sum FILE: the sum of the values of collapsed stacks
folded_sum() {
	awk '{ s += $NF } END { print s }' "$1"
}
# magic FILE HEX: FILE starts with the bytes HEX
magic() {
	test "$(head -c $((${#2} / 2)) "$1" | od -An -tx1 | tr -d " \\n")" = "$2"
}
# A browser that keeps a copy of what it is given (web, weblist).
mkdir -p browsed
cat >browser.sh <<-EOS
#!/bin/sh
cp "\$1" "$TRASH_DIRECTORY/browsed/.tmp.\$\$" &&
mv "\$TRASH_DIRECTORY/browsed/.tmp.\$\$" "$TRASH_DIRECTORY/browsed/\$(basename "\$1")"
EOS
sed -i 's|"\$TRASH_DIRECTORY|"'"$TRASH_DIRECTORY"'|' browser.sh
chmod +x browser.sh
# browsed ERR: the copy of the file the "jheap: opening FILE" line names
browsed() {
	local f
	f=$(sed -n "s|^jheap: opening \\(.*\\)\$|\\1|p" "$1") && test -n "$f" || { cat "$1"; return 1; }
	test_wait "$TEST_WAIT" "the browser to copy $f" test -e "browsed/$(basename "$f")" &&
	cat "browsed/$(basename "$f")"
}
"$JHEAP" --show_bytes "$H" >ref 2>/dev/null

# output formats
effect_text() {
	# on a terminal, no format opens the shell; --text prints the report
	timeout -k 5 120 script -qfec "\"$JHEAP\" --text --show_bytes \"$H\"" /dev/null </dev/null >tty.out &&
	tr -d "\r" <tty.out >tty.lf && test_cmp ref tty.lf
}
effect_collapsed() {
	"$JHEAP" --collapsed "$H" >out &&
	! grep -v "^[^ ].* [0-9][0-9]*\$" out &&
	test "$(folded_sum out)" = "$(want_sum "$H" inuse_space)" &&
	grep -q ";main;alloc_malloc 1024000\$" out
}
effect_flamegraph() {
	"$JHEAP" --flamegraph "$H" >out &&
	grep -q "<svg" out && tail -n 3 out | grep -q "</svg>" && grep -q "alloc_malloc" out
}
effect_dot() {
	"$JHEAP" --dot "$H" >out &&
	head -n 1 out | grep -q "^digraph" && grep -q "alloc_malloc" out &&
	{ ! test_have_prereq GRAPHVIZ || dot -Tsvg out >/dev/null; }
}
graphviz_format() {
	test_have_prereq GRAPHVIZ || { echo "graphviz missing: not checked"; return 0; }
	"$JHEAP" --$1 -o out.$1 "$H" && magic out.$1 "$2"
}
effect_svg() { graphviz_format svg 3c3f786d6c; }    # <?xml
effect_pdf() { graphviz_format pdf 25504446; }      # %PDF
effect_png() { graphviz_format png 89504e47; }
effect_gif() { graphviz_format gif 474946383961; }  # GIF89a
effect_ps() { graphviz_format ps 252150532d; }      # %!PS-
effect_proto() {
	"$JHEAP" --proto -o out.pb.gz "$H" && magic out.pb.gz 1f8b && gzip -t out.pb.gz &&
	if test_have_prereq GO; then
		go tool pprof -raw out.pb.gz >raw 2>/dev/null &&
		grep -x "inuse_objects/count inuse_space/bytes\\[dflt\\]" raw
	fi
}
effect_speedscope() {
	"$JHEAP" --speedscope "$H" >out.json &&
	python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert d[\"\$schema\"] == \"https://www.speedscope.app/file-format-schema.json\", d[\"\$schema\"]
assert any(f[\"name\"] == \"alloc_malloc\" for f in d[\"shared\"][\"frames\"])
" out.json
}
effect_callgrind() {
	"$JHEAP" --callgrind "$H" >out &&
	grep -qx "events: inuse_space" out && grep -q "^fn=.*alloc_malloc" out
}
raw_like() {
	"$JHEAP" --$1 "$H" >out.raw &&
	head -n 1 out.raw | grep -qx -- "--- symbol" &&
	# analyzed again without the binary: the same report
	mkdir -p elsewhere && cp out.raw elsewhere/ &&
	(cd elsewhere && "$JHEAP" --show_bytes out.raw) >again && test_cmp ref again
}
effect_raw() { raw_like raw; }
effect_symbolized() { raw_like symbolized; }
effect_traces() {
	"$JHEAP" --traces --show_bytes "$H" >out &&
	grep -q "^-----------+" out &&
	test "$(awk '/^ *[0-9]+ +[^ ]/ { s += $1 } END { print s }' out)" = "$(want_sum "$H" inuse_space)"
}
effect_tree() {
	"$JHEAP" --tree "$H" >out &&
	grep -q "^ *flat  flat%   sum%        cum   cum%   calls calls% + context" out &&
	grep -q "| alloc_malloc\$" out && grep -q "| alloc_realloc\$" out
}
effect_peek() {
	"$JHEAP" --peek=alloc_malloc "$H" >out &&
	grep -q "| alloc_malloc\$" out && ! grep -q "| alloc_realloc\$" out
}
effect_web() {
	test_have_prereq GRAPHVIZ || { echo "graphviz missing: not checked"; return 0; }
	BROWSER="$TRASH_DIRECTORY/browser.sh" "$JHEAP" --web "$H" 2>err &&
	browsed err >got && grep -q "<svg" got && grep -q "alloc_malloc" got
}
effect_weblist() {
	test_have_prereq OBJDUMP || { echo "objdump missing: not checked"; return 0; }
	BROWSER="$TRASH_DIRECTORY/browser.sh" "$JHEAP" --weblist="^alloc_malloc\$" "$H" 2>err &&
	browsed err >got && grep -q "<!DOCTYPE html>" got &&
	grep -q "alloc_malloc" got && ! grep -q "alloc_realloc" got
}
effect_interactive() {
	# commands from a pipe: "top 1" is --text --nodecount=1
	echo "top 1" | "$JHEAP" --interactive "$H" >out &&
	"$JHEAP" --text --nodecount=1 "$H" >want && test_cmp want out
}
effect_symbols() {
	grep -h "^@" "$H" | tr " " "\\n" | grep 0x | sort -u >addrs &&
	{ sed -n "/^MAPPED_LIBRARIES:/,\$p" "$H" | tail -n +2; cat addrs; } >sym.in &&
	"$JHEAP" --symbols "$B" <sym.in >out &&
	test "$(wc -l <out)" = "$(wc -l <addrs)" && grep -qx alloc_malloc out
}

# the call graph's pruning
dot_nodes() { grep -c "^ *N[0-9]* \\[label" "$1"; }
dot_edges() { grep -c " -> " "$1"; }
effect_nodefraction() {
	"$JHEAP" --dot --nodefraction=0 "$H" >all &&
	"$JHEAP" --dot --nodefraction=0.5 "$H" >half &&
	test "$(dot_nodes half)" -lt "$(dot_nodes all)" &&
	# alloc_realloc holds 45% of the bytes: gone at 50%
	grep -q alloc_realloc all && ! grep -q alloc_realloc half
}
effect_edgefraction() {
	"$JHEAP" --dot --nodefraction=0 --edgefraction=0 "$H" >all &&
	"$JHEAP" --dot --nodefraction=0 --edgefraction=0.3 "$H" >pruned &&
	test "$(dot_edges pruned)" -lt "$(dot_edges all)"
}
# in_degree DOT: the most edges into one node
in_degree() {
	sed -n "s/^ *N[0-9]* -> \\(N[0-9]*\\) .*/\\1/p" "$1" | sort | uniq -c | sort -rn | awk 'NR == 1 { print $1 }'
}
effect_maxdegree() {
	# an edge into a node that has none is always kept (every node stays
	# reachable), so the limit shows on the edges into a node: leaf_alloc
	# has two callers
	"$JHEAP" --dot --nodefraction=0 --edgefraction=0 "$H" >all &&
	"$JHEAP" --dot --nodefraction=0 --edgefraction=0 --maxdegree=1 "$H" >one &&
	test "$(in_degree all)" -gt 1 && test "$(in_degree one)" -eq 1 &&
	test "$(dot_edges one)" -lt "$(dot_edges all)"
}

# the value reported
effect_inuse_space() {
	# the default: the same report, and one of the four values
	"$JHEAP" --show_bytes --inuse_space "$A" >out && "$JHEAP" --show_bytes "$A" >want &&
	test_cmp want out && test "$(total out)" = "$(want_sum "$A" inuse_space)" &&
	expect_fail 2 "specify at most one of" --inuse_space --alloc_space "$A"
}
effect_inuse_objects() {
	"$JHEAP" --inuse_objects "$A" >out && test "$(total out)" = "$(want_sum "$A" inuse_objects)"
}
effect_alloc_space() {
	"$JHEAP" --show_bytes --alloc_space "$A" >out && test "$(total out)" = "$(want_sum "$A" alloc_space)" &&
	test "$(total out)" != "$(want_sum "$A" inuse_space)"
}
effect_alloc_objects() {
	"$JHEAP" --alloc_objects "$A" >out && test "$(total out)" = "$(want_sum "$A" alloc_objects)"
}
effect_show_bytes() {
	"$JHEAP" "$H" >mb && "$JHEAP" --show_bytes "$H" >out &&
	grep -qx "Total: $(want_sum "$H" inuse_space) B" out && grep -q "^Total: [0-9.]* MB\$" mb
}

# the rows
effect_functions() {
	"$JHEAP" --show_bytes --functions "$H" >out && test_cmp ref out &&
	expect_fail 2 "specify at most one of" --functions --lines "$H"
}
effect_lines() {
	"$JHEAP" --show_bytes --lines "$H" >out &&
	grep -q " alloc_malloc .*w_basic\\.c:[0-9][0-9]*\$" out && ! grep -q " alloc_malloc\$" out
}
effect_files() {
	"$JHEAP" --show_bytes --files "$H" >out &&
	grep -q " [^ ]*w_basic\\.c\$" out && ! grep -q "alloc_malloc" out
}
effect_addresses() {
	"$JHEAP" --show_bytes --addresses "$H" >out &&
	grep -q " [0-9a-f]\{16\} alloc_malloc [^ ]*w_basic\.c:[0-9]*\$" out
}
effect_cum() {
	"$JHEAP" --show_bytes --cum "$H" >out &&
	rows out | awk '{ print $4 }' >c && sort -rn c >sorted && test_cmp sorted c &&
	rows ref | awk '{ print $4 }' >c0 && ! cmp -s c0 sorted
}
effect_nodecount() {
	"$JHEAP" --show_bytes --nodecount=3 "$H" >out &&
	test "$(rows out | wc -l)" = 3 && rows ref | head -n 3 >want && rows out >got && test_cmp want got
}
effect_full_names() {
	"$JHEAP" --show_bytes --full-names "$P/w_cpp.exact.heap" >out &&
	grep -q " make_ints()\$" out && ! grep -q " make_ints\$" out
}
effect_keep_allocator_frames() {
	"$JHEAP" --show_bytes --keep-allocator-frames "$H" >out &&
	grep -q "libjemalloc\\|je_\\|prof_backtrace" out && ! grep -q "libjemalloc\\|je_\\|prof_backtrace" ref &&
	test "$(total out)" = "$(total ref)"
}
effect_allocator() {
	"$JHEAP" --show_bytes --allocator="^alloc_malloc\$" "$H" >out &&
	check_row out alloc_malloc none - &&
	# its bytes go to its caller
	check_row out main $((327680 + 1024000)) -
}
effect_thread() {
	T=$P/w_threads.exact.heap &&
	"$JHEAP" --show_bytes --thread=1 "$T" >out &&
	want=$(awk '/^@/ { r = 1 } r && $1 == "t1:" { sub(/:$/, "", $3); s += $3 } END { print s }' "$T") &&
	got=$(sed -n "s/^Total (t1 [^)]*): \\([0-9]*\\) B\$/\\1/p" out) &&
	test "$got" = "$want" && test "$want" != "$(total ref)"
}
effect_growth() {
	"$JHEAP" --growth --show_bytes base.heap prof.heap >out &&
	grep -q "^Growth of inuse_space over 2 profiles" out &&
	# first, last, change: the two profiles' own flat values
	grep -qE "^ +-96 +1\\.00 +192 +96 +-96 operator>\$" out &&
	grep -qE "^ +64 +1\\.00 +64 +128 +64 it's&\"q\"\$" out
}
# A series of two dumps of one process: the non-PIE workload's two
# dumps (the same load address), named as jemalloc names them, the
# second as its dump at exit.
NP=$P/w_basic_nopie
cp "$NP.exact.heap" s.7.1.m1.heap && cp "$NP.accum.heap" s.7.2.f.heap
effect_timeline() {
	"$JHEAP" --timeline --show_bytes s.7.1.m1.heap s.7.2.f.heap >out &&
	grep -q "^Timeline of inuse_space over 2 dumps (B; when: " out &&
	test "$(sed -n 3p out | awk '{ print $2 }')" = "$(want_sum "$NP.exact.heap" inuse_space)" &&
	test "$(sed -n 4p out | awk '{ print $2 }')" = "$(want_sum "$NP.accum.heap" inuse_space)" &&
	sed -n 4p out | grep -q " s\.7\.2\.f\.heap (at exit)"
}
effect_peak() {
	"$JHEAP" --peak --show_bytes s.7.1.m1.heap s.7.2.f.heap >out 2>err &&
	a=$(want_sum "$NP.exact.heap" inuse_space) && b=$(want_sum "$NP.accum.heap" inuse_space) &&
	if [ "$b" -gt "$a" ]; then m=$b f=s.7.2.f.heap; else m=$a f=s.7.1.m1.heap; fi &&
	test "$(total out)" = "$m" && grep -q "^jheap: --peak: the largest of the 2 dumps is $f, " err
}
effect_all_dumps() {
	# without it the dump at exit is left out, and one dump is no series
	! "$JHEAP" --growth s.7.1.m1.heap s.7.2.f.heap >/dev/null 2>err &&
	grep -q "1 of the 2 given is one; --all-dumps fits" err &&
	"$JHEAP" --growth --all-dumps --show_bytes s.7.1.m1.heap s.7.2.f.heap >out &&
	grep -q "^Growth of inuse_space over 2 profiles, s\.7\.1\.m1\.heap to s\.7\.2\.f\.heap " out
}
# churn: the allocated totals minus those in use (exact sampling: whole numbers)
effect_churn() {
	"$JHEAP" --show_bytes --churn "$A" >out &&
	test "$(total out)" = $(($(want_sum "$A" alloc_space) - $(want_sum "$A" inuse_space))) &&
	test "$(total out)" -gt 0
}
effect_churn_objects() {
	"$JHEAP" --churn_objects "$A" >out &&
	test "$(total out)" = $(($(want_sum "$A" alloc_objects) - $(want_sum "$A" inuse_objects))) &&
	test "$(total out)" -gt 0
}
effect_list() {
	"$JHEAP" --show_bytes --list="^alloc_realloc\$" "$H" >out &&
	test "$(grep -c "^ROUTINE" out)" = 1 && grep -q "realloc(p, 200000)" out
}
effect_disasm() {
	test_have_prereq OBJDUMP || { echo "objdump missing: not checked"; return 0; }
	"$JHEAP" --show_bytes --disasm="^alloc_realloc\$" "$H" >out &&
	test "$(grep -c "^ROUTINE" out)" = 1 && grep -qE "call +[0-9a-f]+ <realloc@plt>" out
}
effect_source_dir() {
	# a source file found only under DIR: the binary names a folder
	# that is not there
	mkdir -p src/deep && sed "s|realloc(p, 200000)|realloc(p, 200000) /* from DIR */|" \
		"$SRCDIR/testdata/w_basic.c" >src/deep/w_basic.c &&
	"$JHEAP" --show_bytes --list="^alloc_realloc\$" --source-dir="$PWD/src/deep" "$H" >out &&
	grep -q "from DIR" out
}

# filters
# flat_sum FILE: the sum of the rows' flat values (Total: stays the whole
# profile's under a filter, as in jeprof)
flat_sum() {
	rows "$1" | awk '{ s += $1 } END { print s }'
}
effect_focus() {
	"$JHEAP" --show_bytes --focus=caller_a "$H" >out &&
	test "$(flat_sum out)" = "$(report_row ref caller_a | cut -d" " -f2)"
}
effect_ignore() {
	"$JHEAP" --show_bytes --ignore=caller_a "$H" >out &&
	test "$(flat_sum out)" = "$(($(total ref) - $(report_row ref caller_a | cut -d" " -f2)))"
}
effect_retain() {
	"$JHEAP" --collapsed --retain="^(main|leaf_alloc)\$" "$H" >out &&
	grep -q "^main;leaf_alloc " out && ! sed "s/ [0-9]*\$//" out | tr ";" "\\n" | grep -vxE "main|leaf_alloc|\\[[a-z]*\\]"
}
effect_exclude() {
	"$JHEAP" --show_bytes --exclude="^leaf_alloc\$" "$H" >out &&
	check_row out leaf_alloc none - && test "$(total out)" = "$(total ref)"
}
effect_base() {
	"$JHEAP" --show_bytes --base="$A" "$H" >out &&
	test "$(total out)" = "$(($(want_sum "$H" inuse_space) - $(want_sum "$A" inuse_space)))" &&
	"$JHEAP" --show_bytes --base=base.heap prof.heap >out2 && check_total out2 31 &&
	check_row out2 "operator>" -96 -96
}
effect_drop_negative() {
	"$JHEAP" --show_bytes --base=base.heap --drop_negative prof.heap >out &&
	! rows out | awk '$1 < 0 || $4 < 0' | grep . && check_row out "operator>" none -
}

# many inputs: skipping, labels (tests/t0380-fleet.sh has the fleet)
effect_strict() {
	printf "not a profile\n" >bad.heap &&
	"$JHEAP" --show_bytes "$H" bad.heap >out 2>err; test $? = 1 &&
	grep -q "skipping bad.heap" err && test "$(total out)" = "$(want_sum "$H" inuse_space)" &&
	"$JHEAP" --show_bytes --strict "$H" bad.heap >out2 2>err2; test $? = 1 &&
	test ! -s out2 && grep -q "bad.heap" err2
}
effect_label() {
	"$JHEAP" --show_bytes "$H" --label=k=x "$A" --tagfocus=k=x >out &&
	test "$(total out)" = "$(want_sum "$A" inuse_space)" &&
	"$JHEAP" --show_bytes --label=k=x "$H" "$A" --tagfocus=k=x >out2 &&
	"$JHEAP" --show_bytes "$H" "$A" >both && test "$(total out2)" = "$(total both)"
}
effect_label_from_path() {
	"$JHEAP" --show_bytes --label-from-path="(?<kind>exact|accum)" --tagfocus=kind=accum "$H" "$A" >out &&
	test "$(total out)" = "$(want_sum "$A" inuse_space)"
}
effect_tagfocus() {
	"$JHEAP" --show_bytes --label=k=x "$H" --label=k=y "$A" --tagfocus=k=y >out &&
	test "$(total out)" = "$(want_sum "$A" inuse_space)" &&
	"$JHEAP" --show_bytes --label=k=x "$H" --tagfocus=k=y >out2 && check_total out2 0
}
effect_tagignore() {
	"$JHEAP" --show_bytes --label=k=x "$H" --label=k=y "$A" --tagignore=y >out &&
	test "$(total out)" = "$(want_sum "$H" inuse_space)"
}

# where object files are found
effect_debuginfo_dir() {
	strip --strip-debug -o nodebug "$B" &&
	id=$(readelf -n "$B" | sed -n "s/.*Build ID: //p") && test -n "$id" &&
	mkdir -p dbg/.build-id/${id%${id#??}} &&
	objcopy --only-keep-debug "$B" dbg/.build-id/${id%${id#??}}/${id#??}.debug &&
	"$JHEAP" --show_bytes --lines ./nodebug "$H" >without &&
	! grep -q "w_basic\\.c:" without &&
	"$JHEAP" --show_bytes --lines --debuginfo-dir=dbg ./nodebug "$H" >with &&
	"$JHEAP" --show_bytes --lines "$H" >want && test_cmp want with
}
effect_lib_prefix() {
	sed "s|$B\$|/nonexistent/w_basic|" "$H" >moved.heap &&
	mkdir -p root/nonexistent && cp "$B" root/nonexistent/w_basic &&
	"$JHEAP" --show_bytes --lib_prefix="$PWD/root/" moved.heap >out && test_cmp ref out
}
effect_add_lib() {
	sed "/^MAPPED_LIBRARIES:/,\$d" "$P/w_basic_nopie.exact.heap" >nomaps.heap &&
	{ "$JHEAP" -q --show_bytes nomaps.heap >plain; test $? -eq 1; } && ! grep -q alloc_malloc plain &&
	{ "$JHEAP" -q --show_bytes --add_lib="$P/w_basic_nopie" nomaps.heap >added; test $? -eq 1; } &&
	grep -qE "^ +0 .* 1024000 .* alloc_malloc\$" added
}
effect_seconds() {
	# the page asked for names the time, whatever the answer
	test_bg closed 300 python3 -c "
import socket, time
s = socket.socket(); s.bind((\"127.0.0.1\", 0)); print(s.getsockname()[1], flush=True)
time.sleep(300)" &&
	port=$(test_bg_line closed "^[0-9]+\$") &&
	expect_fail 1 "cannot fetch .http://127\\.0\\.0\\.1:$port/debug/mem/pprof/profile\\?seconds=7." \
		--seconds=7 "http://127.0.0.1:$port/debug/mem"
}
effect_perf_map() {
	# code in anonymous memory (a JIT's), named by the perf map a runtime
	# writes ("START SIZE NAME"): the leaf at 0x...1010, its caller
	# returning to 0x...1234 (looked up at 0x...1233)
	printf "heap_v2/1\n  t*: 1: 4096 [0: 0]\n@ 0x7f0000001010 0x7f0000001234\n  t*: 1: 4096 [0: 0]\n\nMAPPED_LIBRARIES:\n7f0000001000-7f0000002000 r-xp 00000000 00:00 0 \n" >jit.heap &&
	printf "7f0000001000 100 LazyCompile:*jsAlloc app.js:1\n7f0000001200 100 Builtin:jsGrow\n" >jit.map &&
	"$JHEAP" --collapsed jit.heap >plain 2>/dev/null &&
	grep -qx "\[anon\]+0x233;\[anon\]+0x10 4096" plain &&
	"$JHEAP" --collapsed --perf-map=jit.map jit.heap >out 2>/dev/null &&
	grep -qx "Builtin:jsGrow;LazyCompile:\*jsAlloc app.js:1 4096" out
}
# the web UI: serve NAME ARGS... runs jheap --http=127.0.0.1:0 ARGS in the
# background (test_bg NAME) until it says where it serves; its base URL
# in NAME.base.  stop_web NAME: Ctrl-C, and the server ends with status 0.
serve() {
	local name=$1
	shift
	test_bg "$name" 300 "${WEB_JHEAP:-$JHEAP}" --http=127.0.0.1:0 "$@" &&
	test_bg_until "$name" "the server to say where it serves" \
		test_file_line_ "$name.err" "serving the web UI on http://127\\.0\\.0\\.1:[0-9]+/ui/" &&
	sed -n "s|.*serving the web UI on \\(http://127.0.0.1:[0-9]*\\)/ui/.*|\\1|p" "$name.err" >"$name.base" &&
	test -s "$name.base"
}
stop_web() {
	kill -INT "$(cat "$1.pid")" && test_bg_wait "$1" && test "$(cat "$1.status")" = 0 &&
	grep -q "^jheap: the web UI stopped\$" "$1.err"
}
web_prereq() {
	test_have_prog curl && ldconfig -p | grep -q "libmicrohttpd.so.12 " ||
	{ echo "curl or libmicrohttpd12 missing: not checked"; return 1; }
}
effect_http() {
	web_prereq || return 0
	serve web --no_browser "$H" &&
	curl -s -o page "$(cat web.base)/ui/" && grep -q "<title>jheap</title>" page &&
	stop_web web
}
effect_no_browser() {
	web_prereq || return 0
	# a browser that cannot start: jheap says so when it tries, before it
	# waits for Ctrl-C, so its absence after the server ended is certain
	printf "#!/bin/sh\nBROWSER=/nonexistent/browser PATH=/nonexistent exec \"%s\" \"\$@\"\n" "$JHEAP" >nobrowser &&
	chmod +x nobrowser &&
	WEB_JHEAP=./nobrowser serve open "$H" &&
	stop_web open &&
	grep -q "^jheap: cannot open .$(cat open.base)/ui/. in a browser" open.err &&
	WEB_JHEAP=./nobrowser serve closed --no_browser "$H" &&
	stop_web closed &&
	! grep -q "in a browser" closed.err
}
effect_pid() {
	web_prereq || return 0
	# a program under jheap record, with one dump taken: the timeline of
	# its dumps
	rm -rf live &&
	test_bg rec 300 "$JHEAP" record -q --sample=1 --dir=live -- sleep 600 &&
	test_wait "$TEST_WAIT" "sleep to start under jheap record" pgrep -P "$(cat rec.pid)" &&
	pid=$(pgrep -P "$(cat rec.pid)") &&
	test_wait "$TEST_WAIT" "the control socket of process $pid" "$JHEAP" ctl "$pid" status &&
	"$JHEAP" dump "$pid" >dumped && test "$(ls live/*.heap | wc -l)" = 1 &&
	serve live --no_browser --pid="$pid" &&
	curl -s -o timeline "$(cat live.base)/data/timeline" &&
	grep -q "\"pid\":$pid," timeline &&
	test "$(grep -o "\"name\":" timeline | wc -l)" = 1 &&
	grep -q "\"name\":\"$(basename "$(cat dumped)")\"" timeline &&
	grep -q "\"inuse_space\":$(want_sum "$(cat dumped)" inuse_space)[.,]" timeline &&
	stop_web live
}
effect_no_symbolize() {
	"$JHEAP" --show_bytes --no-symbolize "$H" >out &&
	grep -q " w_basic+0x[0-9a-f]*\$" out && ! grep -q alloc_malloc out &&
	test "$(total out)" = "$(total ref)"
}
effect_no_cache() {
	rm -rf nocache cache &&
	XDG_CACHE_HOME=$PWD/nocache "$JHEAP" --no-cache "$H" >/dev/null && test ! -e nocache &&
	XDG_CACHE_HOME=$PWD/cache "$JHEAP" "$H" >/dev/null && ls cache/jheap/*.sym >/dev/null
}

# the run itself
effect_output() {
	rm -f o.txt && "$JHEAP" --show_bytes --output o.txt "$H" >out && test ! -s out && test_cmp ref o.txt &&
	rm -f o2.txt && "$JHEAP" --show_bytes -o o2.txt "$H" && test_cmp ref o2.txt
}
effect_quiet() {
	# a library of the dump is missing: a warning, the same report
	sed "s|$P/libwshared.so\$|/nonexistent/libwshared.so|" "$P/w_shlib.exact.heap" >nolib.heap &&
	"$JHEAP" nolib.heap >loud.out 2>loud &&
	grep -q "^jheap: warning: cannot open ./nonexistent/libwshared.so." loud &&
	"$JHEAP" --quiet nolib.heap >out 2>err && test ! -s err && test_cmp loud.out out &&
	"$JHEAP" -q nolib.heap >out 2>err && test ! -s err
}
effect_help() {
	# the usage, and no report of the profile also named
	"$JHEAP" --help "$H" >out && head -n 1 out | grep -q "^Usage: jheap " && ! grep -q "^Total:" out &&
	"$JHEAP" -h >out2 && test_cmp out out2
}
effect_version() {
	"$JHEAP" --version "$H" >out && grep -qx "jheap [0-9][0-9.]*" out
}

test_expect_success 'every option of the table has a check of its effect here' '
	while read -r name; do
		declare -F "effect_$(echo "$name" | tr - _)" >/dev/null ||
		{ echo "no effect_$(echo "$name" | tr - _) for --$name"; return 1; }
	done <table
'
while read -r name; do
	fn=effect_$(echo "$name" | tr - _)
	prereq=
	case $name in text) prereq=SCRIPT ;; esac
	test_expect_success $prereq "--$name takes effect" "$fn"
done <table

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

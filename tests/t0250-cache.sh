#!/bin/bash
test_description='the persistent symbol cache: same answers warm and cold, stale and damaged files ignored, a private folder, no links followed'
. "$(dirname "$0")/lib.sh"

[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_need_profiles

B=$PROFILES/w_basic
H=$PROFILES/w_basic.exact.heap
C=$XDG_CACHE_HOME/jheap
ID=$(readelf -n "$B" | sed -n "s/.*Build ID: //p")
# the file of w_basic: named by build id and a hash of the path
cache_file() {
	ls "$C"/$ID-*.sym
}

# cold OUT ARGS: the report without the cache; warm OUT ARGS: with it,
# JHEAP_DEBUG=cache's notes in OUT.err
cold() {
	local out=$1
	shift
	jheap_into "$out" --no-cache "$@"
}
warm() {
	local out=$1
	shift
	JHEAP_DEBUG=cache jheap_into "$out" "$@"
}
# from_cache ERR OBJ N M: the notes say N addresses of OBJ came from the
# cache and M were looked up
from_cache() {
	grep -F "jheap: cache: $2: $3 addresses from the cache, $4 looked up" "$1"
}
# lookups ERR OBJ: how many addresses of OBJ were looked up live
lookups() {
	sed -n "s|^jheap: cache: $2: [0-9]* addresses from the cache, \([0-9]*\) looked up\$|\1|p" "$1"
}

test_expect_success 'the first run creates a private folder and a file named by build id' '
	rm -rf "$C" &&
	warm first --text --lines "$B" "$H" &&
	test -n "$ID" && F=$(cache_file) && test -f "$F" &&
	test "$(ls "$C" | wc -l)" -ge 2 &&
	test "$(stat -c %a "$C")" = 700 &&
	test "$(stat -c %a "$F")" = 600 &&
	grep -F "jheap: cache: $B: $F: no cache file yet" first.err &&
	n=$(lookups first.err "$B") && test "$n" -gt 10 &&
	! ls -a "$C" | grep tmp
'

test_expect_success 'the second run answers every address of the program from the cache' '
	warm second --text --lines "$B" "$H" &&
	grep -F "jheap: cache: $B: loaded " second.err &&
	n=$(lookups first.err "$B") && from_cache second.err "$B" "$n" 0 &&
	test_cmp first second
'

test_expect_success 'the binary named another way (relative, through a link) finds the same file' '
	here=$PWD &&
	(cd "$(dirname "$B")" &&
	 JHEAP_DEBUG=cache "$JHEAP" --text "./$(basename "$B")" "$H" >"$here/rel" 2>"$here/rel.err") &&
	grep -F "jheap: cache: ./$(basename "$B"): loaded " rel.err &&
	ln -sf "$B" link_to_binary &&
	warm link --text link_to_binary "$H" &&
	grep -F "jheap: cache: link_to_binary: loaded " link.err &&
	test "$(ls "$C"/$ID-*.sym | wc -l)" = 1
'

# --raw holds every inline frame's name, --callgrind files and lines,
# --proto function start lines: the cache must give them all back
for fmt in --raw --callgrind "--text --addresses" "--collapsed" "--proto"; do
	for w in w_basic w_cpp w_shlib w_threads; do
		test_expect_success "$w $fmt: warm, cold and two threads give the same bytes" '
			cold cold.out $fmt "$PROFILES/$w" "$PROFILES/$w.exact.heap" &&
			warm warm1.out $fmt "$PROFILES/$w" "$PROFILES/$w.exact.heap" &&
			warm warm2.out $fmt "$PROFILES/$w" "$PROFILES/$w.exact.heap" &&
			JHEAP_THREADS=2 warm warm3.out $fmt "$PROFILES/$w" "$PROFILES/$w.exact.heap" &&
			test "$(lookups warm2.out.err "$PROFILES/$w")" -eq 0 &&
			cmp cold.out warm1.out && cmp cold.out warm2.out && cmp cold.out warm3.out
		'
	done
done

# code without names is named by the function (FDE) that holds it, read
# from the file each run, not kept in the cache: the same warm and cold
for fmt in --raw "--text --addresses" --collapsed; do
	test_expect_success "a stripped w_basic $fmt: unnamed code by function, warm and cold the same" '
		strip -s -o stripped_wc "$B" &&
		cold cold.out $fmt ./stripped_wc "$H" &&
		warm warm1.out $fmt ./stripped_wc "$H" &&
		warm warm2.out $fmt ./stripped_wc "$H" &&
		grep -F "jheap: cache: ./stripped_wc: loaded " warm2.out.err &&
		grep -q "w_basic+0x" cold.out &&
		cmp cold.out warm1.out && cmp cold.out warm2.out
	'
done

test_expect_success 'another dump of the same binary (another process) takes its answers from the cache' '
	warm accum --text "$B" "$PROFILES/w_basic.accum.heap" &&
	loaded=$(sed -n "s|^jheap: cache: $B: loaded \([0-9]*\) answers and [0-9]* units from .*|\1|p" accum.err) &&
	test "$loaded" -gt 10 &&
	grep -F "jheap: cache: $B: $loaded addresses from the cache, " accum.err &&
	cold accum.cold --text "$B" "$PROFILES/w_basic.accum.heap" &&
	test_cmp accum.cold accum
'

# a dump holding only the first two stacks of w_basic.exact.heap
first_stacks() {
	awk -v keep="$2" "/^@/ { n++ } /^MAPPED_LIBRARIES:/ { n = 0 } n <= keep" "$1"
}

test_expect_success 'addresses new to the cache are looked up and added; the file then holds both' '
	rm -rf "$C" &&
	first_stacks "$H" 2 >part.heap &&
	warm part --text "$B" part.heap &&
	small=$(lookups part.err "$B") && test "$small" -gt 0 &&
	warm full --text "$B" "$H" &&
	new=$(lookups full.err "$B") && test "$new" -gt 0 &&
	grep -F "$small addresses from the cache, $new looked up" full.err &&
	warm full2 --text "$B" "$H" &&
	test "$(lookups full2.err "$B")" -eq 0 &&
	test_cmp full full2
'

# A run that only adds answers appends them to the file as a part: the
# first run's file stays as it was at the start, and the next run reads
# both and gives the cold report.
test_expect_success 'new answers are appended as a part after the file as it was' '
	rm -rf "$C" &&
	first_stacks "$H" 2 >part.heap &&
	warm part --text "$B" part.heap &&
	cp "$(cache_file)" before.sym &&
	warm full --raw "$B" "$H" &&
	test "$(lookups full.err "$B")" -gt 0 &&
	test "$(stat -c %s "$(cache_file)")" -gt "$(stat -c %s before.sym)" &&
	cmp -n "$(stat -c %s before.sym)" before.sym "$(cache_file)" &&
	warm again --raw "$B" "$H" &&
	grep -E "^jheap: cache: $B: loaded [0-9]+ answers and [0-9]+ units from .* and 1 appended part\$" again.err &&
	test "$(lookups again.err "$B")" -eq 0 &&
	cold cold --raw "$B" "$H" &&
	cmp cold again
'

# The file also keeps where each indexed unit's functions are, so that the
# new addresses of the next dump index one function each, not their unit:
# the answers must be the ones a cold run gives.
test_expect_success 'new addresses looked up through the units the file keeps: the same report as cold' '
	rm -rf "$C" &&
	first_stacks "$H" 2 >part.heap &&
	warm part --text "$B" part.heap &&
	cp -p "$(cache_file)" saved.sym &&
	for fmt in --raw --callgrind "--text --lines"; do
		cp -p saved.sym "$(cache_file)" &&
		warm sparse $fmt "$B" "$H" &&
		grep -E "^jheap: cache: $B: loaded [0-9]+ answers and [1-9][0-9]* units from " sparse.err &&
		test "$(lookups sparse.err "$B")" -gt 0 &&
		cold sparse.cold $fmt "$B" "$H" &&
		cmp sparse.cold sparse || return 1
	done
'

# The file keeps the DWARF's unit map too; and when the dump is parsed in
# two threads, the binary and its cache file are opened on the core the
# parse leaves idle (JHEAP_PARSE_SPLIT_MIN=1 splits even a small dump).
test_expect_success 'the unit map from the file, the file read beside a split parse: the same report as cold' '
	rm -rf "$C" &&
	first_stacks "$H" 2 >part.heap &&
	warm part --text "$B" part.heap &&
	cp -p "$(cache_file)" saved.sym &&
	for split in 0 1; do
		cp -p saved.sym "$(cache_file)" &&
		JHEAP_THREADS=2 JHEAP_PARSE_SPLIT_MIN=$split warm mapped --raw "$B" "$H" &&
		grep -E "^jheap: cache: $B: loaded [0-9]+ answers and [1-9][0-9]* units from .* with the unit map\$" mapped.err &&
		test "$(lookups mapped.err "$B")" -gt 0 &&
		cold mapped.cold --raw "$B" "$H" &&
		cmp mapped.cold mapped || return 1
	done
'

test_expect_success '--no-cache neither reads nor writes the cache' '
	rm -rf "$C" &&
	JHEAP_DEBUG=cache jheap_into nc --text "$B" "$H" --no-cache &&
	! test -e "$C" &&
	! grep "cache:" nc.err
'

test_expect_success '--symbols uses the cache too' '
	rm -rf "$C" &&
	grep -h "^@" "$H" | tr " " "\n" | grep 0x | sort -u >addrs &&
	{ sed -n "/^MAPPED_LIBRARIES:/,\$p" "$H" | tail -n +2; cat addrs; } >sym.in &&
	"$JHEAP" --symbols --no-cache "$B" <sym.in >sym.cold &&
	JHEAP_DEBUG=cache "$JHEAP" --symbols "$B" <sym.in >sym.warm1 2>sym.err1 &&
	JHEAP_DEBUG=cache "$JHEAP" --symbols "$B" <sym.in >sym.warm2 2>sym.err2 &&
	test "$(lookups sym.err1 "$B")" -gt 0 &&
	test "$(lookups sym.err2 "$B")" -eq 0 &&
	grep -x alloc_malloc sym.cold &&
	test_cmp sym.cold sym.warm1 && test_cmp sym.cold sym.warm2
'

# ---- damaged and foreign files ------------------------------------------

# damage HOW: damage the cache file of w_basic in place
damage() {
	F=$(cache_file) || return 1
	case $1 in
	empty) : >"$F" ;;
	short) head -c 10 "$F" >f.tmp && cat f.tmp >"$F" ;;
	cut) size=$(stat -c %s "$F") && head -c $((size - 7)) "$F" >f.tmp && cat f.tmp >"$F" ;;
	garbage) size=$(stat -c %s "$F") && head -c "$size" /dev/urandom >"$F" ;;
	magic) printf "XXXXXXXX" | dd of="$F" bs=1 seek=0 conv=notrunc 2>/dev/null ;;
	version) printf "\\377" | dd of="$F" bs=1 seek=12 conv=notrunc 2>/dev/null ;;
	byte) # one byte in the middle, complemented
		size=$(stat -c %s "$F") &&
		b=$(od -An -tu1 -j $((size / 2)) -N 1 "$F") &&
		printf "\\$(printf %o $((255 - b)))" |
			dd of="$F" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null ;;
	heap) cp "$H" "$F" ;;
	esac
}

test_expect_success 'reference for the damaged-file tests' '
	rm -rf "$C" &&
	cold ref --text --lines "$B" "$H"
'

for how in empty short cut garbage magic version byte heap; do
	test_expect_success "a cache file damaged ($how) is ignored, then rewritten whole" '
		warm w0 --text --lines "$B" "$H" &&
		warm w1 --text --lines "$B" "$H" &&
		test "$(lookups w1.err "$B")" -eq 0 &&
		damage '"$how"' &&
		warm d --text --lines "$B" "$H" &&
		grep -F "jheap: cache: $B: ignored $(cache_file): " d.err &&
		test "$(lookups d.err "$B")" -gt 0 &&
		test_cmp ref d &&
		warm after --text --lines "$B" "$H" &&
		test "$(lookups after.err "$B")" -eq 0 &&
		test_cmp ref after
	'
done

test_expect_success 'the reasons are named: checksum, format version, not a cache' '
	warm w --text "$B" "$H" && damage byte && warm d1 --text "$B" "$H" &&
	grep "ignored .*: bad checksum" d1.err &&
	damage version && warm d2 --text "$B" "$H" &&
	grep "ignored .*: format version 255, this jheap writes [0-9][0-9]*\$" d2.err &&
	damage heap && warm d3 --text "$B" "$H" &&
	grep "ignored .*: not a jheap symbol cache" d3.err
'

# ---- stale answers --------------------------------------------------------

test_expect_success 'without a build id the file is checked by size, time and inode: a touched binary is looked up again' '
	rm -rf "$C" &&
	objcopy --remove-section .note.gnu.build-id "$B" nobid &&
	! readelf -n nobid | grep "Build ID" &&
	cold nb.ref --text ./nobid "$H" &&
	warm nb1 --text ./nobid "$H" &&
	ls "$C" | grep "^nobuildid-[0-9a-f]*\.sym\$" &&
	warm nb2 --text ./nobid "$H" &&
	test "$(lookups nb2.err ./nobid)" -eq 0 &&
	touch -d "2001-01-01" nobid &&
	warm nb3 --text ./nobid "$H" &&
	grep "made for another version of the file" nb3.err &&
	test "$(lookups nb3.err ./nobid)" -gt 0 &&
	cp nobid nobid.new && mv nobid.new nobid &&
	warm nb4 --text ./nobid "$H" &&
	grep "made for another version of the file" nb4.err &&
	test "$(ls "$C" | grep -c "^nobuildid-")" -eq 1 &&
	test_cmp nb.ref nb1 && test_cmp nb.ref nb2 && test_cmp nb.ref nb3 && test_cmp nb.ref nb4
'

test_expect_success 'a stripped copy of a binary does not get the names the original has' '
	rm -rf "$C" &&
	warm sc1 --text "$B" "$H" && grep alloc_malloc sc1 &&
	strip -s -o stripped "$B" &&
	"$JHEAP" --text ./stripped "$H" >sc2 2>sc2.err &&
	grep "stripped. is stripped" sc2.err &&
	! grep alloc_malloc sc2 && grep "w_basic+0x" sc2
'

test_expect_success 'debug info that appears later (a --debuginfo-dir) makes a cache without it stale' '
	rm -rf "$C" &&
	strip -g -o nodebug "$B" &&
	objcopy --only-keep-debug "$B" w_basic.debug &&
	mkdir -p dbg/.build-id/${ID%${ID#??}} &&
	warm nd1 --text --lines ./nodebug "$H" &&
	! grep "w_basic.c:" nd1 &&
	warm nd2 --text --lines ./nodebug "$H" &&
	test "$(lookups nd2.err ./nodebug)" -eq 0 &&
	cp w_basic.debug dbg/.build-id/${ID%${ID#??}}/${ID#??}.debug &&
	warm nd3 --text --lines --debuginfo-dir dbg ./nodebug "$H" &&
	grep "made without debug info, which is there now" nd3.err &&
	grep "w_basic.c:" nd3 &&
	cold nd.ref --text --lines --debuginfo-dir dbg ./nodebug "$H" &&
	test_cmp nd.ref nd3
'

test_expect_success 'a debug file that changed makes the cache stale' '
	warm ch1 --text --lines --debuginfo-dir dbg ./nodebug "$H" &&
	test "$(lookups ch1.err ./nodebug)" -eq 0 &&
	touch dbg/.build-id/${ID%${ID#??}}/${ID#??}.debug &&
	warm ch2 --text --lines --debuginfo-dir dbg ./nodebug "$H" &&
	grep "its debug file .* changed or is gone" ch2.err &&
	test_cmp nd.ref ch2
'

test_expect_success 'a binary stripped in place (same build id) is not given its old names' '
	rm -rf "$C" &&
	cp "$B" inplace &&
	warm ip1 --text ./inplace "$H" && grep alloc_malloc ip1 &&
	strip -s inplace &&
	JHEAP_DEBUG=cache "$JHEAP" --text ./inplace "$H" >ip2 2>ip2.err &&
	grep "made for another version of the file" ip2.err &&
	! grep alloc_malloc ip2 && grep "w_basic+0x" ip2
'

# ---- the folder and its files: private, no links --------------------------

test_expect_success 'a symbolic link in place of a cache file is neither read nor followed' '
	rm -rf "$C" && cold ref2 --text "$B" "$H" &&
	mkdir -p "$C" && chmod 700 "$C" &&
	echo precious >victim &&
	warm l0 --text "$B" "$H" && F=$(cache_file) && rm "$F" &&
	ln -s "$PWD/victim" "$F" &&
	warm l1 --text "$B" "$H" &&
	grep -F "$F: cannot open: a symbolic link" l1.err &&
	test "$(cat victim)" = precious &&
	test -f "$F" && ! test -L "$F" &&
	test_cmp ref2 l1
'

test_expect_success 'a symbolic link in place of the folder: not used, a warning, the report is whole' '
	rm -rf "$C" && mkdir elsewhere &&
	ln -s "$PWD/elsewhere" "$C" &&
	jheap_into l2 --text "$B" "$H" &&
	grep "warning: symbol cache not used: .*jheap. is not a folder (a symbolic link?)" l2.err &&
	test -z "$(ls -A elsewhere)" &&
	test_cmp ref2 l2 &&
	rm "$C"
'

test_expect_success 'a folder open to others is closed (0700) before use' '
	rm -rf "$C" && mkdir -p "$C" && chmod 777 "$C" &&
	jheap_into o1 --text "$B" "$H" &&
	test "$(stat -c %a "$C")" = 700
'

# making files of another user takes root
[ "$(id -u)" = 0 ] && test_set_prereq ROOT
test_expect_success ROOT 'files and folders of another user are not trusted' '
	rm -rf "$C" && warm u0 --text "$B" "$H" &&
	F=$(cache_file) && chown nobody "$F" &&
	warm u1 --text "$B" "$H" &&
	grep -F "$F: belongs to another user" u1.err &&
	chown -R nobody "$C" &&
	jheap_into u2 --text "$B" "$H" &&
	grep "symbol cache not used: .* belongs to another user" u2.err &&
	test_cmp ref2 u2 && rm -rf "$C"
'

test_expect_success 'a cache folder that cannot be made: a warning, exit 0, the report is whole' '
	XDG_CACHE_HOME=/dev/null/cache jheap_into nf --text "$B" "$H" &&
	grep "warning: symbol cache not used: cannot create ./dev/null/cache.: Not a directory" nf.err &&
	test_cmp ref2 nf
'

test_expect_success 'a relative XDG_CACHE_HOME is ignored (XDG rule): HOME/.cache is used' '
	mkdir -p home &&
	HOME=$PWD/home XDG_CACHE_HOME=relative jheap_into rel --text "$B" "$H" &&
	ls home/.cache/jheap/$ID-*.sym && ! test -e relative
'

test_expect_success 'runs at once on one cache all finish whole; one whole file remains' '
	rm -rf "$C" &&
	for i in 1 2 3 4; do
		timeout 300 "$JHEAP" --text "$B" "$H" >par.$i 2>par.$i.err &
	done &&
	wait &&
	for i in 1 2 3 4; do test_cmp ref2 par.$i || return 1; done &&
	! ls -a "$C" | grep tmp &&
	warm par --text "$B" "$H" &&
	test "$(lookups par.err "$B")" -eq 0
'

test_done

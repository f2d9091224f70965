#!/bin/bash
test_description='stripped Debian servers linked with libjemalloc, profiled under load (nghttpd under h2load on loopback, redis-server under redis-benchmark on a unix socket): no false warning, a note on stripped objects, unnamed code one row per function, totals as jeprof, leaf names as llvm-symbolizer'
. "$(dirname "$0")/lib.sh"

# Both programs are Debian's own builds, stripped (exported symbols only),
# linked with Debian's libjemalloc.so.2, so MALLOC_CONF profiles them
# without LD_PRELOAD.  Nobody here wrote them.
[ -x "$JHEAP" ] || test_skip "no $JHEAP"
test_have_prog python3 || test_skip "no python3"
test_have_prog readelf || test_skip "no readelf"
TOOLS=$TEST_DIRECTORY/tools
if test_have_prog nghttpd && test_have_prog h2load; then
	test_set_prereq NGHTTPD
else
	say "# nghttpd or h2load missing (nghttp2-server, nghttp2-client): skipping its tests"
fi
if test_have_prog redis-server && test_have_prog redis-benchmark && test_have_prog redis-cli; then
	test_set_prereq REDIS
else
	say "# redis-server, redis-benchmark or redis-cli missing (redis-server, redis-tools): skipping its tests"
fi
test_have_prog "$JEPROF" && test_set_prereq JEPROF
test_have_prog llvm-symbolizer && test_set_prereq LLVM

# ---- the dumps ---------------------------------------------------------

# nghttpd binds port 0 (the kernel picks a free port) and the port is read
# back from /proc; redis-server, for which port 0 means no TCP at all,
# listens on a unix socket.  Neither port nor socket is picked in advance.
test_expect_success NGHTTPD 'nghttpd serves 3,000 HTTP/2 requests (h2load) and dumps its heap' '
	mkdir -p www && head -c 200000 /dev/urandom >www/big && echo hello >www/index.html &&
	MALLOC_CONF=prof:true,lg_prof_interval:22,lg_prof_sample:12,prof_accum:true,prof_prefix:$TRASH_DIRECTORY/ng \
		test_bg nghttpd 900 nghttpd --no-tls -d www -a 127.0.0.1 0 &&
	port=$(test_bg_port nghttpd) &&
	timeout 300 h2load -n 2000 -c 20 -m 10 "http://127.0.0.1:$port/big" >h2load.log 2>&1 &&
	timeout 300 h2load -n 1000 -c 50 -m 4 "http://127.0.0.1:$port/index.html" >>h2load.log 2>&1 &&
	test_bg_stop nghttpd &&
	grep -q "2000 succeeded" h2load.log && grep -q "1000 succeeded" h2load.log &&
	ls ng.*.heap >dumps && test -s dumps &&
	cp "$(sort -t. -k3n dumps | tail -n 1)" nghttpd.heap &&
	grep -q "/usr/sbin/nghttpd$" nghttpd.heap
'

test_expect_success REDIS 'redis-server serves redis-benchmark and dumps its heap when shut down' '
	MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:14,prof_accum:true,prof_prefix:$TRASH_DIRECTORY/rd \
		test_bg redis 900 redis-server --port 0 --unixsocket "$TRASH_DIRECTORY/redis.sock" \
		--save "" --appendonly no --dir "$TRASH_DIRECTORY" &&
	test_wait 120 "redis-server to listen on redis.sock" test -S redis.sock &&
	timeout 300 redis-benchmark -s redis.sock -n 20000 -q -t set,get,lpush,hset,sadd -d 100 -r 10000 >bench.log 2>&1 &&
	{ timeout 120 redis-cli -s redis.sock shutdown nosave >/dev/null 2>&1; test_bg_wait redis; } &&
	grep -q "SET: " bench.log &&
	ls rd.*.f.heap >dumps && test $(wc -l <dumps) -eq 1 &&
	cp "$(cat dumps)" redis.heap
'

# ---- what jheap says ---------------------------------------------------

# no_false_warning ERR: nothing but notes on standard error (and the
# pruning line of call graphs)
no_false_warning() {
	! grep -v -e "^jheap: note: " -e "^jheap: hint: " -e "^Dropping nodes" "$1"
}

for fmt in --text --collapsed --proto --raw --dot --callgrind --speedscope; do
	test_expect_success NGHTTPD "nghttpd $fmt: exit 0, no warning, a note naming the stripped program" '
		"$JHEAP" '$fmt' -o out nghttpd.heap 2>err &&
		no_false_warning err &&
		grep "^jheap: note: ./usr/sbin/nghttpd. is stripped: [0-9.]*% of the bytes are in its functions without names (nghttpd+0xSTART); its debug package names them (/usr/lib/debug/.build-id/[0-9a-f]\{2\}/[0-9a-f]*\.debug, in Debian.s nghttp2-server-dbgsym: apt-get install nghttp2-server-dbgsym, with .deb http://deb.debian.org/debian-debug/ [a-z0-9]*-debug main. in apt.s sources), as do --debuginfo-dir=DIR and DEBUGINFOD_URLS\$" err
	'
	test_expect_success REDIS "redis-server $fmt: exit 0, no warning" '
		"$JHEAP" '$fmt' -o out redis.heap 2>err &&
		no_false_warning err
	'
done

test_expect_success REDIS 'redis-server: the hint names its zmalloc wrappers, and only those (analyzer/wrappers.h)' '
	"$JHEAP" --text redis.heap >out 2>err &&
	sed -n "s/^jheap: hint: .*--allocator=.\^(\(.*\))\$.\$/\1/p" err | tr "|" "\n" >names &&
	test -s names &&
	! grep -v -E "^z(try)?(malloc|calloc|realloc)(_usable)?\$" names
'



test_expect_success NGHTTPD 'the package in the note is the one dpkg names; the archive line is this release'"'"'s' '
	pkg=$(dpkg -S /usr/sbin/nghttpd | sed -n "s/^\([^:]*\): .*/\1/p") &&
	test "$pkg" = nghttp2-server &&
	. /etc/os-release &&
	"$JHEAP" nghttpd.heap >out 2>err &&
	grep -q "in Debian.s $pkg-dbgsym: apt-get install $pkg-dbgsym, with .deb http://deb.debian.org/debian-debug/ $VERSION_CODENAME-debug main. in apt.s sources" err
'

test_expect_success NGHTTPD 'dpkg'"'"'s database read safely: a linked or FIFO list is passed over, none at all gives the note without a package' '
	mkdir -p db && mkfifo db/fifo.list &&
	echo /usr/sbin/nghttpd >elsewhere && ln -s "$PWD/elsewhere" db/linked.list &&
	printf "/usr/sbin/nghttpd.old\n/usr/sbin\n" >db/near.list &&
	JHEAP_DPKG_INFO=$PWD/db timeout 60 "$JHEAP" nghttpd.heap >out 2>err &&
	grep -q "^jheap: note: ./usr/sbin/nghttpd. is stripped: .*\.debug), as do --debuginfo-dir" err &&
	! grep -q dbgsym err &&
	printf "/.\n/usr\n/usr/sbin/nghttpd\n" >"db/mypkg:amd64.list" &&
	JHEAP_DPKG_INFO=$PWD/db timeout 60 "$JHEAP" nghttpd.heap >out 2>err &&
	grep -q "in Debian.s mypkg-dbgsym: apt-get install mypkg-dbgsym" err
'

test_expect_success NGHTTPD 'the share in the note is the bytes of the rows named nghttpd+0x...' '
	"$JHEAP" --show_bytes --nodecount=100000 nghttpd.heap >out 2>err &&
	total=$(sed -n "s/^Total: \([0-9]*\) B/\1/p" out) &&
	awk -v t="$total" "\$6 ~ /^nghttpd\\+0x/ { s += \$1 } END { printf \"%.1f%%\\n\", 100 * s / t }" out >want &&
	grep -o "nghttpd. is stripped: [0-9.]*%" err | grep -o "[0-9.]*%" >got &&
	test_cmp want got
'

test_expect_success NGHTTPD 'unnamed code: one row per FDE of nghttpd and libnghttp2, each address inside it' '
	python3 "$TOOLS/fdecheck.py" "$JHEAP" nghttpd.heap --show_bytes >check &&
	cat check && grep -q "functions=[1-9]" check &&
	python3 "$TOOLS/fdecheck.py" "$JHEAP" nghttpd.heap --inuse_objects --lines
'

test_expect_success REDIS 'unnamed code of redis-server: one row per FDE, with the allocator too' '
	python3 "$TOOLS/fdecheck.py" "$JHEAP" redis.heap --show_bytes --keep-allocator-frames --alloc_space >check &&
	cat check && grep -q "functions=[1-9]" check
'

test_expect_success NGHTTPD '--addresses: one row per code address of the dump' '
	python3 "$TOOLS/addrrows.py" "$JHEAP" nghttpd.heap
'

test_expect_success REDIS '--addresses: one row per code address of the dump' '
	python3 "$TOOLS/addrrows.py" "$JHEAP" redis.heap
'

# the same totals as jeprof, in every value
for v in --inuse_space --inuse_objects --alloc_space --alloc_objects; do
	test_expect_success NGHTTPD,JEPROF "nghttpd: the total of jeprof ($v)" '
		"$JHEAP" --text '$v' --show_bytes nghttpd.heap 2>/dev/null | head -n 1 >jheap.total &&
		"$JEPROF" --text '$v' --show_bytes /usr/sbin/nghttpd nghttpd.heap 2>/dev/null | head -n 1 >jeprof.total &&
		test -s jeprof.total && test_cmp jeprof.total jheap.total
	'
	test_expect_success REDIS,JEPROF "redis-server: the total of jeprof ($v)" '
		bin=$(sed -n "s|.*r-xp.* \(/.*redis[^ ]*\)\$|\1|p" redis.heap | head -n 1) &&
		"$JHEAP" --text '$v' --show_bytes redis.heap 2>/dev/null | head -n 1 >jheap.total &&
		"$JEPROF" --text '$v' --show_bytes "$bin" redis.heap 2>/dev/null | head -n 1 >jeprof.total &&
		test -s jeprof.total && test_cmp jeprof.total jheap.total
	'
done

# Leaf names: where llvm-symbolizer --inlining names the call (addr - 1),
# jheap gives the same name; where it cannot, jheap shows module+offset.
test_expect_success NGHTTPD,LLVM 'nghttpd: every leaf name agrees with llvm-symbolizer at addr-1' '
	python3 "$TOOLS/leafnames.py" -v "$JHEAP" nghttpd.heap >names && cat names &&
	grep -q "share=100.0 " names
'

test_expect_success REDIS,LLVM 'redis-server: every leaf name agrees with llvm-symbolizer at addr-1' '
	python3 "$TOOLS/leafnames.py" -v "$JHEAP" redis.heap >names && cat names &&
	grep -q "share=100.0 " names
'

# Another Debian program given as BINARY: names from the program the dump
# names, a warning that says so, exit 1 (the report is the one without it).
test_expect_success NGHTTPD 'nghttpd with h2load as BINARY: names from nghttpd, a warning, exit 1' '
	"$JHEAP" --show_bytes nghttpd.heap >ref 2>/dev/null &&
	"$JHEAP" --show_bytes "$(command -v h2load)" nghttpd.heap >out 2>err
	test $? -eq 1 && cat err &&
	grep "^jheap: warning: .*h2load. is not the program that wrote the dump: .*; names are taken from ./usr/sbin/nghttpd., the program named in the dump\$" err &&
	test_cmp ref out
'

test_expect_success REDIS,LLVM 'redis-server with redis-benchmark as BINARY: names from redis, as llvm-symbolizer has them' '
	"$JHEAP" --show_bytes redis.heap >ref 2>/dev/null &&
	"$JHEAP" --show_bytes "$(command -v redis-benchmark)" redis.heap >out 2>err
	test $? -eq 1 && cat err &&
	grep "^jheap: warning: .*redis-benchmark. is not the program that wrote the dump: " err &&
	test_cmp ref out &&
	python3 "$TOOLS/leafnames.py" "$JHEAP" redis.heap "$(command -v redis-benchmark)" >names &&
	cat names && grep -q "share=100.0 " names
'

test_done

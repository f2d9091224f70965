# tests/workloads.sh: the expected values of the workloads in testdata/,
# computed from the comment tables at the top of each source file.  Sourced
# by the test scripts after lib.sh.
#
# Each expect_* function prints lines "FLAT CUM NAME" for check_rows:
# FLAT is what the function allocated itself (allocator frames removed, so
# the user's function is the leaf), CUM includes its callees; "-" means
# "not checked", "none none NAME" means "NAME has no row".  Names are as
# jeprof shortens them (ns::Holder::add).
#
# Not in any table: every dump also holds one 81920-byte object that
# libstdc++ allocates at load time (its exception emergency pool; Debian's
# libjemalloc.so.2 links libstdc++), under _dl_init.  So the Total line is
# the table total plus that; the tests take the Total from the dump itself
# (heap_sum) and check main's cum against the table.

# ---- w_basic (testdata/w_basic.c), also w_basic_nopie ----------------
W_BASIC_INUSE_BYTES=$((100 * 10240 + 40 * 1024 + 10 * 229376 + 20 * 3072 + 4 * 16384 + 12 * 2048 + 100 * 5120 + 10000 * 64 + 327680))
W_BASIC_INUSE_OBJECTS=$((100 + 40 + 10 + 20 + 4 + 12 + 100 + 10000 + 1))
W_BASIC_ALLOC_BYTES=$((W_BASIC_INUSE_BYTES + 10 * 112 + 50 * 229376))
W_BASIC_ALLOC_OBJECTS=$((W_BASIC_INUSE_OBJECTS + 10 + 50))

expect_w_basic_inuse_space() {
	cat <<EOF
$((100 * 10240)) $((100 * 10240)) alloc_malloc
$((40 * 1024)) $((40 * 1024)) alloc_calloc
$((10 * 229376)) $((10 * 229376)) alloc_realloc
$((20 * 3072)) $((20 * 3072)) alloc_memalign
$((4 * 16384)) $((4 * 16384)) alloc_aligned
$((12 * 2048)) $((12 * 2048)) recurse
none none transient
$((100 * 5120)) $((100 * 5120)) leaf_alloc
0 $((30 * 5120)) caller_a
0 $((70 * 5120)) caller_b
$((10000 * 64)) $((10000 * 64)) many_small
327680 $W_BASIC_INUSE_BYTES main
EOF
}

expect_w_basic_inuse_objects() {
	cat <<EOF
100 100 alloc_malloc
40 40 alloc_calloc
10 10 alloc_realloc
20 20 alloc_memalign
4 4 alloc_aligned
12 12 recurse
none none transient
100 100 leaf_alloc
0 30 caller_a
0 70 caller_b
10000 10000 many_small
1 $W_BASIC_INUSE_OBJECTS main
EOF
}

# prof_accum: realloc's freed malloc(100) blocks and transient's blocks.
expect_w_basic_alloc_space() {
	expect_w_basic_inuse_space | sed -e '/ alloc_realloc$/d' -e '/ transient$/d' -e '/ main$/d'
	cat <<EOF
$((10 * 229376 + 10 * 112)) $((10 * 229376 + 10 * 112)) alloc_realloc
$((50 * 229376)) $((50 * 229376)) transient
327680 $W_BASIC_ALLOC_BYTES main
EOF
}

expect_w_basic_alloc_objects() {
	expect_w_basic_inuse_objects | sed -e '/ alloc_realloc$/d' -e '/ transient$/d' -e '/ main$/d'
	cat <<EOF
20 20 alloc_realloc
50 50 transient
1 $W_BASIC_ALLOC_OBJECTS main
EOF
}

# ---- w_cpp (testdata/w_cpp.cc, -O2) -----------------------------------
# fill_buffers allocates in the inlined make_buf: its flat depends on
# whether the inline frame is a row of its own, so only its cum is fixed.
# grow_vector's leaf is std::vector<int>::_M_realloc_insert (and the
# allocator functions inlined into it).
W_CPP_INUSE_BYTES=$((200 * 256 + 64 * 4096 + 30 * 10240 + 524288))
W_CPP_INUSE_OBJECTS=$((200 + 64 + 30 + 1))
W_CPP_ALLOC_BYTES=$((W_CPP_INUSE_BYTES - 524288 + 1048576))
W_CPP_ALLOC_OBJECTS=$((W_CPP_INUSE_OBJECTS - 1 + 18))

expect_w_cpp_inuse_space() {
	cat <<EOF
$((200 * 256)) $((200 * 256)) ns::Holder::add
- $((64 * 4096)) fill_buffers
$((30 * 10240)) $((30 * 10240)) make_ints
0 524288 grow_vector
0 $W_CPP_INUSE_BYTES main
EOF
}

expect_w_cpp_inuse_objects() {
	cat <<EOF
200 200 ns::Holder::add
- 64 fill_buffers
30 30 make_ints
0 1 grow_vector
0 $W_CPP_INUSE_OBJECTS main
EOF
}

expect_w_cpp_alloc_space() {
	expect_w_cpp_inuse_space | sed -e '/ grow_vector$/d' -e '/ main$/d'
	cat <<EOF
0 1048576 grow_vector
0 $W_CPP_ALLOC_BYTES main
EOF
}

expect_w_cpp_alloc_objects() {
	expect_w_cpp_inuse_objects | sed -e '/ grow_vector$/d' -e '/ main$/d'
	cat <<EOF
0 18 grow_vector
0 $W_CPP_ALLOC_OBJECTS main
EOF
}

# ---- w_shlib (testdata/w_shlib_main.c + w_shlib_lib.c) ----------------
W_SHLIB_INUSE_BYTES=$((25 * 20480 + 10 * 40960 + 8 * 57344))
W_SHLIB_INUSE_OBJECTS=$((25 + 10 + 8))

expect_w_shlib_inuse_space() {
	cat <<EOF
$((25 * 20480)) $((25 * 20480)) wshared_alloc_blocks
$((10 * 40960)) $((10 * 40960)) wshared_inner
0 $((10 * 40960)) wshared_alloc_nested
$((8 * 57344)) $((8 * 57344)) main_local_alloc
0 $W_SHLIB_INUSE_BYTES main
EOF
}

expect_w_shlib_inuse_objects() {
	cat <<EOF
25 25 wshared_alloc_blocks
10 10 wshared_inner
0 10 wshared_alloc_nested
8 8 main_local_alloc
0 $W_SHLIB_INUSE_OBJECTS main
EOF
}

# Nothing is freed: the accumulated values are the in-use ones.
expect_w_shlib_alloc_space() { expect_w_shlib_inuse_space; }
expect_w_shlib_alloc_objects() { expect_w_shlib_inuse_objects; }

# ---- w_threads (testdata/w_threads.c) ---------------------------------
# main's cum also holds what pthread_create allocates inside libc.
expect_w_threads_inuse_space() {
	cat <<EOF
$((100 * 8192)) $((100 * 8192)) worker
$((5 * 12288)) - main
EOF
}

expect_w_threads_inuse_objects() {
	cat <<EOF
100 100 worker
5 - main
EOF
}

expect_w_threads_alloc_space() { expect_w_threads_inuse_space; }
expect_w_threads_alloc_objects() { expect_w_threads_inuse_objects; }

# expect_w_threads_thread K MODE: thread uid K (1..4) is worker-K.
expect_w_threads_thread() {
	case $2 in
	*_space) echo "$((10 * $1 * 8192)) $((10 * $1 * 8192)) worker" ;;
	*_objects) echo "$((10 * $1)) $((10 * $1)) worker" ;;
	esac
}

# ---- demo (testdata/demo.c) -------------------------------------------
DEMO_INUSE_BYTES=$((32 * 16384 + 8192 + 500 * 48 + 500 * 4096 + 200 * 320))
DEMO_INUSE_OBJECTS=$((32 + 1 + 500 + 500 + 200))
DEMO_ALLOC_BYTES=$((DEMO_INUSE_BYTES - 200 * 320 + 2000 * 320 + 2000 * 1024))
DEMO_ALLOC_OBJECTS=$((DEMO_INUSE_OBJECTS - 200 + 2000 + 2000))

expect_demo_inuse_space() {
	cat <<EOF
$((32 * 16384)) $((32 * 16384)) xmalloc
0 $((32 * 16384)) pool_init
8192 8192 cache_init
$((500 * 48)) $((500 * 48)) cache_new_entry
$((500 * 4096)) $((500 * 4096)) cache_store_value
0 $((500 * 48 + 500 * 4096)) cache_insert
0 $((500 * 48 + 500 * 4096)) cache_get
$((200 * 320)) $((200 * 320)) parse_request
none none log_request
0 $((500 * 48 + 500 * 4096 + 200 * 320)) handle_request
0 $((500 * 48 + 500 * 4096 + 200 * 320)) server_run
0 $DEMO_INUSE_BYTES main
EOF
}

expect_demo_inuse_objects() {
	cat <<EOF
32 32 xmalloc
0 32 pool_init
1 1 cache_init
500 500 cache_new_entry
500 500 cache_store_value
0 1000 cache_insert
200 200 parse_request
none none log_request
0 1200 handle_request
0 $DEMO_INUSE_OBJECTS main
EOF
}

expect_demo_alloc_space() {
	expect_demo_inuse_space | sed -e '/ parse_request$/d' -e '/ log_request$/d' \
		-e '/ handle_request$/d' -e '/ server_run$/d' -e '/ main$/d'
	cat <<EOF
$((2000 * 320)) $((2000 * 320)) parse_request
$((2000 * 1024)) $((2000 * 1024)) log_request
0 $((500 * 48 + 500 * 4096 + 2000 * 320 + 2000 * 1024)) handle_request
0 $((500 * 48 + 500 * 4096 + 2000 * 320 + 2000 * 1024)) server_run
0 $DEMO_ALLOC_BYTES main
EOF
}

expect_demo_alloc_objects() {
	expect_demo_inuse_objects | sed -e '/ parse_request$/d' -e '/ log_request$/d' \
		-e '/ handle_request$/d' -e '/ main$/d'
	cat <<EOF
2000 2000 parse_request
2000 2000 log_request
0 $((1000 + 2000 + 2000)) handle_request
0 $DEMO_ALLOC_OBJECTS main
EOF
}

# ---- helpers ----------------------------------------------------------

# workload_binary NAME: the binary a profile of NAME was made by.
workload_binary() {
	echo "$PROFILES/$1"
}

# mode_flags MODE: the jeprof/jheap flags selecting MODE's integer values.
mode_flags() {
	case $1 in
	inuse_space) echo "--show_bytes" ;;
	inuse_objects) echo "--inuse_objects" ;;
	alloc_space) echo "--alloc_space --show_bytes" ;;
	alloc_objects) echo "--alloc_objects" ;;
	*) echo "mode_flags: bad mode $1" >&2; return 1 ;;
	esac
}

# cum_only: turn expectation lines into cum-only checks.
cum_only() {
	awk '$1 == "none" { print; next } { $1 = "-"; print }'
}

# src_line FILE TEXT: the number of the only line of FILE (under testdata/)
# that contains TEXT (a fixed string).
src_line() {
	local n
	n=$(grep -nF -- "$2" "$SRCDIR/testdata/$1" | cut -d: -f1)
	case $n in
	'' | *[!0-9]*) echo "src_line: '$2' found ${n:+more than once }${n:-nowhere} in $1" >&2; return 1 ;;
	esac
	echo "$n"
}

# lines_normalize <report: in --lines rows, keep only the base name of the
# source file and drop "(discriminator N)": addr2line and libdw print
# paths and discriminators differently, and neither is the point.
lines_normalize() {
	sed -E -e 's# (/|\./|\.\./)[^ ]*/([^/ ]+:[0-9?]+)# \2#' -e 's/ \(discriminator [0-9]+\)$//'
}

# workload_table NAME: the workload whose table NAME's dumps follow
# (w_basic_nopie is w_basic built without PIE).
workload_table() {
	case $1 in
	w_basic_nopie) echo w_basic ;;
	*) echo "$1" ;;
	esac
}

# workload_cases: "NAME VARIANT MODE LABEL" for every workload dump and the
# modes its tables give: the in-use modes of the exact dumps, the in-use
# and allocation modes of the prof_accum dumps.
workload_cases() {
	local w mode
	for w in w_basic w_basic_nopie w_cpp w_shlib w_threads demo; do
		for mode in inuse_space inuse_objects; do
			echo "$w exact $mode exact"
		done
		for mode in inuse_space alloc_space alloc_objects; do
			echo "$w accum $mode prof_accum"
		done
	done
}

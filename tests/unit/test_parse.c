/* Parser and unsampling: values checked against jeprof's figures (its
 * AdjustSamples, in jemalloc's bin/jeprof.in, installed as
 * /usr/bin/jeprof) and against hand-computed expectations. */
#include <math.h>
#include "analyzer/merge.h"
#include "analyzer/parse.h"
#include "analyzer/unsample.h"
#include "unit.h"

static int parse(struct profile *p, const char *text, char *err, size_t errlen)
{
	profile_init(p);
	return parse_buffer(p, "t.heap", text, strlen(text), NULL, err, errlen);
}

static int near(double a, double b, double tol)
{
	return fabs(a - b) <= tol;
}

TEST(unsample_v2_matches_jeprof)
{
	/* jeprof prints these (R = 524288): 113: 7232 -> 925752.50 objects,
	 * 59248160.07 B; 1499: 61650842 -> 19868.13 and 817136110.40;
	 * 1: 82338 -> 6.88 and 566534.14 */
	double n = 113, s = 7232;
	unsample_pair(UNSAMPLE_V2, 524288, &n, &s);
	CHECK(near(n, 925752.50, 0.01));
	CHECK(near(s, 59248160.07, 0.01));
	n = 1499, s = 61650842;
	unsample_pair(UNSAMPLE_V2, 524288, &n, &s);
	CHECK(near(n, 19868.13, 0.01));
	CHECK(near(s, 817136110.40, 0.01));
	n = 1, s = 82338;
	unsample_pair(UNSAMPLE_V2, 524288, &n, &s);
	CHECK(near(n, 6.88, 0.01));
	CHECK(near(s, 566534.14, 0.01));
	n = 0, s = 0;
	unsample_pair(UNSAMPLE_V2, 524288, &n, &s);
	CHECK(n == 0 && s == 0);
}

/* Above a mean-size-to-rate ratio of 40 unsample_pair() leaves the pair
 * as it is: the formula's scale rounds to exactly 1 there.  Checked bit
 * for bit against the formula on ratios from 40 to 1e6 and just below 40
 * (where it must still scale). */
TEST(unsample_v2_shortcut_exact)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int bad = 0, scaled = 0;
	for (int i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		double objs = (double)(1 + x % 1000), rate = (double)(1 + (x >> 20) % 4096);
		double ratio = i % 2 ? 40 + (double)(x >> 11) / 9007199254740992.0 * 1e6
				     : 30 + (double)(x >> 11) / 9007199254740992.0 * 10;
		double bytes = ratio * rate * objs, n = objs, s = bytes;
		double r = (bytes / objs) / rate, scale = 1 / (1 - exp(-r));
		unsample_pair(UNSAMPLE_V2, rate, &n, &s);
		if (memcmp(&n, &(double){ objs * scale }, sizeof(n)) ||
		    memcmp(&s, &(double){ bytes * scale }, sizeof(s)))
			bad++;
		scaled += n != objs;
	}
	CHECK_INT(bad, 0);
	/* below 40 the scale is not 1 everywhere: the shortcut starts late enough */
	CHECK(scaled > 0);
}

TEST(unsample_v1_no_division_by_zero)
{
	double n = 0, s = 0;
	unsample_pair(UNSAMPLE_V1, 131072, &n, &s);
	CHECK(n == 0 && s == 0);
	n = 10, s = 1000; /* mean 100 B, ratio 100/131072 */
	unsample_pair(UNSAMPLE_V1, 131072, &n, &s);
	CHECK(near(n, 10 * 131072.0 / 100, 1e-6));
	CHECK(near(s, 1000 * 131072.0 / 100, 1e-6));
	n = 2, s = 400000; /* ratio >= 1: unchanged */
	unsample_pair(UNSAMPLE_V1, 131072, &n, &s);
	CHECK(n == 2 && s == 400000);
}

static const char v2[] =
	"heap_v2/1\n"
	"  t*: 3: 300 [5: 500]\n"
	"  t0: 1: 100 [1: 100]\n"
	"  t7: 2: 200 [4: 400] worker thread\n"
	"@ 0x7f0000001010 0x555500001234 0x555500001300\r\n"
	"  t*: 1: 112 [1: 112]\n"
	"  t0: 1: 112 [1: 112]\n"
	"@ 0x7f0000001010 0x555500001250\n"
	"  t*: 2: 20480 [4: 40960]\n"
	"  t7: 2: 20480 [4: 40960]\n"
	"\n"
	"MAPPED_LIBRARIES:\n"
	"555500000000-555500001000 r--p 00000000 fe:00 42   /opt/my app/server\n"
	"555500001000-555500002000 r-xp 00001000 fe:00 42   /opt/my app/server\n"
	"7f0000000000-7f0000010000 r-xp 00000000 fe:00 43   /usr/lib/libjemalloc.so.2\n"
	"7f0000020000-7f0000030000 r-xp 00000000 fe:00 44   /tmp/libplug.so (deleted)\n"
	"7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0    [vdso]\n";

TEST(heap_v2_records_threads_maps)
{
	struct profile p;
	char err[256] = "";
	CHECK_INT(parse(&p, v2, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_INT(p.format, PF_FMT_HEAP_V2);
	CHECK_INT(p.period, 1);
	CHECK_INT(p.nsamples, 2);
	CHECK_INT(p.nlocs, 4); /* 0x7f..1010 is a leaf in both stacks */
	CHECK(p.has_alloc);
	CHECK(p.has_maps);
	/* R = 1: 112-byte objects are scaled by 1/(1-e^-112), i.e. exactly 1 in doubles */
	CHECK(profile_total(&p, PF_INUSE_SPACE) == 112 + 20480);
	CHECK(profile_total(&p, PF_ALLOC_OBJECTS) == 5);
	CHECK(p.header_total[PF_INUSE_SPACE] == 300);
	CHECK_INT(p.nthreads, 2);
	CHECK_INT(p.threads[1].uid, 7);
	CHECK_STR(strtab_get(&p.strs, p.threads[1].name), "worker thread");
	CHECK_INT(p.ntvals, 2);
	CHECK_INT(p.tvals[1].thread, 1);
	CHECK(p.tvals[1].v[PF_INUSE_SPACE] == 20480);
	CHECK_INT(p.nmaps, 5);
	CHECK_STR(strtab_get(&p.strs, p.maps[1].path), "/opt/my app/server");
	CHECK(p.maps[3].deleted);
	CHECK_STR(strtab_get(&p.strs, p.maps[3].path), "/tmp/libplug.so");
	CHECK_INT(p.maps[4].kind, PF_MAP_VDSO);
	CHECK_INT(p.main_mapping, 1);
	CHECK(p.maps[1].is_main);
	/* locations point at their mappings; frame 0 is the leaf */
	CHECK(p.locs[0].leaf);
	CHECK_INT(p.locs[0].mapping, 2);
	CHECK_INT(p.locs[1].mapping, 1);
	CHECK(!p.locs[1].leaf);
	profile_release(&p);
}

/* The one decision of a mapping's kind from its path, which the maps
 * lines of a dump, pprof's Mapping table and --symbols all take. */
TEST(map_kind_from_path)
{
	CHECK_INT(profile_map_kind("", 0), PF_MAP_ANON);
	CHECK_INT(profile_map_kind("[vdso]", 6), PF_MAP_VDSO);
	CHECK_INT(profile_map_kind("[vdso]x", 7), PF_MAP_SPECIAL);
	CHECK_INT(profile_map_kind("[vdso]", 5), PF_MAP_SPECIAL);
	CHECK_INT(profile_map_kind("[heap]", 6), PF_MAP_SPECIAL);
	CHECK_INT(profile_map_kind("[anon:jemalloc]", 15), PF_MAP_SPECIAL);
	CHECK_INT(profile_map_kind("/usr/lib/x86_64-linux-gnu/libc.so.6", 35), PF_MAP_FILE);
	CHECK_INT(profile_map_kind("vdso", 4), PF_MAP_FILE);
}

TEST(heap_v2_sampled_totals)
{
	struct profile p;
	char err[256];
	const char *t = "heap_v2/524288\n  t*: 114: 7296 [0: 0]\n"
			"@ 0x1 0x2\n  t*: 113: 7232 [0: 0]\n  t0: 113: 7232 [0: 0]\n"
			"@ 0x1 0x3\n  t*: 1: 82338 [0: 0]\n";
	CHECK_INT(parse(&p, t, err, sizeof(err)), 0);
	CHECK(near(profile_total(&p, PF_INUSE_SPACE), 59248160.07 + 566534.14, 0.02));
	CHECK(!p.has_alloc);
	CHECK(!p.has_maps);
	profile_release(&p);
}

TEST(errors_name_file_and_line)
{
	struct profile p;
	char err[256];
	CHECK(parse(&p, "heap_v2/1\n@ 0x1\n  t*: 1: x [0: 0]\n", err, sizeof(err)) < 0);
	CHECK_STR(err, "t.heap:3: expected a byte count");
	profile_release(&p);
	CHECK(parse(&p, "heap_v2/1\n@ 0x1 0xzz\n", err, sizeof(err)) < 0);
	CHECK_STR(err, "t.heap:2: expected a hex address, found '0xzz'");
	profile_release(&p);
	CHECK(parse(&p, "heap_v2/1\n@ 0x1\n  t*: 1: 99999999999999999999 [0: 0]\n", err, sizeof(err)) < 0);
	CHECK_STR(err, "t.heap:3: a byte count does not fit in 64 bits");
	profile_release(&p);
	CHECK(parse(&p, "heap_v2/1\n@ 0x1\n  t*: -1: 8 [0: 0]\n", err, sizeof(err)) < 0);
	CHECK_STR(err, "t.heap:3: an object count is negative");
	profile_release(&p);
	CHECK(parse(&p, "heap_v2/1\n@ 0x1\n  t*: 1: 8 [0: 0]\n@ 0x2\n", err, sizeof(err)) < 0);
	CHECK_STR(err, "t.heap:4: stack record has no 't*:' counts line (truncated dump?)");
	profile_release(&p);
	CHECK(parse(&p, "", err, sizeof(err)) < 0);
	CHECK_STR(err, "t.heap: the file is empty");
	profile_release(&p);
	CHECK(parse(&p, "\177ELF\2\1\1", err, sizeof(err)) < 0);
	CHECK_STR(err, "t.heap: an ELF file (a program or library), not a heap profile");
	profile_release(&p);
	CHECK(parse(&p, "hello world\n", err, sizeof(err)) < 0);
	CHECK_STR(err, "t.heap:1: not a heap profile: expected 'heap_v2/PERIOD' or 'heap profile:', found 'hello world'");
	profile_release(&p);
	CHECK(parse(&p, "--- contention\n", err, sizeof(err)) < 0);
	CHECK_STR(err, "t.heap:1: this is a contention profile; jheap reads heap profiles");
	profile_release(&p);
	CHECK(parse(&p, "heap_v2/1\nMAPPED_LIBRARIES:\n1000-2000 r-xp 0 fe:00\n", err, sizeof(err)) < 0);
	CHECK_STR(err, "t.heap:3: expected an inode number in a maps line");
	profile_release(&p);
}

TEST(gperftools_variants)
{
	struct profile p;
	char err[256];
	/* heap/N (Go's text heap profiles): v2 with R = N/2, as pprof reads
	 * them; the 0: 0 entry must not divide by zero */
	const char *t = "heap profile:   2:  2000 [  3:  3000] @ heap/262144\n"
			"   2:  2000 [   2:  2000] @ 0x10 0x20\n"
			"   0:     0 [   1:  1000] @ 0x10 0x30\n";
	CHECK_INT(parse(&p, t, err, sizeof(err)), 0);
	CHECK_INT(p.format, PF_FMT_GPERF);
	/* mean 1000 B, R = 131072: scale by 1 / (1 - exp(-1000/131072)),
	 * each record's values truncated to integers as pprof does */
	double scale = 1 / (1 - exp(-1000.0 / 131072));
	CHECK(profile_total(&p, PF_INUSE_SPACE) == trunc(2000 * scale));
	CHECK(profile_total(&p, PF_INUSE_OBJECTS) == trunc(2 * scale));
	CHECK(profile_total(&p, PF_ALLOC_SPACE) == trunc(2000 * scale) + trunc(1000 * scale));
	CHECK(profile_total(&p, PF_ALLOC_OBJECTS) == trunc(2 * scale) + trunc(1 * scale));
	profile_release(&p);
	/* Go's debug=1 form: comment lines after each stack and at the end */
	t = "heap profile: 1: 8192 [1: 8192] @ heap/1048576\n"
	    "1: 8192 [1: 8192] @ 0x4b9f1a 0x43eb38\n#\t0x4b9f19\tmain.main+0x39\t/tmp/x.go:9\n\n"
	    "# runtime.MemStats\n# Alloc = 102968\n";
	CHECK_INT(parse(&p, t, err, sizeof(err)), 0);
	CHECK_INT(p.nsamples, 1);
	profile_release(&p);
	/* another "heap" type (tcmalloc's old remote heap): jeprof's v1,
	 * R = N/2, divide by the ratio */
	t = "heap profile:   2:  2000 [  3:  3000] @ heapz/262144\n"
	    "   2:  2000 [   2:  2000] @ 0x10 0x20\n";
	CHECK_INT(parse(&p, t, err, sizeof(err)), 0);
	CHECK(near(profile_total(&p, PF_INUSE_SPACE), 2000 * 131072.0 / 1000, 1e-6));
	profile_release(&p);
	/* heapprofile: no adjustment */
	t = "heap profile: 1: 10 [1: 10] @ heapprofile\n1: 10 [1: 10] @ 0x10\n";
	CHECK_INT(parse(&p, t, err, sizeof(err)), 0);
	CHECK(profile_total(&p, PF_INUSE_SPACE) == 10);
	profile_release(&p);
	/* no @: v1 at 128 KiB when the header pairs are equal */
	t = "heap profile: 1: 10 [1: 10]\n1: 10 [1: 10] @ 0x10\n";
	CHECK_INT(parse(&p, t, err, sizeof(err)), 0);
	CHECK(near(profile_total(&p, PF_INUSE_SPACE), 131072, 1e-6));
	profile_release(&p);
	/* no @ and different pairs: none */
	t = "heap profile: 1: 10 [2: 20]\n1: 10 [2: 20] @ 0x10\n";
	CHECK_INT(parse(&p, t, err, sizeof(err)), 0);
	CHECK(profile_total(&p, PF_INUSE_SPACE) == 10);
	profile_release(&p);
	/* _v2: Poisson with the period */
	t = "heap profile: 1: 10 [1: 10] @ heap_v2/524288\n113: 7232 [0: 0] @ 0x10\n";
	CHECK_INT(parse(&p, t, err, sizeof(err)), 0);
	CHECK(profile_total(&p, PF_INUSE_SPACE) == 59248160);
	profile_release(&p);
}

TEST(symbolized_profile)
{
	struct profile p;
	char err[256];
	const char *t = "--- symbol\nbinary=./prog\n0x0000000000001233 main\n"
			"0x1240 outer--inner\n---\n--- heap\n"
			"heap_v2/1\n@ 0x7 0x1234 0x1241\n  t*: 1: 64 [0: 0]\n";
	CHECK_INT(parse(&p, t, err, sizeof(err)), 0);
	CHECK_STR(strtab_get(&p.strs, p.presym_binary), "./prog");
	CHECK_STR(strtab_get(&p.strs, profile_presym_find(&p, 0x1233)), "main");
	CHECK_STR(strtab_get(&p.strs, profile_presym_find(&p, 0x1240)), "outer--inner");
	CHECK(profile_total(&p, PF_INUSE_SPACE) == 64);
	profile_release(&p);
	/* ClickHouse's unknowns: "??", an empty name, "??" in an inline
	 * chain: no names for those addresses (they are looked up) */
	t = "--- symbol\n0x10 ??\n0x20\n0x30 f--??\n0x40 --g\n0x50 A::operator--(int)--h\n---\n"
	    "--- heap\nheap_v2/1\n@ 0x10 0x21 0x31 0x41 0x51\n  t*: 1: 64 [0: 0]\n";
	CHECK_INT(parse(&p, t, err, sizeof(err)), 0);
	CHECK_INT(p.npresyms, 1);
	CHECK_INT(profile_presym_find(&p, 0x10), 0);
	CHECK_INT(profile_presym_find(&p, 0x20), 0);
	CHECK_INT(profile_presym_find(&p, 0x30), 0);
	CHECK_INT(profile_presym_find(&p, 0x40), 0);
	CHECK_STR(strtab_get(&p.strs, profile_presym_find(&p, 0x50)), "A::operator--(int)--h");
	profile_release(&p);
}

/* A memory map's "name=value" lines stand for "$name" in the lines after
 * them (google/pprof's cppbench.heap, jeprof's "build="). */
TEST(maps_variables)
{
	struct profile p;
	char err[256];
	const char *t = "heap profile: 1: 10 [1: 10] @ heapprofile\n1: 10 [1: 10] @ 0x401000\n"
			"--- Memory map: ---\n\tsource=/home\n  00400000-00fcb000: $source/server\n"
			"build = /b\n7f0000000000-7f0000001000: $build/lib$source.so\n"
			"7f0000002000-7f0000003000: $sourcex/$nothing\n";
	CHECK_INT(parse(&p, t, err, sizeof(err)), 0);
	CHECK_INT(p.nmaps, 3);
	CHECK_STR(strtab_get(&p.strs, p.maps[0].path), "/home/server");
	CHECK_STR(strtab_get(&p.strs, p.maps[1].path), "/b/lib/home.so");
	CHECK_STR(strtab_get(&p.strs, p.maps[2].path), "/homex/$nothing");
	profile_release(&p);
	/* a line that is neither is still an error */
	t = "heap profile: 1: 10 [1: 10] @ heapprofile\n1: 10 [1: 10] @ 0x401000\n"
	    "--- Memory map: ---\n= /home\n";
	CHECK(parse(&p, t, err, sizeof(err)) < 0);
	profile_release(&p);
}

TEST(merge_sums_and_subtracts)
{
	struct profile a, b, sum;
	char err[256];
	const char *t = "heap_v2/1\n@ 0x1 0x2\n  t*: 1: 100 [0: 0]\n  t3: 1: 100 [0: 0]\n";
	CHECK_INT(parse(&a, t, err, sizeof(err)), 0);
	CHECK_INT(parse(&b, t, err, sizeof(err)), 0);
	profile_init(&sum);
	CHECK_INT(profile_merge(&sum, &a, 1, err, sizeof(err)), 0);
	CHECK_INT(profile_merge(&sum, &b, 1, err, sizeof(err)), 0);
	CHECK_INT(sum.nsamples, 1);
	CHECK(profile_total(&sum, PF_INUSE_SPACE) == 200);
	CHECK_INT(sum.ntvals, 1);
	CHECK(sum.tvals[0].v[PF_INUSE_SPACE] == 200);
	CHECK_INT(profile_merge(&sum, &a, -1, err, sizeof(err)), 0);
	CHECK(profile_total(&sum, PF_INUSE_SPACE) == 100);
	profile_release(&a);
	profile_release(&b);
	profile_release(&sum);
}

int main(void)
{
	RUN(unsample_v2_matches_jeprof);
	RUN(unsample_v2_shortcut_exact);
	RUN(unsample_v1_no_division_by_zero);
	RUN(heap_v2_records_threads_maps);
	RUN(map_kind_from_path);
	RUN(heap_v2_sampled_totals);
	RUN(errors_name_file_and_line);
	RUN(gperftools_variants);
	RUN(maps_variables);
	RUN(symbolized_profile);
	RUN(merge_sums_and_subtracts);
	return UNIT_END();
}

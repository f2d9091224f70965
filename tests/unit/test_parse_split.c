/*
 * A heap_v2 body parsed in two threads (parse.c's parse_v2_split) gives
 * exactly what the sequential parser gives: every table of the model
 * field by field (ids, order, bit-identical sums), the error code and
 * message, and the warnings.  Each dump is split at every stack line of
 * its body, and damaged copies of it (truncated, a bad address, a stack
 * without counts, no maps ...) too.
 *
 *   test_parse_split [PROFILES]   the real dumps are the *.heap files in
 *                                 PROFILES (else $PROFILES; skipped when
 *                                 neither exists)
 *   test_parse_split --compare FILE...
 *                                 only compares each FILE parsed in one
 *                                 thread and split in the middle (for
 *                                 dumps too large to split everywhere)
 */
#include <stdatomic.h>
#include <dirent.h>
#include <errno.h>
#include "lib/array.h"
#include "analyzer/parse.h"
#include "profile_diff.h"
#include "unit.h"

struct result {
	struct profile p;
	int rc;
	char err[600];
	char *warns;            /* every warning, one per line */
	size_t nwarns, cap_warns;
	bool split;
	atomic_int idle;        /* core_idle calls */
};

static void on_idle(void *ctx)
{
	struct result *r = ctx;
	atomic_fetch_add(&r->idle, 1);
}

static void on_warn(void *ctx, const char *msg)
{
	struct result *r = ctx;
	size_t n = strlen(msg);
	if (jh_grow(&r->warns, &r->cap_warns, r->nwarns + n + 2, 1)) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	memcpy(r->warns + r->nwarns, msg, n);
	r->nwarns += n;
	r->warns[r->nwarns++] = '\n';
	r->warns[r->nwarns] = '\0';
}

/* Parses BUF[0..LEN) (a copy without a NUL after it, so that reading past
 * the end is an error under ASan), split at SPLIT_AT when not 0. */
static void run(struct result *r, const char *buf, size_t len, size_t split_at)
{
	memset(r, 0, sizeof(*r));
	if (profile_init(&r->p)) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	char *copy = malloc(len ? len : 1);
	if (!copy) {
		fprintf(stderr, "out of memory\n");
		exit(1);
	}
	memcpy(copy, buf, len);
	struct parse_split_options so = { .at = split_at, .done = &r->split };
	struct parse_options o = { .warn = on_warn, .ctx = r, .core_idle = on_idle, .split = &so };
	r->rc = parse_buffer(&r->p, "t.heap", copy, len, &o, r->err, sizeof(r->err));
	/* once for a parse in two threads, by the half done first; never
	 * for one thread */
	CHECK(atomic_load(&r->idle) <= 1);
	if (r->split)
		CHECK_INT(atomic_load(&r->idle), 1);
	free(copy);
}

static void done(struct result *r)
{
	profile_release(&r->p);
	free(r->warns);
}

/* NULL when A and B are the same, else what differs first. */
static const char *diff(const struct result *a, const struct result *b)
{
	if (a->rc != b->rc)
		return "return code";
	if (strcmp(a->err, b->err))
		return "error message";
	if (a->nwarns != b->nwarns || (a->nwarns && strcmp(a->warns, b->warns)))
		return "warnings";
	return profile_diff(&a->p, &b->p);
}

static unsigned long nsplits, nabandoned;

/* Parses BUF split at every stack line of its body (that is, every '@'
 * after a newline) and checks each result against the sequential one.
 * Returns the number of parses that did not match. */
static int check_splits(const char *what, const char *buf, size_t len)
{
	struct result seq, par;
	int bad = 0;
	run(&seq, buf, len, 0);
	if (seq.split) {
		fprintf(stderr, "%s: split without being asked\n", what);
		bad++;
	}
	for (size_t i = 1; i < len; i++) {
		if (buf[i] != '@' || buf[i - 1] != '\n')
			continue;
		run(&par, buf, len, i);
		const char *d = diff(&seq, &par);
		if (d) {
			if (bad < 5)
				fprintf(stderr, "%s (%zu bytes) split at byte %zu: %s differs\n"
					"  sequential: %d '%s'\n  split:      %d '%s'\n",
					what, len, i, d, seq.rc, seq.err, par.rc, par.err);
			bad++;
		}
		if (par.split)
			nsplits++;
		else
			nabandoned++;
		done(&par);
	}
	done(&seq);
	return bad;
}

/* The same for every prefix of BUF that ends at a byte in [FROM, len]. */
static int check_prefixes(const char *what, const char *buf, size_t len, size_t from)
{
	int bad = 0;
	for (size_t n = from; n <= len && bad < 5; n++)
		bad += check_splits(what, buf, n);
	return bad;
}

/* Sums that depend on their order (period 524288: unsampled values are not
 * integers), a stack that comes back four times, once with two "t*" lines,
 * a thread repeated within a record, the same stack in consecutive records
 * with a thread repeated (their thread values merge), an empty stack, a CRLF line, blank lines,
 * accumulated counts only late, and maps with a duplicate line, a build=
 * line and a path that is also a thread name. */
static const char dump[] =
	"heap_v2/524288\n"
	"  t*: 30: 300000 [0: 0]\n"
	"  t0: 10: 100000 [0: 0]\n"
	"  t5: 20: 200000 [0: 0] [vdso]\n"
	"@ 0x7f0000001010 0x555500001234 0x555500001300\n"
	"  t*: 3: 30000 [0: 0]\n"
	"  t0: 3: 30000 [0: 0]\n"
	"@ 0x7f0000001010 0x555500001250\n"
	"  t*: 7: 7777 [0: 0]\n"
	"  t5: 3: 3333 [0: 0]\n"
	"  t5: 4: 4444 [0: 0]\n"
	"@ 0x7f0000001010 0x555500001234 0x555500001300\n"
	"  t*: 5: 123457 [0: 0]\n"
	"  t*: 1: 999 [0: 0]\n"
	"  t0: 5: 123457 [0: 0]\n"
	"  t9: 1: 999 [0: 0]\n"
	"@ 0x7f0000001010 0x555500001234 0x555500001300\n"
	"  t*: 11: 654321 [0: 0]\n"
	"  t0: 6: 354321 [0: 0]\n"
	"  t0: 5: 300000 [0: 0]\n"
	"@\n"
	"  t*: 1: 17 [0: 0]\n"
	"@ 0x555500001300 0x7f0000001010\r\n"
	"  t*: 2: 1000003 [0: 0]\n"
	"  t12: 2: 1000003 [0: 0]\n"
	"\n"
	"@ 0x7f0000001010 0x555500001234 0x555500001300\n"
	"  t*: 13: 77771 [3: 1234567]\n"
	"  t12: 13: 77771 [3: 1234567]\n"
	"@ 0x7f0000002020 0x555500001250\n"
	"  t*: 1: 4096 [0: 0]\n"
	"  t7: 1: 4096 [0: 0]\n"
	"\n"
	"MAPPED_LIBRARIES:\n"
	"555500000000-555500001000 r--p 00000000 fe:00 42   /opt/my app/server\n"
	"555500001000-555500002000 r-xp 00001000 fe:00 42   /opt/my app/server\n"
	"555500001000-555500002000 r-xp 00001000 fe:00 42   /opt/my app/server\n"
	"build=1234abcd\n"
	"7f0000000000-7f0000010000 r-xp 00000000 fe:00 43   /usr/lib/libjemalloc.so.2\n"
	"7ffc00000000-7ffc00002000 r-xp 00000000 00:00 0    [vdso]\n";

/* DUMP with the first occurrence of OLD replaced by NEW, into a static buffer. */
static const char *edit(const char *old, const char *repl, size_t *len)
{
	static char out[sizeof(dump) + 256];
	const char *at = strstr(dump, old);
	if (!at) {
		fprintf(stderr, "bug: '%s' is not in the dump\n", old);
		exit(1);
	}
	size_t pre = (size_t)(at - dump), ol = strlen(old), rl = strlen(repl);
	memcpy(out, dump, pre);
	memcpy(out + pre, repl, rl);
	memcpy(out + pre + rl, at + ol, sizeof(dump) - pre - ol);
	*len = strlen(out);
	return out;
}

TEST(every_split_of_a_hand_made_dump)
{
	unsigned long before = nsplits;
	CHECK_INT(check_splits("dump", dump, sizeof(dump) - 1), 0);
	/* every stack line is a split point: 8 records, the first right
	 * after the header */
	CHECK_INT(nsplits - before, 8);
	/* it is a case where order matters: the sums are not those of the
	 * second half added to the first */
	struct result r;
	run(&r, dump, sizeof(dump) - 1, 0);
	CHECK_INT(r.rc, 0);
	CHECK_INT(atomic_load(&r.idle), 0);
	CHECK_INT(r.p.nsamples, 5);
	CHECK_INT(r.p.nthreads, 5);
	CHECK_STR(strtab_get(&r.p.strs, r.p.maps[3].path), "[vdso]");
	CHECK_INT(r.p.maps[3].path, r.p.threads[1].name);
	done(&r);
}

TEST(every_prefix_of_a_hand_made_dump)
{
	/* truncated anywhere: in a record, between records, in the maps */
	size_t body = strlen("heap_v2/524288\n");
	CHECK_INT(check_prefixes("prefix", dump, sizeof(dump) - 1, body), 0);
}

TEST(damaged_second_halves)
{
	size_t len;
	const char *d;
	struct result r;
	/* a bad address late in the body: the frames before it still count */
	d = edit("@ 0x7f0000002020 0x555500001250", "@ 0x7f0000002020 0x5555000012zz 0x1", &len);
	CHECK_INT(check_splits("bad address", d, len), 0);
	run(&r, d, len, 0);
	CHECK_STR(r.err, "t.heap:30: expected a hex address, found '0x5555000012zz'");
	done(&r);
	run(&r, d, len, (size_t)(strstr(d, "@ 0x7f0000001010 0x555500001234 0x555500001300\n  t*: 13") - d));
	CHECK(r.split);
	CHECK_STR(r.err, "t.heap:30: expected a hex address, found '0x5555000012zz'");
	CHECK_INT(r.p.nlocs, 7); /* with 0x7f0000002020 as a leaf */
	done(&r);
	/* a long address in a line whose end is read from the line before
	 * in one thread and not in the other: named alone either way */
	d = edit("@ 0x7f0000002020 0x555500001250", "@ 0x7f0000002020 0x12345678901234567 0x555500001300", &len);
	CHECK_INT(check_splits("long address", d, len), 0);
	run(&r, d, len, 0);
	CHECK_STR(r.err, "t.heap:30: address '0x12345678901234567' is longer than 64 bits");
	done(&r);
	/* a stack without counts right before a split point, and right after */
	d = edit("  t*: 11: 654321 [0: 0]\n  t0: 6: 354321 [0: 0]\n  t0: 5: 300000 [0: 0]\n", "", &len);
	CHECK_INT(check_splits("no counts", d, len), 0);
	run(&r, d, len, (size_t)(strstr(d, "@\n") - d));
	CHECK(r.split);
	CHECK_STR(r.err, "t.heap:17: stack record has no 't*:' counts line (truncated dump?)");
	done(&r);
	d = edit("@\n  t*: 1: 17 [0: 0]\n", "@\n  t3: 1: 17 [0: 0]\n", &len);
	CHECK_INT(check_splits("no counts after a split", d, len), 0);
	run(&r, d, len, (size_t)(strstr(d, "@\n") - d));
	CHECK(r.split);
	CHECK_STR(r.err, "t.heap:21: stack record has no 't*:' counts line (truncated dump?)");
	done(&r);
	/* no maps: a warning with the last line's number */
	d = edit("\nMAPPED_LIBRARIES:", "", &len);
	len = (size_t)(strstr(d, "555500000000-") - d);
	CHECK_INT(check_splits("no maps", d, len), 0);
	run(&r, d, len, (size_t)(strstr(d, "@\n") - d));
	CHECK(r.split);
	CHECK_INT(r.rc, 0);
	CHECK_STR(r.warns, "t.heap:33: no MAPPED_LIBRARIES section (truncated dump?): addresses "
		  "can only be symbolized in the BINARY given on the command line\n");
	done(&r);
	/* the last line without its newline, in the maps and in a record */
	CHECK_INT(check_splits("no newline", dump, sizeof(dump) - 2), 0);
	len = (size_t)(strstr(dump, "\nMAPPED_LIBRARIES") - dump);
	CHECK_INT(check_splits("no newline in a record", dump, len - 1), 0);
	/* garbage, text after counts, a bad thread id, a negative count, a
	 * bad maps line */
	d = edit("  t7: 1: 4096 [0: 0]\n", "  t7: 1: 4096 [0: 0]\nhello\n", &len);
	CHECK_INT(check_splits("garbage", d, len), 0);
	d = edit("  t12: 2: 1000003 [0: 0]\n", "  t12: 2: 1000003 [0: 0] x\n", &len);
	CHECK_INT(check_splits("text after counts", d, len), 0);
	d = edit("  t7: 1:", "  tx7: 1:", &len);
	CHECK_INT(check_splits("thread id", d, len), 0);
	d = edit("  t*: 1: 4096", "  t*: -1: 4096", &len);
	CHECK_INT(check_splits("negative", d, len), 0);
	d = edit("build=1234abcd\n", "555500001000-zz r-xp\n", &len);
	CHECK_INT(check_splits("bad maps line", d, len), 0);
	run(&r, d, len, (size_t)(strstr(d, "@\n") - d));
	CHECK(r.split);
	CHECK_STR(r.err, "t.heap:38: expected the end address of a mapping");
	done(&r);
	/* "@" lines inside a maps section that starts before the split: the
	 * first half reads on to the end alone */
	d = edit("@ 0x7f0000002020", "MAPPED_LIBRARIES:\n@ 0x7f0000002020", &len);
	unsigned long before = nabandoned;
	CHECK_INT(check_splits("maps before the split", d, len), 0);
	CHECK(nabandoned > before);
	/* a header line between records */
	d = edit("@ 0x7f0000002020", "heap_v2/1\n@ 0x7f0000002020", &len);
	CHECK_INT(check_splits("second header", d, len), 0);
}

TEST(only_large_heap_v2_bodies_split)
{
	struct result r;
	struct parse_split_options so = { .done = &r.split };
	struct parse_options o = { .split = &so };
	char err[256];
	/* the default threshold: a small dump stays in one thread */
	unsetenv("JHEAP_THREADS");
	profile_init(&r.p);
	CHECK_INT(parse_buffer(&r.p, "t.heap", dump, sizeof(dump) - 1, &o, err, sizeof(err)), 0);
	CHECK(!r.split);
	profile_release(&r.p);
	/* split.min 1 and JHEAP_THREADS=2: at the first stack after the middle */
	setenv("JHEAP_THREADS", "2", 1);
	so.min = 1;
	profile_init(&r.p);
	CHECK_INT(parse_buffer(&r.p, "t.heap", dump, sizeof(dump) - 1, &o, err, sizeof(err)), 0);
	CHECK(r.split);
	profile_release(&r.p);
	/* JHEAP_THREADS=1: never */
	setenv("JHEAP_THREADS", "1", 1);
	profile_init(&r.p);
	CHECK_INT(parse_buffer(&r.p, "t.heap", dump, sizeof(dump) - 1, &o, err, sizeof(err)), 0);
	CHECK(!r.split);
	profile_release(&r.p);
	/* JHEAP_PARSE_SPLIT_MIN when split.min is 0 */
	setenv("JHEAP_THREADS", "2", 1);
	setenv("JHEAP_PARSE_SPLIT_MIN", "1", 1);
	so.min = 0;
	profile_init(&r.p);
	CHECK_INT(parse_buffer(&r.p, "t.heap", dump, sizeof(dump) - 1, &o, err, sizeof(err)), 0);
	CHECK(r.split);
	profile_release(&r.p);
	setenv("JHEAP_PARSE_SPLIT_MIN", "100000", 1);
	profile_init(&r.p);
	CHECK_INT(parse_buffer(&r.p, "t.heap", dump, sizeof(dump) - 1, &o, err, sizeof(err)), 0);
	CHECK(!r.split);
	profile_release(&r.p);
	/* symbolized and gperftools profiles: never, even when asked */
	static const char sym[] = "--- symbol\nbinary=./prog\n0x1233 main\n---\n--- heap\n"
				  "heap_v2/1\n@ 0x7 0x1234\n  t*: 1: 64 [0: 0]\n@ 0x8 0x1234\n  t*: 1: 64 [0: 0]\n";
	run(&r, sym, sizeof(sym) - 1, strstr(sym, "@ 0x8") - sym);
	CHECK_INT(r.rc, 0);
	CHECK(!r.split);
	done(&r);
	static const char gperf[] = "heap profile: 2: 20 [2: 20] @ heapprofile\n"
				    "1: 10 [1: 10] @ 0x10\n1: 10 [1: 10] @ 0x20\n";
	run(&r, gperf, sizeof(gperf) - 1, strstr(gperf, "1: 10 [1: 10] @ 0x20") - gperf);
	CHECK_INT(r.rc, 0);
	CHECK(!r.split);
	done(&r);
	unsetenv("JHEAP_PARSE_SPLIT_MIN");
	setenv("JHEAP_THREADS", "1", 1);
}

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (jh_grow(&buf, &cap, n + 65536, 1)) {
			free(buf);
			fclose(f);
			return NULL;
		}
		size_t k = fread(buf + n, 1, cap - n, f);
		n += k;
		if (!k)
			break;
	}
	fclose(f);
	*len = n;
	return buf;
}

static const char *profiles_dir;

TEST(real_dumps)
{
	DIR *dir = profiles_dir ? opendir(profiles_dir) : NULL;
	if (!dir) {
		printf("%s: no profiles in '%s': real dumps skipped\n", __FILE__,
		       profiles_dir ? profiles_dir : "(PROFILES not set)");
		return;
	}
	struct dirent *de;
	int files = 0;
	unsigned long before = nsplits;
	while ((de = readdir(dir))) {
		size_t nl = strlen(de->d_name);
		if (nl < 5 || strcmp(de->d_name + nl - 5, ".heap"))
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", profiles_dir, de->d_name);
		size_t len;
		char *buf = read_all(path, &len);
		if (!buf) {
			fprintf(stderr, "%s: %s\n", path, strerror(errno));
			CHECK(buf);
			continue;
		}
		files++;
		CHECK_INT(check_splits(path, buf, len), 0);
		/* truncated at every line, and in the middle of every line */
		int bad = 0;
		for (size_t i = 1; i < len && bad < 5; i++)
			if (buf[i - 1] == '\n' || (buf[i] == '\n' && buf[i - 1] != '\n'))
				bad += check_splits(path, buf, i);
		CHECK_INT(bad, 0);
		free(buf);
	}
	closedir(dir);
	CHECK(files > 0);
	CHECK(nsplits > before);
}

/* FILE in one thread and split at the first stack line after its middle. */
static int compare_file(const char *path)
{
	size_t len;
	char *buf = read_all(path, &len);
	if (!buf) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return 1;
	}
	struct result seq, par;
	run(&seq, buf, len, 0);
	run(&par, buf, len, len / 2);
	const char *d = diff(&seq, &par);
	printf("%s: %s, %zu samples, %zu locations, %s\n", path,
	       par.split ? "split" : "NOT split", seq.p.nsamples, seq.p.nlocs,
	       d ? d : "identical");
	int rc = d || !par.split;
	done(&seq);
	done(&par);
	free(buf);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--compare")) {
		int rc = 0;
		for (int i = 2; i < argc; i++)
			rc |= compare_file(argv[i]);
		return rc;
	}
	profiles_dir = argc > 1 ? argv[1] : getenv("PROFILES");
	/* the sequential runs must not split on their own */
	setenv("JHEAP_THREADS", "1", 1);
	RUN(every_split_of_a_hand_made_dump);
	RUN(every_prefix_of_a_hand_made_dump);
	RUN(damaged_second_halves);
	RUN(only_large_heap_v2_bodies_split);
	RUN(real_dumps);
	printf("%s: %lu split parses, %lu where the maps came first\n", __FILE__, nsplits,
	       nabandoned);
	return UNIT_END();
}

/*
 * The big arrays of lib/bigarray.h (jh_big_grow, jh_big_free): the
 * elements survive every kind of growth (on the heap, from the heap into
 * a mapping, a mapping grown in place or moved), a big array is a
 * huge-page-aligned mapping, and a profile whose samples, stacks and
 * thread values are big (a large dump's, sized up front by the parser)
 * parses and releases the same as one that grew from nothing.  Under ASan, any of these freed with
 * free() or grown with realloc() would be reported.
 */
#include "lib/array.h"
#include "lib/bigarray.h"
#include "analyzer/parse.h"
#include "profile_diff.h"
#include "unit.h"

static size_t mapped_len(const void *arr)
{
	return ((const struct jh_big *)arr - 1)->mapped;
}

TEST(small_arrays_stay_on_the_heap)
{
	uint32_t *a = NULL;
	size_t n = 0, cap = 0;
	for (uint32_t i = 0; i < 1000; i++)
		CHECK_INT(JH_BIG_PUSH(a, n, cap, i * 7), 0);
	CHECK_INT(mapped_len(a), 0);
	bool ok = true;
	for (uint32_t i = 0; i < 1000; i++)
		ok &= a[i] == i * 7;
	CHECK(ok);
	jh_big_free(a);
	jh_big_free(NULL);
}

/* Two arrays grown in turn, so that neither can always grow in place. */
TEST(elements_survive_growth_into_and_between_mappings)
{
	uint64_t *a = NULL, *b = NULL;
	size_t na = 0, ca = 0, nb = 0, cb = 0;
	size_t total = (size_t)40 << 20 >> 3;   /* 40 MiB each */
	for (size_t i = 0; i < total; i++) {
		if (JH_BIG_PUSH(a, na, ca, i * 0x9e3779b97f4a7c15ULL) ||
		    JH_BIG_PUSH(b, nb, cb, ~i)) {
			CHECK(!"out of memory");
			break;
		}
	}
	bool ok = na == total && nb == total;
	for (size_t i = 0; ok && i < total; i++)
		ok &= a[i] == i * 0x9e3779b97f4a7c15ULL && b[i] == ~i;
	CHECK(ok);
	/* mapped when big, unless mmap failed (then still correct) */
	if (mapped_len(a)) {
		CHECK(!(((uintptr_t)a - sizeof(struct jh_big)) & (JH_BIG_ALIGN - 1)));
		CHECK(mapped_len(a) % JH_BIG_ALIGN == 0);
		CHECK(mapped_len(a) >= sizeof(struct jh_big) + ca * sizeof(*a));
	}
	jh_big_free(a);
	jh_big_free(b);
}

TEST(reserving_then_pushing)
{
	uint32_t *a = NULL;
	size_t n = 0, cap = 0;
	CHECK_INT(JH_BIG_PUSH(a, n, cap, 42), 0);
	/* straight from the heap to a mapping far bigger than what is used */
	CHECK_INT(jh_big_grow(&a, &cap, n, (size_t)16 << 20, sizeof(*a)), 0);
	CHECK(cap >= (size_t)16 << 20);
	uint32_t *before = a;
	for (uint32_t i = 1; i < 100000; i++)
		CHECK_INT(JH_BIG_PUSH(a, n, cap, i), 0);
	CHECK(a == before);
	CHECK_INT(a[0], 42);
	CHECK_INT(a[99999], 99999);
	/* a request within the capacity changes nothing */
	CHECK_INT(jh_big_grow(&a, &cap, n, 10, sizeof(*a)), 0);
	CHECK(a == before);
	jh_big_free(a);
}

TEST(zalloc_zeroes)
{
	size_t n = (size_t)1 << 20;
	unsigned char *p = jh_zalloc(n, 4);
	CHECK(p != NULL);
	bool ok = true;
	for (size_t i = 0; p && i < n * 4; i += 512)
		ok &= !p[i];
	CHECK(ok);
	free(p);
	CHECK(jh_zalloc(SIZE_MAX / 2, 4) == NULL);
}

/* A heap_v2 dump of about BYTES bytes whose stacks are all distinct. */
static char *make_dump(size_t bytes, size_t *len)
{
	size_t cap = bytes + 4096, n = 0;
	char *buf = malloc(cap);
	if (!buf)
		return NULL;
	n += (size_t)snprintf(buf + n, cap - n, "heap_v2/524288\n  t*: 1: 2 [3: 4]\n");
	for (unsigned long s = 0; n + 1024 < bytes; s++) {
		n += (size_t)snprintf(buf + n, cap - n, "@");
		unsigned depth = 5 + s % 40;
		for (unsigned d = 0; d < depth; d++)
			n += (size_t)snprintf(buf + n, cap - n, " 0x%lx",
					      0x400000ul + (d ? (s * 31 + d) % 20000 : s % 3000) * 16);
		/* objects have bytes: objects of 0 bytes cannot be unsampled */
		n += (size_t)snprintf(buf + n, cap - n,
				      "\n  t*: %lu: %lu [%lu: %lu]\n  t%lu: %lu: %lu [%lu: %lu]\n",
				      s % 5 + 1, s * 48 + 48, s % 7, s * 64, s % 3, s % 5 + 1,
				      s * 48 + 48, s % 7, s * 64);
	}
	n += (size_t)snprintf(buf + n, cap - n,
			      "\nMAPPED_LIBRARIES:\n00400000-00600000 r-xp 00000000 08:01 1 /bin/prog\n");
	*len = n;
	return buf;
}

TEST(large_dump_in_one_and_two_threads)
{
	size_t len = 0;
	char *buf = make_dump((size_t)40 << 20, &len);
	CHECK(buf != NULL);
	if (!buf)
		return;
	struct profile one, two;
	char err[256];
	bool split = false;
	struct parse_options o = { .split = &(struct parse_split_options){ .done = &split } };
	setenv("JHEAP_THREADS", "1", 1);
	profile_init(&one);
	CHECK_INT(parse_buffer(&one, "t.heap", buf, len, &o, err, sizeof(err)), 0);
	CHECK(!split);
	setenv("JHEAP_THREADS", "2", 1);
	profile_init(&two);
	CHECK_INT(parse_buffer(&two, "t.heap", buf, len, &o, err, sizeof(err)), 0);
	CHECK(split);
	CHECK(one.nsamples > 50000);
	const char *d = profile_diff(&one, &two);
	if (d)
		fprintf(stderr, "split parse differs: %s\n", d);
	CHECK(d == NULL);
	/* the parser sized them up front: big, so in mappings */
	CHECK(mapped_len(one.stacks) && mapped_len(two.stacks));
	profile_release(&one);
	profile_release(&two);
	unsetenv("JHEAP_THREADS");
	free(buf);
}

int main(void)
{
	RUN(small_arrays_stay_on_the_heap);
	RUN(elements_survive_growth_into_and_between_mappings);
	RUN(reserving_then_pushing);
	RUN(zalloc_zeroes);
	RUN(large_dump_in_one_and_two_threads);
	return UNIT_END();
}

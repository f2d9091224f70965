/*
 * output/parwrite.h: the bytes of items written in chunks by one thread
 * or two are those of one pass over the items, in order, whatever the
 * chunk size (including chunks larger than an obuf, and held chunks
 * larger than the first room made for them); a failing chunk stops the
 * writing, and nothing after it is written.
 */
#include <stdint.h>
#include "lib/errors.h"
#include "output/parwrite.h"
#include "unit.h"

/* Item I's text: a line of I % 97 * 13 letters and its number, so that
 * items differ in size and a run of them passes the obuf's 64 KiB. */
static void item(struct obuf *o, size_t i)
{
	size_t n = i % 97 * 13;
	for (size_t k = 0; k < n; k++)
		obuf_putc(o, (char)('a' + (i + k) % 26));
	obuf_putc(o, ' ');
	obuf_u64(o, i);
	obuf_putc(o, '\n');
}

struct ctx {
	size_t fail_at;             /* the item whose chunk fails, SIZE_MAX none */
	size_t last[2];             /* per thread: the last item it wrote + 1 */
	int bad;                    /* a thread saw another's items */
};

static int items(void *arg, int who, size_t from, size_t to, struct obuf *o)
{
	struct ctx *c = arg;
	if (who < 0 || who > 1)
		c->bad = 1;
	for (size_t i = from; i < to; i++) {
		if (i == c->fail_at)
			return JH_ENOMEM;
		item(o, i);
	}
	c->last[who] = to;
	return 0;
}

/* The bytes FN writes for N items in chunks of PER with THREADS threads. */
static char *run(size_t n, size_t per, const char *threads, size_t fail_at, size_t *len, int *rc)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	setenv("JHEAP_THREADS", threads, 1);
	struct ctx c = { .fail_at = fail_at };
	*rc = parwrite(f, n, per, items, &c);
	unsetenv("JHEAP_THREADS");
	fclose(f);
	return buf;
}

static char *expected(size_t n, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct obuf *o = malloc(sizeof(*o));
	obuf_init(o, f);
	for (size_t i = 0; i < n; i++)
		item(o, i);
	obuf_flush(o);
	free(o);
	fclose(f);
	return buf;
}

TEST(same_bytes_as_one_pass)
{
	static const size_t ns[] = { 0, 1, 7, 1000, 20000 };
	static const size_t pers[] = { 0, 1, 3, 64, 5000, 1000000 };
	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++) {
		size_t elen;
		char *exp = expected(ns[a], &elen);
		for (size_t b = 0; b < sizeof(pers) / sizeof(pers[0]); b++)
			for (int t = 1; t <= 2; t++) {
				size_t len;
				int rc;
				char *got = run(ns[a], pers[b], t == 1 ? "1" : "2", SIZE_MAX, &len, &rc);
				CHECK_INT(rc, 0);
				CHECK_INT(len, elen);
				CHECK(len == elen && !memcmp(got, exp, len));
				free(got);
			}
		free(exp);
	}
}

/* Chunk 5 of 100-item chunks fails at item 550: what came out is a part
 * of the items before it, nothing after, and the failure is returned. */
TEST(failure_stops_the_writing)
{
	size_t elen;
	char *exp = expected(550, &elen);
	for (int t = 1; t <= 2; t++) {
		size_t len;
		int rc;
		char *got = run(20000, 100, t == 1 ? "1" : "2", 550, &len, &rc);
		CHECK_INT(rc, JH_ENOMEM);
		CHECK(len <= elen && !memcmp(got, exp, len));
		free(got);
	}
	free(exp);
}

int main(void)
{
	RUN(same_bytes_as_one_pass);
	RUN(failure_stops_the_writing);
	return UNIT_END();
}

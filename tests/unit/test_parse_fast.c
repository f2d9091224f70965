/*
 * The parser's fast paths against plain versions of the same thing:
 * read_addr()'s hex (eight bytes at a time, else a table) against
 * jh_hexval() byte by byte (every token shape, every bad byte at every
 * place, tokens that end the buffer: the buffers are allocated to the
 * byte, so ASan sees any read past them), the location cache and the
 * previous stack's frames against the model's own lookups, and
 * profile.c's unindexed appends.  parse.c is included for its static
 * functions.
 */
#include <errno.h>
#include <math.h>
#include "lib/chars.h"
#include "analyzer/parse.c"
#include "unit.h"

/* A plain byte loop over jh_hexval(), as the oracle. */
static int ref_addr(struct parser *ps, const char **s, const char *e, uint64_t *out)
{
	const char *q = *s;
	if (e - q >= 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	uint64_t v = 0;
	const char *digits = q;
	int d;
	while (q < e && (d = jh_hexval((unsigned char)*q)) >= 0) {
		if (v >> 60) {
			/* named by its token: the same whether the line was
			 * read to its end or up to text shared with the stack
			 * before */
			const char *w = *s;
			while (w < e && *w != ' ' && *w != '\t')
				w++;
			return perr(ps, JH_EFORMAT, "address '%.*s' is longer than 64 bits",
				    (int)(w - *s > 40 ? 40 : w - *s), *s);
		}
		v = v << 4 | (uint64_t)d;
		q++;
	}
	if (q == digits || (q < e && *q != ' ' && *q != '\t')) {
		const char *w = *s;
		while (w < e && *w != ' ' && *w != '\t')
			w++;
		return perr(ps, JH_EFORMAT, "expected a hex address, found '%.*s'",
			    (int)(w - *s > 40 ? 40 : w - *s), *s);
	}
	*s = q;
	*out = v;
	return 0;
}


/* Reads the token at offset AT of TEXT[0..len) (a copy exactly LEN bytes
 * long), its line ending at offset LINE_END, with both parsers; returns
 * nonzero when they differ in anything. */
static int compare(const char *text, size_t len, size_t at, size_t line_end)
{
	char *buf = malloc(len ? len : 1);
	if (!buf)
		abort();
	memcpy(buf, text, len);
	char err1[200] = "", err2[200] = "";
	struct parser a = { .name = "t", .buf = buf, .end = buf + len, .lineno = 1,
			    .err = err1, .errlen = sizeof(err1) };
	struct parser b = a;
	b.err = err2;
	parser_report_to(&a, NULL);
	parser_report_to(&b, NULL);
	const char *s1 = buf + at, *s2 = buf + at, *e = buf + line_end;
	uint64_t v1 = 1, v2 = 1;
	int r1 = read_addr(&a, &s1, e, &v1);
	int r2 = ref_addr(&b, &s2, e, &v2);
	int bad = r1 != r2 || s1 != s2 || v1 != v2 || strcmp(err1, err2);
	if (bad)
		fprintf(stderr, "token '%.*s' (at %zu, line end %zu, buffer %zu): "
			"table %d %llx +%td '%s', plain %d %llx +%td '%s'\n",
			(int)(line_end - at), text + at, at, line_end, len,
			r1, (unsigned long long)v1, s1 - buf, err1,
			r2, (unsigned long long)v2, s2 - buf, err2);
	free(buf);
	return bad;
}

/* TOKEN then TAIL in a buffer of PAD + strlen(token) + strlen(tail) bytes
 * (PAD bytes of spaces first); the line ends after the token, or at the
 * end of TAIL with WHOLE. */
static int check_token(const char *token, const char *tail, size_t pad, bool whole)
{
	char text[256];
	size_t tl = strlen(token), ul = strlen(tail);
	memset(text, ' ', pad);
	memcpy(text + pad, token, tl);
	memcpy(text + pad + tl, tail, ul);
	return compare(text, pad + tl + ul, pad, pad + tl + (whole ? ul : 0));
}

static const char digits[] = "0123456789abcdefABCDEF";

/* Odd bytes: letters past f, the x of the prefix, bytes next to the digit
 * and letter ranges, and some with the high bit set. */
static const char odd[] = "gGxX:/@`{\x7f\x80\xb0\xc1\xe6\xff\r\n\0.-+";

TEST(hex_every_length_and_prefix)
{
	static const char *prefixes[] = { "", "0x", "0X" };
	static const char *tails[] = { "", " ", "\t", " 0x1", "\n", "\r\n", "0123456789abcdef",
				       "ffffffffffffffffffff" };
	int bad = 0;
	for (size_t p = 0; p < 3; p++)
		for (size_t n = 1; n <= 20; n++)
			for (size_t t = 0; t < sizeof(tails) / sizeof(*tails); t++)
				for (size_t pad = 0; pad < 3; pad++)
					for (int first = 0; first < 3; first++) {
						char tok[40];
						size_t k = strlen(prefixes[p]);
						memcpy(tok, prefixes[p], k);
						for (size_t i = 0; i < n; i++)
							tok[k + i] = digits[(i * 7 + n + (size_t)first) % 22];
						/* a leading zero, a top digit f, any */
						if (first == 0)
							tok[k] = '0';
						else if (first == 1)
							tok[k] = 'F';
						tok[k + n] = '\0';
						bad += check_token(tok, tails[t], pad, false);
						bad += check_token(tok, tails[t], pad, true);
					}
	CHECK_INT(bad, 0);
}

TEST(hex_bad_byte_everywhere)
{
	int bad = 0;
	for (size_t n = 1; n <= 18; n++)
		for (size_t at = 0; at < n; at++)
			for (size_t o = 0; o < sizeof(odd) - 1; o++)
				for (int prefix = 0; prefix < 2; prefix++) {
					char tok[40];
					size_t k = prefix ? 2 : 0;
					memcpy(tok, "0x", k);
					for (size_t i = 0; i < n; i++)
						tok[k + i] = digits[(i * 5 + n) % 22];
					tok[k + at] = odd[o];
					/* NUL is a byte of the token too: compare by length */
					size_t tl = k + n;
					char text[64];
					memcpy(text, tok, tl);
					memcpy(text + tl, " 12", 3);
					bad += compare(text, tl + 3, 0, tl);
					bad += compare(text, tl + 3, 0, tl + 3);
					bad += compare(text, tl, 0, tl);
				}
	/* a prefix alone, and a broken prefix */
	bad += check_token("0x", "", 0, false);
	bad += check_token("0x", " 12", 0, false);
	bad += check_token("0x", "12345678901234567890", 0, false);
	bad += check_token("0xg1", "", 0, false);
	bad += check_token("0", "x1", 0, true);
	bad += check_token("x1", "", 0, false);
	bad += check_token("", "", 1, false);
	CHECK_INT(bad, 0);
}

static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

TEST(hex_random_tokens)
{
	int bad = 0;
	for (int i = 0; i < 300000 && bad < 10; i++) {
		char text[64];
		size_t len = 1 + next_rand() % 40, k = 0;
		if (next_rand() % 2) {
			text[k++] = '0';
			text[k++] = next_rand() % 2 ? 'x' : 'X';
		}
		for (; k < len; k++) {
			uint64_t r = next_rand() % 100;
			text[k] = r < 85 ? digits[next_rand() % 22] : r < 92 ? ' ' :
				  r < 94 ? '\t' : odd[next_rand() % (sizeof(odd) - 1)];
		}
		if (len > 1 && text[0] == ' ')
			text[0] = '1';
		size_t line_end = next_rand() % 2 ? len : next_rand() % (len + 1);
		bad += compare(text, len, 0, line_end);
	}
	CHECK_INT(bad, 0);
}

/* read_u64() against strtoull(): every length up to 22 digits, leading
 * zeros, the largest value and one more, a sign, a stop byte; the
 * buffer ends right after the number. */
static int check_u64(const char *text, size_t len)
{
	char *buf = malloc(len ? len : 1), z[64];
	if (!buf || len >= sizeof(z))
		abort();
	memcpy(buf, text, len);
	const char *q = buf;
	uint64_t v = 7;
	int r = read_u64(&q, buf + len, &v);
	memcpy(z, text, len);
	z[len] = 0;
	size_t ndig = strspn(z, "0123456789");
	int want;
	uint64_t wv = 7;
	if (len && z[0] == '-') {
		want = -2;
	} else if (!ndig) {
		want = 0;
	} else {
		errno = 0;
		char tmp[64];
		memcpy(tmp, z, ndig);
		tmp[ndig] = 0;
		wv = strtoull(tmp, NULL, 10);
		want = errno == ERANGE ? -1 : 1;
	}
	int bad = r != want || (r == 1 && (v != wv || q != buf + ndig)) ||
		  (r != 1 && (q != buf || v != 7));
	if (bad)
		fprintf(stderr, "decimal '%s': got %d %llu +%td, want %d %llu\n", z, r,
			(unsigned long long)v, q - buf, want, (unsigned long long)wv);
	free(buf);
	return bad;
}

TEST(decimal_against_strtoull)
{
	static const char *const edge[] = {
		"18446744073709551615", "18446744073709551616", "99999999999999999999",
		"1844674407370955161", "184467440737095516150", "0000000000000000000018446744073709551615",
		"00000000000000000000000000001", "9999999999999999999", "10000000000000000000",
		"-1", "-", "", "x", "12x", "1 2", "0", "007",
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
		bad += check_u64(edge[i], strlen(edge[i]));
	for (int i = 0; i < 200000 && bad < 10; i++) {
		char t[32];
		size_t n = next_rand() % 24, k = 0;
		for (; k < n; k++)
			t[k] = (char)('0' + next_rand() % 10);
		if (next_rand() % 4 == 0 && n)
			t[next_rand() % n] = " :[x"[next_rand() % 4];
		if (next_rand() % 3 == 0)
			for (size_t z = 0; z < n && next_rand() % 2; z++)
				t[z] = '0';
		bad += check_u64(t, n);
	}
	CHECK_INT(bad, 0);
}

static int parse(struct profile *p, const char *text, char *err, size_t errlen)
{
	profile_init(p);
	size_t len = strlen(text);
	char *copy = malloc(len);
	if (!copy)
		abort();
	memcpy(copy, text, len);
	int rc = parse_buffer(p, "t.heap", copy, len, NULL, err, errlen);
	free(copy);
	return rc;
}

static void check_stack(const struct profile *p, uint32_t sample, const char *want)
{
	char got[200] = "";
	size_t n = 0;
	const struct pf_sample *s = &p->samples[sample];
	for (uint32_t j = 0; j < s->depth && n < sizeof(got) - 40; j++) {
		const struct pf_location *l = &p->locs[p->stacks[s->stack0 + j]];
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%llx%s", j ? " " : "",
				      (unsigned long long)l->addr, l->leaf ? "L" : "");
	}
	CHECK_STR(got, want);
}

TEST(cache_tells_every_address_apart)
{
	/* the cache's key once was addr << 1 | leaf, which lost bit 63 */
	struct profile p;
	char err[256] = "";
	CHECK_INT(parse(&p, "heap_v2/1\n t*: 1: 1 [0: 0]\n"
			"@ 0x5 0x1 0x8000000000000001 0x1\n t*: 1: 1 [0: 0]\n", err, sizeof(err)), 0);
	CHECK_INT(p.nlocs, 3);
	check_stack(&p, 0, "5L 1 8000000000000001 1");
	profile_release(&p);
}

TEST(frames_from_the_previous_stack_keep_leafness)
{
	/* B's 0x1 sits where A's leaf is when aligned at the root; C's leaf
	 * 0x2 where A's non-leaf 0x2 is; D repeats B from the leaf side and
	 * E shares only its root with D */
	struct profile p;
	char err[256] = "";
	CHECK_INT(parse(&p, "heap_v2/1\n t*: 5: 5 [0: 0]\n"
			"@ 0x1 0x2 0x3\n t*: 1: 1 [0: 0]\n"
			"@ 0x5 0x1 0x2 0x3\n t*: 1: 1 [0: 0]\n"
			"@ 0x2 0x3\n t*: 1: 1 [0: 0]\n"
			"@ 0x5 0x1 0x2 0x3 0x4\n t*: 1: 1 [0: 0]\n"
			"@ 0x3 0x1 0x3 0x4\n t*: 1: 1 [0: 0]\n"
			"@ 0x3 0x1 0x3 0x4\n t*: 1: 1 [0: 0]\n"
			"@\n t*: 1: 1 [0: 0]\n"
			"@ 0x1 0x2 0x3\n t*: 1: 1 [0: 0]\n", err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_INT(p.nsamples, 6);
	check_stack(&p, 0, "1L 2 3");
	check_stack(&p, 1, "5L 1 2 3");
	check_stack(&p, 2, "2L 3");
	check_stack(&p, 3, "5L 1 2 3 4");
	check_stack(&p, 4, "3L 1 3 4");
	check_stack(&p, 5, "");
	CHECK_INT(p.samples[4].v[PF_INUSE_OBJECTS] > 0, 1);
	CHECK_INT(p.nlocs, 8);
	profile_release(&p);
}

TEST(text_shared_with_the_stack_before)
{
	/* each line against the one before: the same; one address more at
	 * the end (taken twice from it); an address whose text begins as
	 * the one before's; shorter; the first address gone (0x2 becomes
	 * the leaf); other spacing; no 0x; a leading zero; other case; a
	 * tail whose delimiter is not shared ("12 0x3") */
	struct profile p;
	char err[256] = "";
	CHECK_INT(parse(&p, "heap_v2/1\n t*: 9: 9 [0: 0]\n"
			"@ 0x1 0x2 0x3\n t*: 1: 1048576 [0: 0]\n"
			"@ 0x1 0x2 0x3\n t*: 1: 1048576 [0: 0]\n"
			"@ 0x1 0x2 0x3 0x3\n t*: 1: 1048576 [0: 0]\n"
			"@ 0x1 0x2 0x33\n t*: 1: 1048576 [0: 0]\n"
			"@ 0x1 0x2 0x3\n t*: 1: 1048576 [0: 0]\n"
			"@ 0x2 0x3\n t*: 1: 1048576 [0: 0]\n"
			"@  0x2\t0x3\n t*: 1: 1048576 [0: 0]\n"
			"@ 2 3\n t*: 1: 1048576 [0: 0]\n"
			"@ 0x02 0x3\n t*: 1: 1048576 [0: 0]\n"
			"@ 0xA 0xb\n t*: 1: 1048576 [0: 0]\n"
			"@ 0xa 0xB\n t*: 1: 1048576 [0: 0]\n"
			"@ 0x5 0x12 0x3\n t*: 1: 1048576 [0: 0]\n"
			"@ 0x5 0x112 0x3\n t*: 1: 1048576 [0: 0]\n"
			"@ 0x1 0x1\n t*: 1: 1048576 [0: 0]\n"
			"@ 0x1\n t*: 1: 1048576 [0: 0]\n"
			"@ 0x1 0x1\n t*: 1: 1048576 [0: 0]\n",
			err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_INT(p.nsamples, 9);
	check_stack(&p, 0, "1L 2 3");
	check_stack(&p, 1, "1L 2 3 3");
	check_stack(&p, 2, "1L 2 33");
	check_stack(&p, 3, "2L 3");
	check_stack(&p, 4, "aL b");
	check_stack(&p, 5, "5L 12 3");
	check_stack(&p, 6, "5L 112 3");
	check_stack(&p, 7, "1L 1");
	check_stack(&p, 8, "1L");
	/* the counts of every line went to its stack (large objects: not
	 * scaled up) */
	CHECK_INT(p.samples[0].v[PF_INUSE_OBJECTS], 3);
	CHECK_INT(p.samples[3].v[PF_INUSE_OBJECTS], 4);
	CHECK_INT(p.samples[7].v[PF_INUSE_OBJECTS], 2);
	profile_release(&p);
}

/* One address as text: with or without 0x or 0X, leading zeros, either
 * case. */
static size_t render_addr(char *out, uint64_t a)
{
	size_t k = 0;
	uint64_t r = next_rand();
	if (r % 4)
		out[k++] = '0', out[k++] = r % 4 == 3 ? 'X' : 'x';
	for (uint64_t z = (r >> 8) % 8 == 0 ? 1 + (r >> 16) % 2 : 0; z; z--)
		out[k++] = '0';
	char hex[20];
	int n = snprintf(hex, sizeof(hex), (r >> 20) % 5 ? "%llx" : "%llX", (unsigned long long)a);
	memcpy(out + k, hex, (size_t)n);
	return k + (size_t)n;
}

TEST(shared_text_against_every_address_read)
{
	/* Stacks made from the one before (the same text, addresses added or
	 * taken away at either end, one changed, one written otherwise), out
	 * of a few addresses so that texts coincide often; each stack against
	 * its addresses read by strtoull() */
	enum { NLINES = 4000, MAXF = 12 };
	static const uint64_t pool[] = { 0x1, 0x12, 0x123, 0x2, 0x21, 0x3, 0x7f00001234,
					 0x7f00001235, 0x55550000a0, 0x55550000a, 0xabc, 0xab };
	size_t cap = (size_t)NLINES * (MAXF * 24 + 40) + 64, len = 0;
	char *text = malloc(cap);
	char (*want)[MAXF * 24] = calloc(NLINES, sizeof(*want));
	size_t nwant = 0;
	uint64_t *locs = calloc((size_t)NLINES * MAXF, sizeof(*locs));
	size_t nlocs = 0;
	uint32_t *sample_of = calloc(NLINES, sizeof(*sample_of));
	if (!text || !want || !locs || !sample_of)
		abort();
	len += (size_t)sprintf(text, "heap_v2/1\n t*: 1: 1048576 [0: 0]\n");
	char prevtok[MAXF][24], tok[MAXF][24];
	size_t pn = 0;
	for (int line = 0; line < NLINES; line++) {
		size_t n = 0;
		uint64_t r = next_rand() % 10;
		for (size_t i = 0; i < pn; i++)
			strcpy(tok[i], prevtok[i]);
		n = pn;
		if (r == 0 || !pn) {            /* a new stack */
			n = next_rand() % (MAXF - 2);
			for (size_t i = 0; i < n; i++)
				tok[i][render_addr(tok[i], pool[next_rand() % 12])] = 0;
		} else if (r == 1 && n) {       /* the first address gone */
			memmove(tok, tok + 1, --n * sizeof(tok[0]));
		} else if (r == 2 && n < MAXF) { /* one more in front */
			memmove(tok + 1, tok, n++ * sizeof(tok[0]));
			tok[0][render_addr(tok[0], pool[next_rand() % 12])] = 0;
		} else if (r == 3 && n) {       /* the last one gone */
			n--;
		} else if (r == 4 && n < MAXF) { /* one more at the end */
			tok[n][render_addr(tok[n], pool[next_rand() % 12])] = 0;
			n++;
		} else if (r == 5 && n) {       /* one changed */
			size_t i = next_rand() % n;
			tok[i][render_addr(tok[i], pool[next_rand() % 12])] = 0;
		} else if (r == 6 && n) {       /* a digit more or less */
			size_t i = next_rand() % n, l = strlen(tok[i]);
			if (l > 3 && next_rand() % 2)
				tok[i][l - 1] = 0;
			else if (l < 20)
				tok[i][l] = "0123456789abcdef"[next_rand() % 16], tok[i][l + 1] = 0;
		}                               /* else the same */
		len += (size_t)sprintf(text + len, "@");
		size_t wl = 0;
		char w[MAXF * 24];
		w[0] = 0;
		for (size_t i = 0; i < n; i++) {
			uint64_t sep = next_rand() % 8;
			len += (size_t)sprintf(text + len, "%s%s", sep == 0 ? "\t" : sep == 1 ? "  " : " ",
					       tok[i]);
			uint64_t a = strtoull(tok[i], NULL, 16);
			wl += (size_t)snprintf(w + wl, sizeof(w) - wl, "%s%llx%s", i ? " " : "",
					       (unsigned long long)a, i ? "" : "L");
			uint64_t key = a << 1 | !i;     /* the pool's addresses are small */
			size_t k = 0;
			while (k < nlocs && locs[k] != key)
				k++;
			if (k == nlocs)
				locs[nlocs++] = key;
		}
		len += (size_t)sprintf(text + len, "%s\n t*: 1: 1048576 [0: 0]\n",
				       next_rand() % 16 ? "" : " ");
		size_t k = 0;
		while (k < nwant && strcmp(want[k], w))
			k++;
		if (k == nwant)
			strcpy(want[nwant++], w);
		sample_of[line] = (uint32_t)k;
		for (size_t i = 0; i < n; i++)
			strcpy(prevtok[i], tok[i]);
		pn = n;
	}
	text[len] = 0;
	struct profile p;
	char err[256] = "";
	CHECK_INT(parse(&p, text, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_INT(p.nsamples, nwant);
	CHECK_INT(p.nlocs, nlocs);
	int bad = 0;
	for (size_t i = 0; i < nwant && i < p.nsamples && bad < 5; i++) {
		int before = unit_cur_failed;
		check_stack(&p, (uint32_t)i, want[i]);
		bad += unit_cur_failed != before;
	}
	/* every line's counts went to its own stack */
	double *objs = calloc(nwant + 1, sizeof(*objs));
	for (int line = 0; line < NLINES; line++)
		objs[sample_of[line]] += 1;
	for (size_t i = 0; i < nwant && i < p.nsamples; i++)
		bad += p.samples[i].v[PF_INUSE_OBJECTS] != objs[i];
	CHECK_INT(bad, 0);
	profile_release(&p);
	free(objs);
	free(text);
	free(want);
	free(locs);
	free(sample_of);
}

TEST(counts_text_read_again_or_not)
{
	/* each counts line against the last one read: the same text for the
	 * record's thread, the next record and another thread (values taken
	 * over: one-byte objects at period 1 are scaled by 1 / (1 - 1/e), so
	 * raw values taken over would show); the header's thread line with
	 * the text a record line has, then a name (read whole); the same
	 * counts with text after them (an error) */
	struct profile p;
	char err[256] = "";
	CHECK_INT(parse(&p, "heap_v2/1\n t*: 3: 3 [0: 0]\n t7: 2: 2 [0: 0] worker\n"
			"@ 0x1\n t*: 2: 2 [0: 0]\n t7: 2: 2 [0: 0]\n"
			"@ 0x2\n t*: 2: 2 [0: 0]\n t3: 2: 2 [0: 0]\n t7: 1: 1 [0: 0]\n"
			"@ 0x3\n t*: 1: 1 [1: 1]\n t7: 1: 1 [1: 1]\n",
			err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_INT(p.nsamples, 3);
	CHECK_INT(p.nthreads, 2);
	CHECK_STR(strtab_get(&p.strs, p.threads[0].name), "worker");
	CHECK(p.threads[0].v[PF_INUSE_SPACE] == 2);
	double k = 1 / (1 - exp(-1.0));
	CHECK(p.samples[0].v[PF_INUSE_SPACE] == 2 * k);
	CHECK(p.samples[1].v[PF_INUSE_SPACE] == 2 * k);
	CHECK(p.samples[2].v[PF_ALLOC_SPACE] == k);
	CHECK(p.has_alloc);
	CHECK_INT(p.ntvals, 4);
	double sum[2] = { 0, 0 };
	for (size_t i = 0; i < p.ntvals; i++)
		sum[p.tvals[i].thread] += p.tvals[i].v[PF_INUSE_OBJECTS];
	CHECK(sum[0] == 2 * k + k + k && sum[1] == 2 * k);
	profile_release(&p);
	CHECK_INT(parse(&p, "heap_v2/1\n t*: 1: 1 [0: 0]\n"
			"@ 0x1\n t*: 2: 64 [0: 0]\n t7: 2: 64 [0: 0] x\n", err, sizeof(err)),
		  JH_EFORMAT);
	CHECK_STR(err, "t.heap:5: unexpected text after the counts");
	profile_release(&p);
}

TEST(bad_address_after_good_ones)
{
	/* the frames before the bad one are locations, as they always were */
	struct profile p;
	char err[256] = "";
	CHECK_INT(parse(&p, "heap_v2/1\n t*: 1: 1 [0: 0]\n"
			"@ 0x1 0x2\n t*: 1: 1 [0: 0]\n@ 0x7 0x2 0x9 0xq 0x8\n t*: 1: 1 [0: 0]\n",
			err, sizeof(err)), JH_EFORMAT);
	CHECK_STR(err, "t.heap:5: expected a hex address, found '0xq'");
	CHECK_INT(p.nlocs, 4);
	CHECK_INT(p.nsamples, 1);
	profile_release(&p);
	CHECK_INT(parse(&p, "heap_v2/1\n t*: 1: 1 [0: 0]\n@ 0x1 0x2 0x12345678901234567",
			err, sizeof(err)), JH_EFORMAT);
	CHECK_STR(err, "t.heap:3: address '0x12345678901234567' is longer than 64 bits");
	CHECK_INT(p.nlocs, 2);
	profile_release(&p);
	/* named alone, not with the rest of its line */
	CHECK_INT(parse(&p, "heap_v2/1\n t*: 1: 1 [0: 0]\n@ 0x1 0x12345678901234567 0x2",
			err, sizeof(err)), JH_EFORMAT);
	CHECK_STR(err, "t.heap:3: address '0x12345678901234567' is longer than 64 bits");
	CHECK_INT(p.nlocs, 1);
	profile_release(&p);
}

TEST(appends_are_indexed_later)
{
	struct profile p;
	profile_init(&p);
	uint32_t a[] = { 0, 1 }, b[] = { 1, 0 }, c[] = { 2 };
	CHECK_INT(profile_location(&p, 0x10, true, UINT32_MAX), 0);
	CHECK_INT(profile_location_append(&p, 0x20, false, UINT32_MAX), 1);
	CHECK_INT(profile_location_append(&p, 0x30, false, UINT32_MAX), 2);
	/* a find sees the indexed ones only; profile_location() catches up */
	CHECK(profile_location_find(&p, 0x20, false, UINT32_MAX) == UINT32_MAX);
	CHECK_INT(profile_location(&p, 0x20, false, UINT32_MAX), 1);
	CHECK_INT(profile_location(&p, 0x30, false, UINT32_MAX), 2);
	CHECK_INT(profile_location(&p, 0x30, true, UINT32_MAX), 3);
	CHECK_INT(profile_location_find(&p, 0x30, false, UINT32_MAX), 2);

	CHECK_INT(profile_sample(&p, a, 2), 0);
	CHECK_INT(profile_sample_append(&p, b, 2), 1);
	CHECK_INT(profile_sample_append(&p, NULL, 0), 2);
	CHECK(profile_sample_find(&p, b, 2, profile_stack_hash(b, 2)) == UINT32_MAX);
	CHECK_INT(profile_sample(&p, b, 2), 1);
	CHECK_INT(profile_sample(&p, NULL, 0), 2);
	CHECK_INT(profile_sample(&p, c, 1), 3);
	CHECK_INT(profile_sample(&p, a, 2), 0);
	CHECK_INT(p.nsamples, 4);
	CHECK_INT(profile_sample_find(&p, c, 1, profile_stack_hash(c, 1)), 3);
	profile_release(&p);
}

TEST(split_parse_leaves_usable_indexes)
{
	/* the second half's records are appended unindexed: looking every
	 * record up afterwards must find it, not add it again */
	static const char dump[] =
		"heap_v2/1\n t*: 9: 9 [0: 0]\n"
		"@ 0x1 0x2 0x3\n t*: 1: 1 [0: 0]\n"
		"@ 0x4 0x2 0x3\n t*: 1: 1 [0: 0]\n"
		"@ 0x1 0x2 0x3\n t*: 1: 1 [0: 0]\n"
		"@ 0x5 0x6\n t*: 1: 1 [0: 0]\n"
		"@ 0x4 0x2 0x3\n t*: 1: 1 [0: 0]\n"
		"@ 0x7 0x2 0x3\n t*: 1: 1 [0: 0]\n"
		"@\n t*: 1: 1 [0: 0]\n";
	struct profile p;
	bool split = false;
	char err[256] = "";
	/* the second half starts at the third stack */
	const char *cut = strstr(dump, "@ 0x1 0x2 0x3\n t*: 1: 1 [0: 0]\n@ 0x5");
	struct parse_split_options so = { .at = (size_t)(cut - dump), .done = &split };
	struct parse_options o = { .split = &so };
	profile_init(&p);
	CHECK_INT(parse_buffer(&p, "t.heap", dump, sizeof(dump) - 1, &o, err, sizeof(err)), 0);
	CHECK(split);
	CHECK_INT(p.nsamples, 5);
	size_t nlocs = p.nlocs, nsamples = p.nsamples;
	for (size_t i = 0; i < nlocs; i++)
		CHECK_INT(profile_location(&p, p.locs[i].addr, p.locs[i].leaf, p.locs[i].mapping),
			  (int64_t)i);
	for (size_t i = 0; i < nsamples; i++) {
		uint32_t st[8];
		memcpy(st, p.stacks + p.samples[i].stack0, p.samples[i].depth * sizeof(*st));
		CHECK_INT(profile_sample(&p, st, p.samples[i].depth), (int64_t)i);
	}
	CHECK_INT(p.nlocs, nlocs);
	CHECK_INT(p.nsamples, nsamples);
	profile_release(&p);
}

static int same_id(const void *ctx, uint32_t id)
{
	return *(const uint32_t *)ctx == id;
}

TEST(idmap_reserve_and_grow)
{
	/* two ids a hash, told apart by the callback */
	struct idmap m;
	idmap_init(&m);
	CHECK_INT(idmap_reserve(&m, 1000), 0);
	size_t cap = m.cap;
	CHECK(cap * 3 > 1000 * 4);
	for (uint32_t i = 0; i < 1000; i++)
		CHECK_INT(idmap_put(&m, i / 2, i), 0);
	CHECK_INT(m.cap, cap);
	for (uint32_t i = 1000; i < 5000; i++)
		CHECK_INT(idmap_put(&m, i / 2, i), 0);
	CHECK(m.cap > cap);
	int bad = 0;
	for (uint32_t i = 0; i < 5000; i++)
		bad += idmap_find(&m, i / 2, same_id, &i) != i;
	uint32_t absent = 5000;
	bad += idmap_find(&m, 7, same_id, &absent) != UINT32_MAX;
	bad += idmap_find(&m, 2500, same_id, &absent) != UINT32_MAX;
	CHECK_INT(bad, 0);
	CHECK_INT(idmap_reserve(&m, 10), 0);
	CHECK(m.cap > cap);
	idmap_release(&m);
}

int main(void)
{
	RUN(hex_every_length_and_prefix);
	RUN(hex_bad_byte_everywhere);
	RUN(hex_random_tokens);
	RUN(decimal_against_strtoull);
	RUN(cache_tells_every_address_apart);
	RUN(frames_from_the_previous_stack_keep_leafness);
	RUN(text_shared_with_the_stack_before);
	RUN(shared_text_against_every_address_read);
	RUN(counts_text_read_again_or_not);
	RUN(bad_address_after_good_ones);
	RUN(appends_are_indexed_later);
	RUN(split_parse_leaves_usable_indexes);
	RUN(idmap_reserve_and_grow);
	return UNIT_END();
}

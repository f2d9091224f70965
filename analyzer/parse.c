#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/array.h"
#include "analyzer/bigarray.h"
#include "analyzer/errors.h"
#include "analyzer/maps.h"
#include "analyzer/names.h"
#include "analyzer/parse.h"
#include "analyzer/pprof.h"
#include "analyzer/readfile.h"
#include "analyzer/threads.h"
#include "analyzer/unsample.h"

struct split;

struct parser {
	struct profile *p;
	const char *name;
	const char *buf, *end, *pos;
	unsigned long lineno;
	bool last_unterminated;
	const struct parse_options *o;
	char *err;
	size_t errlen;
	enum unsample_kind uk;
	double rate;
	/* a stack's text, addresses, location ids and where each address is
	 * in the text: stk[cur] the one being read, the other the one before
	 * it */
	struct stackbuf {
		const char *text;
		size_t len;
		uint64_t *addrs;
		uint32_t *frames;
		struct tokpos { uint32_t start, end; } *tok;
		size_t n, cap;
	} stk[2];
	int cur_stk;
	/* Consecutive stacks share most of their frames: a cache of
	 * (address, leaf) -> location id in front of the model's hash table,
	 * in sets of two slots (lcache_set).  Allocated on the first stack. */
	struct loc_cache { uint64_t addr; uint32_t tag, id; } *lcache;
	int lcache_bits;        /* it has 1 << lcache_bits slots */
	int64_t cur;            /* current sample, -1 before the first stack */
	unsigned long cur_line; /* line of the current stack's '@' */
	bool cur_has_counts;
	bool symbolized;        /* a "--- symbol" section came first */
	/* Every frame of a stack is a return address, the first one too
	 * (gperftools' "heap profile:": its sampler records its caller's
	 * return address first); in heap_v2 the first is a pc inside
	 * jemalloc.  The one place that decides each location's lookup pc
	 * (pf_location.leaf). */
	bool all_return;
	/* A heap_v2 body parsed in two halves (parse_v2_split): the first
	 * half's parser points at the split while it runs (end is then the
	 * split point); the second half's parser has second set. */
	struct split *sp;
	bool second;
	bool cur_fresh;         /* the current stack made a new sample that has
	                           had no "t*" line yet */
	/* the text after "tN:" of the last counts line of a record read and
	 * its values (unsampled), when counts_known (record_counts) */
	bool counts_known;
	const char *counts_text;
	size_t counts_len;
	double counts_v[PF_NVALUES];
	double sum[PF_NVALUES];  /* of the records read (PARSE_MAX_VALUE) */
};

/* The second half of a split heap_v2 body: its parser and profile, and
 * what the first half replays from it once both are done. */
struct split {
	const char *end;        /* of the whole buffer */
	struct parser ps;
	struct profile p;
	int rc;
	/* its error without "NAME:LINE: " and the line relative to the split */
	char msg[512];
	unsigned long err_line;
	/* warnings, likewise, in order */
	struct split_warning { unsigned long line; char *msg; } *warns;
	size_t nwarns, cap_warns;
	bool warn_oom;
	bool truncated;         /* it found the file cut short (note_truncated) */
	/* "t*" lines after the first one of a sample: applied in this order
	 * after the first ones, so that every sum is made in the order the
	 * sequential parser makes it */
	struct split_add { uint32_t sample; double v[PF_NVALUES]; } *adds;
	size_t nadds, cap_adds;
	atomic_size_t done;     /* bytes read, for the first half's progress */
	atomic_bool cancel;     /* the first half failed: stop early */
	/* parse_options.core_idle, called by the half done first */
	void (*core_idle)(void *ctx);
	void *ctx;
	atomic_bool half_done;
};

static void split_half_done(struct split *sp)
{
	if (!atomic_exchange(&sp->half_done, true) && sp->core_idle)
		sp->core_idle(sp->ctx);
}

__attribute__((format(printf, 3, 4)))
static int perr(struct parser *ps, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->second) {
		/* the line number is known once the first half is done */
		ps->sp->err_line = ps->lineno;
		return jh_err(ps->err, ps->errlen, code, "%s", msg);
	}
	return jh_err(ps->err, ps->errlen, code, "%s:%lu: %s", ps->name, ps->lineno, msg);
}

/* The file looks cut short (parse_options.truncated). */
static void note_truncated(struct parser *ps)
{
	if (ps->second)
		ps->sp->truncated = true;   /* passed on when the halves are joined */
	else if (ps->o && ps->o->truncated)
		*ps->o->truncated = true;
}

__attribute__((format(printf, 2, 3)))
static void pwarn(struct parser *ps, const char *fmt, ...)
{
	if (!ps->second && (!ps->o || !ps->o->warn))
		return;
	char msg[600], full[800];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ps->second) {
		struct split *sp = ps->sp;
		struct split_warning w = { ps->lineno, strdup(msg) };
		if (!w.msg || JH_PUSH(sp->warns, sp->nwarns, sp->cap_warns, w)) {
			free(w.msg);
			sp->warn_oom = true;
		}
		return;
	}
	snprintf(full, sizeof(full), "%s:%lu: %s", ps->name, ps->lineno, msg);
	ps->o->warn(ps->o->ctx, full);
}

/* Every 65536 lines: progress, and for a second half, the first half's
 * request to stop. */
static int tick(struct parser *ps)
{
	if (ps->second) {
		atomic_store_explicit(&ps->sp->done, (size_t)(ps->pos - ps->buf),
				      memory_order_relaxed);
		if (atomic_load_explicit(&ps->sp->cancel, memory_order_relaxed))
			return jh_err(ps->err, ps->errlen, JH_EUSAGE, "cancelled");
		return 0;
	}
	if (!ps->o || !ps->o->progress)
		return 0;
	size_t done = (size_t)(ps->pos - ps->buf);
	const char *end = ps->end;
	if (ps->sp) {
		done += atomic_load_explicit(&ps->sp->done, memory_order_relaxed);
		end = ps->sp->end;
	}
	ps->o->progress(ps->o->ctx, ps->name, done, (size_t)(end - ps->buf));
	return 0;
}

/* Next line without its newline (and a trailing \r); false at the end. */
static int next_line(struct parser *ps, const char **line, size_t *len)
{
	if (ps->pos >= ps->end)
		return 0;
	const char *s = ps->pos;
	/* no further than a line may be long: the rest of a huge file is
	 * not touched */
	size_t left = (size_t)(ps->end - s);
	const char *nl = memchr(s, '\n', left > PARSE_MAX_LINE + 1 ? PARSE_MAX_LINE + 1 : left);
	const char *e = nl ? nl : ps->end;
	ps->pos = nl ? nl + 1 : ps->end;
	ps->lineno++;
	ps->last_unterminated = !nl;
	if (!(ps->lineno & 0xffff)) {
		int r = tick(ps);
		if (r)
			return r;
	}
	if ((size_t)(e - s) > PARSE_MAX_LINE)
		return perr(ps, JH_ELIMIT, "line longer than %u bytes", PARSE_MAX_LINE);
	if (e > s && e[-1] == '\r')
		e--;
	*line = s;
	*len = (size_t)(e - s);
	return 1;
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
		(*n)--;
}

static bool starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);
	return n >= k && !memcmp(s, prefix, k);
}

/* "---" followed by optional spaces then WORD. */
static bool section(const char *s, size_t n, const char *word)
{
	if (!starts(s, n, "---"))
		return false;
	s += 3;
	n -= 3;
	while (n && *s == ' ') {
		s++;
		n--;
	}
	return starts(s, n, word);
}

static void skip_sp(const char **s, const char *e)
{
	while (*s < e && (**s == ' ' || **s == '\t'))
		(*s)++;
}

/* Decimal u64; 1 ok, 0 no digits, -1 overflow, -2 negative. */
static int read_u64(const char **s, const char *e, uint64_t *out)
{
	const char *q = *s;
	uint64_t v = 0;
	if (q < e && *q == '-')
		return -2;
	/* 19 digits cannot overflow; only longer numbers are checked */
	const char *safe = e - q > 19 ? q + 19 : e;
	while (q < safe && (unsigned char)(*q - '0') < 10)
		v = v * 10 + (unsigned)(*q++ - '0');
	while (q < e && (unsigned char)(*q - '0') < 10) {
		unsigned d = (unsigned)(*q - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
		q++;
	}
	if (q == *s)
		return 0;
	*s = q;
	*out = v;
	return 1;
}

static int expect_num(struct parser *ps, const char **s, const char *e, uint64_t *v,
		      const char *what)
{
	skip_sp(s, e);
	int r = read_u64(s, e, v);
	if (r == 1)
		return 0;
	if (r == -1)
		return perr(ps, JH_EFORMAT, "%s does not fit in 64 bits", what);
	if (r == -2)
		return perr(ps, JH_EFORMAT, "%s is negative", what);
	return perr(ps, JH_EFORMAT, "expected %s", what);
}

static int expect_char(struct parser *ps, const char **s, const char *e, char c,
		       const char *what)
{
	skip_sp(s, e);
	if (*s < e && **s == c) {
		(*s)++;
		return 0;
	}
	return perr(ps, JH_EFORMAT, "expected '%c' %s", c, what);
}

/* "objs: bytes [aobjs: abytes]" into v[4], raw (not yet unsampled). */
static int read_counts(struct parser *ps, const char **s, const char *e, double v[PF_NVALUES])
{
	uint64_t a, b, c, d;
	if (expect_num(ps, s, e, &a, "an object count") ||
	    expect_char(ps, s, e, ':', "after the object count") ||
	    expect_num(ps, s, e, &b, "a byte count") ||
	    expect_char(ps, s, e, '[', "before the accumulated counts") ||
	    expect_num(ps, s, e, &c, "an accumulated object count") ||
	    expect_char(ps, s, e, ':', "after the accumulated object count") ||
	    expect_num(ps, s, e, &d, "an accumulated byte count") ||
	    expect_char(ps, s, e, ']', "after the accumulated counts"))
		return JH_EFORMAT;
	v[PF_INUSE_OBJECTS] = (double)a;
	v[PF_INUSE_SPACE] = (double)b;
	v[PF_ALLOC_OBJECTS] = (double)c;
	v[PF_ALLOC_SPACE] = (double)d;
	if (c || d)
		ps->p->has_alloc = true;
	return 0;
}

/* A record's counts, unsampled.  A pair that unsampling cannot turn
 * into a finite number within PARSE_MAX_VALUE (objects of 0 bytes under
 * sampling divide by zero; a period of 2^63 makes each sample stand for
 * more memory than there is) is an error naming the line. */
static int adjust(struct parser *ps, double v[PF_NVALUES])
{
	double raw[PF_NVALUES];
	memcpy(raw, v, sizeof(raw));
	unsample_pair(ps->uk, ps->rate, &v[PF_INUSE_OBJECTS], &v[PF_INUSE_SPACE]);
	unsample_pair(ps->uk, ps->rate, &v[PF_ALLOC_OBJECTS], &v[PF_ALLOC_SPACE]);
	for (int j = 0; j < PF_NVALUES; j += 2) {
		if (v[j] <= PARSE_MAX_VALUE && v[j + 1] <= PARSE_MAX_VALUE)
			continue;
		if (raw[j] > 0 && raw[j + 1] == 0)
			return perr(ps, JH_EFORMAT,
				    "%.0f objects of 0 bytes: under sampling (one sample per %.0f bytes) such counts cannot be unsampled (a damaged dump?)",
				    raw[j], ps->rate);
		return perr(ps, JH_EFORMAT,
			    "%.0f objects of %.0f bytes, unsampled with one sample per %.0f bytes, stand for more than 2^60 bytes or objects (a damaged dump?)",
			    raw[j], raw[j + 1], ps->rate);
	}
	return 0;
}

/* Adds a record's values to the running sums of the file: past
 * PARSE_MAX_VALUE, an error naming the line. */
static int add_sums(struct parser *ps, const double v[PF_NVALUES])
{
	for (int j = 0; j < PF_NVALUES; j++)
		if ((ps->sum[j] += v[j]) > PARSE_MAX_VALUE)
			return perr(ps, JH_ELIMIT,
				    "the records up to this one add up to more than 2^60 %s (a damaged dump?)",
				    j == PF_INUSE_OBJECTS || j == PF_ALLOC_OBJECTS ? "objects" : "bytes");
	return 0;
}

/* jh_hexval() plus one as a table (0: not a hex digit): addresses are most
 * of a dump's bytes. */
static const unsigned char hex_table[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
	['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
	['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15,
	['F'] = 16,
};


/* One address "0x1a2b" (the 0x is optional, as in jeprof). */
static int read_addr(struct parser *ps, const char **s, const char *e, uint64_t *out)
{
	const char *q = *s;
	if (e - q >= 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	uint64_t v = 0;
	const char *digits = q;
	int d;
	bool long_addr = false;
	while (q < e && (d = hex_table[(unsigned char)*q] - 1) >= 0) {
		if (v >> 60) {
			long_addr = true;
			break;
		}
		v = v << 4 | (uint64_t)d;
		q++;
	}
	if (long_addr || q == digits || (q < e && *q != ' ' && *q != '\t')) {
		/* the token, up to 40 bytes of it */
		const char *w = *s;
		while (w < e && *w != ' ' && *w != '\t')
			w++;
		int n = (int)(w - *s > 40 ? 40 : w - *s);
		if (long_addr)
			return perr(ps, JH_EFORMAT, "address '%.*s' is longer than 64 bits", n, *s);
		return perr(ps, JH_EFORMAT, "expected a hex address, found '%.*s'", n, *s);
	}
	*s = q;
	*out = v;
	return 0;
}

/* The location cache has a slot per 32 bytes of text, within these
 * bounds: the slots are cleared up front, and a small dump's few
 * addresses need no megabyte. */
#define LCACHE_MIN_BITS 10
#define LCACHE_BITS 16

/* The cache's slots come in sets of two, the one used last first: on the
 * benchmark's dumps a slot of its own for each address missed a tenth of
 * the time, mostly on two addresses that took turns in a slot. */
static struct loc_cache *lcache_set(struct parser *ps, uint64_t addr, bool leaf)
{
	uint64_t h = (addr ^ leaf) * 0x9e3779b97f4a7c15ULL;
	return &ps->lcache[(h >> (64 - ps->lcache_bits)) & ~(uint64_t)1];
}

/* Location id of ADDR (a leaf when LEAF), through the cache. */
static int64_t location(struct parser *ps, uint64_t addr, bool leaf)
{
	struct loc_cache *set = lcache_set(ps, addr, leaf);
	/* tag 0 marks an empty slot */
	uint32_t tag = 1u + leaf;
	if (set[0].addr == addr && set[0].tag == tag)
		return set[0].id;
	if (set[1].addr == addr && set[1].tag == tag) {
		struct loc_cache hit = set[1];
		set[1] = set[0];
		set[0] = hit;
		return hit.id;
	}
	int64_t id = profile_location(ps->p, addr, leaf, UINT32_MAX);
	if (id >= 0) {
		set[1] = set[0];
		set[0] = (struct loc_cache){ addr, tag, (uint32_t)id };
	}
	return id;
}

/* The parser's own buffers. */
static void parser_free(struct parser *ps)
{
	for (int k = 0; k < 2; k++) {
		free(ps->stk[k].addrs);
		free(ps->stk[k].frames);
		free(ps->stk[k].tok);
	}
	free(ps->lcache);
}

/* Room for NEED frames in all of B's arrays. */
static int stackbuf_reserve(struct stackbuf *b, size_t need)
{
	if (need <= b->cap)
		return 0;
	/* jh_grow() gives each array the same new capacity */
	size_t c1 = b->cap, c2 = b->cap, c3 = b->cap;
	if (jh_grow(&b->addrs, &c1, need, sizeof(*b->addrs)) ||
	    jh_grow(&b->frames, &c2, need, sizeof(*b->frames)) ||
	    jh_grow(&b->tok, &c3, need, sizeof(*b->tok)))
		return JH_ENOMEM;
	b->cap = c1;
	return 0;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define FIRST_BYTE(x) ((size_t)__builtin_ctzll(x) / 8)
#define LAST_BYTE(x) ((size_t)__builtin_clzll(x) / 8)
#else
#define FIRST_BYTE(x) ((size_t)__builtin_clzll(x) / 8)
#define LAST_BYTE(x) ((size_t)__builtin_ctzll(x) / 8)
#endif

/* How many of the N bytes at A and at B are the same from the start. */
static size_t common_head(const char *a, const char *b, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			return i + FIRST_BYTE(x ^ y);
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* How many of the N bytes before AEND and before BEND are the same from
 * the end. */
static size_t common_tail(const char *aend, const char *bend, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;
		memcpy(&x, aend - i - 8, 8);
		memcpy(&y, bend - i - 8, 8);
		if (x != y)
			return i + LAST_BYTE(x ^ y);
	}
	while (i < n && aend[-1 - (ptrdiff_t)i] == bend[-1 - (ptrdiff_t)i])
		i++;
	return i;
}

/* Whether a token of S (LEN bytes) ending at AT ends there. */
static bool token_ends(const char *s, size_t len, size_t at)
{
	return at == len || s[at] == ' ' || s[at] == '\t';
}

/* The frames after '@' (or after "@ " in a gperftools entry) into a sample.
 * A stack shares most of its frames with the one before, at the same
 * place from the leaf (the allocator's own frames) or from the root
 * (main and the frames under it).  Where the two lines have the same
 * text, at their start and at their end, whole addresses are taken with
 * their location ids from the stack before without reading them (on the
 * benchmark's dumps over half of them).  The addresses between are read
 * and go through the cache, whose slots are asked for before any is read
 * so that their cache misses overlap. */
static int read_stack(struct parser *ps, const char *s, const char *e)
{
	struct stackbuf *cur = &ps->stk[ps->cur_stk], *prev = &ps->stk[!ps->cur_stk];
	size_t len = (size_t)(e - s), pn = prev->n, plen = prev->len;
	int rc = 0;
	if (!ps->lcache) {
		size_t text = (size_t)(ps->end - ps->buf);
		ps->lcache_bits = LCACHE_MIN_BITS;
		while (ps->lcache_bits < LCACHE_BITS && ((size_t)32 << ps->lcache_bits) < text)
			ps->lcache_bits++;
		/* a set in one cache line */
		size_t bytes = ((size_t)1 << ps->lcache_bits) * sizeof(*ps->lcache);
		ps->lcache = aligned_alloc(64, bytes);
		if (!ps->lcache)
			return perr(ps, JH_ENOMEM, "out of memory");
		memset(ps->lcache, 0, bytes);
	}
	/* HEAD addresses of the stack before begin this line, and TAIL end
	 * it; the text between FROM and TO is read */
	size_t head = 0, tail = 0, from = 0, to = len;
	ptrdiff_t delta = (ptrdiff_t)len - (ptrdiff_t)plen;
	if (pn) {
		const char *pt = prev->text;
		size_t m = len < plen ? len : plen;
		size_t d = common_head(s, pt, m);
		while (head < pn && (prev->tok[head].end < d ||
				     (prev->tok[head].end == d && token_ends(s, len, d) &&
				      token_ends(pt, plen, d))))
			head++;
		if (head)
			from = prev->tok[head - 1].end;
		/* an address at the end whose delimiter before it is the same
		 * on both lines and in this one after FROM; never the leaf of
		 * the stack before, whose leaf-ness differs */
		size_t t = common_tail(e, pt + plen, m);
		while (tail + 1 < pn) {
			const struct tokpos *k = &prev->tok[pn - 1 - tail];
			if (plen - k->start + 1 > t || (ptrdiff_t)k->start - 1 + delta < (ptrdiff_t)from)
				break;
			tail++;
		}
		if (tail)
			to = (size_t)((ptrdiff_t)prev->tok[pn - tail].start - 1 + delta);
	}
	/* an address and its delimiter take two bytes at least */
	if (stackbuf_reserve(cur, head + tail + (to - from) / 2 + 1))
		return perr(ps, JH_ENOMEM, "out of memory");
	if (head) {
		memcpy(cur->addrs, prev->addrs, head * sizeof(*cur->addrs));
		memcpy(cur->frames, prev->frames, head * sizeof(*cur->frames));
		memcpy(cur->tok, prev->tok, head * sizeof(*cur->tok));
	}
	size_t n = head;
	const char *q = s + from, *stop = s + to;
	for (;;) {
		skip_sp(&q, stop);
		if (q >= stop) {
			if (n || !tail)
				break;
			/* the line's first address would be taken from the stack
			 * before, where it was not the leaf: read it all */
			tail = 0;
			stop = e;
			continue;
		}
		if (n >= PARSE_MAX_FRAMES) {
			rc = perr(ps, JH_ELIMIT, "stack deeper than %u frames", PARSE_MAX_FRAMES);
			break;
		}
		/* the reservation covers FROM to TO; reading on to the end
		 * of the line may need more */
		if (n + tail >= cur->cap && stackbuf_reserve(cur, n + 1 + tail))
			return perr(ps, JH_ENOMEM, "out of memory");
		const char *start = q;
		if (read_addr(ps, &q, stop, &cur->addrs[n])) {
			rc = JH_EFORMAT;
			break;
		}
		cur->tok[n] = (struct tokpos){ (uint32_t)(start - s), (uint32_t)(q - s) };
		n++;
	}
	size_t nread = n;
	if (!rc && n + tail > PARSE_MAX_FRAMES)
		rc = perr(ps, JH_ELIMIT, "stack deeper than %u frames", PARSE_MAX_FRAMES);
	if (!rc) {
		for (size_t i = 0; i < tail; i++) {
			size_t j = pn - tail + i;
			cur->addrs[n + i] = prev->addrs[j];
			cur->frames[n + i] = prev->frames[j];
			cur->tok[n + i] = (struct tokpos){ (uint32_t)(prev->tok[j].start + delta),
							   (uint32_t)(prev->tok[j].end + delta) };
		}
		n += tail;
	}
	bool first_pc = !ps->all_return;
	for (size_t i = head; i < nread; i++)
		__builtin_prefetch(lcache_set(ps, cur->addrs[i], i == 0 && first_pc));
	/* on a bad address, the frames before it still become locations, as
	 * they did when each was looked up as soon as it was read */
	for (size_t i = head; i < nread; i++) {
		int64_t id = location(ps, cur->addrs[i], i == 0 && first_pc);
		if (id < 0)
			return perr(ps, (int)id, "out of memory");
		cur->frames[i] = (uint32_t)id;
	}
	if (rc)
		return rc;
	size_t before = ps->p->nsamples;
	int64_t sid = profile_sample(ps->p, cur->frames, n);
	if (sid < 0)
		return perr(ps, (int)sid, "out of memory");
	ps->cur = sid;
	ps->cur_line = ps->lineno;
	ps->cur_has_counts = false;
	ps->cur_fresh = ps->p->nsamples > before;
	/* this stack is the next one's "before" */
	cur->text = s;
	cur->len = len;
	cur->n = n;
	ps->cur_stk ^= 1;
	return 0;
}

static int check_stack_done(struct parser *ps)
{
	if (ps->cur >= 0 && !ps->cur_has_counts) {
		unsigned long l = ps->lineno;
		ps->lineno = ps->cur_line;
		int rc = perr(ps, JH_EFORMAT,
			      "stack record has no 't*:' counts line (truncated dump?)");
		ps->lineno = l;
		return rc;
	}
	return 0;
}

/* The variables of a memory map: "name=value" lines, whose "$name" the
 * maps lines after them stand for value (pprof's legacy profiles:
 * "source=/home" then "00400000-00fcb000: $source/server"; jeprof's
 * "build=" and "$build").  They point into the dump. */
#define MAPS_MAX_VARS 16
#define MAPS_MAX_LINE 8192
struct maps_vars {
	struct { const char *name, *value; size_t nlen, vlen; } v[MAPS_MAX_VARS];
	int n;
};

/* Whether LINE (LEN bytes) is "name=value" (a name of letters, digits and
 * '_': no maps line is, their first field is "start-end"); records it in
 * VARS, its value as written (an overflow is ignored: its $name then
 * stays as it is, and the path names no file). */
static bool maps_var(struct maps_vars *vars, const char *line, size_t len)
{
	size_t k = 0;
	while (k < len && (isalnum((unsigned char)line[k]) || line[k] == '_'))
		k++;
	size_t eq = k;
	while (eq < len && (line[eq] == ' ' || line[eq] == '\t'))
		eq++;
	if (!k || eq >= len || line[eq] != '=')
		return false;
	const char *val = line + eq + 1, *end = line + len;
	skip_sp(&val, end);
	if (vars->n < MAPS_MAX_VARS)
		vars->v[vars->n++] = (__typeof__(vars->v[0])){ line, val, k, (size_t)(end - val) };
	return true;
}

/* LINE with each "$name" of VARS replaced (the first defined that matches
 * at a place, as pprof does) into BUF; returns its length, or SIZE_MAX
 * when it would not fit. */
static size_t maps_expand(const struct maps_vars *vars, const char *line, size_t len, char *buf)
{
	size_t n = 0;
	for (size_t i = 0; i < len;) {
		int hit = -1;
		if (line[i] == '$')
			for (int k = 0; k < vars->n && hit < 0; k++)
				if (len - i - 1 >= vars->v[k].nlen &&
				    !memcmp(line + i + 1, vars->v[k].name, vars->v[k].nlen))
					hit = k;
		const char *add = hit < 0 ? line + i : vars->v[hit].value;
		size_t alen = hit < 0 ? 1 : vars->v[hit].vlen;
		if (n + alen > MAPS_MAX_LINE)
			return SIZE_MAX;
		memcpy(buf + n, add, alen);
		n += alen;
		i += hit < 0 ? 1 : 1 + vars->v[hit].nlen;
	}
	return n;
}

static int read_maps(struct parser *ps)
{
	const char *line;
	size_t len;
	int r;
	struct maps_vars vars = { .n = 0 };
	char *exp = NULL;
	ps->p->has_maps = true;
	while ((r = next_line(ps, &line, &len)) > 0) {
		trim(&line, &len);
		if (!len || line[0] == '#' || maps_var(&vars, line, len))
			continue;
		struct maps_line ml;
		char msg[256];
		if (vars.n && memchr(line, '$', len)) {
			if (!exp && !(exp = malloc(MAPS_MAX_LINE)))
				return perr(ps, JH_ENOMEM, "out of memory");
			size_t n = maps_expand(&vars, line, len, exp);
			if (n == SIZE_MAX) {
				free(exp);
				return perr(ps, JH_ELIMIT, "maps line longer than %d bytes once its variables are expanded",
					    MAPS_MAX_LINE);
			}
			line = exp;
			len = n;
		}
		if (maps_parse_line(line, len, &ml, msg, sizeof(msg))) {
			free(exp);
			if (ps->last_unterminated)
				return perr(ps, JH_EFORMAT, "%s (the file ends in the middle of this line: truncated dump?)", msg);
			return perr(ps, JH_EFORMAT, "%s", msg);
		}
		struct pf_mapping m = {
			.start = ml.start, .limit = ml.end, .offset = ml.offset,
			.exec = ml.exec, .deleted = ml.deleted,
			.kind = profile_map_kind(ml.path, ml.pathlen),
		};
		int64_t sid = strtab_intern_n(&ps->p->strs, ml.path, ml.pathlen);
		if (sid < 0) {
			free(exp);
			return perr(ps, JH_ENOMEM, "out of memory");
		}
		m.path = (uint32_t)sid;
		if (profile_mapping(ps->p, &m) < 0) {
			free(exp);
			return perr(ps, JH_ENOMEM, "out of memory");
		}
	}
	free(exp);
	if (r < 0)
		return r;
	if (ps->last_unterminated) {
		pwarn(ps, "the file does not end with a newline (truncated dump?)");
		note_truncated(ps);
	}
	return 0;
}

/* A "t*" line's values into the second half's current sample: the first
 * one of a new sample is its value, any later one is kept apart (replay()
 * adds them after the first half's values, as the sequential parser
 * would). */
static int second_add(struct parser *ps, const double v[PF_NVALUES])
{
	struct split *sp = ps->sp;
	if (ps->cur_fresh) {
		memcpy(ps->p->samples[ps->cur].v, v, sizeof(ps->p->samples[ps->cur].v));
		ps->cur_fresh = false;
		return 0;
	}
	struct split_add a = { .sample = (uint32_t)ps->cur };
	memcpy(a.v, v, sizeof(a.v));
	return JH_PUSH(sp->adds, sp->nadds, sp->cap_adds, a);
}

/* A counts line before the first stack, its text from S (after "tN:") to
 * E: the dump's own totals ("t*"), or a thread's with its name after the
 * counts. */
static int header_counts(struct parser *ps, bool all, uint64_t uid, const char *s,
			 const char *e)
{
	struct profile *p = ps->p;
	double v[PF_NVALUES];
	if (read_counts(ps, &s, e, v))
		return JH_EFORMAT;
	skip_sp(&s, e);
	if (all) {
		if (s != e)
			return perr(ps, JH_EFORMAT, "unexpected text after the counts");
		memcpy(p->header_total, v, sizeof(v));
		return 0;
	}
	int64_t tid = profile_thread(p, (int64_t)uid);
	if (tid < 0)
		return perr(ps, JH_ENOMEM, "out of memory");
	memcpy(p->threads[tid].v, v, sizeof(v));
	if (s != e) {
		int64_t nid = strtab_intern_n(&p->strs, s, (size_t)(e - s));
		if (nid < 0)
			return perr(ps, JH_ENOMEM, "out of memory");
		p->threads[tid].name = (uint32_t)nid;
	}
	return 0;
}

/* The values (unsampled) of a record's counts line, its text from S
 * (after "tN:") to E.  A record's "t*" line and its one thread's line
 * mostly say the same: the text of the last line read gets its values
 * without being read again. */
static int record_counts(struct parser *ps, const char *s, const char *e, double v[PF_NVALUES])
{
	size_t n = (size_t)(e - s);
	if (ps->counts_known && n == ps->counts_len && !memcmp(s, ps->counts_text, n)) {
		memcpy(v, ps->counts_v, sizeof(ps->counts_v));
		return 0;
	}
	const char *q = s;
	if (read_counts(ps, &q, e, v))
		return JH_EFORMAT;
	skip_sp(&q, e);
	if (q != e)
		return perr(ps, JH_EFORMAT, "unexpected text after the counts");
	if (adjust(ps, v))
		return JH_EFORMAT;
	ps->counts_known = true;
	ps->counts_text = s;
	ps->counts_len = n;
	memcpy(ps->counts_v, v, sizeof(ps->counts_v));
	return 0;
}

/* The stack records and the maps of a heap_v2 dump, after its header. */
static int v2_body(struct parser *ps)
{
	struct profile *p = ps->p;
	const char *line, *s, *e;
	size_t len;
	int r;
	while ((r = next_line(ps, &line, &len)) > 0) {
		trim(&line, &len);
		s = line;
		e = line + len;
		if (!len)
			continue;
		if (*s == '@') {
			if (check_stack_done(ps) || read_stack(ps, s + 1, e))
				return JH_EFORMAT;
			continue;
		}
		if (*s == 't' && len > 1 && (s[1] == '*' || (s[1] >= '0' && s[1] <= '9'))) {
			bool all = s[1] == '*';
			uint64_t uid = 0;
			s++;
			if (all)
				s++;
			else if (read_u64(&s, e, &uid) != 1 || uid > INT64_MAX)
				return perr(ps, JH_EFORMAT, "expected a thread id after 't'");
			if (expect_char(ps, &s, e, ':', "after the thread id"))
				return JH_EFORMAT;
			if (ps->cur < 0) {
				int rc = header_counts(ps, all, uid, s, e);
				if (rc)
					return rc;
				continue;
			}
			double v[PF_NVALUES];
			int rc = record_counts(ps, s, e, v);
			if (rc)
				return rc;
			if (all) {
				if (add_sums(ps, v))
					return JH_ELIMIT;
				if (ps->second) {
					if (second_add(ps, v))
						return perr(ps, JH_ENOMEM, "out of memory");
				} else {
					for (int j = 0; j < PF_NVALUES; j++)
						p->samples[ps->cur].v[j] += v[j];
				}
				ps->cur_has_counts = true;
			} else {
				int64_t tid = profile_thread(p, (int64_t)uid);
				if (tid < 0)
					return perr(ps, JH_ENOMEM, "out of memory");
				/* the second half keeps every line: replay() adds them
				 * with profile_thread_add() in order */
				struct pf_thread_value tv = { (uint32_t)ps->cur, (uint32_t)tid, { 0 } };
				memcpy(tv.v, v, sizeof(tv.v));
				if (ps->second ? JH_BIG_PUSH(p->tvals, p->ntvals, p->cap_tvals, tv)
					       : profile_thread_add(p, (uint32_t)ps->cur, (uint32_t)tid, v))
					return perr(ps, JH_ENOMEM, "out of memory");
			}
			continue;
		}
		if (starts(line, len, "MAPPED_LIBRARIES:") || section(line, len, "Memory map:")) {
			if (ps->sp && !ps->second) {
				/* the maps start before the split: read on to the
				 * end here, the second half is dropped */
				ps->end = ps->sp->end;
				ps->sp = NULL;
			}
			if (check_stack_done(ps))
				return JH_EFORMAT;
			return read_maps(ps);
		}
		if (ps->last_unterminated)
			return perr(ps, JH_EFORMAT, "the file ends in the middle of a line (truncated dump?)");
		return perr(ps, JH_EFORMAT,
			    "expected a stack '@ 0x...', a counts line 't*: N: N [N: N]' or 'MAPPED_LIBRARIES:', found '%.*s'",
			    (int)(len > 40 ? 40 : len), line);
	}
	if (r < 0)
		return r;
	/* a first half ends where the second's first stack begins */
	if (ps->sp && !ps->second)
		return check_stack_done(ps);
	if (ps->cur >= 0 && !ps->cur_has_counts && ps->last_unterminated)
		return perr(ps, JH_EFORMAT, "the file ends in the middle of a stack record (truncated dump?)");
	if (check_stack_done(ps))
		return JH_EFORMAT;
	if (!p->npresyms) {
		pwarn(ps, "no MAPPED_LIBRARIES section (truncated dump?): addresses can only be symbolized in the BINARY given on the command line");
		note_truncated(ps);
	}
	return 0;
}

/* Below this, a body's stacks stay under JH_BIG_MIN bytes. */
#define PARSE_RESERVE_MIN ((size_t)16 << 20)
#define PARSE_RESERVE_INDEX_MAX ((size_t)256 << 20)

/* Room for the samples of a heap_v2 body of BYTES bytes, from what a
 * record usually takes (16 bytes an address, some 400 a stack and its
 * counts): the big arrays of a large dump then start in huge pages
 * instead of in 4 KiB ones that are copied when they outgrow the heap.
 * A guess too high costs address space only (what is not written is
 * never faulted in), except in the sample index, whose slots are written
 * all over (but it would have had those pages after its last growth
 * anyway, unless the guess is over twice too high); one too low costs a
 * later growth.  Best effort. */
static void reserve_body(struct profile *p, size_t bytes)
{
	if (bytes >= PARSE_RESERVE_MIN) {
		(void)profile_reserve(p, 0, bytes / 256, bytes / 16, bytes / 256);
		/* the index is written at once: for the first 256 MiB only, so
		 * that a huge file that turns out to be no dump costs little */
		(void)profile_reserve_sample_index(p, (bytes < PARSE_RESERVE_INDEX_MAX ? bytes
						       : PARSE_RESERVE_INDEX_MAX) / 256);
	}
}

/* Bodies below this many bytes are parsed in one thread. */
#define PARSE_SPLIT_MIN ((size_t)4 << 20)

/* Where a second thread should take over the body that starts at ps->pos:
 * a stack line ('@' right after a newline) at or after the middle, or NULL
 * to parse in one thread. */
static const char *split_point(const struct parser *ps)
{
	const char *body = ps->pos, *end = ps->end, *from;
	if (body >= end || ps->symbolized)
		return NULL;
	if (ps->o && ps->o->split_at) {
		if (ps->o->split_at >= (size_t)(end - ps->buf))
			return NULL;
		from = ps->buf + ps->o->split_at;
		if (from < body)
			from = body;
	} else {
		if (jh_threads() < 2)
			return NULL;
		size_t min = PARSE_SPLIT_MIN;
		const char *env = getenv("JHEAP_PARSE_SPLIT_MIN");
		uint64_t v;
		if (ps->o && ps->o->split_min)
			min = ps->o->split_min;
		else if (env && read_u64(&env, env + strlen(env), &v) == 1 && !*env)
			min = v > SIZE_MAX ? SIZE_MAX : (size_t)v;
		if ((size_t)(end - body) < min)
			return NULL;
		from = body + (end - body) / 2;
	}
	/* body[-1] is the header line's newline; a record starts after a
	 * line at most, so the search stops there (a file of zeros after its
	 * header is not read to its end) */
	size_t left = (size_t)(end - (from - 1));
	if (left > (size_t)PARSE_MAX_LINE + 2)
		left = (size_t)PARSE_MAX_LINE + 2;
	const char *q = memmem(from - 1, left, "\n@", 2);
	return q ? q + 1 : NULL;
}

/* The body up to the split, in the caller's thread: when it fails or
 * finds the maps before the split, the second half is cancelled. */
struct first_half {
	struct parser *ps;
	int rc;
	bool whole;             /* the split stands: the second half is used */
};

static void *first_half(void *arg)
{
	struct first_half *h = arg;
	struct parser *ps = h->ps;
	struct split *sp = ps->sp;
	h->rc = v2_body(ps);
	split_half_done(sp);
	/* v2_body() drops ps->sp when the maps begin before the cut */
	h->whole = ps->sp != NULL;
	ps->sp = NULL;
	ps->end = sp->end;
	if (h->rc || !h->whole)
		atomic_store(&sp->cancel, true);
	return NULL;
}

/* The body from the split on, in a thread of its own (or after the first
 * half when none can be started). */
static void *second_half(void *arg)
{
	struct split *sp = arg;
	if (atomic_load(&sp->cancel))
		return NULL;
	reserve_body(&sp->p, (size_t)(sp->end - sp->ps.buf));
	sp->rc = v2_body(&sp->ps);
	split_half_done(sp);
	return NULL;
}

static void split_free(struct split *sp)
{
	parser_free(&sp->ps);
	profile_release(&sp->p);
	for (size_t i = 0; i < sp->nwarns; i++)
		free(sp->warns[i].msg);
	free(sp->warns);
	free(sp->adds);
	free(sp);
}

/* Samples [lo, hi) of the second half's profile SRC: their stacks
 * rewritten in DST's location ids (LOCID), their hashes, and the id of
 * each in DST as the first half left it (UINT32_MAX: absent). */
struct replay_part {
	const struct profile *dst;
	struct profile *src;
	const uint32_t *locid;
	uint64_t *hash;
	uint32_t *sid;
	size_t lo, hi;
};

/* Second halves with fewer samples are looked up in one thread. */
#define REPLAY_SPLIT_MIN 8192

static void *replay_find(void *arg)
{
	struct replay_part *r = arg;
	const struct profile *src = r->src;
	/* each sample's stack is its own stretch of src->stacks */
	for (size_t i = r->lo; i < r->hi; i++) {
		const struct pf_sample *s = &src->samples[i];
		uint32_t *st = s->depth ? src->stacks + s->stack0 : NULL;
		for (uint32_t j = 0; j < s->depth; j++)
			st[j] = r->locid[st[j]];
		r->hash[i] = profile_stack_hash(st, s->depth);
	}
	/* the index slots are cache misses: ask for them a few samples ahead */
	enum { AHEAD = 8 };
	for (size_t i = r->lo; i < r->hi && i < r->lo + AHEAD; i++)
		profile_sample_prefetch(r->dst, r->hash[i]);
	for (size_t i = r->lo; i < r->hi; i++) {
		const struct pf_sample *s = &src->samples[i];
		if (i + AHEAD < r->hi)
			profile_sample_prefetch(r->dst, r->hash[i + AHEAD]);
		r->sid[i] = profile_sample_find(r->dst, s->depth ? src->stacks + s->stack0 : NULL,
						s->depth, r->hash[i]);
	}
	return NULL;
}

/* Adds the second half's profile SRC into DST as if the sequential parser
 * had gone on reading: every new location, sample and thread gets the id
 * it would have had (first appearance order), and values are summed in the
 * same order.  SRC's stacks are rewritten in DST's location ids.  FORCED
 * (a split the caller asked for, in tests): its samples are looked up in
 * two threads whatever their number. */
static int replay(struct profile *dst, struct split *sp, bool forced)
{
	struct profile *src = &sp->p;
	int rc = JH_ENOMEM;
	uint32_t *locid = malloc((src->nlocs + 1) * sizeof(*locid));
	uint32_t *thrid = malloc((src->nthreads + 1) * sizeof(*thrid));
	uint32_t *sid = malloc((src->nsamples + 1) * sizeof(*sid));
	uint64_t *hash = malloc((src->nsamples + 1) * sizeof(*hash));
	if (!locid || !thrid || !sid || !hash ||
	    profile_reserve(dst, src->nlocs, src->nsamples, src->nstacks, src->ntvals))
		goto out;
	/* SRC's locations are distinct, and so are its samples, and the
	 * location ids map one to one: none can match another one appended
	 * here.  So every lookup is made in DST as the first half left it,
	 * before any append, and the appends skip DST's indexes (which catch
	 * up if anything looks them up later). */
	for (size_t i = 0; i < src->nlocs; i++)
		locid[i] = profile_location_find(dst, src->locs[i].addr, src->locs[i].leaf,
						 UINT32_MAX);
	for (size_t i = 0; i < src->nlocs; i++) {
		if (locid[i] != UINT32_MAX)
			continue;
		int64_t id = profile_location_append(dst, src->locs[i].addr, src->locs[i].leaf,
						     UINT32_MAX);
		if (id < 0)
			goto out;
		locid[i] = (uint32_t)id;
	}
	for (size_t i = 0; i < src->nthreads; i++) {
		int64_t id = profile_thread(dst, src->threads[i].uid);
		if (id < 0)
			goto out;
		thrid[i] = (uint32_t)id;
	}
	/* the second half's samples in DST's terms, and which DST has, in
	 * two threads for a large half (only DST's index is read) */
	struct replay_part parts[2] = {
		{ dst, src, locid, hash, sid, 0, src->nsamples / 2 },
		{ dst, src, locid, hash, sid, src->nsamples / 2, src->nsamples },
	};
	jh_run_two(replay_find, &parts[0], replay_find, &parts[1],
		   forced ? src->nsamples >= 2
			  : src->nsamples >= REPLAY_SPLIT_MIN && jh_threads() > 1);
	for (size_t i = 0; i < src->nsamples; i++) {
		const struct pf_sample *s = &src->samples[i];
		if (sid[i] == UINT32_MAX) {
			int64_t id = profile_sample_append(dst, s->depth ? src->stacks + s->stack0 : NULL,
							   s->depth);
			if (id < 0)
				goto out;
			sid[i] = (uint32_t)id;
		}
		for (int j = 0; j < PF_NVALUES; j++)
			dst->samples[sid[i]].v[j] += s->v[j];
	}
	for (size_t i = 0; i < sp->nadds; i++)
		for (int j = 0; j < PF_NVALUES; j++)
			dst->samples[sid[sp->adds[i].sample]].v[j] += sp->adds[i].v[j];
	for (size_t i = 0; i < src->ntvals; i++) {
		const struct pf_thread_value *tv = &src->tvals[i];
		if (profile_thread_add(dst, sid[tv->sample], thrid[tv->thread], tv->v))
			goto out;
	}
	for (size_t i = 0; i < src->nmaps; i++) {
		struct pf_mapping m = src->maps[i];
		int64_t id = strtab_intern_n(&dst->strs, src->strs.ents[m.path].s,
					     src->strs.ents[m.path].n);
		if (id < 0)
			goto out;
		m.path = (uint32_t)id;
		if (profile_mapping(dst, &m) < 0)
			goto out;
	}
	dst->has_alloc |= src->has_alloc;
	dst->has_maps |= src->has_maps;
	rc = 0;
out:
	free(locid);
	free(thrid);
	free(sid);
	free(hash);
	return rc;
}

/* The body from ps->pos in two threads: this one reads up to CUT, a second
 * one from CUT on into a profile of its own, which is then replayed into
 * ours.  Messages and the profile are those of v2_body() in one thread. */
static int parse_v2_split(struct parser *ps, const char *cut)
{
	struct split *sp = calloc(1, sizeof(*sp));
	if (!sp)
		return v2_body(ps);
	if (profile_init(&sp->p)) {
		profile_release(&sp->p);
		free(sp);
		return v2_body(ps);
	}
	sp->end = ps->end;
	sp->ps = (struct parser){
		.p = &sp->p, .name = ps->name, .buf = cut, .end = ps->end, .pos = cut,
		.err = sp->msg, .errlen = sizeof(sp->msg), .uk = ps->uk, .rate = ps->rate,
		.cur = -1, .sp = sp, .second = true,
	};
	atomic_init(&sp->done, 0);
	atomic_init(&sp->cancel, false);
	atomic_init(&sp->half_done, false);
	if (ps->o) {
		sp->core_idle = ps->o->core_idle;
		sp->ctx = ps->o->ctx;
	}
	ps->end = cut;
	ps->sp = sp;
	struct first_half first = { .ps = ps };
	jh_run_two(first_half, &first, second_half, sp, true);
	int rc = first.rc;
	bool whole = first.whole;
	if (!rc && whole) {
		unsigned long base = ps->lineno;
		ps->lineno = base + sp->ps.lineno;
		if (replay(ps->p, sp, ps->o && ps->o->split_at) || sp->warn_oom) {
			rc = perr(ps, JH_ENOMEM, "out of memory");
		} else {
			for (size_t i = 0; i < sp->nwarns && ps->o && ps->o->warn; i++) {
				char full[800];
				snprintf(full, sizeof(full), "%s:%lu: %s", ps->name,
					 base + sp->warns[i].line, sp->warns[i].msg);
				ps->o->warn(ps->o->ctx, full);
			}
			if (sp->truncated && ps->o && ps->o->truncated)
				*ps->o->truncated = true;
			if (sp->rc)
				rc = jh_err(ps->err, ps->errlen, sp->rc, "%s:%lu: %s", ps->name,
					    base + sp->err_line, sp->msg);
		}
	}
	if (ps->o && ps->o->split_done)
		*ps->o->split_done = whole;
	split_free(sp);
	return rc;
}

static int parse_v2(struct parser *ps, const char *hdr, size_t hlen)
{
	struct profile *p = ps->p;
	const char *s = hdr + 8, *e = hdr + hlen;
	uint64_t period;
	if (read_u64(&s, e, &period) != 1 || s != e)
		return perr(ps, JH_EFORMAT, "expected 'heap_v2/PERIOD' with a decimal sampling period");
	p->format = PF_FMT_HEAP_V2;
	p->period = period;
	ps->uk = UNSAMPLE_V2;
	ps->rate = (double)period;
	reserve_body(p, (size_t)(ps->end - ps->pos));
	const char *cut = split_point(ps);
	if (cut)
		return parse_v2_split(ps, cut);
	return v2_body(ps);
}

static bool contains(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

static int parse_gperf(struct parser *ps, const char *hdr, size_t hlen)
{
	struct profile *p = ps->p;
	const char *s = hdr + strlen("heap profile:"), *e = hdr + hlen;
	double hv[PF_NVALUES];
	if (read_counts(ps, &s, e, hv))
		return JH_EFORMAT;
	memcpy(p->header_total, hv, sizeof(hv));
	p->format = PF_FMT_GPERF;
	ps->all_return = true;
	skip_sp(&s, e);
	if (s < e && *s == '@') {
		s++;
		skip_sp(&s, e);
		const char *type = s;
		while (s < e && *s != '/' && *s != ' ')
			s++;
		size_t tlen = (size_t)(s - type);
		uint64_t period = 0;
		bool has_period = false;
		if (s < e && *s == '/') {
			s++;
			if (read_u64(&s, e, &period) != 1)
				return perr(ps, JH_EFORMAT, "expected a sampling period after '/'");
			has_period = true;
		}
		if ((tlen == 11 && !memcmp(type, "heapprofile", 11)) || !contains(type, tlen, "heap")) {
			ps->uk = UNSAMPLE_NONE;
		} else if (contains(type, tlen, "_v2")) {
			ps->uk = UNSAMPLE_V2;
			ps->rate = has_period ? (double)period : 131072;
		} else if (tlen == 4 && has_period) {
			/* "heap/N": Go's runtime writes its text heap profiles so,
			 * N being twice its mean sampling interval, and samples
			 * as a Poisson process; pprof unsamples them as v2 at
			 * N/2 (jeprof as v1, for a tcmalloc format gone since) */
			ps->uk = UNSAMPLE_V2;
			ps->rate = (double)period / 2;
		} else {
			ps->uk = UNSAMPLE_V1;
			ps->rate = has_period ? (double)period / 2 : 131072;
		}
		p->period = has_period && period ? period : 1;
	} else if (hv[0] == hv[2] && hv[1] == hv[3]) {
		ps->uk = UNSAMPLE_V1;
		ps->rate = 131072;
	}
	const char *line;
	size_t len;
	int r;
	while ((r = next_line(ps, &line, &len)) > 0) {
		trim(&line, &len);
		/* '#': Go's comments (each stack's frames, runtime.MemStats) */
		if (!len || line[0] == '#')
			continue;
		if (starts(line, len, "MAPPED_LIBRARIES:") || section(line, len, "Memory map:"))
			return read_maps(ps);
		s = line;
		e = line + len;
		double v[PF_NVALUES];
		if (read_counts(ps, &s, e, v) || expect_char(ps, &s, e, '@', "before the stack") ||
		    adjust(ps, v) || add_sums(ps, v))
			return JH_EFORMAT;
		if (read_stack(ps, s, e))
			return JH_EFORMAT;
		for (int j = 0; j < PF_NVALUES; j++)
			p->samples[ps->cur].v[j] += v[j];
		ps->cur_has_counts = true;
	}
	return r;
}

/* Whether a symbol line's names (N bytes at S) leave some frame unknown:
 * "??" or nothing, as ClickHouse writes what it cannot name. */
static bool names_incomplete(const char *s, size_t n)
{
	struct names_part parts[64];
	size_t np = names_split_inline(s, n, parts, 64);
	for (size_t i = 0; i < np && i < 64; i++)
		if (names_unknown(parts[i].s, parts[i].n))
			return true;
	return false;
}

/* "--- symbol" section: "binary=..." and "0xADDR name--name" lines up to
 * "---".  An address whose names leave a frame unknown ("??", an empty
 * name) gets none: it is looked up like an address of a dump, in the
 * object files when they are there, else named module+offset from the
 * maps, so that unknown addresses stay apart. */
static int parse_symbols(struct parser *ps, const char **line, size_t *len)
{
	int r;
	while ((r = next_line(ps, line, len)) > 0) {
		trim(line, len);
		const char *s = *line, *e = *line + *len;
		if (!*len)
			continue;
		if (starts(s, *len, "---"))
			return 1;
		if (starts(s, *len, "binary=")) {
			int64_t id = strtab_intern_n(&ps->p->strs, s + 7, *len - 7);
			if (id < 0)
				return perr(ps, JH_ENOMEM, "out of memory");
			ps->p->presym_binary = (uint32_t)id;
			continue;
		}
		uint64_t addr;
		const char *q = s;
		while (q < e && *q != ' ' && *q != '\t')
			q++;
		const char *a = s;
		if (read_addr(ps, &a, q, &addr))
			return JH_EFORMAT;
		skip_sp(&q, e);
		if (names_incomplete(q, (size_t)(e - q)))
			continue;
		int64_t id = strtab_intern_n(&ps->p->strs, q, (size_t)(e - q));
		if (id < 0 || profile_presym(ps->p, addr, (uint32_t)id))
			return perr(ps, JH_ENOMEM, "out of memory");
	}
	if (r < 0)
		return r;
	return perr(ps, JH_EFORMAT, "symbol section ends without a '---' line (truncated?)");
}

const char *parse_sniff(const unsigned char *b, size_t n)
{
	if (n >= 4 && !memcmp(b, "\177ELF", 4))
		return "an ELF file (a program or library), not a heap profile";
	if (n >= 1 && (b[0] < 0x20 || b[0] >= 0x7f) && b[0] != '\n' && b[0] != '\r' &&
	    b[0] != '\t')
		return "binary data, not a text heap profile";
	return NULL;
}

/* A pprof profile, or a gzip-compressed one or text profile. */
static int parse_binary(struct profile *p, const char *name, const unsigned char *buf,
			size_t len, const struct parse_options *o, char *err, size_t errlen)
{
	unsigned char *in = NULL;
	size_t inlen = len;
	int rc = 0;
	if (buf[0] == 0x1f) {
		rc = pprof_inflate(name, buf, len, &in, &inlen, err, errlen);
		if (rc)
			return rc;
		buf = in;
	}
	if (in && inlen >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		free(in);
		return jh_err(err, errlen, JH_EFORMAT,
			      "%s: gzip-compressed data inside gzip-compressed data, not a profile", name);
	}
	if (in && (!inlen || !pprof_sniff(buf, inlen))) {
		/* gzip-compressed text: a heap dump as .heap.gz */
		rc = parse_buffer(p, name, (const char *)buf, inlen, o, err, errlen);
		free(in);
		return rc;
	}
	if (o && o->split_done)
		*o->split_done = false;
	rc = pprof_read(p, name, buf, inlen, o ? o->warn : NULL, o ? o->ctx : NULL, err, errlen);
	free(in);
	if (profile_resolve_mappings(p) && !rc)
		rc = jh_err(err, errlen, JH_ENOMEM, "%s: out of memory", name);
	return rc;
}

int parse_buffer(struct profile *p, const char *name, const char *buf, size_t len,
		 const struct parse_options *o, char *err, size_t errlen)
{
	if (len && pprof_sniff((const unsigned char *)buf, len))
		return parse_binary(p, name, (const unsigned char *)buf, len, o, err, errlen);
	struct parser ps = {
		.p = p, .name = name, .buf = buf, .end = buf + len, .pos = buf,
		.o = o, .err = err, .errlen = errlen, .cur = -1,
	};
	int rc;
	if (o && o->split_done)
		*o->split_done = false;
	if (!len)
		return jh_err(err, errlen, JH_EFORMAT, "%s: the file is empty", name);
	size_t broken = pprof_broken_at((const unsigned char *)buf, len);
	if (broken)
		return jh_err(err, errlen, JH_EFORMAT,
			      "%s: a pprof profile whose protobuf breaks off at byte %zu of %zu (truncated or damaged file?)",
			      name, broken, len);
	const char *what = parse_sniff((const unsigned char *)buf, len);
	if (what)
		return jh_err(err, errlen, JH_EFORMAT, "%s: %s", name, what);
	const char *line = NULL;
	size_t llen = 0;
	bool have = false;
	while ((rc = next_line(&ps, &line, &llen)) > 0) {
		trim(&line, &llen);
		if (!llen)
			continue;
		if (line[0] == '%') {
			if (starts(line, llen, "%warn")) {
				const char *w = line + 5, *we = line + llen;
				skip_sp(&w, we);
				pwarn(&ps, "WARNING: %.*s", (int)(we - w), w);
			}
			else
				pwarn(&ps, "ignoring unknown command '%.*s'", (int)(llen > 60 ? 60 : llen), line);
			continue;
		}
		have = true;
		break;
	}
	if (rc < 0)
		goto out;
	if (!have) {
		rc = jh_err(err, errlen, JH_EFORMAT, "%s: the profile is empty", name);
		goto out;
	}
	if (section(line, llen, "symbol")) {
		ps.symbolized = true;
		rc = parse_symbols(&ps, &line, &llen);
		if (rc < 0)
			goto out;
		/* the closing "---" may itself be the next section marker */
		if (llen == 3 || (llen > 3 && !section(line, llen, "heap") && !section(line, llen, "growth"))) {
			if (next_line(&ps, &line, &llen) <= 0) {
				rc = perr(&ps, JH_EFORMAT, "expected a profile after the symbol section");
				goto out;
			}
			trim(&line, &llen);
		}
	}
	if (section(line, llen, "heap") || section(line, llen, "growth")) {
		if (next_line(&ps, &line, &llen) <= 0) {
			rc = perr(&ps, JH_EFORMAT, "expected a profile header after '%s'", "--- heap");
			goto out;
		}
		trim(&line, &llen);
	}
	if (starts(line, llen, "heap_v2/"))
		rc = parse_v2(&ps, line, llen);
	else if (starts(line, llen, "heap profile:"))
		rc = parse_gperf(&ps, line, llen);
	else if (starts(line, llen, "heap"))
		rc = perr(&ps, JH_EFORMAT, "unsupported heap profile version: expected 'heap_v2/PERIOD'");
	else if (section(line, llen, "contention") || section(line, llen, "Stacks:"))
		rc = perr(&ps, JH_EFORMAT, "this is a contention profile; jheap reads heap profiles");
	else if (section(line, llen, "profile"))
		rc = perr(&ps, JH_EFORMAT, "this is a CPU profile; jheap reads heap profiles");
	else
		rc = perr(&ps, JH_EFORMAT,
			  "not a heap profile: expected 'heap_v2/PERIOD' or 'heap profile:', found '%.*s'",
			  (int)(llen > 40 ? 40 : llen), line);
out:
	parser_free(&ps);
	if (profile_resolve_mappings(p) && !rc)
		rc = perr(&ps, JH_ENOMEM, "out of memory");
	return rc;
}

int parse_file(struct profile *p, const char *path, const struct parse_options *o,
	       char *err, size_t errlen)
{
	struct readfile rf;
	int rc = readfile_read(&rf, path, err, errlen);
	if (!rc)
		rc = parse_buffer(p, path, rf.buf ? rf.buf : "", rf.len, o, err, errlen);
	readfile_release(&rf);
	return rc;
}

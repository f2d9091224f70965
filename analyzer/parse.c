/*
 * parse: the text parser's entry points (parse.h), jeprof's "--- symbol"
 * section, the records of a heap_v2 dump and the maps section.  The
 * parser's state and the helpers its files share are in parser.h;
 * gperftools' format is read by parse_gperf.c, and a large heap_v2 body
 * is parsed in two threads by parse_split.c.
 *
 * A stack mostly repeats the one before it: where its frames match the
 * previous stack's at the same depth (counted from the leaf or from the
 * root), they take that stack's location ids without being read again
 * (read_stack).  In a heap_v2 body a stack's sample is looked up one
 * record late (resolve_stack): its slot of the sample index is a cache
 * miss that then overlaps the next record's reading (on the benchmark's
 * 200,000-stack dump, the lookups went from 17% of a --no-symbolize run
 * in one thread to 3%, the run 10% shorter).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/array.h"
#include "lib/bigarray.h"
#include "lib/errors.h"
#include "analyzer/maps.h"
#include "analyzer/names.h"
#include "analyzer/parse_addr.h"
#include "analyzer/parse.h"
#include "analyzer/parser.h"
#include "analyzer/pprof.h"
#include "analyzer/readfile.h"
#include "analyzer/unsample.h"

int perr(struct parser *ps, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ps->sink->error(ps->sink->ctx, ps->lineno, msg, ps->err, ps->errlen);
	return code;
}

void note_truncated(struct parser *ps)
{
	ps->sink->truncated(ps->sink->ctx);
}

void pwarn(struct parser *ps, const char *fmt, ...)
{
	if (!ps->sink->warning)
		return;
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ps->sink->warning(ps->sink->ctx, ps->lineno, msg);
}

int tick(struct parser *ps)
{
	if (ps->sink->progress &&
	    ps->sink->progress(ps->sink->ctx, (size_t)(ps->pos - ps->buf), (size_t)(ps->end - ps->buf)))
		return jh_err(ps->err, ps->errlen, JH_EUSAGE, "cancelled");
	return 0;
}

/* The sink of a whole parse: the caller's parse_options; CTX is the
 * parser. */
static void caller_error(void *ctx, unsigned long line, const char *msg, char *err, size_t errlen)
{
	struct parser *ps = ctx;
	jh_err(err, errlen, 0, "%s:%lu: %s", ps->name, line, msg);
}

static void caller_warning(void *ctx, unsigned long line, const char *msg)
{
	struct parser *ps = ctx;
	char full[800];
	snprintf(full, sizeof(full), "%s:%lu: %s", ps->name, line, msg);
	ps->o->warn(ps->o->ctx, full);
}

static void caller_truncated(void *ctx)
{
	struct parser *ps = ctx;
	if (ps->o && ps->o->truncated)
		*ps->o->truncated = true;
}

static bool caller_progress(void *ctx, size_t done, size_t total)
{
	struct parser *ps = ctx;
	ps->o->progress(ps->o->ctx, ps->name, done, total);
	return false;
}

void parser_report_to(struct parser *ps, const struct parse_options *o)
{
	ps->o = o;
	ps->to_caller = (struct parse_sink){
		.error = caller_error, .warning = o && o->warn ? caller_warning : NULL,
		.truncated = caller_truncated, .progress = o && o->progress ? caller_progress : NULL,
		.ctx = ps,
	};
	ps->sink = &ps->to_caller;
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

int read_counts(struct parser *ps, const char **s, const char *e, double v[PF_NVALUES])
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
int adjust(struct parser *ps, double v[PF_NVALUES])
{
	double raw[PF_NVALUES];
	memcpy(raw, v, sizeof(raw));
	unsample_pair(ps->uk, ps->rate, &v[PF_INUSE_OBJECTS], &v[PF_INUSE_SPACE]);
	unsample_pair(ps->uk, ps->rate, &v[PF_ALLOC_OBJECTS], &v[PF_ALLOC_SPACE]);
	if (ps->whole)
		for (int j = 0; j < PF_NVALUES; j++)
			v[j] = trunc(v[j]);
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
int add_sums(struct parser *ps, const double v[PF_NVALUES])
{
	for (int j = 0; j < PF_NVALUES; j++)
		if ((ps->sum[j] += v[j]) > PARSE_MAX_VALUE)
			return perr(ps, JH_ELIMIT,
				    "the records up to this one add up to more than 2^60 %s (a damaged dump?)",
				    j == PF_INUSE_OBJECTS || j == PF_ALLOC_OBJECTS ? "objects" : "bytes");
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

void parser_free(struct parser *ps)
{
	for (int k = 0; k < 2; k++) {
		free(ps->stk[k].addrs);
		free(ps->stk[k].frames);
		free(ps->stk[k].tok);
	}
	free(ps->lcache);
	free(ps->queued);
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
int read_stack(struct parser *ps, const char *s, const char *e)
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
		/* its cache slot, asked for while the rest of the line is read */
		__builtin_prefetch(lcache_set(ps, cur->addrs[n], n == 0 && !ps->all_return));
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
	/* the stack before (still stk[!cur_stk]) gets its sample */
	if (resolve_stack(ps))
		return JH_ENOMEM;
	ps->cur_line = ps->lineno;
	ps->cur_has_counts = false;
	/* this stack is the next one's "before" */
	cur->text = s;
	cur->len = len;
	cur->n = n;
	ps->cur_stk ^= 1;
	ps->pending = true;
	ps->cur = PARSE_CUR_PENDING;
	ps->pending_hash = profile_stack_hash(cur->frames, n);
	if (ps->late) {
		profile_sample_prefetch(ps->p, ps->pending_hash);
		return 0;
	}
	return resolve_stack(ps);
}

/* What a counts line of the current stack does to its sample: a "t*"
 * line (THREAD UINT32_MAX) adds to its values, a thread's line to the
 * thread's share (the second half of a split keeps both apart for the
 * replay). */
static int apply_counts(struct parser *ps, uint32_t thread, const double v[PF_NVALUES])
{
	struct profile *p = ps->p;
	if (thread == UINT32_MAX) {
		if (ps->second)
			return split_add_counts(ps, v);
		for (int j = 0; j < PF_NVALUES; j++)
			p->samples[ps->cur].v[j] += v[j];
		return 0;
	}
	/* the second half keeps every line: replay() adds them with
	 * profile_thread_add() in order */
	struct pf_thread_value tv = { (uint32_t)ps->cur, thread, { 0 } };
	memcpy(tv.v, v, sizeof(tv.v));
	return ps->second ? JH_BIG_PUSH(p->tvals, p->ntvals, p->cap_tvals, tv)
			  : profile_thread_add(p, (uint32_t)ps->cur, thread, v);
}

/* A counts line of the current stack: applied now, or queued while its
 * sample is pending. */
static int stack_counts(struct parser *ps, uint32_t thread, const double v[PF_NVALUES])
{
	if (!ps->pending)
		return apply_counts(ps, thread, v);
	if (jh_grow(&ps->queued, &ps->cap_queued, ps->nqueued + 1, sizeof(*ps->queued)))
		return JH_ENOMEM;
	/* straight into place: a copy of a struct just built on the stack
	 * waits for its stores to land */
	struct pending_counts *q = &ps->queued[ps->nqueued++];
	q->thread = thread;
	memcpy(q->v, v, sizeof(q->v));
	return 0;
}

int resolve_stack(struct parser *ps)
{
	if (!ps->pending)
		return 0;
	const struct stackbuf *b = &ps->stk[!ps->cur_stk];
	size_t before = ps->p->nsamples;
	int64_t sid = profile_sample_hashed(ps->p, b->frames, b->n, ps->pending_hash);
	if (sid < 0)
		return perr(ps, (int)sid, "out of memory");
	ps->pending = false;
	ps->cur = sid;
	ps->cur_fresh = ps->p->nsamples > before;
	for (size_t i = 0; i < ps->nqueued; i++)
		if (apply_counts(ps, ps->queued[i].thread, ps->queued[i].v))
			return perr(ps, JH_ENOMEM, "out of memory");
	ps->nqueued = 0;
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

int read_maps(struct parser *ps)
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

static int v2_records(struct parser *ps)
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
				if (stack_counts(ps, UINT32_MAX, v))
					return perr(ps, JH_ENOMEM, "out of memory");
				ps->cur_has_counts = true;
			} else {
				int64_t tid = profile_thread(p, (int64_t)uid);
				if (tid < 0 || stack_counts(ps, (uint32_t)tid, v))
					return perr(ps, JH_ENOMEM, "out of memory");
			}
			continue;
		}
		if (starts(line, len, "MAPPED_LIBRARIES:") || section(line, len, "Memory map:")) {
			if (ps->sp && !ps->second) {
				/* the maps start before the split: read on to the
				 * end here, the second half is dropped */
				split_drop(ps);
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

int v2_body(struct parser *ps)
{
	ps->late = true;
	int rc = v2_records(ps);
	/* the last stack's sample, whatever the outcome: a model cut short
	 * by an error is the one a parse without the lookahead leaves */
	int r2 = resolve_stack(ps);
	ps->late = false;
	return rc ? rc : r2;
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
void reserve_body(struct profile *p, size_t bytes)
{
	if (bytes >= PARSE_RESERVE_MIN) {
		(void)profile_reserve(p, 0, bytes / 256, bytes / 16, bytes / 256);
		/* the index is written at once: for the first 256 MiB only, so
		 * that a huge file that turns out to be no dump costs little */
		(void)profile_reserve_sample_index(p, (bytes < PARSE_RESERVE_INDEX_MAX ? bytes
						       : PARSE_RESERVE_INDEX_MAX) / 256);
	}
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
	const char *cut = split_point(ps);
	/* a split body is reserved for in the first half's thread, while the
	 * second half reserves its own */
	if (cut)
		return parse_v2_split(ps, cut);
	reserve_body(p, (size_t)(ps->end - ps->pos));
	return v2_body(ps);
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
	if (o && o->split && o->split->done)
		*o->split->done = false;
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
		.err = err, .errlen = errlen, .cur = -1,
	};
	parser_report_to(&ps, o);
	int rc;
	if (o && o->split && o->split->done)
		*o->split->done = false;
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

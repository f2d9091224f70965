#include "output/stacks.h"
#include "lib/array.h"
#include "lib/chars.h"
#include "lib/errors.h"
#include "lib/seqsort.h"
#include "lib/threads.h"

/* True for characters a folded line or an XML document cannot carry:
 * U+2028 and U+2029 end a line for JavaScript's '.', U+FFFE and U+FFFF
 * are not XML characters. */
static bool bad_char(const unsigned char *s, int n)
{
	if (n == 1)
		return s[0] < 0x20 || s[0] == 0x7f;
	if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9))
		return true;
	return n == 3 && s[0] == 0xef && s[1] == 0xbf && (s[2] == 0xbe || s[2] == 0xbf);
}

void stacks_sanitize(const char *name, char *out, size_t outlen)
{
	const unsigned char *s = (const unsigned char *)name;
	size_t o = 0;
	while (*s) {
		int n = (int)jh_utf8_len(s, 4);
		if (n == 0 || bad_char(s, n)) {
			if (o + 1 >= outlen)
				break;
			out[o++] = '?';
			s += n ? n : 1;
			continue;
		}
		if (o + (size_t)n >= outlen)
			break;
		if (n == 1 && *s == ';')
			out[o++] = ':';
		else
			for (int i = 0; i < n; i++)
				out[o++] = (char)s[i];
		s += n;
	}
	if (o == 0 && outlen >= 3) {
		memcpy(out, "??", 2);
		o = 2;
	}
	out[o] = '\0';

	/* flamegraph.pl reads "... <space><number>" at the end of a stack as
	 * a second count column: a leaf frame "f 12" must not end that way. */
	size_t p = o, digits = 0;
	while (p > 0 && out[p - 1] >= '0' && out[p - 1] <= '9')
		p--, digits++;
	if (p > 0 && out[p - 1] == '.') {
		size_t q = p - 1, d1 = 0;
		while (q > 0 && out[q - 1] >= '0' && out[q - 1] <= '9')
			q--, d1++;
		if (d1) {
			p = q;
			digits = d1;
		}
	}
	if (digits && p > 0 && out[p - 1] == ' ')
		out[p - 1] = '_';
}

/* One half of the samples made into stacks (two threads share the
 * work of a large profile: every name is interned beforehand, so that
 * the halves only read the table). */
struct half {
	const struct report *r;
	const uint32_t *map;        /* aggregate key id -> name id */
	uint32_t allocator_only, no_frames;
	size_t from, to;            /* samples */
	uint32_t *frames;
	size_t nframes, cap_frames;
	struct stack *s;
	size_t n, cap;
	int rc;
};

static int add_sample(struct half *h, uint32_t si, uint32_t **keys, size_t *cap)
{
	const struct report *r = h->r;
	const struct pf_sample *s = &r->p->samples[si];
	double before = r->diff ? pf_value_of(aggregate_base(r->a, r->p, si), r->value) : 0;
	double value = pf_value_of(aggregate_values(r->a, r->p, si), r->value) + before;
	if (value == 0 && before == 0)
		return 0;
	int64_t n = aggregate_stack_keys(r->a, r->p, si, keys, cap);
	if (n < 0)
		return (int)n;
	if (n == 0 && r->a->filtered)
		return 0;   /* the filters dropped it, or left it no frame */
	if (h->nframes + (size_t)n + 1 >= UINT32_MAX ||
	    jh_grow(&h->frames, &h->cap_frames, h->nframes + (size_t)n + 1, sizeof(*h->frames)))
		return JH_ENOMEM;
	struct stack e = { (uint32_t)h->nframes, 0, value, before };
	if (n == 0) {
		h->frames[h->nframes++] = s->depth ? h->allocator_only : h->no_frames;
		e.nframes = 1;
	} else {
		for (int64_t k = n - 1; k >= 0; k--)
			h->frames[h->nframes++] = h->map[(*keys)[k]];
		e.nframes = (uint32_t)n;
	}
	return JH_PUSH(h->s, h->n, h->cap, e);
}

static void *build_half(void *arg)
{
	struct half *h = arg;
	uint32_t *keys = NULL;
	size_t cap = 0;
	for (size_t si = h->from; si < h->to && !h->rc; si++)
		h->rc = add_sample(h, (uint32_t)si, &keys, &cap);
	free(keys);
	return NULL;
}

/* Profiles of this many samples or more are made into stacks in two
 * halves, the second in a thread of its own when there are two cores. */
#define STACKS_SPLIT_MIN 65536

/* Every sample made into a stack, in sample order, into ST. */
static int build_all(struct stacks *st, const struct report *r)
{
	size_t nkeys = r->a->keys.len;
	uint32_t *map = malloc((nkeys + 1) * sizeof(*map));
	char *buf = malloc(16384);
	int rc = map && buf ? 0 : JH_ENOMEM;
	/* the names, interned in key order */
	for (size_t k = 0; k < nkeys && !rc; k++) {
		stacks_sanitize(strtab_get(&r->a->keys, (uint32_t)k), buf, 16384);
		int64_t id = strtab_intern(&st->names, buf);
		if (id < 0)
			rc = (int)id;
		else
			map[k] = (uint32_t)id;
	}
	int64_t ao = rc ? -1 : strtab_intern(&st->names, STACKS_ALLOCATOR_ONLY);
	int64_t nf = ao < 0 ? -1 : strtab_intern(&st->names, STACKS_NO_FRAMES);
	free(buf);
	if (rc || ao < 0 || nf < 0) {
		free(map);
		return JH_ENOMEM;
	}
	size_t ns = r->p->nsamples;
	bool two = (ns >= STACKS_SPLIT_MIN || jh_threads_forced()) && jh_threads() > 1;
	struct half h[2];
	for (int k = 0; k < 2; k++)
		h[k] = (struct half){ .r = r, .map = map, .allocator_only = (uint32_t)ao,
				      .no_frames = (uint32_t)nf, .from = ns, .to = ns };
	h[0].from = 0;
	h[0].to = h[1].from = two ? ns / 2 : ns;
	jh_run_two(build_half, &h[0], two ? build_half : NULL, &h[1], two);
	free(map);
	rc = h[0].rc ? h[0].rc : h[1].rc;
	/* the second half after the first */
	if (!rc && h[1].n) {
		if (h[0].nframes + h[1].nframes >= UINT32_MAX ||
		    jh_grow(&h[0].frames, &h[0].cap_frames, h[0].nframes + h[1].nframes,
			    sizeof(*h[0].frames)) ||
		    jh_grow(&h[0].s, &h[0].cap, h[0].n + h[1].n, sizeof(*h[0].s)))
			rc = JH_ENOMEM;
		for (size_t i = 0; !rc && i < h[1].n; i++) {
			struct stack e = h[1].s[i];
			e.frame0 += (uint32_t)h[0].nframes;
			h[0].s[h[0].n + i] = e;
		}
		if (!rc) {
			memcpy(h[0].frames + h[0].nframes, h[1].frames, h[1].nframes * sizeof(*h[1].frames));
			h[0].nframes += h[1].nframes;
			h[0].n += h[1].n;
		}
	}
	free(h[1].frames);
	free(h[1].s);
	st->frames = h[0].frames;
	st->nframes = h[0].nframes;
	st->cap_frames = h[0].cap_frames;
	st->s = h[0].s;
	st->n = h[0].n;
	st->cap = h[0].cap;
	return rc;
}

/* Whether name A followed by the byte TA sorts before name B followed by
 * TB (TA and TB: ';' or '\0', neither of which a sanitized name holds). */
static int cmp_term(const char *a, char ta, const char *b, char tb)
{
	size_t i = 0;
	while (a[i] && a[i] == b[i])
		i++;
	unsigned char ca = (unsigned char)(a[i] ? a[i] : ta);
	unsigned char cb = (unsigned char)(b[i] ? b[i] : tb);
	return ca < cb ? -1 : ca > cb;
}

struct rankctx {
	const struct stacks *st;
	bool text;
};

/* Symbols of the order: with TEXT, symbol 2 * name + 1 is a name
 * followed by ';' (more frames follow) and 2 * name one followed by the
 * end of the line; else a symbol is a name. */
static int cmp_syms(const void *x, const void *y, void *arg)
{
	const struct rankctx *c = arg;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	if (!c->text)
		return strcmp(stacks_name(c->st, a), stacks_name(c->st, b));
	return cmp_term(stacks_name(c->st, a / 2), a & 1 ? ';' : '\0',
			stacks_name(c->st, b / 2), b & 1 ? ';' : '\0');
}

/* Sorts st->s by ORDER (see stacks_build()): each frame is replaced by
 * its symbol's rank, the stacks sorted by their sequences of ranks
 * (lib/seqsort.h), and the frames put back. */
static int sort_stacks(struct stacks *st, enum stacks_order order)
{
	bool text = order == STACKS_TEXT;
	size_t nsyms = text ? 2 * st->names.len : st->names.len;
	uint32_t *sym = malloc((nsyms + 1) * sizeof(*sym));
	uint32_t *rank = malloc((nsyms + 1) * sizeof(*rank));
	struct seqsort_item *it = malloc((st->n + 1) * sizeof(*it));
	struct stack *sorted = malloc((st->n + 1) * sizeof(*sorted));
	if (!sym || !rank || !it || !sorted) {
		free(sym);
		free(rank);
		free(it);
		free(sorted);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < nsyms; i++)
		sym[i] = (uint32_t)i;
	struct rankctx c = { st, text };
	jh_qsort_r(sym, nsyms, sizeof(*sym), cmp_syms, &c);
	for (size_t i = 0; i < nsyms; i++)
		rank[sym[i]] = (uint32_t)i;
	for (size_t i = 0; i < st->n; i++) {
		const struct stack *s = &st->s[i];
		uint32_t *f = st->frames + s->frame0;
		for (uint32_t k = 0; k < s->nframes; k++)
			f[k] = text ? rank[2 * f[k] + (k + 1 < s->nframes)] : rank[f[k]];
		it[i] = (struct seqsort_item){ s->frame0, s->nframes, (uint32_t)i, 0 };
	}
	seqsort(it, st->n, st->frames);
	for (size_t i = 0; i < st->n; i++)
		sorted[i] = st->s[it[i].id];
	for (size_t i = 0; i < st->nframes; i++)
		st->frames[i] = text ? sym[st->frames[i]] / 2 : sym[st->frames[i]];
	free(st->s);
	st->s = sorted;
	st->cap = st->n + 1;
	free(sym);
	free(rank);
	free(it);
	return 0;
}

static bool same_stack(const struct stacks *st, const struct stack *a, const struct stack *b)
{
	return a->nframes == b->nframes &&
	       !memcmp(st->frames + a->frame0, st->frames + b->frame0,
		       a->nframes * sizeof(uint32_t));
}

int stacks_build(struct stacks *st, const struct report *r, enum stacks_order order)
{
	memset(st, 0, sizeof(*st));
	if (strtab_init(&st->names))
		return JH_ENOMEM;
	int rc = build_all(st, r);
	if (rc)
		return rc;

	if (st->n >= UINT32_MAX || (rc = sort_stacks(st, order)))
		return rc ? rc : JH_ENOMEM;
	size_t o = 0;
	for (size_t i = 0; i < st->n; i++) {
		if (o && same_stack(st, &st->s[o - 1], &st->s[i])) {
			st->s[o - 1].value += st->s[i].value;
			st->s[o - 1].before += st->s[i].before;
		} else
			st->s[o++] = st->s[i];
	}
	st->n = 0;
	for (size_t i = 0; i < o; i++) {
		if (st->s[i].value == 0 && st->s[i].before == 0)
			continue;
		st->total += st->s[i].value;
		st->total_before += st->s[i].before;
		st->s[st->n++] = st->s[i];
	}
	return 0;
}

void stacks_release(struct stacks *st)
{
	strtab_release(&st->names);
	free(st->frames);
	free(st->s);
	memset(st, 0, sizeof(*st));
}

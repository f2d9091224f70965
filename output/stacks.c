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
 * the halves only read the table).  Two halves write into one array of
 * frames, each into a stretch as large as its samples could need, so
 * that neither grows it nor is copied after the other: the room they
 * leave unused is never touched, and costs no memory. */
struct half {
	const struct report *r;
	const uint32_t *more, *last;  /* aggregate key id -> its symbol with more
	                                 frames after it, and as the last one */
	uint32_t allocator_only, no_frames;
	size_t from, to;            /* samples */
	struct stacks_stretch fr;
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
	if (stacks_stretch_need(&h->fr, h->fr.n + (size_t)n + 1))
		return JH_ENOMEM;
	struct stack e = { (uint32_t)h->fr.n, 0, value, before };
	if (n == 0) {
		h->fr.frames[h->fr.n++] = s->depth ? h->allocator_only : h->no_frames;
		e.nframes = 1;
	} else {
		uint32_t *f = h->fr.frames + h->fr.n;
		for (int64_t k = n - 1; k > 0; k--)
			*f++ = h->more[(*keys)[k]];
		*f = h->last[(*keys)[0]];
		h->fr.n += (size_t)n;
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

bool stacks_halves(const struct aggregate *a, const struct profile *p, size_t *mid,
		   struct stacks_stretch st[2])
{
	size_t ns = p->nsamples;
	st[0] = st[1] = (struct stacks_stretch){ 0 };
	*mid = ns;
	if (!((ns >= STACKS_SPLIT_MIN || jh_threads_forced()) && jh_threads() > 1))
		return false;
	size_t half = ns / 2, room[2] = { 0, 0 };
	for (size_t i = 0; i < ns; i++) {
		size_t d = p->samples[i].depth;
		room[i >= half] += d ? d * a->max_nkeys + 1 : 1;
	}
	size_t all = room[0] + room[1] + 1;
	uint32_t *frames = all < UINT32_MAX ? malloc(all * sizeof(*frames)) : NULL;
	if (!frames)
		return false;
	st[0] = (struct stacks_stretch){ frames, 0, room[0] + 1, true };
	st[1] = (struct stacks_stretch){ frames, room[0] + 1, all, true };
	*mid = half;
	return true;
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
	const struct strtab *names = &c->st->names;
	if (!c->text)
		return strcmp(strtab_get(names, a), strtab_get(names, b));
	return cmp_term(strtab_get(names, a / 2), a & 1 ? ';' : '\0',
			strtab_get(names, b / 2), b & 1 ? ';' : '\0');
}

/* The symbols of the order (see cmp_syms()) sorted: st->symname, and per
 * symbol its rank in *RANK (freed by the caller). */
static int rank_symbols(struct stacks *st, enum stacks_order order, uint32_t **rank)
{
	bool text = order == STACKS_TEXT;
	size_t nsyms = text ? 2 * st->names.len : st->names.len;
	uint32_t *sym = malloc((nsyms + 1) * sizeof(*sym));
	*rank = malloc((nsyms + 1) * sizeof(**rank));
	if (!sym || !*rank) {
		free(sym);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < nsyms; i++)
		sym[i] = (uint32_t)i;
	struct rankctx c = { st, text };
	jh_qsort_r(sym, nsyms, sizeof(*sym), cmp_syms, &c);
	for (size_t i = 0; i < nsyms; i++) {
		(*rank)[sym[i]] = (uint32_t)i;
		sym[i] = text ? sym[i] / 2 : sym[i];
	}
	st->symname = sym;
	st->nsyms = nsyms;
	return 0;
}

/* Every sample made into a stack of symbols, in sample order, into ST. */
static int build_all(struct stacks *st, const struct report *r, enum stacks_order order)
{
	bool text = order == STACKS_TEXT;
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
	uint32_t *rank = NULL, *more = NULL, *last = NULL;
	if (!rc && ao >= 0 && nf >= 0 && st->names.len < UINT32_MAX / 2 &&
	    !rank_symbols(st, order, &rank) &&
	    (more = malloc((nkeys + 1) * sizeof(*more))) && (last = malloc((nkeys + 1) * sizeof(*last)))) {
		/* each key's two symbols */
		for (size_t k = 0; k < nkeys; k++) {
			more[k] = rank[text ? 2 * map[k] + 1 : map[k]];
			last[k] = rank[text ? 2 * map[k] : map[k]];
		}
	} else
		rc = JH_ENOMEM;
	free(map);
	if (rc) {
		free(rank);
		free(more);
		free(last);
		return JH_ENOMEM;
	}
	uint32_t sym_ao = rank[text ? 2 * (uint32_t)ao : (uint32_t)ao];
	uint32_t sym_nf = rank[text ? 2 * (uint32_t)nf : (uint32_t)nf];
	free(rank);
	size_t ns = r->p->nsamples, mid;
	struct stacks_stretch fr[2];
	bool two = stacks_halves(r->a, r->p, &mid, fr);
	struct half h[2];
	for (int k = 0; k < 2; k++)
		h[k] = (struct half){ .r = r, .more = more, .last = last, .allocator_only = sym_ao,
				      .no_frames = sym_nf, .from = k ? mid : 0, .to = k ? ns : mid,
				      .fr = fr[k] };
	jh_run_two(build_half, &h[0], two ? build_half : NULL, &h[1], two);
	free(more);
	free(last);
	rc = h[0].rc ? h[0].rc : h[1].rc;
	/* the second half's stacks after the first's */
	if (!rc && h[1].n) {
		if (jh_grow(&h[0].s, &h[0].cap, h[0].n + h[1].n, sizeof(*h[0].s)))
			rc = JH_ENOMEM;
		else
			memcpy(h[0].s + h[0].n, h[1].s, h[1].n * sizeof(*h[1].s));
		h[0].n += rc ? 0 : h[1].n;
	}
	free(h[1].s);
	stacks_stretch_join(&h[0].fr, &h[1].fr, two, &st->frames, &st->nframes, &st->cap_frames);
	st->s = h[0].s;
	st->n = h[0].n;
	st->cap = h[0].cap;
	return rc;
}

/* Sorts st->s by the sequences of symbols (lib/seqsort.h), which is the
 * order ORDER asks for. */
static int sort_stacks(struct stacks *st)
{
	struct seqsort_item *it = malloc((st->n + 1) * sizeof(*it));
	struct stack *sorted = malloc((st->n + 1) * sizeof(*sorted));
	if (!it || !sorted) {
		free(it);
		free(sorted);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < st->n; i++) {
		const struct stack *s = &st->s[i];
		it[i] = (struct seqsort_item){ s->frame0, s->nframes, (uint32_t)i, 0 };
	}
	seqsort(it, st->n, st->frames, (uint32_t)st->nsyms);
	for (size_t i = 0; i < st->n; i++)
		sorted[i] = st->s[it[i].id];
	free(st->s);
	st->s = sorted;
	st->cap = st->n + 1;
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
	int rc = build_all(st, r, order);
	if (rc)
		return rc;

	if (st->n >= UINT32_MAX || (rc = sort_stacks(st)))
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
	free(st->symname);
	free(st->frames);
	free(st->s);
	memset(st, 0, sizeof(*st));
}

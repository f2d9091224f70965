/*
 * --speedscope: speedscope's own JSON file format
 * (https://www.speedscope.app/file-format-schema.json).
 *
 * One "sampled" profile per sample type: the chosen value first (it is
 * activeProfileIndex 0), then inuse_space (unit "bytes"), inuse_objects
 * ("none") and, when the dump has them, alloc_space and alloc_objects.
 * Samples are stacks of indices into shared.frames, root first, after the
 * allocator frames are cut and the filters applied as in --text; weights
 * are the unsampled values.
 * Every inline level is a frame of its own ("make_buf (inline)").
 *
 * Frames are named by their display keys, so they read as in --text and
 * follow --functions/--lines/--files/--addresses.  A frame's file and line
 * are where its function is defined with --functions (so that a function is
 * one frame, as speedscope expects), the source line of the frame (the call
 * site for outer and inlined-into frames) with --lines and --addresses, and
 * the file alone with --files.
 *
 * With --base the weights are the differences; speedscope cannot show a
 * negative weight, so a negative difference in the chosen value is an error
 * (use --drop_negative), and another value type with one is left out.
 *
 * Output is deterministic: frames sorted by name, file and line; samples by
 * their frame sequence, equal stacks merged, zero weights left out.
 *
 * On a large profile (make bench: 1,000,000 stacks, 330 MB of JSON) the
 * work is shared by two threads: the frame of every lockeys entry is made
 * and sorted first, so that the stacks are built from the samples in two
 * halves as sequences of frame ranks, and the profiles' arrays are
 * written in chunks (output/parwrite.h).
 */
#include <math.h>
#include "lib/array.h"
#include "lib/chars.h"
#include "lib/errors.h"
#include "lib/hash.h"
#include "lib/seqsort.h"
#include "lib/threads.h"
#include "output/obuf.h"
#include "output/output.h"
#include "output/parwrite.h"
#include "output/stacks.h"

#define SCHEMA_URL "https://www.speedscope.app/file-format-schema.json"

/* Keys of the frame given to a stack that has no frame left: every
 * location was an allocator frame, or the sample had none.  Named as in
 * --collapsed, so that the weight stays visible and adds up to Total. */
#define KEY_ALLOCATOR_ONLY (UINT32_MAX - 1)
#define KEY_NO_FRAMES (UINT32_MAX - 2)

struct ssframe {
	uint32_t key;            /* string id in the aggregate's keys */
	uint32_t file;           /* string id in the profile, 0 none */
	int64_t line;            /* 0 none */
};

struct ssstack {
	uint32_t f0, n;          /* frames in ss.stk[f0 .. f0+n), root first */
	uint32_t sample;
};

struct ss {
	const struct report *r;
	const struct profile *p;
	const struct aggregate *a;
	struct ssframe *frames;  size_t nframes, cap_frames;   /* every frame a
	                            stack could have, sorted (see make_frames) */
	struct idmap index;
	uint32_t *entframe;      /* per lockeys entry: its frame's rank */
	uint32_t fr_alloc, fr_none;  /* the ranks of the two pseudo frames */
	uint8_t *used;           /* per frame: some stack has it */
	uint32_t *shown;         /* per frame: its index in the file's frames */
	size_t nshown;
	uint32_t *stk;           size_t nstk, cap_stk;    /* the stacks' frames */
	struct ssstack *stacks;  size_t nstacks;
	size_t *group;           /* after sorting: where each run of stacks
	                            with the same frames starts, and the end */
	size_t ngroups;
	struct ssframe probe;    /* the frame being looked up */
};

static const struct {
	enum pf_value v;
	const char *name, *unit;
} types[] = {
	{ PF_INUSE_SPACE, "inuse_space", "bytes" },
	{ PF_INUSE_OBJECTS, "inuse_objects", "none" },
	{ PF_ALLOC_SPACE, "alloc_space", "bytes" },
	{ PF_ALLOC_OBJECTS, "alloc_objects", "none" },
	/* derived: written only when chosen */
	{ PF_CHURN_SPACE, "churn_space", "bytes" },
	{ PF_CHURN_OBJECTS, "churn_objects", "none" },
};

/* ---- JSON ------------------------------------------------------------ */

/* S as a JSON string: quotes, backslashes and control characters escaped,
 * valid UTF-8 passed through, any other byte replaced by U+FFFD. */
static void json_string(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);
	putc('"', out);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			putc('\\', out);
			putc(c, out);
			i++;
		} else if (c < 0x20) {
			switch (c) {
			case '\n': fputs("\\n", out); break;
			case '\r': fputs("\\r", out); break;
			case '\t': fputs("\\t", out); break;
			default: fprintf(out, "\\u%04x", c); break;
			}
			i++;
		} else {
			size_t len = jh_utf8_len(s + i, n - i);
			if (len) {
				fwrite(s + i, 1, len, out);
				i += len;
			} else {
				fputs("\\ufffd", out);
				i++;
			}
		}
	}
	putc('"', out);
}

/* A number that reads back as the same double; integers without a point. */
static void json_number(FILE *out, double v)
{
	char buf[64];
	if (!isfinite(v) || v == 0)
		v = 0;   /* and never -0 */
	if (v == trunc(v) && fabs(v) < 9e15) {
		fprintf(out, "%.0f", v);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, out);
}

/* ---- frames and stacks ----------------------------------------------- */

static uint64_t frame_hash(const struct ssframe *f)
{
	uint64_t h = jh_hash_bytes(&f->key, sizeof(f->key), 0);
	h = jh_hash_bytes(&f->file, sizeof(f->file), h);
	h = jh_hash_bytes(&f->line, sizeof(f->line), h);
	return jh_mix64(h);
}

static int frame_eq(const void *ctx, uint32_t id)
{
	const struct ss *s = ctx;
	const struct ssframe *f = &s->frames[id];
	return f->key == s->probe.key && f->file == s->probe.file && f->line == s->probe.line;
}

/* Id of frame F, added when new; negative on error. */
static int64_t frame_id(struct ss *s, const struct ssframe *f)
{
	s->probe = *f;
	uint64_t h = frame_hash(f);
	uint32_t id = idmap_find(&s->index, h, frame_eq, s);
	if (id != UINT32_MAX)
		return id;
	if (s->nframes >= UINT32_MAX - 1 ||
	    JH_PUSH(s->frames, s->nframes, s->cap_frames, *f) ||
	    idmap_put(&s->index, h, (uint32_t)(s->nframes - 1)))
		return JH_ENOMEM;
	return (int64_t)(s->nframes - 1);
}

static const char *frame_name(const struct ss *s, uint32_t key)
{
	if (key == KEY_ALLOCATOR_ONLY)
		return STACKS_ALLOCATOR_ONLY;
	if (key == KEY_NO_FRAMES)
		return STACKS_NO_FRAMES;
	return strtab_get(&s->a->keys, key);
}

/* The frame for line J of location L, whose display key is KEY. */
static struct ssframe make_frame(const struct ss *s, const struct pf_location *l,
				 uint32_t j, uint32_t key)
{
	struct ssframe f = { key, 0, 0 };
	if (j >= l->nlines)
		return f;
	const struct pf_line *ln = &s->p->lines[l->line0 + j];
	switch (s->r->gran) {
	case GRAN_FUNCTIONS: {
		const struct pf_function *fn = &s->p->funcs[ln->function];
		f.file = fn->filename;
		f.line = f.file && fn->start_line > 0 ? fn->start_line : 0;
		break;
	}
	case GRAN_FILES:
		f.file = ln->file;
		break;
	case GRAN_LINES:
	case GRAN_ADDRESSES:
		f.file = ln->file;
		f.line = f.file && ln->line > 0 ? ln->line : 0;
		break;
	}
	return f;
}

/* One half of the samples made into stacks (see output/stacks.c: the
 * same stretches of one array of frames). */
struct sshalf {
	const struct ss *s;
	const int *list;         /* the value types written */
	int nlist;
	size_t from, to;         /* samples */
	struct stacks_stretch stk;
	struct ssstack *stacks;
	size_t n, cap;
	uint8_t *used;           /* per frame */
	int rc;
};

/* Adds sample SI's stack, root first, from the entries
 * aggregate_stack_entries() gives (allocator frames cut,
 * --retain/--exclude/--focus/--ignore applied); each entry's frame has
 * the file and line of the location line it came from. */
static int add_stack(struct sshalf *h, uint32_t si, uint32_t **ents, size_t *cap)
{
	const struct ss *s = h->s;
	const struct profile *p = s->p;
	const struct pf_sample *sm = &p->samples[si];
	int64_t n = aggregate_stack_entries(s->a, p, si, ents, cap);
	if (n < 0)
		return (int)n;
	if (n == 0 && aggregate_stack_start(s->a, p, si, NULL) < sm->depth)
		return 0;   /* a filter dropped the stack */
	if (stacks_stretch_need(&h->stk, h->stk.n + (size_t)(n ? n : 1)))
		return JH_ENOMEM;
	struct ssstack st = { (uint32_t)h->stk.n, n ? (uint32_t)n : 1, si };
	uint32_t *out = h->stk.frames + h->stk.n + st.n - 1;
	if (n == 0)
		*out = sm->depth ? s->fr_alloc : s->fr_none;
	for (int64_t k = 0; k < n; k++)
		*out-- = s->entframe[(*ents)[k]];
	for (uint32_t k = 0; k < st.n; k++)
		h->used[h->stk.frames[h->stk.n + k]] = 1;
	h->stk.n += st.n;
	return JH_PUSH(h->stacks, h->n, h->cap, st);
}

static void *build_half(void *arg)
{
	struct sshalf *h = arg;
	const struct ss *s = h->s;
	uint32_t *ents = NULL;
	size_t cap = 0;
	for (size_t i = h->from; i < h->to && !h->rc; i++) {
		bool live = false;
		for (int k = 0; k < h->nlist; k++)
			if (pf_value_of(aggregate_values(s->a, s->p, (uint32_t)i), types[h->list[k]].v) > 0)
				live = true;
		if (live)
			h->rc = add_stack(h, (uint32_t)i, &ents, &cap);
	}
	free(ents);
	return NULL;
}

/* The stacks of the samples that have a value of a type in LIST, in
 * sample order, into s->stk and s->stacks; s->used says which frames
 * they have. */
static int build_stacks(struct ss *s, const int *list, int nlist)
{
	size_t ns = s->p->nsamples, mid;
	struct stacks_stretch stk[2];
	bool two = stacks_halves(s->a, s->p, &mid, stk);
	struct sshalf h[2];
	for (int k = 0; k < 2; k++) {
		h[k] = (struct sshalf){ .s = s, .list = list, .nlist = nlist, .from = k ? mid : 0,
					.to = k ? ns : mid, .stk = stk[k],
					.used = calloc(s->nframes + 1, 1) };
		if (!h[k].used) {
			free(h[0].used);
			free(stk[0].frames);
			return JH_ENOMEM;
		}
	}
	jh_run_two(build_half, &h[0], two ? build_half : NULL, &h[1], two);
	int rc = h[0].rc ? h[0].rc : h[1].rc;
	/* the second half's stacks after the first's */
	if (!rc && h[1].n && jh_grow(&h[0].stacks, &h[0].cap, h[0].n + h[1].n, sizeof(*h[0].stacks)))
		rc = JH_ENOMEM;
	if (!rc) {
		if (h[1].n)
			memcpy(h[0].stacks + h[0].n, h[1].stacks, h[1].n * sizeof(*h[1].stacks));
		h[0].n += h[1].n;
		for (size_t i = 0; i < s->nframes; i++)
			h[0].used[i] |= h[1].used[i];
	}
	free(h[1].stacks);
	free(h[1].used);
	stacks_stretch_join(&h[0].stk, &h[1].stk, two, &s->stk, &s->nstk, &s->cap_stk);
	s->stacks = h[0].stacks;
	s->nstacks = h[0].n;
	s->used = h[0].used;
	return rc;
}

static int cmp_frames(const void *x, const void *y, void *arg)
{
	const struct ss *s = arg;
	const struct ssframe *a = &s->frames[*(const uint32_t *)x];
	const struct ssframe *b = &s->frames[*(const uint32_t *)y];
	int c = strcmp(frame_name(s, a->key), frame_name(s, b->key));
	if (c)
		return c;
	c = strcmp(strtab_get(&s->p->strs, a->file), strtab_get(&s->p->strs, b->file));
	if (c)
		return c;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

/* Sorts the stacks by their frame sequences (lib/seqsort.h; equal ones
 * in sample order) and finds the runs of equal stacks. */
static int sort_stacks(struct ss *s)
{
	struct seqsort_item *it = malloc((s->nstacks + 1) * sizeof(*it));
	struct ssstack *sorted = malloc((s->nstacks + 1) * sizeof(*sorted));
	s->group = malloc((s->nstacks + 1) * sizeof(*s->group));
	if (!it || !sorted || !s->group) {
		free(it);
		free(sorted);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < s->nstacks; i++)
		it[i] = (struct seqsort_item){ s->stacks[i].f0, s->stacks[i].n, (uint32_t)i, 0 };
	seqsort(it, s->nstacks, s->stk, (uint32_t)s->nframes);
	for (size_t i = 0; i < s->nstacks; i++)
		sorted[i] = s->stacks[it[i].id];
	free(it);
	free(s->stacks);
	s->stacks = sorted;
	s->ngroups = 0;
	for (size_t i = 0; i < s->nstacks; i++) {
		const struct ssstack *a = &s->stacks[i], *b = i ? &s->stacks[i - 1] : NULL;
		if (!b || a->n != b->n ||
		    memcmp(s->stk + a->f0, s->stk + b->f0, a->n * sizeof(*s->stk)))
			s->group[s->ngroups++] = i;
	}
	s->group[s->ngroups] = s->nstacks;
	return 0;
}

/* Every frame a stack can have: the frame of each lockeys entry (its key,
 * and the file and line of the location line that gave the key) and the
 * two pseudo frames, each once, sorted by name, file and line; then
 * s->entframe and the pseudo frames' ranks say where each went.  Those
 * no stack has are left out of the file afterwards (s->shown). */
static int make_frames(struct ss *s)
{
	const struct aggregate *a = s->a;
	s->entframe = malloc((a->nlockeys + 1) * sizeof(*s->entframe));
	if (!s->entframe)
		return JH_ENOMEM;
	for (size_t l = 0; l < s->p->nlocs; l++) {
		const struct agg_locinfo *li = &a->locinfo[l];
		for (uint32_t j = 0; j < li->nkeys; j++) {
			struct ssframe f = make_frame(s, &s->p->locs[l], j, a->lockeys[li->key0 + j]);
			int64_t id = frame_id(s, &f);
			if (id < 0)
				return (int)id;
			s->entframe[li->key0 + j] = (uint32_t)id;
		}
	}
	struct ssframe fa = { KEY_ALLOCATOR_ONLY, 0, 0 }, fn = { KEY_NO_FRAMES, 0, 0 };
	int64_t ida = frame_id(s, &fa), idn = ida < 0 ? ida : frame_id(s, &fn);
	if (idn < 0)
		return (int)idn;
	uint32_t *order = malloc((s->nframes + 1) * sizeof(*order));
	uint32_t *rank = malloc((s->nframes + 1) * sizeof(*rank));
	struct ssframe *sorted = malloc((s->nframes + 1) * sizeof(*sorted));
	if (!order || !rank || !sorted) {
		free(order);
		free(rank);
		free(sorted);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < s->nframes; i++)
		order[i] = (uint32_t)i;
	jh_qsort_r(order, s->nframes, sizeof(*order), cmp_frames, s);
	for (size_t i = 0; i < s->nframes; i++) {
		rank[order[i]] = (uint32_t)i;
		sorted[i] = s->frames[order[i]];
	}
	for (size_t e = 0; e < a->nlockeys; e++)
		s->entframe[e] = rank[s->entframe[e]];
	s->fr_alloc = rank[ida];
	s->fr_none = rank[idn];
	free(s->frames);
	s->frames = sorted;
	s->cap_frames = s->nframes + 1;
	free(order);
	free(rank);
	return 0;
}

/* The frames some stack has, numbered in their order: s->shown. */
static int number_shown(struct ss *s)
{
	s->shown = malloc((s->nframes + 1) * sizeof(*s->shown));
	if (!s->shown)
		return JH_ENOMEM;
	s->nshown = 0;
	for (size_t i = 0; i < s->nframes; i++)
		s->shown[i] = s->used[i] ? (uint32_t)s->nshown++ : UINT32_MAX;
	return 0;
}

/* ---- output ---------------------------------------------------------- */

/* The weights of every group (stacks with the same frames after the cut)
 * in each type of LIST: W[k][g], group G's samples' values added in
 * sample order.  Two threads take half the groups each. */
struct weights {
	const struct ss *s;
	const int *list;
	int nlist;
	double **w;
	size_t from, to;
};

static void *sum_weights(void *arg)
{
	const struct weights *ws = arg;
	const struct ss *s = ws->s;
	for (size_t g = ws->from; g < ws->to; g++) {
		double w[6] = { 0 };
		for (size_t i = s->group[g]; i < s->group[g + 1]; i++) {
			const double *v = aggregate_values(s->a, s->p, s->stacks[i].sample);
			for (int k = 0; k < ws->nlist; k++)
				w[k] += v[types[ws->list[k]].v];
		}
		for (int k = 0; k < ws->nlist; k++)
			ws->w[k][g] = w[k];
	}
	return NULL;
}

/* Profiles of this many groups of stacks or more have their weights
 * summed in two halves, the second in a thread of its own when there are
 * two cores. */
#define SS_SPLIT_MIN 65536

static void all_weights(const struct ss *s, const int *list, int nlist, double **w)
{
	bool two = (s->ngroups >= SS_SPLIT_MIN || jh_threads_forced()) && jh_threads() > 1;
	struct weights h[2] = { { s, list, nlist, w, 0, s->ngroups }, { s, list, nlist, w, 0, 0 } };
	if (two) {
		h[0].to = h[1].from = s->ngroups / 2;
		h[1].to = s->ngroups;
	}
	jh_run_two(sum_weights, &h[0], two ? sum_weights : NULL, &h[1], two);
}

/* json_number() into O.  The weights of a large profile repeat (a few
 * allocation sizes, unsampled), and the shortest form that reads back is
 * slow to find (printf and strtod), so the last text of each of
 * NUMCACHE slots is kept, picked by the value's bits. */
#define NUMCACHE 4096
struct numcache {
	uint64_t bits;
	uint32_t n;              /* 0: empty */
	char s[28];
};

static void obuf_number(struct obuf *o, double v, struct numcache *cache)
{
	if (isfinite(v) && v == trunc(v) && fabs(v) < 9e15) {
		obuf_f0(o, v);
		return;
	}
	uint64_t bits;
	memcpy(&bits, &v, sizeof(bits));
	struct numcache *c = &cache[jh_mix64(bits) % NUMCACHE];
	if (c->n && c->bits == bits) {
		obuf_write(o, c->s, c->n);
		return;
	}
	char buf[64];
	if (!isfinite(v))
		v = 0;
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	size_t n = strlen(buf);
	if (n < sizeof(c->s)) {
		c->bits = bits;
		c->n = (uint32_t)n;
		memcpy(c->s, buf, n);
	}
	obuf_write(o, buf, n);
}

static bool has_negative(const struct aggregate *a, const struct profile *p, enum pf_value v)
{
	for (size_t i = 0; i < p->nsamples; i++)
		if (pf_value_of(aggregate_values(a, p, (uint32_t)i), v) < 0)
			return true;
	return false;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b && b[1] ? b + 1 : path;
}

static void write_frames(FILE *out, const struct ss *s)
{
	fputs("\"shared\":{\"frames\":[", out);
	for (size_t i = 0, k = 0; i < s->nframes; i++) {
		const struct ssframe *f = &s->frames[i];
		if (!s->used[i])
			continue;
		fputs(k++ ? ",\n" : "\n", out);
		fputs("{\"name\":", out);
		json_string(out, frame_name(s, f->key));
		if (f->file) {
			fputs(",\"file\":", out);
			json_string(out, strtab_get(&s->p->strs, f->file));
		}
		if (f->line > 0)
			fprintf(out, ",\"line\":%lld", (long long)f->line);
		putc('}', out);
	}
	fputs("\n]},\n", out);
}

/* A frame index as a sample prints it after its first: ",N". */
struct numtext {
	char s[12];
	uint32_t n;
};

/* NUMS[i] for every frame i some stack has: its index in the file. */
static struct numtext *number_texts(const struct ss *s)
{
	struct numtext *nums = calloc(s->nframes + 1, sizeof(*nums));
	for (size_t i = 0; nums && i < s->nframes; i++)
		if (s->used[i])
			nums[i].n = (uint32_t)snprintf(nums[i].s, sizeof(nums[i].s), ",%u", s->shown[i]);
	return nums;
}

/* One profile's arrays, written in chunks of groups (output/parwrite.h). */
struct pctx {
	const struct ss *s;
	const double *w;             /* per group */
	const uint32_t *before;      /* per group: the groups written before it */
	const struct numtext *nums;
	struct numcache *cache[2];   /* per thread, NUMCACHE zeroed slots */
};

/* "[f,f,...]" of groups [FROM, TO) whose weight is above 0, each after a
 * line break, and after a comma but the first (parwrite_fn). */
static int write_samples(void *ctx, int who, size_t from, size_t to, struct obuf *o)
{
	const struct pctx *c = ctx;
	const struct ss *s = c->s;
	const struct numtext *nums = c->nums;
	for (size_t g = from; g < to; g++) {
		/* the groups are in order, their frames where the stacks were
		 * made: start loading a later group's */
		if (g + 8 < to) {
			const uint32_t *later = s->stk + s->stacks[s->group[g + 8]].f0;
			__builtin_prefetch(later);
			__builtin_prefetch(later + 16);
		}
		if (!(c->w[g] > 0))
			continue;
		const struct ssstack *st = &s->stacks[s->group[g]];
		if (c->before[g])
			obuf_putc(o, ',');
		obuf_write(o, "\n[", 2);
		const uint32_t *f = s->stk + st->f0;
		if (st->n <= (OBUF_SIZE - 16) / sizeof(struct numtext)) {
			/* each ",N" a fixed-size copy from the table */
			char *b = obuf_room(o, (st->n + 1) * sizeof(struct numtext)), *q = b;
			for (uint32_t k = 0; k < st->n; k++) {
				memcpy(q, nums[f[k]].s, sizeof(nums[0].s));
				q += nums[f[k]].n;
			}
			/* the first without its comma */
			if (st->n) {
				memmove(b, b + 1, (size_t)(q - b - 1));
				q--;
			}
			o->n += (size_t)(q - b);
		} else {
			for (uint32_t k = 0; k < st->n; k++) {
				if (k)
					obuf_putc(o, ',');
				obuf_u64(o, s->shown[f[k]]);
			}
		}
		obuf_putc(o, ']');
	}
	return 0;
}

/* The weights above 0 of groups [FROM, TO), comma-separated, a line break
 * before every 16th from the first (parwrite_fn). */
static int write_weights(void *ctx, int who, size_t from, size_t to, struct obuf *o)
{
	const struct pctx *c = ctx;
	for (size_t g = from; g < to; g++) {
		if (!(c->w[g] > 0))
			continue;
		if (c->before[g])
			obuf_putc(o, ',');
		if (c->before[g] % 16 == 0)
			obuf_putc(o, '\n');
		obuf_number(o, c->w[g], c->cache[who]);
	}
	return 0;
}

/* One profile of type T with the weights W; C holds the rest, BEFORE is
 * room for a number per group. */
static int write_profile(FILE *out, const struct ss *s, int t, const char *prog,
			 struct pctx *c, const double *w, uint32_t *before)
{
	double total = 0;
	uint32_t written = 0;
	for (size_t g = 0; g < s->ngroups; g++) {
		before[g] = written;
		if (w[g] > 0) {
			written++;
			total += w[g];
		}
	}
	c->w = w;
	c->before = before;
	fputs("{\"type\":\"sampled\",\"name\":", out);
	char name[1024];
	snprintf(name, sizeof(name), "%s %s%s", prog, types[t].name,
		 s->r->diff ? " (difference from --base)" : "");
	json_string(out, name);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\n\"samples\":[", types[t].unit);
	int rc = parwrite(out, s->ngroups, 0, write_samples, c);
	fputs("\n],\n\"weights\":[", out);
	if (!rc)
		rc = parwrite(out, s->ngroups, 0, write_weights, c);
	fputs("\n],\n\"endValue\":", out);
	json_number(out, total);
	putc('}', out);
	return rc;
}

int output_speedscope(FILE *out, const struct report *r, char *err, size_t errlen)
{
	const struct profile *p = r->p;
	int chosen = 0, ntypes = r->p->has_alloc ? 4 : 2;
	for (int t = 0; t < 6; t++)
		if (types[t].v == r->value)
			chosen = t;
	if (r->diff && has_negative(r->a, p, r->value))
		return jh_err(err, errlen, JH_EUSAGE,
			      "--speedscope: with --base some %s differences are negative, and speedscope's weights cannot be; add --drop_negative to keep only what grew",
			      types[chosen].name);
	/* the profiles to write, the chosen one first */
	int list[6], nlist = 0;
	list[nlist++] = chosen;
	for (int t = 0; t < ntypes; t++)
		if (t != chosen && !(r->diff && has_negative(r->a, p, types[t].v)))
			list[nlist++] = t;

	struct ss s = { .r = r, .p = p, .a = r->a };
	idmap_init(&s.index);
	int rc = make_frames(&s);
	if (!rc)
		rc = build_stacks(&s, list, nlist);
	if (!rc)
		rc = number_shown(&s);
	if (!rc)
		rc = sort_stacks(&s);
	double *w[6] = { NULL };
	uint32_t *before = NULL;
	struct pctx c = { .s = &s };
	for (int k = 0; k < nlist && !rc; k++)
		if (!(w[k] = malloc((s.ngroups + 1) * sizeof(*w[k]))))
			rc = JH_ENOMEM;
	if (!rc && (!(before = malloc((s.ngroups + 1) * sizeof(*before))) ||
		    !(c.nums = number_texts(&s)) ||
		    !(c.cache[0] = jh_zalloc(NUMCACHE, sizeof(*c.cache[0]))) ||
		    !(c.cache[1] = jh_zalloc(NUMCACHE, sizeof(*c.cache[1])))))
		rc = JH_ENOMEM;
	if (!rc) {
		all_weights(&s, list, nlist, w);
		const char *prog = r->program && *r->program ? r->program
			: r->profile_paths && r->profile_paths[0] ? r->profile_paths[0] : "heap";
		prog = base_name(prog);
		fputs("{\"$schema\":\"" SCHEMA_URL "\",\n", out);
		write_frames(out, &s);
		fputs("\"profiles\":[\n", out);
		for (int k = 0; k < nlist && !rc; k++) {
			if (k)
				fputs(",\n", out);
			rc = write_profile(out, &s, list[k], prog, &c, w[k], before);
		}
		fputs("\n],\n\"name\":", out);
		char name[1024];
		snprintf(name, sizeof(name), "%s heap profile", prog);
		json_string(out, name);
		fputs(",\"activeProfileIndex\":0,\"exporter\":\"jheap\"}\n", out);
	}
	for (int k = 0; k < nlist; k++)
		free(w[k]);
	free(before);
	free((void *)c.nums);
	free(c.cache[0]);
	free(c.cache[1]);
	idmap_release(&s.index);
	free(s.frames);
	free(s.stk);
	free(s.stacks);
	free(s.entframe);
	free(s.used);
	free(s.shown);
	free(s.group);
	if (rc)
		return jh_err(err, errlen, rc, "out of memory");
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}

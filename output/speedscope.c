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
 */
#include <math.h>
#include "lib/array.h"
#include "lib/chars.h"
#include "lib/errors.h"
#include "lib/hash.h"
#include "lib/seqsort.h"
#include "output/obuf.h"
#include "output/output.h"
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
	struct ssframe *frames;  size_t nframes, cap_frames;
	struct idmap index;
	uint32_t *stk;           size_t nstk, cap_stk;
	struct ssstack *stacks;  size_t nstacks, cap_stacks;
	uint32_t *ents;          size_t cap_ents;   /* one stack's keys, as
	                                               aggregate_stack_entries() */
	uint32_t *entloc;        /* per lockeys entry: its location */
	uint32_t *entframe;      /* per lockeys entry: its frame, UINT32_MAX
	                            not looked up yet */
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

/* The per-entry tables: which location each of the aggregate's lockeys
 * entries belongs to, and its frame, found the first time a stack has it
 * (a million stacks hold the same few thousand entries). */
static int index_entries(struct ss *s)
{
	const struct aggregate *a = s->a;
	s->entloc = malloc((a->nlockeys + 1) * sizeof(*s->entloc));
	s->entframe = malloc((a->nlockeys + 1) * sizeof(*s->entframe));
	if (!s->entloc || !s->entframe)
		return JH_ENOMEM;
	for (size_t l = 0; l < s->p->nlocs; l++) {
		const struct agg_locinfo *li = &a->locinfo[l];
		for (uint32_t j = 0; j < li->nkeys; j++)
			s->entloc[li->key0 + j] = (uint32_t)l;
	}
	memset(s->entframe, 0xff, (a->nlockeys + 1) * sizeof(*s->entframe));
	return 0;
}

/* The frame of lockeys entry E: its key, and the file and line of the
 * line of its location that gave the key. */
static int64_t entry_frame(struct ss *s, uint32_t e)
{
	if (s->entframe[e] != UINT32_MAX)
		return s->entframe[e];
	uint32_t loc = s->entloc[e];
	const struct agg_locinfo *li = &s->a->locinfo[loc];
	struct ssframe f = make_frame(s, &s->p->locs[loc], e - li->key0, s->a->lockeys[e]);
	int64_t id = frame_id(s, &f);
	if (id >= 0)
		s->entframe[e] = (uint32_t)id;
	return id;
}

/* Adds sample SI's stack, root first, with the keys aggregate_stack_keys()
 * gives (allocator frames cut, --retain/--exclude/--focus/--ignore
 * applied); each key's file and line are those of the location line it
 * came from. */
static int add_stack(struct ss *s, uint32_t si)
{
	const struct profile *p = s->p;
	const struct pf_sample *sm = &p->samples[si];
	int64_t n = aggregate_stack_entries(s->a, p, si, &s->ents, &s->cap_ents);
	if (n < 0)
		return (int)n;
	if (n == 0 && aggregate_stack_start(s->a, p, si, NULL) < sm->depth)
		return 0;   /* a filter dropped the stack */
	if (n == 0) {
		struct ssframe f = { sm->depth ? KEY_ALLOCATOR_ONLY : KEY_NO_FRAMES, 0, 0 };
		int64_t id = frame_id(s, &f);
		if (id < 0 || JH_PUSH(s->stk, s->nstk, s->cap_stk, (uint32_t)id))
			return id < 0 ? (int)id : JH_ENOMEM;
		struct ssstack st = { (uint32_t)s->nstk - 1, 1, si };
		return JH_PUSH(s->stacks, s->nstacks, s->cap_stacks, st);
	}
	if ((uint64_t)n > UINT32_MAX || s->nstk + (size_t)n > UINT32_MAX ||
	    jh_grow(&s->stk, &s->cap_stk, s->nstk + (size_t)n, sizeof(*s->stk)))
		return JH_ENOMEM;
	struct ssstack st = { (uint32_t)s->nstk, (uint32_t)n, si };
	uint32_t *out = s->stk + st.f0 + n - 1;
	for (int64_t k = 0; k < n; k++) {
		int64_t id = entry_frame(s, s->ents[k]);
		if (id < 0)
			return (int)id;
		*out-- = (uint32_t)id;
	}
	s->nstk += (size_t)n;
	return JH_PUSH(s->stacks, s->nstacks, s->cap_stacks, st);
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
	return a->line < b->line ? -1 : a->line > b->line;
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
	seqsort(it, s->nstacks, s->stk);
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
	/* each group's frames once, in the order the profiles write them
	 * (up to four times): read from where the stacks were added, they
	 * would be a cache miss or two per stack each time */
	size_t nstk = 0;
	for (size_t g = 0; g < s->ngroups; g++)
		nstk += s->stacks[s->group[g]].n;
	uint32_t *stk = malloc((nstk + 1) * sizeof(*stk));
	if (!stk)
		return JH_ENOMEM;
	nstk = 0;
	for (size_t g = 0; g < s->ngroups; g++) {
		uint32_t f0 = s->stacks[s->group[g]].f0, n = s->stacks[s->group[g]].n;
		memcpy(stk + nstk, s->stk + f0, n * sizeof(*stk));
		for (size_t i = s->group[g]; i < s->group[g + 1]; i++)
			s->stacks[i].f0 = (uint32_t)nstk;
		nstk += n;
	}
	free(s->stk);
	s->stk = stk;
	s->nstk = s->cap_stk = nstk;
	return 0;
}

/* Sorts the frames by name, file and line, renumbers the stacks, then sorts
 * the stacks by their frame sequence. */
static int sort_all(struct ss *s)
{
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
	for (size_t i = 0; i < s->nstk; i++)
		s->stk[i] = rank[s->stk[i]];
	free(s->frames);
	s->frames = sorted;
	s->cap_frames = s->nframes + 1;
	free(order);
	free(rank);
	return sort_stacks(s);
}

/* ---- output ---------------------------------------------------------- */

/* The weight in V of group G (stacks with the same frames after the
 * cut), its samples' values added in sample order. */
static double group_weight(const struct ss *s, size_t g, enum pf_value v)
{
	double w = 0;
	for (size_t i = s->group[g]; i < s->group[g + 1]; i++)
		w += aggregate_values(s->a, s->p, s->stacks[i].sample)[v];
	return w;
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
	for (size_t i = 0; i < s->nframes; i++) {
		const struct ssframe *f = &s->frames[i];
		fputs(i ? ",\n" : "\n", out);
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

/* NUMS[i] for every frame index i below N. */
static struct numtext *number_texts(size_t n)
{
	struct numtext *nums = malloc((n + 1) * sizeof(*nums));
	for (size_t i = 0; nums && i < n; i++)
		nums[i].n = (uint32_t)snprintf(nums[i].s, sizeof(nums[i].s), ",%zu", i);
	return nums;
}

/* One profile of type T; O, W (room for a weight per group), NUMS and
 * CACHE (NUMCACHE zeroed slots) are the caller's. */
static void write_profile(FILE *out, const struct ss *s, int t, const char *prog,
			  struct obuf *o, double *w, const struct numtext *nums,
			  struct numcache *cache)
{
	enum pf_value v = types[t].v;
	double total = 0;
	fputs("{\"type\":\"sampled\",\"name\":", out);
	char name[1024];
	snprintf(name, sizeof(name), "%s %s%s", prog, types[t].name,
		 s->r->diff ? " (difference from --base)" : "");
	json_string(out, name);
	fprintf(out, ",\"unit\":\"%s\",\"startValue\":0,\n\"samples\":[", types[t].unit);
	obuf_init(o, out);
	for (size_t g = 0; g < s->ngroups; g++)
		w[g] = group_weight(s, g, v);
	size_t written = 0;
	for (size_t g = 0; g < s->ngroups; g++) {
		if (!(w[g] > 0))
			continue;
		const struct ssstack *st = &s->stacks[s->group[g]];
		if (written++)
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
				obuf_u64(o, f[k]);
			}
		}
		obuf_putc(o, ']');
	}
	obuf_puts(o, "\n],\n\"weights\":[");
	written = 0;
	for (size_t g = 0; g < s->ngroups; g++) {
		if (w[g] > 0) {
			if (written++)
				obuf_putc(o, ',');
			if (written % 16 == 1)
				obuf_putc(o, '\n');
			obuf_number(o, w[g], cache);
			total += w[g];
		}
	}
	obuf_flush(o);
	fputs("\n],\n\"endValue\":", out);
	json_number(out, total);
	putc('}', out);
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
	int rc = index_entries(&s);
	for (size_t i = 0; i < p->nsamples && !rc; i++) {
		bool live = false;
		for (int k = 0; k < nlist; k++)
			if (pf_value_of(aggregate_values(r->a, p, (uint32_t)i), types[list[k]].v) > 0)
				live = true;
		if (live)
			rc = add_stack(&s, (uint32_t)i);
	}
	if (!rc)
		rc = sort_all(&s);
	struct obuf *o = NULL;
	double *w = NULL;
	struct numtext *nums = NULL;
	struct numcache *cache = NULL;
	if (!rc && (!(o = malloc(sizeof(*o))) || !(w = malloc((s.ngroups + 1) * sizeof(*w))) ||
		    !(nums = number_texts(s.nframes)) ||
		    !(cache = jh_zalloc(NUMCACHE, sizeof(*cache)))))
		rc = JH_ENOMEM;
	if (!rc) {
		const char *prog = r->program && *r->program ? r->program
			: r->profile_paths && r->profile_paths[0] ? r->profile_paths[0] : "heap";
		prog = base_name(prog);
		fputs("{\"$schema\":\"" SCHEMA_URL "\",\n", out);
		write_frames(out, &s);
		fputs("\"profiles\":[\n", out);
		for (int k = 0; k < nlist; k++) {
			if (k)
				fputs(",\n", out);
			write_profile(out, &s, list[k], prog, o, w, nums, cache);
		}
		fputs("\n],\n\"name\":", out);
		char name[1024];
		snprintf(name, sizeof(name), "%s heap profile", prog);
		json_string(out, name);
		fputs(",\"activeProfileIndex\":0,\"exporter\":\"jheap\"}\n", out);
	}
	free(o);
	free(w);
	free(nums);
	free(cache);
	idmap_release(&s.index);
	free(s.frames);
	free(s.stk);
	free(s.stacks);
	free(s.ents);
	free(s.entloc);
	free(s.entframe);
	free(s.group);
	if (rc)
		return jh_err(err, errlen, rc, "out of memory");
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}

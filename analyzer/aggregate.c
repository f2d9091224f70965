#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include "analyzer/aggregate.h"
#include "analyzer/names.h"
#include "analyzer/util.h"

const char *aggregate_func_name(const struct profile *p, uint32_t func, bool full,
				char *buf, size_t len)
{
	const char *name = strtab_get(&p->strs, p->funcs[func].name);
	if (full)
		return name;
	names_short(name, buf, len);
	return buf;
}

static int add_key(struct aggregate *a, const char *key, uint8_t flags)
{
	int64_t id = strtab_intern(&a->keys, key);
	if (id < 0)
		return (int)id;
	if (jh_grow(&a->keyflags, &a->cap_keyflags, a->nlockeys + 1, 1))
		return JH_ENOMEM;
	a->keyflags[a->nlockeys] = flags;
	return JH_PUSH(a->lockeys, a->nlockeys, a->cap_lockeys, (uint32_t)id);
}

struct filters {
	pcre2_code *focus, *ignore, *retain, *exclude;
	pcre2_match_data *md;
};

static int compile(struct aggregate *a, const char *opt, const char *re, pcre2_code **out)
{
	if (!re)
		return 0;
	int code;
	PCRE2_SIZE off;
	*out = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
	if (!*out) {
		PCRE2_UCHAR msg[200];
		pcre2_get_error_message(code, msg, sizeof(msg));
		snprintf(a->errmsg, sizeof(a->errmsg), "--%s: bad regular expression '%s' at offset %zu: %s",
			 opt, re, (size_t)off, (const char *)msg);
		return JH_EUSAGE;
	}
	a->filtered = true;
	return 0;
}

static bool matches(struct filters *f, pcre2_code *re, const char *s)
{
	return re && pcre2_match(re, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, 0, f->md, NULL) >= 0;
}

/* AGG_F_* for one frame: retain/exclude test the short name (as shown,
 * without " (inline)"); focus/ignore test the name, file:line and address. */
static uint8_t frame_flags(struct filters *f, const char *name, const char *fileline,
			   uint64_t pc)
{
	uint8_t fl = 0;
	if ((f->retain && !matches(f, f->retain, name)) || matches(f, f->exclude, name))
		fl |= AGG_F_DROP;
	if (f->focus || f->ignore) {
		char addr[32];
		snprintf(addr, sizeof(addr), "%016llx", (unsigned long long)pc);
		if (matches(f, f->focus, name) || matches(f, f->focus, fileline) ||
		    matches(f, f->focus, addr))
			fl |= AGG_F_FOCUS;
		if (matches(f, f->ignore, name) || matches(f, f->ignore, fileline) ||
		    matches(f, f->ignore, addr))
			fl |= AGG_F_IGNORE;
	}
	return fl;
}

/* Each function's shown name and allocator test, computed once: a
 * function appears in many locations. */
struct fncache {
	struct strtab names;
	uint32_t *id;             /* per function: string id in names, UINT32_MAX not yet */
	bool *alloc;
};

static const char *fn_name(struct fncache *fc, const struct profile *p, uint32_t f,
			   bool full, bool *alloc)
{
	if (fc->id[f] == UINT32_MAX) {
		char buf[4096];
		const char *full_name = strtab_get(&p->strs, p->funcs[f].name);
		names_short(full_name, buf, sizeof(buf));
		fc->alloc[f] = names_is_allocator(buf);
		int64_t id = strtab_intern(&fc->names, full ? full_name : buf);
		if (id < 0)
			return NULL;
		fc->id[f] = (uint32_t)id;
	}
	if (alloc)
		*alloc = fc->alloc[f];
	return strtab_get(&fc->names, fc->id[f]);
}

/* A bounded string builder: appends are cut at cap - 1 bytes, as
 * snprintf would cut the whole. */
struct sbuf {
	char *b;
	size_t n, cap;
};

static void sb_add(struct sbuf *sb, const char *s, size_t n)
{
	if (sb->n + n > sb->cap - 1)
		n = sb->cap - 1 - sb->n;
	memcpy(sb->b + sb->n, s, n);
	sb->n += n;
	sb->b[sb->n] = '\0';
}

static void sb_str(struct sbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

/* "file:line", or "??:0" without a file (jeprof's). */
static void sb_fileline(struct sbuf *sb, const char *file, int line)
{
	char num[16], *e = num + sizeof(num), *q = e;
	unsigned u = line < 0 ? 0u - (unsigned)line : (unsigned)line;
	if (!*file) {
		sb_add(sb, "??:0", 4);
		return;
	}
	do
		*--q = (char)('0' + u % 10);
	while (u /= 10);
	if (line < 0)
		*--q = '-';
	sb_str(sb, file);
	sb_add(sb, ":", 1);
	sb_add(sb, q, (size_t)(e - q));
}

/* The display key of one frame, jeprof's TranslateStack rules: the name
 * (with " (inline)" on an inlined frame) and, by granularity, its
 * file:line, file or address.  The name and the file:line are each cut at
 * 4095 bytes, the key at LEN - 1.  This runs once per frame of every
 * location, so it copies instead of calling snprintf. */
static void frame_key(const struct profile *p, const struct pf_location *l,
		      const struct pf_line *ln, bool inlined, const struct agg_options *o,
		      const char *shown, char *out, size_t len)
{
	char name[4096], fileline[4096];
	struct sbuf nb = { name, 0, sizeof(name) }, fb = { fileline, 0, sizeof(fileline) };
	struct sbuf ob = { out, 0, len };
	const char *file = strtab_get(&p->strs, ln->file);
	sb_str(&nb, shown);
	if (inlined)
		sb_add(&nb, " (inline)", 9);
	switch (o->gran) {
	case GRAN_FUNCTIONS:
		sb_add(&ob, name, nb.n);
		break;
	case GRAN_LINES:
		sb_fileline(&fb, file, ln->line);
		sb_add(&ob, name, nb.n);
		sb_add(&ob, " ", 1);
		sb_add(&ob, fileline, fb.n);
		break;
	case GRAN_FILES:
		if (*file)
			sb_str(&ob, file);
		else
			sb_add(&ob, name, nb.n);
		break;
	case GRAN_ADDRESSES: {
		char addr[20];
		uint64_t pc = l->leaf ? l->addr : l->addr - 1;
		for (int i = 15; i >= 0; i--, pc >>= 4)
			addr[i] = "0123456789abcdef"[pc & 15];
		sb_fileline(&fb, file, ln->line);
		sb_add(&ob, addr, 16);
		sb_add(&ob, " ", 1);
		sb_add(&ob, name, nb.n);
		sb_add(&ob, " ", 1);
		sb_add(&ob, fileline, fb.n);
		break;
	}
	}
}

static int build_locinfo(struct aggregate *a, const struct profile *p, const struct agg_options *o,
			 struct filters *f)
{
	a->locinfo = calloc(p->nlocs + 1, sizeof(*a->locinfo));
	struct fncache fc = { .id = malloc((p->nfuncs + 1) * sizeof(uint32_t)),
			      .alloc = calloc(p->nfuncs + 1, sizeof(bool)) };
	int rc = JH_ENOMEM;
	bool *alloc_map = NULL;
	if (!a->locinfo || !fc.id || !fc.alloc || strtab_init(&fc.names))
		goto out;
	for (size_t i = 0; i < p->nfuncs; i++)
		fc.id[i] = UINT32_MAX;
	/* the allocator's own objects, once per mapping */
	alloc_map = calloc(p->nmaps + 1, sizeof(*alloc_map));
	if (!alloc_map)
		goto out;
	for (size_t i = 0; i < p->nmaps; i++)
		alloc_map[i] = p->maps[i].kind == PF_MAP_FILE &&
			       names_is_allocator_object(strtab_get(&p->strs, p->maps[i].path));
	char key[8192];
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct pf_location *l = &p->locs[i];
		struct agg_locinfo *li = &a->locinfo[i];
		li->key0 = (uint32_t)a->nlockeys;
		if (l->mapping != UINT32_MAX && l->mapping < p->nmaps)
			li->allocator = alloc_map[l->mapping];
		for (uint32_t j = 0; j < l->nlines; j++) {
			const struct pf_line *ln = &p->lines[l->line0 + j];
			bool alloc = false;
			const char *shown = fn_name(&fc, p, ln->function, o->full_names, &alloc);
			if (!shown)
				goto out;
			if (alloc)
				li->allocator = true;
			frame_key(p, l, ln, j + 1 < l->nlines, o, shown, key, sizeof(key));
			uint8_t fl = 0;
			if (a->filtered) {
				char fileline[4200];
				const char *file = strtab_get(&p->strs, ln->file);
				snprintf(fileline, sizeof(fileline), "%s:%d", *file ? file : "??", ln->line);
				fl = frame_flags(f, shown, fileline, l->leaf ? l->addr : l->addr - 1);
			}
			if (add_key(a, key, fl))
				goto out;
		}
		if (!l->nlines) {
			snprintf(key, sizeof(key), "0x%016llx", (unsigned long long)l->addr);
			if (add_key(a, key, a->filtered ? frame_flags(f, key, "??:0", l->addr) : 0))
				goto out;
		}
		li->nkeys = (uint32_t)a->nlockeys - li->key0;
		if (li->nkeys > a->max_nkeys)
			a->max_nkeys = li->nkeys;
	}
	rc = 0;
out:
	strtab_release(&fc.names);
	free(fc.id);
	free(fc.alloc);
	free(alloc_map);
	return rc;
}

uint32_t aggregate_stack_start(const struct aggregate *a, const struct profile *p,
			       uint32_t sample)
{
	const struct pf_sample *s = &p->samples[sample];
	uint32_t start = 0;
	for (uint32_t i = 0; i < s->depth; i++)
		if (a->locinfo[p->stacks[s->stack0 + i]].allocator)
			start = i + 1;
	return start;
}

int64_t aggregate_stack_keys(const struct aggregate *a, const struct profile *p,
			     uint32_t sample, uint32_t **out, size_t *cap)
{
	const struct pf_sample *s = &p->samples[sample];
	size_t n = 0;
	uint8_t seen = 0;
	/* at most max_nkeys keys per frame: one growth per stack at most */
	if (jh_grow(out, cap, (size_t)s->depth * a->max_nkeys + 1, sizeof(**out)))
		return JH_ENOMEM;
	uint32_t *o = *out;
	for (uint32_t i = aggregate_stack_start(a, p, sample); i < s->depth; i++) {
		const struct agg_locinfo *li = &a->locinfo[p->stacks[s->stack0 + i]];
		if (!a->filtered) {
			/* a frame has one key per inline level, often one or two:
			 * a loop beats a memcpy call */
			const uint32_t *k = a->lockeys + li->key0;
			for (uint32_t j = 0; j < li->nkeys; j++)
				o[n++] = k[j];
			continue;
		}
		for (uint32_t k = li->key0; k < li->key0 + li->nkeys; k++) {
			if (a->keyflags[k] & AGG_F_DROP)
				continue;
			seen |= a->keyflags[k];
			o[n++] = a->lockeys[k];
		}
	}
	if (a->filtered && aggregate_drops(a, seen))
		return 0;
	return (int64_t)n;
}

int aggregate_build(struct aggregate *a, const struct profile *p, const struct agg_options *o)
{
	memset(a, 0, sizeof(*a));
	struct filters f = { 0 };
	int rc = 0;
	if (compile(a, "focus", o->focus, &f.focus) || compile(a, "ignore", o->ignore, &f.ignore) ||
	    compile(a, "retain", o->retain, &f.retain) || compile(a, "exclude", o->exclude, &f.exclude))
		rc = JH_EUSAGE;
	a->want_focus = f.focus != NULL;
	if (!rc && a->filtered && !(f.md = pcre2_match_data_create(4, NULL)))
		rc = JH_ENOMEM;
	if (!rc && (strtab_init(&a->keys) || build_locinfo(a, p, o, &f)))
		rc = JH_ENOMEM;
	pcre2_code_free(f.focus);
	pcre2_code_free(f.ignore);
	pcre2_code_free(f.retain);
	pcre2_code_free(f.exclude);
	pcre2_match_data_free(f.md);
	if (rc)
		return rc;
	if (o->keep_allocator)
		for (size_t i = 0; i < p->nlocs; i++)
			a->locinfo[i].allocator = false;
	a->nrows = a->keys.len;
	a->rows = calloc(a->nrows + 1, sizeof(*a->rows));
	uint32_t *seen = calloc(a->nrows + 1, sizeof(*seen));
	uint32_t *keys = NULL;
	size_t cap = 0;
	if (!a->rows || !seen) {
		free(seen);
		return JH_ENOMEM;
	}
	for (size_t r = 0; r < a->nrows; r++)
		a->rows[r].key = (uint32_t)r;
	for (size_t si = 0; si < p->nsamples; si++) {
		double v = p->samples[si].v[o->value];
		a->total += v;
		if (v == 0)
			continue;
		uint32_t stamp = (uint32_t)si + 1;
		if (!a->filtered) {
			/* the same sums as below, read straight from the
			 * locations' keys instead of through a copy */
			const struct pf_sample *s = &p->samples[si];
			const uint32_t *st = p->stacks + s->stack0;
			bool first = true;
			for (uint32_t i = aggregate_stack_start(a, p, (uint32_t)si); i < s->depth; i++) {
				const struct agg_locinfo *li = &a->locinfo[st[i]];
				const uint32_t *k = a->lockeys + li->key0;
				for (uint32_t j = 0; j < li->nkeys; j++) {
					if (first) {
						a->rows[k[j]].flat += v;
						a->flat_total += v;
						first = false;
					}
					if (seen[k[j]] == stamp)
						continue;
					seen[k[j]] = stamp;
					a->rows[k[j]].cum += v;
				}
			}
			continue;
		}
		int64_t n = aggregate_stack_keys(a, p, (uint32_t)si, &keys, &cap);
		if (n < 0) {
			free(seen);
			free(keys);
			return JH_ENOMEM;
		}
		if (n == 0)
			continue;
		a->rows[keys[0]].flat += v;
		a->flat_total += v;
		for (int64_t k = 0; k < n; k++) {
			if (seen[keys[k]] == stamp)
				continue;
			seen[keys[k]] = stamp;
			a->rows[keys[k]].cum += v;
		}
	}
	free(seen);
	free(keys);
	return 0;
}

void aggregate_release(struct aggregate *a)
{
	strtab_release(&a->keys);
	free(a->rows);
	free(a->locinfo);
	free(a->lockeys);
	free(a->keyflags);
	free(a->order);
	memset(a, 0, sizeof(*a));
}

struct sortctx { const struct aggregate *a; bool by_cum; };

static int cmp_rows(const void *x, const void *y, void *arg)
{
	const struct sortctx *c = arg;
	const struct agg_row *r = &c->a->rows[*(const uint32_t *)x];
	const struct agg_row *s = &c->a->rows[*(const uint32_t *)y];
	double vr = c->by_cum ? r->cum : r->flat, vs = c->by_cum ? s->cum : s->flat;
	if (vr != vs)
		return vr > vs ? -1 : 1;
	return strcmp(strtab_get(&c->a->keys, r->key), strtab_get(&c->a->keys, s->key));
}

int aggregate_sort(struct aggregate *a, bool by_cum)
{
	free(a->order);
	a->order = malloc((a->nrows + 1) * sizeof(*a->order));
	if (!a->order)
		return JH_ENOMEM;
	a->norder = 0;
	for (size_t r = 1; r < a->nrows; r++)
		if (a->rows[r].flat != 0 || a->rows[r].cum != 0)
			a->order[a->norder++] = (uint32_t)r;
	struct sortctx c = { a, by_cum };
	jh_qsort_r(a->order, a->norder, sizeof(*a->order), cmp_rows, &c);
	return 0;
}

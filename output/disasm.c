/* --disasm=RE: for each function whose name matches, its machine code with
 * the flat and cumulative values of each instruction (jeprof's layout).
 * The code comes from binutils' objdump, run with execvp and an argument
 * vector (never a shell) over the function's symbol range; the values from
 * the model's locations, whose link-time addresses the symbolizer recorded
 * (struct pf_location.vaddr, func_lo, func_hi). */
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "lib/array.h"
#include "lib/errors.h"
#include "lib/escape.h"
#include "analyzer/names.h"
#include "lib/pattern.h"
#include "output/child.h"
#include "output/disasm.h"
#include "output/output.h"

/* The most output kept from one objdump run: a function's disassembly
 * with its line markers is far smaller. */
#define OBJDUMP_MAX_OUTPUT ((size_t)64 << 20)

/* The cache keeps this many of objdump's answers, of at most this many
 * bytes in all; a larger answer is not kept. */
#define CACHE_ENTRIES 32
#define CACHE_BYTES ((size_t)32 << 20)

struct cached {
	char *obj;                /* NULL: a free slot */
	uint64_t lo, hi;
	struct stat st;           /* the object file when objdump read it */
	char *text;
	size_t len;
};

struct disasm_cache {
	struct cached e[CACHE_ENTRIES];
	size_t next;              /* the slot to fill next (the oldest) */
	size_t bytes;
};

struct disasm_cache *disasm_cache_new(void)
{
	return calloc(1, sizeof(struct disasm_cache));
}

static void cached_clear(struct disasm_cache *c, struct cached *e)
{
	c->bytes -= e->obj ? e->len : 0;
	free(e->obj);
	free(e->text);
	memset(e, 0, sizeof(*e));
}

void disasm_cache_free(struct disasm_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < CACHE_ENTRIES; i++)
		cached_clear(c, &c->e[i]);
	free(c);
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* A copy of the kept answer for [lo, hi) of OBJ, when the file is still
 * the one objdump read. */
static bool cache_get(struct disasm_cache *c, const char *obj, const struct stat *st,
		      uint64_t lo, uint64_t hi, char **buf, size_t *len)
{
	for (size_t i = 0; c && i < CACHE_ENTRIES; i++) {
		struct cached *e = &c->e[i];
		if (!e->obj || e->lo != lo || e->hi != hi || strcmp(e->obj, obj))
			continue;
		if (!same_file(&e->st, st)) {
			cached_clear(c, e);
			return false;
		}
		if (!(*buf = malloc(e->len + 1)))
			return false;
		memcpy(*buf, e->text, e->len + 1);
		*len = e->len;
		return true;
	}
	return false;
}

static void cache_put(struct disasm_cache *c, const char *obj, const struct stat *st,
		      uint64_t lo, uint64_t hi, const char *buf, size_t len)
{
	if (!c || len > CACHE_BYTES / 4)
		return;
	for (size_t i = 0; i < CACHE_ENTRIES && c->bytes + len > CACHE_BYTES; i++)
		cached_clear(c, &c->e[(c->next + i) % CACHE_ENTRIES]);
	struct cached *e = &c->e[c->next];
	cached_clear(c, e);
	e->obj = strdup(obj);
	e->text = malloc(len + 1);
	if (!e->obj || !e->text) {
		free(e->obj);
		free(e->text);
		memset(e, 0, sizeof(*e));
		return;
	}
	memcpy(e->text, buf, len + 1);
	e->len = len;
	e->lo = lo;
	e->hi = hi;
	e->st = *st;
	c->bytes += len;
	c->next = (c->next + 1) % CACHE_ENTRIES;
}

/* Runs objdump over [lo, hi) of OBJ, or takes its answer from CACHE (may
 * be NULL); its standard output in *buf (the caller frees it).  With
 * --inlines, each "file:line" marker of -l is followed by the call sites
 * it is inlined at ("inlined by file:line (function)"), outermost last.
 * Returns 0, or a negative code with a message. */
static int run_objdump(struct disasm_cache *cache, const char *obj, uint64_t lo, uint64_t hi,
		       char **buf, size_t *len, char *err, size_t errlen)
{
	char start[40], stop[40];
	struct stat st;
	bool known = cache && !stat(obj, &st);
	if (known && cache_get(cache, obj, &st, lo, hi, buf, len))
		return 0;
	snprintf(start, sizeof(start), "--start-address=0x%llx", (unsigned long long)lo);
	snprintf(stop, sizeof(stop), "--stop-address=0x%llx", (unsigned long long)hi);
	/* "--": a file named "--version" is a file */
	const char *argv[] = { "objdump", "-d", "-C", "-l", "--inlines", "--no-show-raw-insn", start,
			       stop, "--", obj, NULL };	struct child c = { .argv = argv, .max_out = OBJDUMP_MAX_OUTPUT };
	*buf = NULL;
	*len = 0;
	int rc = child_run(&c, err, errlen);
	if (!rc && c.exec_errno == ENOENT)
		rc = jh_err(err, errlen, JH_EIO,
			    "--disasm needs binutils' 'objdump' program: install binutils (apt-get install binutils); --list shows source lines without it");
	else if (!rc && c.exec_errno)
		rc = jh_err(err, errlen, JH_EIO, "cannot run objdump: %s", strerror(c.exec_errno));
	else if (!rc && (c.timed_out || c.too_much))
		rc = child_failure(&c, "objdump", err, errlen);
	else if (!rc && !(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0))
		rc = jh_err(err, errlen, JH_EIO, "objdump failed on '%s'", obj);
	if (rc) {
		free(c.buf);
		return rc;
	}
	*buf = c.buf;
	*len = c.len;
	if (known)
		cache_put(cache, obj, &st, lo, hi, c.buf, c.len);
	return 0;
}

/* FILE:LINE at the start of TEXT (a marker, or what follows "inlined by "):
 * the file is what comes before the first ":digits" that ends the text or
 * a word. */
static bool parse_pos(const char *text, struct disasm_pos *pos)
{
	for (const char *c = strchr(text, ':'); c; c = strchr(c + 1, ':')) {
		const char *d = c + 1;
		while (*d >= '0' && *d <= '9')
			d++;
		if (d > c + 1 && (*d == '\0' || *d == ' ') && d - c <= 10) {
			pos->file = text;
			pos->flen = (size_t)(c - text);
			pos->line = (uint32_t)strtoul(c + 1, NULL, 10);
			return true;
		}
	}
	return false;
}

/* Parses objdump's lines into RT's instructions and file:line markers,
 * each instruction with the source positions of the marker before it. */
static int parse_objdump(char *buf, struct disasm_routine *rt)
{
	size_t cap = 0, cap_pos = 0;
	uint32_t cur0 = 0, curn = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		struct disasm_insn in = { 0 };
		struct disasm_pos pos;
		char *s = line;
		while (*s == ' ')
			s++;
		char *colon = strchr(s, ':');
		if (s != line && colon && colon > s && colon[1] == '\t') {
			char *end;
			in.addr = strtoull(s, &end, 16);
			if (end != colon)
				continue;
			in.text = colon + 2;
			in.pos0 = cur0;
			in.npos = curn;
		} else if ((line[0] == '/' || line[0] == '.') && !strstr(line, "file format")) {
			in.marker = true; /* "file:line" from -l */
			in.text = line;
			cur0 = (uint32_t)rt->npos;
			curn = 0;
			if (parse_pos(line, &pos)) {
				if (JH_PUSH(rt->pos, rt->npos, cap_pos, pos))
					return JH_ENOMEM;
				curn = 1;
			}
		} else if (!strncmp(line, "inlined by ", 11) && curn && parse_pos(line + 11, &pos)) {
			if (JH_PUSH(rt->pos, rt->npos, cap_pos, pos))
				return JH_ENOMEM;
			curn++;
			continue;
		} else {
			continue;
		}
		if (JH_PUSH(rt->ins, rt->nins, cap, in))
			return JH_ENOMEM;
	}
	return 0;
}

static int cmp_routines(const void *x, const void *y, void *arg)
{
	const struct profile *p = arg;
	const struct disasm_routine *a = x, *b = y;
	int c = strcmp(strtab_get(&p->strs, a->name), strtab_get(&p->strs, b->name));
	if (c)
		return c;
	c = strcmp(strtab_get(&p->strs, a->object), strtab_get(&p->strs, b->object));
	return c ? c : (a->lo < b->lo ? -1 : a->lo > b->lo);
}

/* Flat and cum of every location, with the report's cut and filters. */
static int location_values(const struct report *r, double *flat, double *cum)
{
	const struct profile *p = r->p;
	uint32_t *keys = NULL, *stamp = calloc(p->nlocs + 1, sizeof(*stamp));
	size_t cap = 0;
	if (!stamp)
		return JH_ENOMEM;
	for (size_t si = 0; si < p->nsamples; si++) {
		const struct pf_sample *s = &p->samples[si];
		double v = pf_value_of(aggregate_values(r->a, p, (uint32_t)si), r->value);
		/* the filters' verdict (without filters, a stack with a frame
		 * after the cut has keys) */
		if (v == 0 || (r->a->filtered && aggregate_stack_keys(r->a, p, (uint32_t)si, &keys, &cap) <= 0))
			continue;
		uint32_t start = aggregate_stack_start(r->a, p, (uint32_t)si, NULL);
		for (uint32_t i = start; i < s->depth; i++) {
			uint32_t l = p->stacks[s->stack0 + i];
			if (i == start)
				flat[l] += v;
			if (stamp[l] != si + 1) {
				stamp[l] = (uint32_t)si + 1;
				cum[l] += v;
			}
		}
	}
	free(keys);
	free(stamp);
	return 0;
}

/* The routines (symbol ranges) whose outer function matches RE and holds
 * a value, sorted, without their code yet. */
static int find_routines(const struct report *r, struct pattern *re, const double *cum,
			 struct disasm_set *set, char *err, size_t errlen)
{
	const struct profile *p = r->p;
	size_t cap = 0;
	char buf[4096];
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct pf_location *l = &p->locs[i];
		if (!l->nlines || l->func_hi <= l->func_lo || l->mapping == UINT32_MAX ||
		    !p->maps[l->mapping].object || cum[i] == 0)
			continue;
		const struct pf_line *outer = &p->lines[l->line0 + l->nlines - 1];
		const char *full = strtab_get(&p->strs, p->funcs[outer->function].name);
		names_short(full, buf, sizeof(buf));
		int m = pattern_match(re, full, err, errlen);
		if (!m)
			m = pattern_match(re, buf, err, errlen);
		if (m < 0)
			return m;
		if (!m)
			continue;
		bool seen = false;
		for (size_t k = 0; k < set->n && !seen; k++)
			seen = set->r[k].object == p->maps[l->mapping].object && set->r[k].lo == l->func_lo;
		if (seen)
			continue;
		struct disasm_routine rt = { .object = p->maps[l->mapping].object, .lo = l->func_lo,
					     .hi = l->func_hi };
		uint32_t sid = strtab_find(&p->strs, buf);
		rt.name = sid == UINT32_MAX ? p->funcs[outer->function].name : sid;
		if (!(rt.short_name = strdup(buf)) || JH_PUSH(set->r, set->n, cap, rt)) {
			free(rt.short_name);
			return jh_err(err, errlen, JH_ENOMEM, "out of memory");
		}
	}
	jh_qsort_r(set->r, set->n, sizeof(*set->r), cmp_routines, (void *)p);
	return 0;
}

/* RT's code from objdump, with the values of the locations in it. */
static int disassemble(const struct report *r, struct disasm_routine *rt, const double *flat,
		       const double *cum, char *err, size_t errlen)
{
	const struct profile *p = r->p;
	size_t len = 0;
	int rc = run_objdump(r->disasm_cache, strtab_get(&p->strs, rt->object), rt->lo, rt->hi,
			     &rt->text, &len, err, errlen);
	if (!rc && parse_objdump(rt->text, rt))
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
	for (size_t i = 0; !rc && i < p->nlocs; i++) {
		const struct pf_location *l = &p->locs[i];
		if (l->mapping == UINT32_MAX || p->maps[l->mapping].object != rt->object ||
		    l->vaddr < rt->lo || l->vaddr >= rt->hi)
			continue;
		/* the instruction holding the pc: the last one at or before it */
		struct disasm_insn *best = NULL;
		for (size_t j = 0; j < rt->nins; j++)
			if (!rt->ins[j].marker && rt->ins[j].addr <= l->vaddr)
				best = &rt->ins[j];
		if (best) {
			best->flat += flat[i];
			best->cum += cum[i];
		}
		rt->flat += flat[i];
		rt->cum += cum[i];
	}
	return rc;
}

int disasm_collect(const struct report *r, const char *opt, const char *re_text,
		   struct disasm_set *set, char *err, size_t errlen)
{
	const struct profile *p = r->p;
	memset(set, 0, sizeof(*set));
	struct pattern *re;
	int rc = pattern_compile(&re, opt, re_text, err, errlen);
	if (rc)
		return rc;
	double *flat = calloc(p->nlocs + 1, sizeof(double)), *cum = calloc(p->nlocs + 1, sizeof(double));
	rc = flat && cum ? location_values(r, flat, cum) : JH_ENOMEM;
	if (rc)
		jh_err(err, errlen, rc, "out of memory");
	if (!rc)
		rc = find_routines(r, re, cum, set, err, errlen);
	if (!rc && !set->n)
		rc = jh_err(err, errlen, JH_EFORMAT, "--%s: no function matching '%s' holds any %s",
			    opt, re_text, r->units == UNITS_OBJECTS ? "objects" : "memory");
	/* the routines before a failure are kept */
	for (size_t k = 0; !rc && k < set->n; k++) {
		rc = disassemble(r, &set->r[k], flat, cum, err, errlen);
		set->done = k + !rc;
	}
	free(flat);
	free(cum);
	pattern_free(re);
	return rc;
}

void disasm_set_release(struct disasm_set *set)
{
	for (size_t k = 0; k < set->n; k++) {
		free(set->r[k].short_name);
		free(set->r[k].text);
		free(set->r[k].ins);
		free(set->r[k].pos);
	}
	free(set->r);
	memset(set, 0, sizeof(*set));
}

int output_disasm(FILE *out, const struct report *r, char *err, size_t errlen)
{
	const struct profile *p = r->p;
	struct disasm_set set;
	int rc = disasm_collect(r, "disasm", r->disasm, &set, err, errlen);
	for (size_t k = 0; k < set.done; k++) {
		const struct disasm_routine *rt = &set.r[k];
		char f1[64], f2[64];
		text_format_value(f1, sizeof(f1), rt->flat, r->units);
		text_format_value(f2, sizeof(f2), rt->cum, r->units);
		fputs("ROUTINE ====================== ", out);
		escape_fputs(strtab_get(&p->strs, rt->name), false, out);
		fputs(" in ", out);
		escape_fputs(strtab_get(&p->strs, rt->object), false, out);
		fprintf(out, "\n%6s %6s %s (flat, cumulative) %.1f%% of total\n", f1, f2,
			text_unit_name(r->units),
			r->a->flat_total ? text_shown(rt->cum * 100.0 / r->a->flat_total, 1) : 0.0);
		for (size_t j = 0; j < rt->nins; j++) {
			const struct disasm_insn *in = &rt->ins[j];
			if (in->marker) {
				fputs("-------------------- ", out);
				escape_fputs(in->text, true, out);
				fputc('\n', out);
				continue;
			}
			text_format_value_alt(f1, sizeof(f1), in->flat, r->units);
			text_format_value_alt(f2, sizeof(f2), in->cum, r->units);
			fprintf(out, "%6s %6s    %8llx: ", f1, f2, (unsigned long long)in->addr);
			escape_fputs(in->text, true, out);
			fputc('\n', out);
		}
	}
	disasm_set_release(&set);
	return rc;
}

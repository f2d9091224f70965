#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/chars.h"
#include "lib/errors.h"
#include "symbolize/dpkgowner.h"
#include "symbolize/unnamed.h"

struct share {
	uint32_t object;          /* string id of the file read */
	uint32_t path;            /* string id of its path in the dump */
	double value;
};

static int by_value(const void *a, const void *b)
{
	const struct share *x = a, *y = b;
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return (x->object > y->object) - (x->object < y->object);
}

/* Whether location L is in anonymous memory, where JIT compilers put
 * their code (*NAMED: named from a perf map), or in V8's builtins, which
 * call into it (named). */
static bool jit_like(const struct profile *p, const struct pf_location *l, bool *named)
{
	const struct pf_mapping *m = l->mapping < p->nmaps ? &p->maps[l->mapping] : NULL;
	*named = true;
	if (m && m->kind == PF_MAP_ANON) {
		*named = l->sym == PF_SYM_SYMTAB;
		return true;
	}
	if (l->nlines) {
		const char *name = strtab_get(&p->strs, p->funcs[p->lines[l->line0 + l->nlines - 1].function].name);
		return !strncmp(name, "Builtins_", 9);
	}
	return false;
}

/* The note on stacks whose outermost frame is JIT code or a JavaScript
 * engine's builtins: the unwinder stopped there (JIT code has no unwind
 * tables), so their callers are not in the dump; and what names the
 * JIT code that is. */
static int jit_note(const struct profile *p, enum pf_value v,
		    void (*say)(void *ctx, const char *line), void *ctx)
{
	double total = 0, ends = 0, unnamed = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pf_sample *s = &p->samples[i];
		double x = fabs(pf_value_of(s->v, v));
		total += x;
		bool named;
		if (s->depth && jit_like(p, &p->locs[p->stacks[s->stack0 + s->depth - 1]], &named)) {
			ends += x;
			if (!named)
				unnamed += x;
		}
	}
	if (total <= 0 || ends < UNNAMED_NOTE_SHARE * total)
		return 0;
	const char *what = v == PF_INUSE_OBJECTS || v == PF_ALLOC_OBJECTS ? "objects" : "bytes";
	char line[1200], more[800] = "";
	if (unnamed >= UNNAMED_NOTE_SHARE * total)
		snprintf(more, sizeof(more),
			 "; %.1f%% end in anonymous memory without names ([anon]+0xOFFSET): a runtime that writes a perf map names that code (node --perf-basic-prof, Java's perf-map-agent, LuaJIT, DOTNET_PerfMapEnabled=1, python3.12 -X perf write /tmp/perf-PID.map), which jheap reads for a dump of PID, as DUMP.perf.map beside the dump, or from --perf-map=FILE",
			 100 * unnamed / total);
	snprintf(line, sizeof(line),
		 "%.1f%% of the %s have stacks that end in code compiled at run time or in a JavaScript engine's builtins: the unwinder cannot walk past that code, so the callers above it are not in the dump%s",
		 100 * ends / total, what, more);
	say(ctx, line);
	return 1;
}

int unnamed_notes(const struct profile *p, const struct aggregate *a, enum pf_value v,
		  struct symcache *sc, void (*say)(void *ctx, const char *line), void *ctx)
{
	/* per mapping, then summed per object */
	double *per_map = calloc(p->nmaps + 1, sizeof(*per_map));
	struct share *sh = calloc(p->nmaps + 1, sizeof(*sh));
	if (!per_map || !sh) {
		free(per_map);
		free(sh);
		return JH_ENOMEM;
	}
	double total = 0;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct pf_sample *s = &p->samples[i];
		double x = fabs(aggregate_values(a, p, (uint32_t)i)[v]);
		total += x;
		uint32_t start = aggregate_stack_start(a, p, (uint32_t)i, NULL);
		if (start >= s->depth)
			continue;
		const struct pf_location *l = &p->locs[p->stacks[s->stack0 + start]];
		if (l->sym == PF_SYM_UNKNOWN && l->mapping < p->nmaps && p->maps[l->mapping].object)
			per_map[l->mapping] += x;
	}
	size_t n = 0;
	for (size_t i = 0; i < p->nmaps; i++) {
		if (!per_map[i])
			continue;
		uint32_t obj = p->maps[i].object;
		size_t k = 0;
		while (k < n && sh[k].object != obj)
			k++;
		if (k == n)
			sh[n++] = (struct share){ obj, p->maps[i].path, 0 };
		sh[k].value += per_map[i];
	}
	free(per_map);
	jh_qsort(sh, n, sizeof(*sh), by_value);
	int noted = 0;
	for (size_t k = 0; k < n && total > 0 && sh[k].value >= UNNAMED_NOTE_SHARE * total; k++) {
		const char *obj = strtab_get(&p->strs, sh[k].object);
		struct symmodule *mod = symcache_find_module(sc, obj);
		if (!symmodule_stripped(mod))
			continue;
		size_t blen = 0;
		const unsigned char *bid = symmodule_build_id(mod, &blen);
		char where[1200] = "", line[3072], pkg[256], from[900] = "";
		if (dpkgowner_find(NULL, obj, pkg, sizeof(pkg))) {
			char src[200];
			dpkgowner_debug_source(src, sizeof(src));
			snprintf(from, sizeof(from),
				 "%sin Debian's %s-dbgsym: apt-get install %s-dbgsym, with '%s' in apt's sources",
				 bid ? ", " : "", pkg, pkg, src);
		}
		if (bid && blen >= 2 && blen <= 64) {
			char hex[130];
			jh_hex(hex, bid, blen);
			snprintf(where, sizeof(where), " (/usr/lib/debug/.build-id/%.2s/%s.debug%s",
				 hex, hex + 2, from[0] ? "" : ")");
		} else if (from[0]) {
			snprintf(where, sizeof(where), " (");
		}
		if (from[0])
			snprintf(where + strlen(where), sizeof(where) - strlen(where), "%s)", from);
		const char *path = strtab_get(&p->strs, sh[k].path);
		const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
		snprintf(line, sizeof(line),
			 "'%s' is stripped: %.1f%% of the %s are in its functions without names (%s+0xSTART); its debug package names them%s, as do --debuginfo-dir=DIR and DEBUGINFOD_URLS",
			 obj, 100 * sh[k].value / total, v == PF_INUSE_OBJECTS || v == PF_ALLOC_OBJECTS ? "objects" : "bytes",
			 base, where);
		say(ctx, line);
		noted++;
	}
	free(sh);
	return noted + jit_note(p, v, say, ctx);
}

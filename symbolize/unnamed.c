#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/array.h"
#include "lib/chars.h"
#include "lib/errors.h"
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
		char where[300] = "", line[2048];
		if (bid && blen >= 2 && blen <= 64) {
			char hex[130];
			jh_hex(hex, bid, blen);
			snprintf(where, sizeof(where), " (/usr/lib/debug/.build-id/%.2s/%s.debug)",
				 hex, hex + 2);
		}
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
	return noted;
}

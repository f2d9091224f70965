/* The labels of each input (see inlabels.h). */
#include <stdlib.h>
#include <string.h>
#include "cli/inlabels.h"
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/pattern.h"

int inlabels_init(struct inlabels *il, const struct cli *c, char *err, size_t errlen)
{
	il->c = c;
	il->re = NULL;
	if (!c->label_from_path)
		return 0;
	return pattern_compile(&il->re, "label-from-path", c->label_from_path, err, errlen);
}

void inlabels_release(struct inlabels *il)
{
	pattern_free(il->re);
	il->re = NULL;
}

struct gather {
	struct profile *p;
	struct pf_label *pairs;
	size_t n, cap;
	int rc;
};

static void add_pair(struct gather *g, const char *key, size_t klen, const char *val, size_t vlen)
{
	if (g->rc || !klen || !vlen)
		return;
	int64_t k = strtab_intern_n(&g->p->strs, key, klen);
	int64_t v = k < 0 ? k : strtab_intern_n(&g->p->strs, val, vlen);
	if (v < 0 || jh_grow(&g->pairs, &g->cap, g->n + 1, sizeof(*g->pairs))) {
		g->rc = JH_ENOMEM;
		return;
	}
	g->pairs[g->n++] = (struct pf_label){ (uint32_t)k, (uint32_t)v };
}

static void add_group(void *ctx, const char *name, const char *value, size_t len)
{
	add_pair(ctx, name, strlen(name), value, len);
}

int inlabels_apply(struct inlabels *il, bool base, size_t index, const char *path,
		   struct profile *p, char *err, size_t errlen)
{
	if (!inlabels_any(il))
		return 0;
	const struct cli *c = il->c;
	struct gather g = { .p = p };
	if (il->re) {
		int m = pattern_groups(il->re, path, add_group, &g, err, errlen);
		if (m < 0) {
			free(g.pairs);
			return m;
		}
	}
	/* the explicit ones after: the last value of a key is kept */
	for (size_t i = 0; i < c->nlabels; i++) {
		const struct cli_label *l = &c->labels[i];
		if (base ? l->from_base > index : l->from_arg > index)
			continue;
		const char *eq = strchr(l->kv, '=');
		add_pair(&g, l->kv, (size_t)(eq - l->kv), eq + 1, strlen(eq + 1));
	}
	int rc = g.rc ? g.rc : profile_set_labels(p, g.pairs, g.n);
	free(g.pairs);
	if (rc)
		return jh_err(err, errlen, rc, "out of memory");
	return 0;
}

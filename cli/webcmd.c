/* The server's command line for the web UI's copy (see webcmd.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/webcmd.h"
#include "output/json.h"

struct words {
	FILE *f;
	bool first;
};

static void word(struct words *w, const char *s)
{
	if (!w->first)
		fputc(',', w->f);
	w->first = false;
	json_str(w->f, s);
}

/* "--NAME=VALUE" as one word. */
static void opt(struct words *w, const char *name, const char *value)
{
	size_t n = strlen(name) + strlen(value) + 4;
	char *s = malloc(n);
	if (!s)
		return;
	snprintf(s, n, "--%s=%s", name, value);
	word(w, s);
	free(s);
}

/* V as the shortest decimal that reads back as V. */
static void opt_double(struct words *w, const char *name, double v)
{
	char buf[64];
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	opt(w, name, buf);
}

static void opt_long(struct words *w, const char *name, long v)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%ld", v);
	opt(w, name, buf);
}

static void server_args(const struct cli *c, struct words *w)
{
	if (c->show_bytes)
		word(w, "--show_bytes");
	if (c->full_names)
		word(w, "--full-names");
	if (c->keep_allocator)
		word(w, "--keep-allocator-frames");
	if (c->nodecount >= 0)
		opt_long(w, "nodecount", c->nodecount);
	if (c->nodefraction_set)
		opt_double(w, "nodefraction", c->nodefraction);
	if (c->edgefraction != 0.001)
		opt_double(w, "edgefraction", c->edgefraction);
	if (c->maxdegree != 8)
		opt_long(w, "maxdegree", c->maxdegree);
	if (c->drop_negative)
		word(w, "--drop_negative");
	if (c->no_symbolize)
		word(w, "--no-symbolize");
	if (c->nprefix) {
		/* one option: each would replace the one before */
		size_t n = 1;
		for (size_t i = 0; i < c->nprefix; i++)
			n += strlen(c->lib_prefixes[i]) + 1;
		char *all = malloc(n);
		if (all) {
			all[0] = '\0';
			for (size_t i = 0; i < c->nprefix; i++) {
				if (i)
					strcat(all, ",");
				strcat(all, c->lib_prefixes[i]);
			}
			opt(w, "lib_prefix", all);
			free(all);
		}
	}
	for (size_t i = 0; i < c->ndebug; i++)
		opt(w, "debuginfo-dir", c->debuginfo_dirs[i]);
	if (c->perf_map)
		opt(w, "perf-map", c->perf_map);
	for (size_t i = 0; i < c->nadd_libs; i++)
		opt(w, "add_lib", c->add_libs[i]);
	for (size_t i = 0; i < c->nsource; i++)
		opt(w, "source-dir", c->source_dirs[i]);
	if (c->label_from_path)
		opt(w, "label-from-path", c->label_from_path);
	if (c->strict)
		word(w, "--strict");
	if (c->seconds != 30)
		opt_long(w, "seconds", c->seconds);
}

/* The positionals and the --base profiles up to ARG and BASE, from
 * *AI and *BI on. */
static void inputs_to(const struct cli *c, struct words *w, size_t arg, size_t base, size_t *ai,
		      size_t *bi)
{
	for (; *bi < base && *bi < c->nbases; ++*bi)
		opt(w, "base", c->bases[*bi]);
	for (; *ai < arg && *ai < c->nargs; ++*ai)
		word(w, c->args[*ai]);
}

void webcmd_json(const struct cli *c, FILE *f)
{
	struct words w = { f, true };
	fputs(",\"args\":[", f);
	server_args(c, &w);
	fputs("],\"inputs\":[", f);
	/* a label holds for what follows it: between two labels go the
	 * arguments and base profiles given between them */
	w.first = true;
	size_t ai = 0, bi = 0;
	for (size_t i = 0; i < c->nlabels; i++) {
		inputs_to(c, &w, c->labels[i].from_arg, c->labels[i].from_base, &ai, &bi);
		opt(&w, "label", c->labels[i].kv);
	}
	inputs_to(c, &w, c->nargs, c->nbases, &ai, &bi);
	fputc(']', f);
}

/*
 * --growth's text report: call sites ranked by steady growth across a
 * series of dumps (analyzer/growth.c fits the lines).
 *
 *   Growth of inuse_space over 10 profiles (MB per profile; fit is R^2 of a straight line)
 *        slope   fit      first       last     change call site
 *        0.062  1.00      0.062        0.6        0.6 leak_step
 *
 * Rules (analyzer/series.h, series_rank): a call site is the leaf key of
 * each stack after the allocator cut and the filters (with --cum every
 * key of the stack, once: a function with the growth of its callees);
 * sites are ranked by slope times fit (a shrinking site by its slope),
 * then by the last value, then by name; --nodecount=N keeps the first N.
 * The first line names the first and last dump fitted; the dumps given
 * but left out (the dump at exit, peak dumps: not of the regular series)
 * are listed under the table.  Values are in --text's units, but in MB a value
 * under 0.1 is printed with two significant digits (0.062, 0.0031)
 * rather than --text's one decimal, so that a site growing by less than
 * 0.05 MB a dump does not show a slope of 0.0.
 */
#include <math.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/escape.h"
#include "analyzer/growth.h"
#include "analyzer/series.h"
#include "output/output.h"

/* V as --text prints it, but with two significant digits under 0.1 MB
 * (at most six decimals). */
static void format_value(char *buf, size_t len, double v, enum units u)
{
	double mb = fabs(v) / 1048576.0;
	if (u != UNITS_MB || v == 0 || mb >= 0.1) {
		text_format_value(buf, len, v, u);
		return;
	}
	int decimals = 1 - (int)floor(log10(mb));
	if (decimals > 6)
		decimals = 6;
	snprintf(buf, len, "%.*f", decimals, text_shown(v / 1048576.0, decimals));
}

/* "NAME (kind)" of dump D, escaped. */
static void dump_label(char *buf, size_t len, const struct series_dump *d)
{
	char name[1024];
	escape_into(name, sizeof(name), d->name.base, strlen(d->name.base));
	const char *kind = dumpname_kind_word(d->name.kind);
	snprintf(buf, len, "%s%s%s%s", name, *kind ? " (" : "", kind, *kind ? ")" : "");
}

int output_growth(FILE *out, const struct growth *g, const struct report *r, char *err,
		  size_t errlen)
{
	const struct aggregate *a = r->a;
	struct series_site *sites;
	size_t ns;
	int rc = series_rank(g, r->p, a, r->value, r->cum, &sites, &ns);
	if (rc)
		return jh_err(err, errlen, rc, "out of memory");
	char span[2200] = "";
	const struct series *s = g->series;
	if (s && s->n >= 2) {
		char first[1024], last[1024];
		escape_into(first, sizeof(first), s->dumps[0].name.base, strlen(s->dumps[0].name.base));
		escape_into(last, sizeof(last), s->dumps[s->n - 1].name.base,
			    strlen(s->dumps[s->n - 1].name.base));
		snprintf(span, sizeof(span), ", %s to %s", first, last);
	}
	fprintf(out, "Growth of %s over %zu profiles%s (%s per profile; fit is R^2 of a straight line%s)\n",
		output_value_name(r->value), g->ndumps, span, text_unit_name(r->units),
		r->cum ? "; --cum: a function's growth includes its callees'" : "");
	fprintf(out, "%10s %5s %10s %10s %10s %s\n", "slope", "fit", "first", "last", "change",
		r->cum ? "function" : "call site");
	for (size_t i = 0; i < ns; i++) {
		if (r->nodecount > 0 && (long)i >= r->nodecount)
			break;
		const struct series_site *st = &sites[i];
		char b1[64], b2[64], b3[64], b4[64];
		format_value(b1, sizeof(b1), st->slope, r->units);
		format_value(b2, sizeof(b2), st->first, r->units);
		format_value(b3, sizeof(b3), st->last, r->units);
		format_value(b4, sizeof(b4), st->last - st->first, r->units);
		fprintf(out, "%10s %5.2f %10s %10s %10s ", b1, st->r2, b2, b3, b4);
		escape_fputs(strtab_get(&a->keys, st->key), false, out);
		fputc('\n', out);
	}
	free(sites);
	const struct series *left = g->left;
	if (left && left->n) {
		fputs("Left out (not of the regular series; --all-dumps fits them too):", out);
		for (size_t k = 0; k < left->n; k++) {
			char lbl[1200];
			dump_label(lbl, sizeof(lbl), &left->dumps[k]);
			fprintf(out, "%s %s", k ? "," : "", lbl);
		}
		fputc('\n', out);
	}
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}

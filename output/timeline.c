/* --timeline and the note under a dump at exit (see timeline.h). */
#include <stdlib.h>

#include "lib/errors.h"
#include "lib/escape.h"
#include "output/timeline.h"

static const char *clock_words(enum series_clock c)
{
	switch (c) {
	case SERIES_TIME: return "seconds after the first dump, from the files' times";
	case SERIES_SEQ: return "the sequence numbers in the file names";
	default: return "the position in the series";
	}
}

static void format_when(char *buf, size_t len, const struct series *s, size_t k)
{
	double w = series_when(s, k);
	if (s->clock == SERIES_TIME)
		snprintf(buf, len, "%.3f", w);
	else
		snprintf(buf, len, "%.0f", w);
}

/* V with a sign: "+40.0", "-3.1", and "0.0" without one. */
static void format_signed(char *buf, size_t len, double v, enum units u)
{
	char b[64];
	text_format_value(b, sizeof(b), v, u);
	const char *digits = b[0] == '-' ? b + 1 : b;
	if (strspn(digits, "0.") == strlen(digits))
		snprintf(buf, len, "%s", digits);
	else
		snprintf(buf, len, "%s%s", v > 0 ? "+" : "", b);
}

/* The dump's file name and its kind, as the rows show it. */
static void format_dump(char *buf, size_t len, const struct series_dump *d)
{
	char name[1024];
	escape_into(name, sizeof(name), d->name.base, strlen(d->name.base));
	const char *kind = dumpname_kind_word(d->name.kind);
	snprintf(buf, len, "%s%s%s%s", name, *kind ? " (" : "", kind, *kind ? ")" : "");
}

int output_timeline(FILE *out, const struct series *s, const struct growth *g,
		    const struct report *r, bool cum, char *err, size_t errlen)
{
	struct series_row *rows;
	int rc = series_timeline(s, g, r->p, r->a, r->value, cum, &rows);
	if (rc)
		return jh_err(err, errlen, rc, "out of memory");
	bool has_alloc = false;
	for (size_t k = 0; k < s->n; k++)
		has_alloc |= s->dumps[k].has_alloc;
	/* an in-use value: the allocated total of the same unit beside it */
	bool alloc_col = has_alloc && (r->value == PF_INUSE_SPACE || r->value == PF_INUSE_OBJECTS);
	enum pf_value alloc_v = r->value == PF_INUSE_SPACE ? PF_ALLOC_SPACE : PF_ALLOC_OBJECTS;
	size_t width = 4;
	char buf[1200];
	for (size_t k = 0; k < s->n; k++) {
		format_dump(buf, sizeof(buf), &s->dumps[k]);
		if (strlen(buf) > width)
			width = strlen(buf);
	}
	if (width > 80)
		width = 80;
	const char *vname = output_value_name(r->value);
	fprintf(out, "Timeline of %s over %zu dumps (%s; when: %s)\n", vname, s->n,
		text_unit_name(r->units), clock_words(s->clock));
	fprintf(out, "%12s %14s %10s", "when", vname, "change");
	if (alloc_col)
		fprintf(out, " %10s", "allocated");
	fprintf(out, "  %-*s  %s%s\n", (int)width, "dump", "grew most", cum ? " (callers too)" : "");
	for (size_t k = 0; k < s->n; k++) {
		const struct series_row *row = &rows[k];
		char when[64], val[64], chg[80] = "", alc[64];
		format_when(when, sizeof(when), s, k);
		text_format_value(val, sizeof(val), row->value, r->units);
		if (k)
			format_signed(chg, sizeof(chg), row->change, r->units);
		fprintf(out, "%12s %14s %10s", when, val, chg);
		if (alloc_col) {
			text_format_value(alc, sizeof(alc), pf_value_of(s->dumps[k].total, alloc_v), r->units);
			fprintf(out, " %10s", alc);
		}
		format_dump(buf, sizeof(buf), &s->dumps[k]);
		fprintf(out, "  %-*s", row->grew_key ? (int)width : 0, buf);
		if (row->grew_key) {
			char by[80];
			format_signed(by, sizeof(by), row->grew_by, r->units);
			fprintf(out, "  %s ", by);
			escape_fputs(strtab_get(&r->a->keys, row->grew_key), false, out);
		}
		fputc('\n', out);
	}
	if (s->n) {
		size_t pk = series_peak(s, r->value);
		char val[64];
		text_format_value(val, sizeof(val), pf_value_of(s->dumps[pk].total, r->value), r->units);
		escape_into(buf, sizeof(buf), s->dumps[pk].name.base, strlen(s->dumps[pk].name.base));
		fprintf(out, "Peak: %s %s in %s, dump %zu of %zu (--peak reports it)\n", val,
			text_unit_name(r->units), buf, pk + 1, s->n);
	}
	free(rows);
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}

void output_exit_note(FILE *out, const char *path, const struct leaksum *ls, bool note)
{
	const char *pre = note ? "jheap: note: " : "";
	char name[1024];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	escape_into(name, sizeof(name), base, strlen(base));
	fprintf(out, "%s%s is the dump taken at exit (prof_final): %s was never freed, leaked or left for the exit to free.\n",
		pre, name, note ? "what the report shows" : "the memory above");
	if (ls) {
		char where[1024];
		escape_into(where, sizeof(where), ls->path, strlen(ls->path));
		fprintf(out, "%sjemalloc's leak summary (prof_leak, from %s): %s%.0f bytes, %s%.0f objects, %s%.0f contexts.\n",
			pre, where, ls->approx ? "~" : "", ls->bytes, ls->approx ? "~" : "", ls->objects,
			ls->approx ? ">= " : "", ls->contexts);
	}
}

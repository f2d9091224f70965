/*
 * --collapsed: folded stacks for flamegraph.pl, speedscope and inferno.
 *
 * One line per distinct stack: frame names root first, joined by ';', one
 * space, the chosen value rounded to the nearest integer (halves away from
 * zero; bytes or objects, never MB).  Unlike jeprof's output, lines are
 * aggregated, sorted by the stack text in byte order, free of zero lines
 * and of jeprof's <hex> tags, and allocator frames are cut as in --text.
 * With --base, each line is flamegraph.pl's differential form
 * "stack BEFORE AFTER" (base value, then base plus the change), so that
 * negative changes need no negative number.
 */
#include <math.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "output/output.h"
#include "output/stacks.h"
#include "output/text.h"

struct line {
	size_t text;                /* offset into the text buffer */
	double after, before;       /* rounded */
};

static double rounded(double v)
{
	return v > 0 ? round(v) : 0;
}

static int cmp_lines(const void *x, const void *y, void *arg)
{
	const char *buf = arg;
	const struct line *a = x, *b = y;
	int c = strcmp(buf + a->text, buf + b->text);
	if (c)
		return c;
	return a->text < b->text ? -1 : a->text > b->text;
}

/* Folds ST into sorted lines; *BUF holds their text. */
static int fold(const struct stacks *st, bool diff, char **buf, struct line **lines,
		size_t *nlines)
{
	size_t size = 1;
	for (size_t i = 0; i < st->n; i++)
		for (uint32_t k = 0; k < st->s[i].nframes; k++)
			size += strlen(stacks_name(st, st->frames[st->s[i].frame0 + k])) + 1;
	*buf = malloc(size);
	*lines = malloc((st->n + 1) * sizeof(**lines));
	if (!*buf || !*lines)
		return JH_ENOMEM;
	size_t o = 0, n = 0;
	for (size_t i = 0; i < st->n; i++) {
		const struct stack *s = &st->s[i];
		struct line l = { o, rounded(s->value), diff ? rounded(s->before) : 0 };
		if (l.after == 0 && l.before == 0)
			continue;
		for (uint32_t k = 0; k < s->nframes; k++) {
			const char *name = stacks_name(st, st->frames[s->frame0 + k]);
			size_t len = strlen(name);
			if (k)
				(*buf)[o++] = ';';
			memcpy(*buf + o, name, len);
			o += len;
		}
		(*buf)[o++] = '\0';
		(*lines)[n++] = l;
	}
	jh_qsort_r(*lines, n, sizeof(**lines), cmp_lines, *buf);
	/* Distinct stacks have distinct texts (no name holds ';'), but merge
	 * equal texts anyway so that every line is unique whatever happens. */
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(*buf + (*lines)[m - 1].text, *buf + (*lines)[i].text)) {
			(*lines)[m - 1].after += (*lines)[i].after;
			(*lines)[m - 1].before += (*lines)[i].before;
		} else
			(*lines)[m++] = (*lines)[i];
	}
	*nlines = m;
	return 0;
}

int output_collapsed(FILE *out, const struct report *r, char *err, size_t errlen)
{
	struct stacks st;
	char *buf = NULL;
	struct line *lines = NULL;
	size_t n = 0;
	int rc = stacks_build(&st, r);
	if (!rc)
		rc = fold(&st, r->diff, &buf, &lines, &n);
	if (rc) {
		stacks_release(&st);
		free(buf);
		free(lines);
		return jh_err(err, errlen, rc, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		fputs(buf + lines[i].text, out);
		if (r->diff)
			fprintf(out, " %.0f %.0f\n", text_shown(lines[i].before, 0),
				text_shown(lines[i].after, 0));
		else
			fprintf(out, " %.0f\n", text_shown(lines[i].after, 0));
	}
	stacks_release(&st);
	free(buf);
	free(lines);
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}

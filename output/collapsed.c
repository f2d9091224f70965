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
 *
 * A million stacks make 725 MB of lines (make bench): they are written in
 * chunks by two threads (output/parwrite.h), each line made from the
 * previous one's bytes up to the frames they share.
 */
#include <math.h>
#include <stdlib.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "output/obuf.h"
#include "output/output.h"
#include "output/parwrite.h"
#include "output/stacks.h"
#include "output/text.h"

static double rounded(double v)
{
	return v > 0 ? round(v) : 0;
}

/* A thread's line: the last one written, and where each of its frames'
 * names ends in it. */
struct line {
	char *b;
	size_t cap;
	uint32_t *ends;
	size_t cap_ends;
};

struct collapsed {
	const struct report *r;
	const struct stacks *st;
	const uint32_t *len;        /* per symbol: its name's length */
	struct line line[2];        /* per thread */
};

/* The lines of stacks [FROM, TO) (parwrite_fn).  Sorted stacks share
 * their first frames with the one before, often most of them: each line
 * is made from the previous line's bytes up to the frames they share,
 * then the names of the frames that differ. */
static int write_lines(void *ctx, int who, size_t from, size_t to, struct obuf *o)
{
	struct collapsed *c = ctx;
	struct line *ln = &c->line[who];
	const struct stacks *st = c->st;
	const struct report *r = c->r;
	const uint32_t *pf = NULL;  /* the last line's frames */
	uint32_t pn = 0;
	for (size_t i = from; i < to; i++) {
		const struct stack *s = &st->s[i];
		/* the stacks are in order, their frames where they were made:
		 * start loading a later stack's */
		if (i + 8 < to) {
			const uint32_t *later = st->frames + st->s[i + 8].frame0;
			__builtin_prefetch(later);
			__builtin_prefetch(later + 16);
		}
		double after = rounded(s->value), before = r->diff ? rounded(s->before) : 0;
		if (after == 0 && before == 0)
			continue;
		const uint32_t *f = st->frames + s->frame0;
		uint32_t same = 0;
		while (same < pn && same < s->nframes && pf[same] == f[same])
			same++;
		size_t at = same ? ln->ends[same - 1] : 0;
		if (jh_grow(&ln->ends, &ln->cap_ends, s->nframes, sizeof(*ln->ends)))
			return JH_ENOMEM;
		for (uint32_t k = same; k < s->nframes; k++) {
			size_t l = c->len[f[k]];
			if (jh_grow(&ln->b, &ln->cap, at + l + 1, 1))
				return JH_ENOMEM;
			if (k)
				ln->b[at++] = ';';
			memcpy(ln->b + at, stacks_name(st, f[k]), l);
			at += l;
			ln->ends[k] = (uint32_t)at;
		}
		pf = f;
		pn = s->nframes;
		obuf_write(o, ln->b, at);
		obuf_putc(o, ' ');
		if (r->diff) {
			obuf_f0(o, before);
			obuf_putc(o, ' ');
		}
		obuf_f0(o, after);
		obuf_putc(o, '\n');
	}
	return 0;
}

int output_collapsed(FILE *out, const struct report *r, char *err, size_t errlen)
{
	struct stacks st;
	int rc = stacks_build(&st, r, STACKS_TEXT);
	if (rc) {
		stacks_release(&st);
		return jh_err(err, errlen, rc, "out of memory");
	}
	/* the symbols' names' lengths, looked up once */
	uint32_t *len = malloc((st.nsyms + 1) * sizeof(*len));
	if (!len) {
		stacks_release(&st);
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < st.nsyms; i++)
		len[i] = (uint32_t)strlen(stacks_name(&st, (uint32_t)i));
	/* Stacks with the same names were merged, and distinct stacks have
	 * distinct lines (no name holds ';'): one line each. */
	struct collapsed c = { .r = r, .st = &st, .len = len };
	rc = parwrite(out, st.n, 0, write_lines, &c);
	for (int k = 0; k < 2; k++) {
		free(c.line[k].b);
		free(c.line[k].ends);
	}
	free(len);
	stacks_release(&st);
	if (rc)
		return jh_err(err, errlen, rc, "out of memory");
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}

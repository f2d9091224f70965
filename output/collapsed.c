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
#include <stdlib.h>
#include "lib/errors.h"
#include "output/obuf.h"
#include "output/output.h"
#include "output/stacks.h"
#include "output/text.h"

static double rounded(double v)
{
	return v > 0 ? round(v) : 0;
}

int output_collapsed(FILE *out, const struct report *r, char *err, size_t errlen)
{
	struct stacks st;
	int rc = stacks_build(&st, r, STACKS_TEXT);
	if (rc) {
		stacks_release(&st);
		return jh_err(err, errlen, rc, "out of memory");
	}
	/* the names' lengths, looked up once */
	size_t nnames = st.names.len;
	uint32_t *len = malloc((nnames + 1) * sizeof(*len));
	struct obuf *o = malloc(sizeof(*o));
	if (!len || !o) {
		free(len);
		free(o);
		stacks_release(&st);
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < nnames; i++)
		len[i] = (uint32_t)strlen(stacks_name(&st, (uint32_t)i));
	obuf_init(o, out);
	/* Stacks with the same names were merged, and distinct stacks have
	 * distinct lines (no name holds ';'): one line each. */
	for (size_t i = 0; i < st.n; i++) {
		const struct stack *s = &st.s[i];
		/* the stacks are in order, their frames where they were made:
		 * start loading a later stack's */
		if (i + 8 < st.n) {
			const uint32_t *later = st.frames + st.s[i + 8].frame0;
			__builtin_prefetch(later);
			__builtin_prefetch(later + 16);
		}
		double after = rounded(s->value), before = r->diff ? rounded(s->before) : 0;
		if (after == 0 && before == 0)
			continue;
		const uint32_t *f = st.frames + s->frame0;
		for (uint32_t k = 0; k < s->nframes; k++) {
			if (k)
				obuf_putc(o, ';');
			obuf_write(o, stacks_name(&st, f[k]), len[f[k]]);
		}
		obuf_putc(o, ' ');
		if (r->diff) {
			obuf_f0(o, before);
			obuf_putc(o, ' ');
		}
		obuf_f0(o, after);
		obuf_putc(o, '\n');
	}
	obuf_flush(o);
	free(o);
	free(len);
	stacks_release(&st);
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}

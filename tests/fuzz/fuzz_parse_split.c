/* libFuzzer target: a dump parsed in one thread and with its heap_v2 body
 * split between two threads (at the first stack line after a quarter, the
 * middle and three quarters of the input) must give the same model, return
 * code, message and warnings; abort() when not.  Built by "make fuzz". */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include "lib/array.h"
#include "analyzer/parse.h"
#include "tests/unit/profile_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct warnings {
	char *s;
	size_t n, cap;
};

static void on_warn(void *ctx, const char *msg)
{
	struct warnings *w = ctx;
	size_t n = strlen(msg);
	if (jh_grow(&w->s, &w->cap, w->n + n + 2, 1))
		abort();
	memcpy(w->s + w->n, msg, n);
	w->n += n;
	w->s[w->n++] = '\n';
	w->s[w->n] = '\0';
}

/* Parses BUF into P, split at the first stack line at or after SPLIT_AT
 * (0: in one thread); the return code, message and warnings into R. */
struct run {
	struct profile p;
	int rc;
	char err[512];
	struct warnings w;
	bool split;
};

static void run(struct run *r, const char *buf, size_t len, size_t split_at)
{
	memset(r, 0, sizeof(*r));
	profile_init(&r->p);
	struct parse_split_options so = { .at = split_at, .done = &r->split, .min = SIZE_MAX };
	struct parse_options o = { .warn = on_warn, .ctx = &r->w, .split = &so };
	r->rc = parse_buffer(&r->p, "fuzz.heap", buf, len, &o, r->err, sizeof(r->err));
}

static void done(struct run *r)
{
	profile_release(&r->p);
	free(r->w.s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct run one, two;
	run(&one, buf, size, 0);
	/* three places: at a quarter, the middle and three quarters */
	for (size_t k = 1; k <= 3; k++) {
		size_t at = size * k / 4;
		if (!at)
			continue;
		run(&two, buf, size, at);
		const char *d = one.rc != two.rc ? "return code" :
			strcmp(one.err, two.err) ? "error message" :
			(one.w.n != two.w.n || (one.w.n && strcmp(one.w.s, two.w.s))) ? "warnings" :
			profile_diff(&one.p, &two.p);
		if (d) {
			fprintf(stderr, "split at %zu (%s): %s differs\n  one thread:  %d %s\n"
				"  two threads: %d %s\n", at, two.split ? "split" : "not split", d,
				one.rc, one.err, two.rc, two.err);
			abort();
		}
		done(&two);
	}
	done(&one);
	return 0;
}

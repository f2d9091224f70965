#include "cli/hints.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/forks.h"
#include "analyzer/wrappers.h"
#include "lib/errors.h"
#include "lib/escape.h"

/* At most this many names are listed in the words of the hint (the
 * pattern has them all). */
#define SHOWN_NAMES 3

/* S in single quotes for a shell ('\'' for a quote inside). */
static void quoted(const char *s, char *out, size_t len)
{
	size_t n = 0;
	if (len < 3)
		return;
	out[n++] = '\'';
	for (; *s && n + 5 < len; s++) {
		if (*s == '\'') {
			memcpy(out + n, "'\\''", 4);
			n += 4;
		} else {
			out[n++] = *s;
		}
	}
	out[n++] = '\'';
	out[n] = '\0';
}

static void trace(void *ctx, const char *msg)
{
	(void)ctx;
	char e[1200];
	fprintf(stderr, "jheap: wrappers: %s\n", escape_into(e, sizeof(e), msg, strlen(msg)));
}

int hints_wrappers(const struct profile *p, const struct aggregate *a, const struct cli *c,
		  bool diff, bool shell, void (*line)(void *ctx, const char *msg), void *ctx)
{
	if (c->gran != GRAN_FUNCTIONS || c->full_names || c->keep_allocator || diff)
		return 0;
	struct wrappers w;
	const char *dbg = getenv("JHEAP_DEBUG");
	int rc = wrappers_find(&w, a, p, c->value, dbg && strstr(dbg, "wrappers") ? trace : NULL, NULL);
	if (rc)
		return rc;
	char re[4096], arg[8192], names[1024] = "", msg[10240];
	if (w.n && w.share >= HINTS_MIN_SHARE && wrappers_pattern(&w, c->allocator, re, sizeof(re)) > 0) {
		size_t n = 0;
		for (size_t i = 0; i < w.n && i < SHOWN_NAMES; i++) {
			char e[300];
			escape_into(e, sizeof(e), w.names[i], strlen(w.names[i]));
			n += (size_t)snprintf(names + n, n < sizeof(names) ? sizeof(names) - n : 0, "%s%s",
					      i ? ", " : "", e);
		}
		if (w.n > SHOWN_NAMES && n < sizeof(names))
			snprintf(names + n, sizeof(names) - n, ", ...");
		if (shell)
			snprintf(arg, sizeof(arg), "allocator=%s", re);
		else {
			char q[sizeof(arg) - 16];
			quoted(re, q, sizeof(q));
			snprintf(arg, sizeof(arg), "--allocator=%s", q);
		}
		char pct[32];
		snprintf(pct, sizeof(pct), "%.1f%%", 100 * w.share);
		char what[80];
		const char *further = c->allocator ? "further " : "";
		if (w.n == 1)
			snprintf(what, sizeof(what), "a %sfunction that looks like a malloc wrapper", further);
		else
			snprintf(what, sizeof(what), "%zu %sfunctions that look like malloc wrappers", w.n, further);
		snprintf(msg, sizeof(msg), "hint: %s of the %s allocated through %s (%s); to charge %s callers: %s",
			 pct, c->value == PF_INUSE_OBJECTS || c->value == PF_ALLOC_OBJECTS ? "objects are" : "bytes are",
			 what, names, w.n == 1 ? "its" : "their", arg);
		line(ctx, msg);
	}
	wrappers_release(&w);
	return 0;
}

void hints_patterns(const struct aggregate *a, const struct cli *c, bool shell,
		    void (*line)(void *ctx, const char *msg), void *ctx)
{
	const struct { uint8_t bit; const char *opt, *set, *re; } re[] = {
		{ AGG_RE_FOCUS, "--focus", "focus", c->focus },
		{ AGG_RE_IGNORE, "--ignore", "ignore", c->ignore },
		{ AGG_RE_RETAIN, "--retain", "retain", c->retain },
		{ AGG_RE_EXCLUDE, "--exclude", "exclude", c->exclude },
		{ AGG_RE_ALLOCATOR, "--allocator", "allocator", c->allocator },
	};
	for (size_t i = 0; i < sizeof(re) / sizeof(re[0]); i++) {
		if (!(a->unmatched & re[i].bit) || !re[i].re)
			continue;
		char e[600], msg[900];
		escape_into(e, sizeof(e), re[i].re, strlen(re[i].re));
		snprintf(msg, sizeof(msg), "warning: %s%s'%s' matches no function of the profile%s%s",
			 shell ? re[i].set : re[i].opt, "=", e,
			 re[i].bit & (AGG_RE_FOCUS | AGG_RE_IGNORE) ? " (nor a file:line or an address)" : "",
			 re[i].bit == AGG_RE_FOCUS ? ": the report is empty" :
			 re[i].bit == AGG_RE_RETAIN ? ": every frame is hidden" : "");
		line(ctx, msg);
	}
}

void hints_forks(struct forks *f, void (*line)(void *ctx, const char *msg), void *ctx)
{
	forks_group(f);
	for (size_t g = 0; g < f->n; g++) {
		if (forks_group_of(f, g) != g)
			continue;
		char names[1500] = "", pids[300] = "";
		size_t n = 0, nn = 0, np = 0;
		long pid0 = f->e[g].pid;
		bool one_pid = pid0 > 0, cut = false;
		for (size_t i = g; i < f->n; i++) {
			if (forks_group_of(f, i) != g)
				continue;
			n++;
			one_pid = one_pid && f->e[i].pid == pid0;
			if (n <= 3) {
				char e[400];
				const char *base = strrchr(f->e[i].name, '/');
				base = base ? base + 1 : f->e[i].name;
				escape_into(e, sizeof(e), base, strlen(base));
				nn += (size_t)snprintf(names + nn, nn < sizeof(names) ? sizeof(names) - nn : 0,
						       "%s'%s'", n > 1 ? ", " : "", e);
			}
			if (f->e[i].pid > 0 && np < sizeof(pids) - 32)
				np += (size_t)snprintf(pids + np, sizeof(pids) - np, "%s%ld", np ? ", " : "",
						       f->e[i].pid);
			else if (f->e[i].pid > 0 && !cut) {
				cut = true;
				np += (size_t)snprintf(pids + np, sizeof(pids) - np, ", ...");
			}
		}
		if (n < 2)
			continue;
		char msg[2400];
		if (one_pid)
			snprintf(msg, sizeof(msg), "%s%s: %zu dumps of one process (%ld): what it held at each dump is counted in each, %zu times in this sum",
				 names, n > 3 ? " and more" : "", n, pid0, n);
		else
			snprintf(msg, sizeof(msg), "%s%s: %zu dumps of processes forked from one another (%s%stheir program and libraries at the same addresses): what was allocated before fork is in each of them, and counted once per dump in this sum",
				 names, n > 3 ? " and more" : "", n, pids, np ? ": " : "");
		line(ctx, msg);
	}
}

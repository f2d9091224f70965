/*
 * list: --list=RE's source listing as a walk, for the writers that lay it
 * out: --list's text (output/list.c) and --weblist's page
 * (output/weblist.c), which puts each line's machine code under it.  The
 * walk hands each routine and each of its lines, with their values, to a
 * sink (struct list_sink), which writes the text or the page.
 */
#ifndef JHEAP_LIST_H
#define JHEAP_LIST_H

#include <stddef.h>
#include <stdint.h>
#include "output/output.h"

/* What list_walk() gives, in order, for each routine (a function's short
 * name and a file): routine(), then missing() when the source cannot be
 * read, then its lines, with fence() before the routine's first line and
 * after its last (jeprof's "---"). */
struct list_sink {
	void *ctx;
	/* NAME in FILE ("??" when unknown), with the routine's totals */
	void (*routine)(void *ctx, const char *name, const char *file, double flat, double cum);
	/* why the source is not shown (unescaped); the lines that follow
	 * are the ones with values, without text */
	void (*missing)(void *ctx, const char *why);
	/* line N with its values and its text (TEXT[0..len), NUL-terminated,
	 * unescaped; NULL without source) */
	void (*line)(void *ctx, int64_t n, double flat, double cum, const char *text, size_t len);
	void (*fence)(void *ctx);
};

/* Walks the source listing of the functions matching RE (a --OPT=RE
 * given by the user; messages name --OPT) with R's values and filters:
 * the routines sorted by name, then file.  Returns 0, or a negative JH_
 * code with a message (a bad RE, no function matching, out of memory). */
int list_walk(const struct report *r, const char *opt, const char *re,
	      const struct list_sink *sink, char *err, size_t errlen);

#endif

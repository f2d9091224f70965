/*
 * leaksum: jemalloc's leak summary for a dump taken at exit.
 *
 * With prof_leak:true (and prof_final), jemalloc prints, as it writes the
 * dump at exit,
 *
 *   <jemalloc>: Leak approximation summary: ~1228800 bytes, ~11 objects, >= 2 contexts
 *   <jemalloc>: Run jeprof on dump output for leak detail
 *
 * on the program's standard error (later versions say "Leak summary: N
 * bytes, ..." when every allocation is sampled).  jheap cannot read
 * another program's standard error, so jheap's control library
 * (preload/leakmsg.c, preloaded by jheap record) also writes jemalloc's
 * lines that start so into PREFIX.PID.leak beside the dumps, and
 * leaksum_find() looks there for the dump PREFIX.PID.SEQ.f.heap.  A program
 * run without the control library leaves no such file: its summary is
 * only on its standard error.
 *
 * The file is untrusted: opened without following links or blocking, a
 * regular file of at most LEAKSUM_MAX bytes, and taken only when the same
 * user owns it and the dump; its numbers are read, nothing else of it is
 * shown.
 */
#ifndef JHEAP_LEAKSUM_H
#define JHEAP_LEAKSUM_H

#include <stdbool.h>
#include <stddef.h>

#define LEAKSUM_MAX 65536

struct leaksum {
	double bytes, objects, contexts;
	bool approx;             /* "approximation": sampled, unsampled by jemalloc */
	char path[4096];         /* the file it was read from */
};

/* Reads the last summary line in TEXT[0..n) into LS.  Returns 1 when one
 * was found, else 0. */
int leaksum_parse(const char *text, size_t n, struct leaksum *ls);

/* The summary for DUMP, a dump at exit named by jemalloc
 * (PREFIX.PID.SEQ.f.heap): from PREFIX.PID.leak in its folder.  Returns
 * 1 when found, 0 when there is none (no such file, or one of another
 * user, too large, or without a summary line). */
int leaksum_find(const char *dump, struct leaksum *ls);

#endif

/*
 * parwrite: a report's bytes made by two threads, written in order.
 *
 * The writers that print hundreds of megabytes (a line per stack for
 * --collapsed, a sample array per stack for --speedscope, an entry per
 * function for --tree) spend their time in two things that need not wait
 * for each other: formatting the bytes and handing them to the kernel
 * (on the benchmark's 1,000,000-stack dump, writing --collapsed's 725 MB
 * to a file takes 0.15 to 1 s on its own, make bench).  Here the writer's
 * items are cut into chunks of consecutive items; each of two threads
 * takes the next chunk and formats it through an obuf of its own.  A
 * chunk's bytes go straight to the FILE when every chunk before it is
 * written, else they are held in memory until that moment, so at most one
 * chunk a thread is held.  While one thread's bytes go to the kernel, the
 * other formats.  With one thread (lib/threads.h) the chunks are made in
 * order in the caller's thread and go straight to the FILE.
 *
 * The bytes are those of one pass over the items as long as what FN
 * writes for a chunk depends only on its items: a writer with state that
 * runs across items (a separator before all but the first, a line break
 * every 16 numbers) derives it from the chunk's first item.
 */
#ifndef JHEAP_PARWRITE_H
#define JHEAP_PARWRITE_H

#include <stddef.h>
#include <stdio.h>
#include "output/obuf.h"

/* Writes items [FROM, TO) into O; returns 0 or a negative JH_ code.  It
 * runs in either thread, two chunks at once: it may only read what the
 * threads share (CTX), and write what belongs to the thread it runs in,
 * WHO (0 or 1: scratch space kept from one chunk to the next). */
typedef int (*parwrite_fn)(void *ctx, int who, size_t from, size_t to, struct obuf *o);

/* Writes items [0, N) to OUT through FN, in chunks of PER items (0: a
 * chunk is about a 256th of them).  Returns 0, or the first failure of FN
 * or JH_ENOMEM: nothing after the failure is written (of the chunk that
 * failed, what went out before it may be).  Errors of
 * OUT itself show in ferror(OUT). */
int parwrite(FILE *out, size_t n, size_t per, parwrite_fn fn, void *ctx);

#endif

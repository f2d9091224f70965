/*
 * gzout: a gzip stream written while it is being produced, compressed by
 * a second thread.
 *
 * --proto's protobuf of a large profile is a few hundred megabytes, and
 * deflating it (zlib, the fastest level, as Go's runtime/pprof writes)
 * took a quarter of the run on the benchmark's 1,000,000-stack dump,
 * after everything else.  The writer hands its bytes over in blocks as
 * they are final; with two cores (lib/threads.h: jh_threads()) a second
 * thread deflates each block while the next is encoded, with at most
 * GZOUT_PENDING blocks waiting, so memory stays bounded too.  With one,
 * each block is deflated when it is handed over.  The bytes are the same
 * either way: deflate's output does not depend on how its input is cut
 * into calls (no flush until the end), and the gzip header has no time
 * (two runs give the same file).
 */
#ifndef JHEAP_GZOUT_H
#define JHEAP_GZOUT_H

#include <stddef.h>
#include <stdio.h>

/* Blocks handed over but not yet compressed, at most. */
#define GZOUT_PENDING 4

struct gzout;

/* Starts a gzip stream to OUT.  Returns NULL with a message when zlib or
 * memory fails. */
struct gzout *gzout_open(FILE *out, char *err, size_t errlen);

/* Appends BUF[0..len) to the stream (copied).  Returns 0, or a negative
 * JH_ code when an earlier block could not be compressed or written, or
 * memory fails (gzout_close then says what). */
int gzout_write(struct gzout *g, const void *buf, size_t len);

/* Ends the stream (waiting for the second thread), flushes OUT and frees
 * G.  Returns 0 or a negative JH_ code with a message; G is freed either
 * way (NULL: nothing). */
int gzout_close(struct gzout *g, char *err, size_t errlen);

#endif

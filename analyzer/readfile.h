/*
 * readfile: a profile file read into memory, its limits checked while it
 * is read.
 *
 * A regular file is mapped (a dump is most of jheap's input, and a copy
 * would cost a fifth of the parse), after its first bytes have been read
 * and its size checked; the pages are faulted in as the parser reads
 * them, so a text line over the limit is refused before the rest of the
 * file is touched.  A dump truncated under jheap makes a read of the
 * mapping raise SIGBUS: readfile_guard() tells the driver's handler which
 * file that was, for a clear message.  Pipes and devices are read with
 * read(), 8 MiB at a time at most, with the same limits checked as the
 * chunks come.
 *
 * What the first 64 KiB say decides the limits, so that nothing is read
 * in whole before it is refused:
 *   - binary data that is not a profile (an ELF file, /dev/zero, a sparse
 *     file of zeros) is refused after the first 64 KiB;
 *   - text: no line may be longer than PARSE_MAX_LINE (a 2 GB line on
 *     standard input stops at 64 MiB);
 *   - a pprof protobuf: at most PPROF_MAX_BYTES;
 *   - gzip data: at most READFILE_MAX_GZIP bytes, more than any data
 *     that inflates to PPROF_MAX_BYTES or less can take.
 */
#ifndef JHEAP_READFILE_H
#define JHEAP_READFILE_H

#include <stddef.h>

#define READFILE_MAX_GZIP ((size_t)288 << 20)

struct readfile {
	char *buf;
	size_t len;
	size_t mapped;   /* buf maps the file, 0: a big array (lib/bigarray.h) */
};

/* Reads PATH ("/dev/stdin" for standard input) into RF.  Returns 0, or a
 * negative JH_ code with a message naming PATH (and the line, for a line
 * too long).  Free RF with readfile_release() either way. */
int readfile_read(struct readfile *rf, const char *path, char *err, size_t errlen);

void readfile_release(struct readfile *rf);

/* The path of the file whose mapping holds ADDR, or NULL.  Safe to call
 * from a signal handler (SIGBUS: the file was truncated while mapped). */
const char *readfile_guard(const void *addr);

#endif

/*
 * parse: reading heap profiles into the model.
 *
 * Formats: jemalloc "heap_v2/N", gperftools "heap profile:", jeprof's
 * symbolized form ("--- symbol" ... "--- heap" + one of the others), any
 * of these gzip-compressed, and pprof's profile.proto, gzip-compressed or
 * not (read by analyzer/pprof.c, whose values are never unsampled).  Every
 * counts pair is unsampled as it is read (spec section 2).  Addresses and
 * mappings only: symbolization comes later.  Gzip input, protobuf or text,
 * is inflated with zlib (pprof_inflate) before it is told apart.  Which
 * frames are return addresses is decided here, once per format (the
 * leaf flag: analyzer/profile.h).
 */
#ifndef JHEAP_PARSE_H
#define JHEAP_PARSE_H

#include <stddef.h>
#include "analyzer/profile.h"

/* Limits that keep hostile input from exhausting memory; see the man page. */
#define PARSE_MAX_LINE   (64u << 20)   /* bytes in one line */
#define PARSE_MAX_FRAMES (1u << 20)    /* frames in one stack */
/* The most bytes or objects a record stands for once unsampled, and all
 * of a file's records together: far beyond any heap, and within 64 bits
 * with room for sums, so that no report prints a wrapped number. */
#define PARSE_MAX_VALUE 0x1p60

struct parse_options {
	/* Called for "%warn" lines and other non-fatal findings; may be NULL. */
	void (*warn)(void *ctx, const char *msg);
	void *ctx;
	/* Called every few MB with the bytes read so far and in all; may be NULL. */
	void (*progress)(void *ctx, const char *name, size_t done, size_t total);
	/* A heap_v2 body of at least split_min bytes (0: 4 MiB, or the
	 * JHEAP_PARSE_SPLIT_MIN environment variable) is parsed in two
	 * threads when the machine has two cores or JHEAP_THREADS=2 (1 turns
	 * this off).  The profile, warnings and errors are the same either way.
	 * The callbacks but core_idle are only called from the calling thread. */
	size_t split_min;
	/* For tests: split at the first stack line starting at or after this
	 * byte offset of the buffer, whatever the size and JHEAP_THREADS, and
	 * merge the halves in two threads however few samples the second
	 * one has; 0: no. */
	size_t split_at;
	/* When not NULL, set to whether the body was parsed in two threads. */
	bool *split_done;
	/* When not NULL, set to true when the file looks cut short although
	 * what it holds could be read (no MAPPED_LIBRARIES section after the
	 * stacks, a last line without its newline): the report is
	 * incomplete.  A file cut inside a record is an error instead. */
	bool *truncated;
	/* When the body is parsed in two threads: called once, from either
	 * of them, as soon as the first of the two halves is done, when one
	 * core is left idle for the rest of the parse (waiting for the other
	 * half, then merging the halves); may be NULL.  It must return soon:
	 * it may start a thread of its own. */
	void (*core_idle)(void *ctx);
};

/* Parses the file at PATH into P, which must be freshly initialized.
 * On error returns a negative JH_ code and a message "PATH:LINE: what"
 * (or "cannot open 'PATH': reason") in err; P then holds what was read
 * before the error and must still be released. */
int parse_file(struct profile *p, const char *path, const struct parse_options *o,
	       char *err, size_t errlen);

/* The same for a buffer; NAME is used in messages. */
int parse_buffer(struct profile *p, const char *name, const char *buf, size_t len,
		 const struct parse_options *o, char *err, size_t errlen);

/* Classifies the first bytes of a file that is not a pprof profile
 * (pprof_sniff): returns a short description of a known non-profile
 * format ("an ELF file", "binary data"), or NULL when it may be a text
 * profile. */
const char *parse_sniff(const unsigned char *buf, size_t len);

#endif

/*
 * parse: reading heap profiles into the model.
 *
 * Formats: jemalloc "heap_v2/N", gperftools "heap profile:", jeprof's
 * symbolized form ("--- symbol" ... "--- heap" + one of the others), any
 * of these gzip-compressed, and pprof's profile.proto, gzip-compressed or
 * not (read by analyzer/pprof.c, whose values are never unsampled).  Every
 * counts pair is unsampled as it is read (analyzer/unsample.h).  Addresses and
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

/* A heap_v2 body of at least MIN bytes is parsed in two threads when the
 * machine has two cores or JHEAP_THREADS=2 (1 turns this off), by
 * analyzer/parse_split.c; the profile, warnings and errors are the same
 * either way.  These settings are for tests and tuning. */
struct parse_split_options {
	size_t min;    /* 0: 4 MiB, or the JHEAP_PARSE_SPLIT_MIN environment variable */
	/* For tests: split at the first stack line starting at or after this
	 * byte offset of the buffer, whatever the size and JHEAP_THREADS, and
	 * merge the halves in two threads however few samples the second
	 * one has; 0: no. */
	size_t at;
	/* When not NULL, set to whether the body was parsed in two threads. */
	bool *done;
};

/* What a parse reports to its caller while it runs.  Every callback may
 * be NULL and is called from the calling thread, but core_idle. */
struct parse_options {
	/* "%warn" lines and other non-fatal findings, as "NAME:LINE: what". */
	void (*warn)(void *ctx, const char *msg);
	/* Every few MB: the bytes read so far and in all. */
	void (*progress)(void *ctx, const char *name, size_t done, size_t total);
	/* The parse leaves one core idle from now on: called at most once,
	 * from either thread of a two-thread parse, when its first half is
	 * done (the rest is waiting and merging).  It must return soon; it
	 * may start a thread of its own (the driver opens the binary there). */
	void (*core_idle)(void *ctx);
	void *ctx;
	/* When not NULL, set to true when the file looks cut short although
	 * what it holds could be read (no MAPPED_LIBRARIES section after the
	 * stacks, a last line without its newline): the report is
	 * incomplete.  A file cut inside a record is an error instead. */
	bool *truncated;
	/* The two-thread parse's settings; NULL: the defaults. */
	const struct parse_split_options *split;
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

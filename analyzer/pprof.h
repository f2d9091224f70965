/*
 * pprof: reading a pprof profile.proto (gzip-compressed or not) into the
 * model, so that an unsymbolized profile from rust-jemalloc-pprof, a Go
 * heap profile or jheap's own --proto can be symbolized, filtered, diffed
 * and written in every format.
 *
 * - Sample types are taken by name: inuse_objects, inuse_space,
 *   alloc_objects, alloc_space (Go's heap profile has all four,
 *   rust-jemalloc-pprof inuse_space alone).  A profile with none of them
 *   is refused; values of the others are ignored.  Values are estimates
 *   already (pprof's convention): nothing is unsampled again.
 * - Addresses are the lookup pcs as given (pprof never adjusts them), so
 *   every location is made with leaf = true: addr_pc() is the address.
 * - A location with Line entries keeps them (innermost first, as in the
 *   model); one without is symbolized like a heap dump's address, through
 *   its mapping (filename, start, limit, file_offset, build_id).
 * - Labels are ignored: samples of one stack (jheap's per-thread samples,
 *   a diff's pprof::base=true samples) add up.
 */
#ifndef JHEAP_PPROF_H
#define JHEAP_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include "analyzer/profile.h"

/* The most bytes a compressed profile may inflate to (see the man page). */
#define PPROF_MAX_BYTES (256u << 20)
/* The most lines (inline frames) of one location, as in a symbolized
 * dump's names, and the most frames of all samples together, inline
 * frames counted: what every report walks.  A sample is no deeper than
 * PARSE_MAX_FRAMES, as in a dump. */
#define PPROF_MAX_INLINE 256u
#define PPROF_MAX_FRAMES (1u << 28)

/* True when BUF[0..len) is gzip data or a protobuf message whose fields
 * are all well formed, as a pprof profile's are (a text profile is not). */
bool pprof_sniff(const unsigned char *buf, size_t len);

/* For BUF[0..len) that pprof_sniff() refused: when it starts as a pprof
 * profile does (binary, two or more well-formed profile fields), the
 * offset where its fields stop making sense (a truncated or damaged
 * file), else 0. */
size_t pprof_broken_at(const unsigned char *buf, size_t len);

/* Inflates gzip (or zlib) data BUF[0..len) into *OUT (malloc'd, *OUTLEN
 * bytes).  Returns 0 or a negative JH_ code with a message naming NAME. */
int pprof_inflate(const char *name, const unsigned char *buf, size_t len,
		  unsigned char **out, size_t *outlen, char *err, size_t errlen);

/* Reads the uncompressed profile.proto BUF[0..len) into P, freshly
 * initialized.  WARN (may be NULL) gets non-fatal findings.  Returns 0 or
 * a negative JH_ code with "NAME: byte N: what" in ERR. */
int pprof_read(struct profile *p, const char *name, const unsigned char *buf, size_t len,
	       void (*warn)(void *ctx, const char *msg), void *ctx, char *err, size_t errlen);

#endif

/*
 * pbenc: a small protocol-buffers encoder, just what profile.proto needs.
 *
 * Wire format (protobuf.dev/programming-guides/encoding): every field is
 * a key varint (field_number << 3 | wire_type) and a payload.  Wire type 0 (VARINT)
 * carries uint64/int64/bool as a base-128 varint, low 7 bits first, high
 * bit set on every byte but the last; a negative int64 is its two's
 * complement as uint64, so always 10 bytes.  Wire type 2 (LEN) carries a
 * varint length then that many bytes: strings, nested messages and packed
 * repeated scalars (the varints back to back).
 *
 * Everything is appended to one growing buffer.  A nested message is
 * opened with pbenc_begin() and closed with pbenc_end(), which inserts its
 * length in front of its content once the content is known.  Errors are
 * sticky: after an allocation failure every call is a no-op and
 * pbenc_failed() is true, so callers check once at the end.
 */
#ifndef JHEAP_PBENC_H
#define JHEAP_PBENC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pbenc {
	unsigned char *buf;
	size_t len, cap;
	bool oom;
};

void pbenc_init(struct pbenc *e);
/* Frees the buffer. */
void pbenc_release(struct pbenc *e);
static inline bool pbenc_failed(const struct pbenc *e) { return e->oom; }

/* A bare varint (no key; lib/varint.h). */
void pbenc_varint(struct pbenc *e, uint64_t v);
/* A key: FIELD and wire type WT (0 varint, 2 length-delimited). */
void pbenc_key(struct pbenc *e, uint32_t field, unsigned wt);

/* FIELD = V as a varint, always written (also when V is 0). */
void pbenc_uint64(struct pbenc *e, uint32_t field, uint64_t v);
void pbenc_int64(struct pbenc *e, uint32_t field, int64_t v);
/* The same, but nothing is written for 0 (proto3's default value). */
void pbenc_uint64_opt(struct pbenc *e, uint32_t field, uint64_t v);
void pbenc_int64_opt(struct pbenc *e, uint32_t field, int64_t v);
void pbenc_bool_opt(struct pbenc *e, uint32_t field, bool v);

/* FIELD = the N bytes at P (a string or bytes field). */
void pbenc_bytes(struct pbenc *e, uint32_t field, const void *p, size_t n);
void pbenc_string(struct pbenc *e, uint32_t field, const char *s);

/* Packed repeated FIELD: one LEN field holding the N varints.  Nothing is
 * written when N is 0. */
void pbenc_packed_uint64(struct pbenc *e, uint32_t field, const uint64_t *v, size_t n);
void pbenc_packed_int64(struct pbenc *e, uint32_t field, const int64_t *v, size_t n);

/* Opens a nested message FIELD; returns a mark to pass to pbenc_end(). */
size_t pbenc_begin(struct pbenc *e, uint32_t field);
/* Closes the message opened at MARK: inserts its length varint. */
void pbenc_end(struct pbenc *e, size_t mark);

#endif

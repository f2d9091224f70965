#include <stdlib.h>
#include <string.h>

#include "output/pbenc.h"
#include "lib/array.h"
#include "lib/varint.h"

void pbenc_init(struct pbenc *e)
{
	memset(e, 0, sizeof(*e));
}

void pbenc_release(struct pbenc *e)
{
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

/* Room for N more bytes; false (and the sticky error) when out of memory. */
static bool reserve(struct pbenc *e, size_t n)
{
	if (e->oom)
		return false;
	if (n > SIZE_MAX - e->len || jh_grow(&e->buf, &e->cap, e->len + n, 1)) {
		e->oom = true;
		return false;
	}
	return true;
}

void pbenc_varint(struct pbenc *e, uint64_t v)
{
	if (reserve(e, 10))
		e->len += varint_put(e->buf + e->len, v);
}

void pbenc_key(struct pbenc *e, uint32_t field, unsigned wt)
{
	pbenc_varint(e, (uint64_t)field << 3 | (wt & 7));
}

void pbenc_uint64(struct pbenc *e, uint32_t field, uint64_t v)
{
	pbenc_key(e, field, 0);
	pbenc_varint(e, v);
}

void pbenc_int64(struct pbenc *e, uint32_t field, int64_t v)
{
	pbenc_uint64(e, field, (uint64_t)v);
}

void pbenc_uint64_opt(struct pbenc *e, uint32_t field, uint64_t v)
{
	if (v)
		pbenc_uint64(e, field, v);
}

void pbenc_int64_opt(struct pbenc *e, uint32_t field, int64_t v)
{
	if (v)
		pbenc_uint64(e, field, (uint64_t)v);
}

void pbenc_bool_opt(struct pbenc *e, uint32_t field, bool v)
{
	if (v)
		pbenc_uint64(e, field, 1);
}

void pbenc_bytes(struct pbenc *e, uint32_t field, const void *p, size_t n)
{
	pbenc_key(e, field, 2);
	pbenc_varint(e, n);
	if (n && reserve(e, n)) {
		memcpy(e->buf + e->len, p, n);
		e->len += n;
	}
}

void pbenc_string(struct pbenc *e, uint32_t field, const char *s)
{
	pbenc_bytes(e, field, s, strlen(s));
}

void pbenc_packed_uint64(struct pbenc *e, uint32_t field, const uint64_t *v, size_t n)
{
	if (!n)
		return;
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += varint_size(v[i]);
	pbenc_key(e, field, 2);
	pbenc_varint(e, total);
	if (!reserve(e, total))
		return;
	for (size_t i = 0; i < n; i++)
		e->len += varint_put(e->buf + e->len, v[i]);
}

void pbenc_packed_int64(struct pbenc *e, uint32_t field, const int64_t *v, size_t n)
{
	if (!n)
		return;
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += varint_size((uint64_t)v[i]);
	pbenc_key(e, field, 2);
	pbenc_varint(e, total);
	if (!reserve(e, total))
		return;
	for (size_t i = 0; i < n; i++)
		e->len += varint_put(e->buf + e->len, (uint64_t)v[i]);
}

size_t pbenc_begin(struct pbenc *e, uint32_t field)
{
	pbenc_key(e, field, 2);
	return e->len;
}

void pbenc_end(struct pbenc *e, size_t mark)
{
	if (e->oom || mark > e->len)
		return;
	size_t n = e->len - mark;
	size_t k = varint_size(n);
	if (!reserve(e, k))
		return;
	/* The content was written first; slide it over to make room for its
	 * length.  Messages here are small, so the copy is cheap. */
	memmove(e->buf + mark + k, e->buf + mark, n);
	varint_put(e->buf + mark, n);
	e->len += k;
}

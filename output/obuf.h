/*
 * obuf: a report's bytes gathered in a buffer of its own before they go
 * to the FILE, for the writers that print a line per stack or a number
 * per frame (tens of millions of small pieces on a large dump).
 *
 * A stdio call costs a lock, a length and a bounds check per piece, and
 * printf("%u") or printf("%.0f") a format parse on top: on the
 * benchmark's 1,000,000-stack dump those calls were most of --speedscope
 * and --traces.  Here a piece is a memcpy into the buffer, and numbers are
 * written digit by digit; the bytes are those printf would write.
 *
 * Header-only.  Whatever the writer prints through the FILE itself goes
 * before obuf_init() or after obuf_flush(); errors show in ferror() of the
 * FILE as before.  A buffer whose sink is set hands its bytes to the sink
 * instead of the FILE (output/parwrite.h: bytes made in a second thread,
 * held until their turn).
 */
#ifndef JHEAP_OBUF_H
#define JHEAP_OBUF_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define OBUF_SIZE 65536

struct obuf {
	FILE *f;
	/* NULL: the bytes go to F; else each flush is handed to it */
	void (*sink)(struct obuf *o, const char *s, size_t len);
	void *ctx;                  /* the sink's */
	size_t n;
	char b[OBUF_SIZE];
};

static inline void obuf_init(struct obuf *o, FILE *f)
{
	o->f = f;
	o->sink = NULL;
	o->ctx = NULL;
	o->n = 0;
}

/* LEN bytes at S past the buffer, to the FILE or the sink. */
static inline void obuf_out(struct obuf *o, const void *s, size_t len)
{
	if (o->sink)
		o->sink(o, s, len);
	else
		fwrite(s, 1, len, o->f);
}

static inline void obuf_flush(struct obuf *o)
{
	if (o->n)
		obuf_out(o, o->b, o->n);
	o->n = 0;
}

static inline void obuf_write(struct obuf *o, const void *s, size_t len)
{
	if (len > OBUF_SIZE - o->n) {
		obuf_flush(o);
		if (len >= OBUF_SIZE) {
			obuf_out(o, s, len);
			return;
		}
	}
	memcpy(o->b + o->n, s, len);
	o->n += len;
}

static inline void obuf_puts(struct obuf *o, const char *s)
{
	obuf_write(o, s, strlen(s));
}

static inline void obuf_putc(struct obuf *o, char c)
{
	if (o->n == OBUF_SIZE)
		obuf_flush(o);
	o->b[o->n++] = c;
}

/* Room for LEN bytes (at most OBUF_SIZE) at the end of the buffer, for
 * a writer that fills them itself and then adds what it used to o->n. */
static inline char *obuf_room(struct obuf *o, size_t len)
{
	if (len > OBUF_SIZE - o->n)
		obuf_flush(o);
	return o->b + o->n;
}

/* printf("%llu", V). */
static inline void obuf_u64(struct obuf *o, uint64_t v)
{
	char d[24], *e = d + sizeof(d), *q = e;
	do
		*--q = (char)('0' + v % 10);
	while (v /= 10);
	obuf_write(o, q, (size_t)(e - q));
}

/* printf("%lld", V). */
static inline void obuf_i64(struct obuf *o, int64_t v)
{
	if (v < 0) {
		obuf_putc(o, '-');
		obuf_u64(o, 0 - (uint64_t)v);
	} else
		obuf_u64(o, (uint64_t)v);
}

/* printf("%.0f", V): integers of up to 2^63 digit by digit (every sum a
 * report prints is bounded by 2^62: profile_check_magnitude), the rest,
 * halves included (printf rounds them to even), through printf. */
static inline void obuf_f0(struct obuf *o, double v)
{
	if (v == trunc(v) && fabs(v) < 0x1p63 && !(v == 0 && signbit(v))) {
		obuf_i64(o, (int64_t)v);
		return;
	}
	char buf[400];
	int n = snprintf(buf, sizeof(buf), "%.0f", v);
	if (n > 0)
		obuf_write(o, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

#endif

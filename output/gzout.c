/* A gzip stream compressed beside its producer (see gzout.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/errors.h"
#include "lib/threads.h"
#include "output/gzout.h"

struct block {
	struct block *next;
	size_t len;
	unsigned char data[];
};

struct gzout {
	FILE *out;
	z_stream z;
	gz_header h;                 /* zlib reads it at the first output */
	bool threaded;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct block *head, *tail;   /* waiting, oldest first */
	size_t pending;
	bool closing;                /* no more blocks will come */
	int rc;                      /* the producer's first failure (memory) */
	int zrc;                     /* the compressor's first failure */
	char err[256], zerr[256];
	unsigned char chunk[65536];
};

/* Deflates LEN bytes at BUF (FLUSH: Z_FINISH for the end) and writes what
 * comes out.  Only one thread compresses at a time: the second, or the
 * caller when there is none. */
static void deflate_some(struct gzout *g, const unsigned char *buf, size_t len, int flush)
{
	size_t pos = 0;
	do {
		size_t take = len - pos > (1u << 30) ? (1u << 30) : len - pos;
		g->z.next_in = (unsigned char *)buf + pos;
		g->z.avail_in = (uInt)take;
		pos += take;
		int f = pos == len ? flush : Z_NO_FLUSH;
		int zr;
		do {
			g->z.next_out = g->chunk;
			g->z.avail_out = sizeof(g->chunk);
			zr = deflate(&g->z, f);
			size_t have = sizeof(g->chunk) - g->z.avail_out;
			if (have && fwrite(g->chunk, 1, have, g->out) != have && !g->zrc) {
				g->zrc = JH_EIO;
				snprintf(g->zerr, sizeof(g->zerr), "cannot write the profile: %s",
					 strerror(errno));
			}
		} while (g->z.avail_out == 0);
		if (f == Z_FINISH && zr != Z_STREAM_END && !g->zrc) {
			g->zrc = JH_EIO;
			snprintf(g->zerr, sizeof(g->zerr), "zlib compression failed");
		}
	} while (pos < len);
}

static void *worker(void *arg)
{
	struct gzout *g = arg;
	pthread_mutex_lock(&g->mu);
	for (;;) {
		while (!g->head && !g->closing)
			pthread_cond_wait(&g->cv, &g->mu);
		struct block *b = g->head;
		if (!b)
			break;
		g->head = b->next;
		if (!g->head)
			g->tail = NULL;
		pthread_mutex_unlock(&g->mu);
		deflate_some(g, b->data, b->len, Z_NO_FLUSH);
		free(b);
		pthread_mutex_lock(&g->mu);
		g->pending--;
		pthread_cond_broadcast(&g->cv);
	}
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

struct gzout *gzout_open(FILE *out, char *err, size_t errlen)
{
	struct gzout *g = calloc(1, sizeof(*g));
	if (!g) {
		jh_err(err, errlen, JH_ENOMEM, "out of memory");
		return NULL;
	}
	g->out = out;
	if (deflateInit2(&g->z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		jh_err(err, errlen, JH_ENOMEM, "cannot start zlib compression");
		return NULL;
	}
	g->h.os = 255;   /* unknown, as Go's gzip writer */
	deflateSetHeader(&g->z, &g->h);
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->cv, NULL);
	g->threaded = jh_threads() > 1 && !pthread_create(&g->th, NULL, worker, g);
	return g;
}

int gzout_write(struct gzout *g, const void *buf, size_t len)
{
	if (!len)
		return g->rc;
	if (!g->threaded) {
		if (!g->zrc)
			deflate_some(g, buf, len, Z_NO_FLUSH);
		return g->zrc;
	}
	struct block *b = malloc(sizeof(*b) + len);
	pthread_mutex_lock(&g->mu);
	if (!b && !g->rc) {
		g->rc = JH_ENOMEM;
		snprintf(g->err, sizeof(g->err), "out of memory");
	}
	while (b && g->pending >= GZOUT_PENDING)
		pthread_cond_wait(&g->cv, &g->mu);
	if (b) {
		b->next = NULL;
		b->len = len;
		memcpy(b->data, buf, len);
		if (g->tail)
			g->tail->next = b;
		else
			g->head = b;
		g->tail = b;
		g->pending++;
		pthread_cond_broadcast(&g->cv);
	}
	int rc = g->rc;
	pthread_mutex_unlock(&g->mu);
	return rc;
}

int gzout_close(struct gzout *g, char *err, size_t errlen)
{
	if (!g)
		return 0;
	if (g->threaded) {
		pthread_mutex_lock(&g->mu);
		g->closing = true;
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
		pthread_join(g->th, NULL);
	}
	/* the second thread is done: its failure is ours to read */
	if (!g->zrc)
		deflate_some(g, (const unsigned char *)"", 0, Z_FINISH);
	deflateEnd(&g->z);
	if (!g->zrc && fflush(g->out)) {
		g->zrc = JH_EIO;
		snprintf(g->zerr, sizeof(g->zerr), "cannot write the profile: %s", strerror(errno));
	}
	int rc = g->rc ? g->rc : g->zrc;
	if (rc)
		jh_err(err, errlen, rc, "%s", g->rc ? g->err : g->zerr);
	pthread_mutex_destroy(&g->mu);
	pthread_cond_destroy(&g->cv);
	free(g);
	return rc;
}

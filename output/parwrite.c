/* A report's bytes made by two threads, written in order (see parwrite.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/errors.h"
#include "lib/threads.h"
#include "output/parwrite.h"

/* Fewer items than this are written by one thread (unless JHEAP_THREADS
 * is set, for the tests). */
#define PARWRITE_SPLIT_MIN 4096
#define PARWRITE_CHUNKS 256

struct pw {
	FILE *out;
	size_t n, per, nchunks;
	parwrite_fn fn;
	void *ctx;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t next;                /* the next chunk to take */
	size_t turn;                /* the chunk whose bytes go out now: every
	                               chunk before it is written (atomic) */
	int rc;                     /* the first failure (atomic) */
};

/* One thread's state. */
struct pw_thread {
	struct pw *pw;
	int who;
	size_t chunk;               /* the chunk being made */
	char *held;                 /* its bytes, until its turn */
	size_t nheld, cap;
	int rc;
	struct obuf o;
};

static bool my_turn(const struct pw_thread *t)
{
	return __atomic_load_n(&t->pw->turn, __ATOMIC_ACQUIRE) == t->chunk;
}

static void write_held(struct pw_thread *t)
{
	if (t->nheld && !__atomic_load_n(&t->pw->rc, __ATOMIC_RELAXED))
		fwrite(t->held, 1, t->nheld, t->pw->out);
	t->nheld = 0;
}

/* The obuf's sink: the bytes go out when it is the chunk's turn, else
 * they are held. */
static void sink(struct obuf *o, const char *s, size_t len)
{
	struct pw_thread *t = o->ctx;
	if (t->rc)
		return;
	if (my_turn(t)) {
		write_held(t);
		if (!__atomic_load_n(&t->pw->rc, __ATOMIC_RELAXED))
			fwrite(s, 1, len, t->pw->out);
		return;
	}
	if (t->nheld + len > t->cap) {
		size_t ncap = t->cap ? t->cap : (size_t)1 << 20;
		while (ncap < t->nheld + len)
			ncap *= 2;
		char *h = realloc(t->held, ncap);
		if (!h) {
			t->rc = JH_ENOMEM;
			return;
		}
		t->held = h;
		t->cap = ncap;
	}
	memcpy(t->held + t->nheld, s, len);
	t->nheld += len;
}

/* Makes chunk C and writes it in its turn; a failure is recorded first,
 * so that no later chunk is written. */
static void one_chunk(struct pw_thread *t, size_t c)
{
	struct pw *pw = t->pw;
	t->chunk = c;
	t->rc = 0;
	size_t from = c * pw->per, to = from + pw->per < pw->n ? from + pw->per : pw->n;
	int rc = pw->fn(pw->ctx, t->who, from, to, &t->o);
	if (rc)
		t->rc = rc;   /* the rest of its bytes go nowhere */
	obuf_flush(&t->o);
	rc = t->rc;
	pthread_mutex_lock(&pw->mu);
	if (rc && !pw->rc)
		__atomic_store_n(&pw->rc, rc, __ATOMIC_RELAXED);
	while (pw->turn != c)
		pthread_cond_wait(&pw->cv, &pw->mu);
	pthread_mutex_unlock(&pw->mu);
	write_held(t);
	pthread_mutex_lock(&pw->mu);
	__atomic_store_n(&pw->turn, c + 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&pw->cv);
	pthread_mutex_unlock(&pw->mu);
}

static void *worker(void *arg)
{
	struct pw_thread *t = arg;
	struct pw *pw = t->pw;
	for (;;) {
		pthread_mutex_lock(&pw->mu);
		size_t c = pw->next < pw->nchunks && !pw->rc ? pw->next++ : SIZE_MAX;
		pthread_mutex_unlock(&pw->mu);
		if (c == SIZE_MAX)
			return NULL;
		one_chunk(t, c);
	}
}

int parwrite(FILE *out, size_t n, size_t per, parwrite_fn fn, void *ctx)
{
	if (!n)
		return 0;
	if (!per)
		per = n / PARWRITE_CHUNKS ? n / PARWRITE_CHUNKS : 1;
	struct pw pw = { .out = out, .n = n, .per = per, .nchunks = (n + per - 1) / per,
			 .fn = fn, .ctx = ctx };
	bool two = (n >= PARWRITE_SPLIT_MIN || jh_threads_forced()) && pw.nchunks > 1 &&
		   jh_threads() > 1;
	struct pw_thread *t = calloc(2, sizeof(*t));
	if (!t)
		return JH_ENOMEM;
	pthread_mutex_init(&pw.mu, NULL);
	pthread_cond_init(&pw.cv, NULL);
	for (int k = 0; k < 2; k++) {
		t[k].pw = &pw;
		t[k].who = k;
		obuf_init(&t[k].o, out);
		t[k].o.sink = sink;
		t[k].o.ctx = &t[k];
	}
	jh_run_two(worker, &t[0], two ? worker : NULL, &t[1], two);
	pthread_mutex_destroy(&pw.mu);
	pthread_cond_destroy(&pw.cv);
	free(t[0].held);
	free(t[1].held);
	free(t);
	return pw.rc;
}

/* demo: a workload that reads like a small server, for `make demo`.
 * Built -O0 -g.  It serves NREQ fake requests: each takes a buffer from a
 * preallocated pool, parses a header, looks the key up in a cache (filling
 * it on a miss) and writes a log line.  One error path in parse_request
 * forgets to free the header: that is the leak to find.  Prints nothing.
 *
 * Requests i = 0..1999 ask for key (7 * i) % 500: 500 misses, 1500 hits.
 * Request i takes the leaking error path when i % 10 == 7 (200 requests).
 *
 * function           call                 count  usable  in-use bytes
 * -----------------  -------------------  -----  ------  ------------
 * xmalloc            malloc(16384)           32   16384        524288
 *   (called only by pool_init: pool_init's flat is 0, its cum 524288)
 * cache_init         calloc(1024, 8)          1    8192          8192
 * cache_new_entry    malloc(48)             500      48         24000
 * cache_store_value  malloc(4000)           500    4096       2048000
 * parse_request      malloc(300), leaked    200     320         64000
 * log_request        malloc(1000), freed      0    1024             0
 * -----------------  -------------------  -----  ------  ------------
 * total in use (main's cum)                1233               2668480
 *
 * Call tree: main -> pool_init -> xmalloc; main -> cache_init, server_run;
 * server_run -> handle_request -> parse_request, cache_get, log_request;
 * cache_get -> cache_insert -> cache_new_entry, cache_store_value.
 * So cache_insert's cum = 2072000 and handle_request's cum = 2136000.
 *
 * With prof_accum:true: parse_request 2000 objects / 640000 bytes,
 * log_request 2000 objects / 2048000 bytes; in all 5033 objects and
 * 5292480 bytes.
 *
 * "demo wait" (for `make demo`'s jheap record and jheap dump) then writes
 * "served" on standard output and keeps running until its standard input
 * ends, with system calls only, so the table above stays exact.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define NREQ 2000
#define NKEYS 500
#define POOL_SIZE 32
#define NBUCKETS 1024

struct entry {
	struct entry *next;
	int key;
	int hits;
	size_t len;
	char *value;
	long stamp;
	long pad;
};				/* 48 bytes */

struct request_header {
	int id;
	int key;
	char text[292];
};				/* 300 bytes */

static char *pool[POOL_SIZE];
static int pool_next;
struct entry **buckets;

static void *xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	return p;
}

NOINLINE void pool_init(void)
{
	for (int i = 0; i < POOL_SIZE; i++)
		pool[i] = xmalloc(16384);
}

NOINLINE char *pool_get(void)
{
	char *b = pool[pool_next];

	pool_next = (pool_next + 1) % POOL_SIZE;
	return b;
}

NOINLINE void cache_init(void)
{
	buckets = calloc(NBUCKETS, sizeof *buckets);
	if (!buckets)
		abort();
}

NOINLINE struct entry *cache_new_entry(int key)
{
	struct entry *e = malloc(sizeof *e);

	if (!e)
		abort();
	memset(e, 0, sizeof *e);
	e->key = key;
	return e;
}

NOINLINE void cache_store_value(struct entry *e, const char *data)
{
	e->len = 4000;
	e->value = malloc(e->len);
	if (!e->value)
		abort();
	memset(e->value, data[0], e->len);
}

NOINLINE struct entry *cache_insert(int key, const char *data)
{
	struct entry *e = cache_new_entry(key);

	cache_store_value(e, data);
	e->next = buckets[key % NBUCKETS];
	buckets[key % NBUCKETS] = e;
	return e;
}

NOINLINE struct entry *cache_get(int key, const char *data)
{
	for (struct entry *e = buckets[key % NBUCKETS]; e; e = e->next)
		if (e->key == key) {
			e->hits++;
			return e;
		}
	return cache_insert(key, data);
}

/* Returns the parsed header, or NULL on a "malformed" request; the error
 * path forgets to free the header (the leak). */
NOINLINE struct request_header *parse_request(const char *buf, int id)
{
	struct request_header *h = malloc(sizeof *h);

	if (!h)
		abort();
	h->id = id;
	h->key = (7 * id) % NKEYS;
	memcpy(h->text, buf, sizeof h->text);
	if (id % 10 == 7)
		return NULL;	/* BUG: h leaks */
	return h;
}

NOINLINE void log_request(int id, int key)
{
	char *line = malloc(1000);

	if (!line)
		abort();
	memset(line, ' ', 1000);
	line[0] = (char)(id + key);
	free(line);
}

NOINLINE void handle_request(int id)
{
	char *buf = pool_get();
	struct request_header *h;
	int key = (7 * id) % NKEYS;

	memset(buf, 'a' + id % 26, 16384);
	h = parse_request(buf, id);
	cache_get(key, buf);
	log_request(id, key);
	free(h);
}

NOINLINE void server_run(int nreq)
{
	for (int i = 0; i < nreq; i++)
		handle_request(i);
}

int main(int argc, char **argv)
{
	pool_init();
	cache_init();
	server_run(NREQ);
	if (argc > 1 && !strcmp(argv[1], "wait")) {
		char buf[64];
		if (write(STDOUT_FILENO, "served\n", 7) != 7)
			return 1;
		while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
			;
	}
	return 0;
}

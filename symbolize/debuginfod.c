#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/dynlib.h"
#include "symbolize/debuginfod.h"

#define DEFAULT_BUDGET 30.0

/* The few entry points of libdebuginfod.so.1 used here (elfutils'
 * debuginfod.h). */
typedef struct debuginfod_client debuginfod_client;
typedef int (*progress_fn)(debuginfod_client *c, long a, long b);
static struct {
	debuginfod_client *(*begin)(void);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *bid, int len, char **path);
	void (*set_progressfn)(debuginfod_client *c, progress_fn fn);
	void (*end)(debuginfod_client *c);
} lib;

/* One lookup at a time (a client is not thread-safe); everything below
 * is read and written under the lock. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool loaded, usable;
static double budget, spent;      /* seconds */
static bool exhausted;
static size_t skipped;
static struct timespec started;   /* of the lookup under way */

static double now_since(const struct timespec *t)
{
	struct timespec n;
	clock_gettime(CLOCK_MONOTONIC, &n);
	return (double)(n.tv_sec - t->tv_sec) + (n.tv_nsec - t->tv_nsec) / 1e9;
}

static void load(void)
{
	loaded = true;
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !*urls)
		return;
	const char *b = getenv("JHEAP_DEBUGINFOD_BUDGET");
	char *end;
	budget = b && *b ? strtod(b, &end) : DEFAULT_BUDGET;
	if (!(budget >= 0) || !isfinite(budget) || (b && *b && *end))
		budget = DEFAULT_BUDGET;
	static const struct dynlib_fn fns[] = {
		DYNLIB_FN(lib.begin, "debuginfod_begin"),
		DYNLIB_FN(lib.find_debuginfo, "debuginfod_find_debuginfo"),
		DYNLIB_FN(lib.set_progressfn, "debuginfod_set_progressfn"),
		DYNLIB_FN(lib.end, "debuginfod_end"),
	};
	char why[512];
	usable = !dynlib_load("libdebuginfod.so.1", fns, sizeof(fns) / sizeof(*fns), why, sizeof(why));
}

/* Called about once a second while a lookup waits or downloads: a
 * nonzero return cancels it. */
static int progress(debuginfod_client *c, long a, long b)
{
	(void)c, (void)a, (void)b;
	if (spent + now_since(&started) < budget)
		return 0;
	exhausted = true;
	return 1;
}

int debuginfod_find(const unsigned char *bid, size_t len, char **path)
{
	int fd = -1;
	*path = NULL;
	if (!len || len > 64)
		return -1;
	pthread_mutex_lock(&lock);
	if (!loaded)
		load();
	if (!usable) {
		pthread_mutex_unlock(&lock);
		return -1;
	}
	if (exhausted || spent >= budget) {
		exhausted = true;
		skipped++;
		pthread_mutex_unlock(&lock);
		return -1;
	}
	debuginfod_client *c = lib.begin();
	if (c) {
		lib.set_progressfn(c, progress);
		clock_gettime(CLOCK_MONOTONIC, &started);
		char *got = NULL;
		fd = lib.find_debuginfo(c, bid, (int)len, &got);
		spent += now_since(&started);
		lib.end(c);
		if (exhausted && fd < 0)
			skipped++;
		struct stat st;
		if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0) {
			fcntl(fd, F_SETFD, FD_CLOEXEC);
			*path = got;
			got = NULL;
		}
		free(got);
	}
	pthread_mutex_unlock(&lock);
	return fd < 0 ? -1 : fd;
}

bool debuginfod_budget_spent(size_t *nskipped, double *nbudget)
{
	pthread_mutex_lock(&lock);
	bool r = exhausted;
	*nskipped = skipped;
	*nbudget = budget;
	pthread_mutex_unlock(&lock);
	return r;
}

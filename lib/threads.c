#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/threads.h"

int jh_threads(void)
{
	const char *force = getenv("JHEAP_THREADS");
	if (force && *force)
		return atoi(force) >= 2 ? 2 : 1;
	return sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
}

bool jh_threads_forced(void)
{
	const char *force = getenv("JHEAP_THREADS");
	return force && *force;
}

void jh_run_two(void *(*first)(void *), void *a, void *(*second)(void *), void *b, bool two)
{
	pthread_t th;
	bool started = second && two && !pthread_create(&th, NULL, second, b);
	first(a);
	if (started)
		pthread_join(th, NULL);
	else if (second)
		second(b);
}

/*
 * threads: the thread policy, in one place.
 */
#ifndef JHEAP_THREADS_H
#define JHEAP_THREADS_H

#include <stdlib.h>
#include <unistd.h>

/* How many threads a stage should use: 2 on a machine with two cores or
 * more, else 1; JHEAP_THREADS=1 or 2 overrides it (the tests compare
 * both). */
static inline int jh_threads(void)
{
	const char *force = getenv("JHEAP_THREADS");
	if (force && *force)
		return atoi(force) >= 2 ? 2 : 1;
	return sysconf(_SC_NPROCESSORS_ONLN) > 1 ? 2 : 1;
}

#endif

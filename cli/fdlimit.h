/*
 * fdlimit: room for one open file per object file of a large program.
 *
 * Symbolizing keeps each object file (and its separate debug file) open
 * for the run, in each of its two threads: a dump of a program with 1,500
 * shared objects needs more descriptors than the usual soft limit of
 * 1,024.  The soft limit is raised to the hard one at start; what still
 * cannot be opened is reported, and the run then ends with status 1.
 */
#ifndef JHEAP_FDLIMIT_H
#define JHEAP_FDLIMIT_H

/* Raises the soft RLIMIT_NOFILE to the hard limit (best effort). */
void fdlimit_raise(void);

#endif

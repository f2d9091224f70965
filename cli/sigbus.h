/*
 * sigbus: a file truncated under jheap is an error, not a crash.
 *
 * jheap maps the dumps it reads (analyzer/readfile.c) and libelf maps the
 * object files.  When such a file is truncated while it is mapped, the
 * next read of a page past its new end raises SIGBUS, which would kill
 * jheap.  The handler installed here says which file it was (or that a
 * mapped object file was) and exits with status 1.
 */
#ifndef JHEAP_SIGBUS_H
#define JHEAP_SIGBUS_H

/* Installs the handler (best effort). */
void sigbus_install(void);

#endif

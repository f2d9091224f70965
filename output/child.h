/*
 * child: running a helper program (graphviz's dot, binutils' objdump)
 * safely.
 *
 * The program is run with execvp and an argument vector, never through a
 * shell; callers put "--" before any path.  Its standard input is a
 * buffer (or /dev/null), its standard output is copied to a FILE or
 * kept in memory, the start of its standard error is kept for messages.
 * Poll keeps the three pipes moving, so a large input or output cannot
 * deadlock.  It is stopped (SIGKILL) when it runs longer than a timeout
 * or writes more than a size cap: a dot that sleeps or an objdump that
 * prints forever cannot hold jheap or its memory.  Only descriptors 0, 1
 * and 2 reach it: everything jheap opens is close-on-exec, and the child
 * closes the rest (what libraries opened, what jheap inherited) before
 * it runs the program.
 *
 * The limits are generous; JHEAP_CHILD_TIMEOUT (seconds) and
 * JHEAP_CHILD_MAX_OUTPUT (bytes) replace them (the tests use small ones).
 */
#ifndef JHEAP_CHILD_H
#define JHEAP_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct child {
	/* in */
	const char *const *argv;   /* argv[0] is looked up in PATH */
	const char *in;            /* standard input, NULL: /dev/null */
	size_t inlen;
	FILE *out;                 /* standard output copied here; NULL: kept in buf */
	double timeout;            /* seconds; 0: 300 */
	size_t max_out;            /* bytes; 0: 1 GiB */
	/* out */
	char *buf;                 /* the output when out is NULL: malloc'd, NUL-terminated */
	size_t len;
	int status;                /* as waitpid() gives it */
	int exec_errno;            /* the program could not be run: why (ENOENT: not found) */
	bool timed_out;            /* stopped after the timeout */
	bool too_much;             /* stopped after max_out bytes of output */
	bool input_closed;         /* it stopped reading its input early */
	char msg[4096];            /* the start of its standard error, NUL-terminated */
	size_t nmsg;
};

/* Runs C->argv.  Returns 0 when it ran, whatever its status (see the out
 * fields), or a negative JH_ code with a message (pipe or fork failed,
 * out of memory, cannot write to C->out).  Free C->buf afterwards. */
int child_run(struct child *c, char *err, size_t errlen);

/* A message for a child that ran but did not succeed (timed out, too much
 * output, killed, a nonzero exit status), starting with NAME ("graphviz
 * 'dot -Tsvg'"); returns JH_EIO, or 0 when it succeeded. */
int child_failure(const struct child *c, const char *name, char *err, size_t errlen);

#endif

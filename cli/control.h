/*
 * control: jheap's side of a process's control socket, the one that
 * preload/jheapctl.c (libjheapctl.so) listens on inside a running program.
 * Used by `jheap dump` and `jheap ctl` (cli/dump.c).
 */
#ifndef JHEAP_CONTROL_H
#define JHEAP_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

/* Sends COMMAND ("status", "dump", "on", "off", "reset", "sample LG") to
 * process PID and waits at most TIMEOUT seconds for the answer.
 * Returns 0 with the answer in REPLY (the text after "ok " on its first
 * line, then any "name: value" lines), or a negative code with a message
 * in ERR that names the process and says what to do: no such process, no
 * control library in it, a socket of another user, no answer in time, the
 * process ended before answering, or the error the process answered. */
int control_request(pid_t pid, const char *command, double timeout,
		    char *reply, size_t replylen, char *err, size_t errlen);

/* Parses a process id: digits only, 1 to INT_MAX.  Returns 0 or -1. */
int control_parse_pid(const char *s, pid_t *pid);

#endif

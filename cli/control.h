/*
 * control: jheap's side of a process's control socket, the one that
 * preload/jheapctl.c (libjheapctl.so) listens on inside a running program.
 * Used by `jheap dump` and `jheap ctl` (cli/dump.c).
 */
#ifndef JHEAP_CONTROL_H
#define JHEAP_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

/* control_request()'s code when the process does not have the control
 * library loaded (its maps say so): another way may be tried then.  Not
 * one of lib/errors.h's codes. */
#define CONTROL_ENOLIB (-64)

/* Sends COMMAND ("status", "dump", "on", "off", "reset", "sample LG") to
 * process PID and waits at most TIMEOUT seconds for the answer.
 * Returns 0 with the answer in REPLY (the text after "ok " on its first
 * line, then any "name: value" lines), or a negative code with a message
 * in ERR that names the process and says what to do: no such process, no
 * control library in it (CONTROL_ENOLIB), a socket of another user or one
 * that answers for another process, no answer in time, the process ended
 * before answering, or the error the process answered.  The answer is
 * the process's text, trusted in nothing: check what it names, escape it
 * before printing it. */
int control_request(pid_t pid, const char *command, double timeout,
		    char *reply, size_t replylen, char *err, size_t errlen);

/* Checks the dump path REPLY that process PID answered to "dump" and
 * opens it: an absolute plain path (no control character, no "." or ".."
 * component) named BASE.PID.SEQ.mN.heap, in the folder of the
 * prof_prefix its environment names (when it names one), a regular file
 * of the process's (effective) user with one link, opened without
 * following a link.  PATH gets what to read it by: REPLY itself when no
 * one but the caller and root can change what it names, else
 * /proc/self/fd/N of the descriptor checked here (left open, close-on-
 * exec, for the rest of the run).  Returns 0, or a negative code with a
 * message (escaped) saying why the answer is not used. */
int control_open_dump(pid_t pid, const char *reply, char *path, size_t pathlen,
		      char *err, size_t errlen);

/* Parses a process id: digits only, 1 to INT_MAX.  Returns 0 or -1. */
int control_parse_pid(const char *s, pid_t *pid);

#endif

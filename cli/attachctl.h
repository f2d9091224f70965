/*
 * attachctl: `jheap dump PID` and `jheap ctl PID ...` for every process:
 * through its control library when it has one (cli/control.h), else by
 * attaching with ptrace and calling its jemalloc's mallctl (cli/attach.h),
 * as one would with gdb.  Used by cli/dump.c.
 *
 * The attaching is done by a child process of jheap, so that a thread
 * that never stopped is let go when that child ends, and so that jheap
 * never waits past --timeout: a child still inside mallctl when time is
 * up is left to finish (killing it then would kill the process), and
 * jheap says so.  The child ignores SIGINT, SIGTERM and SIGHUP for the
 * same reason: it always gives the thread back.
 */
#ifndef JHEAP_ATTACHCTL_H
#define JHEAP_ATTACHCTL_H

#include <stddef.h>
#include <sys/types.h>

/* As control_request() (the same COMMANDs and replies), for a process
 * with or without the control library: control_request() first, and
 * attaching when it says CONTROL_ENOLIB, or when it found no socket and
 * the process's maps cannot be read (another user's: attaching's
 * message says whose, and what to do).  When
 * jheap attached, NOTE gets one line for the user, escaped (which thread
 * was held and for how long, and anything the program may have
 * noticed), and "dump" answers the path of a dump in jheap's own
 * checked folder; else NOTE is "" and the answer is the process's, to
 * be checked (control_open_dump()). */
int attachctl_request(pid_t pid, const char *command, double timeout, char *reply, size_t replylen,
		      char *note, size_t notelen, char *err, size_t errlen);

/* The same by attaching only (never the control library). */
int attachctl_attach(pid_t pid, const char *command, double timeout, char *reply, size_t replylen,
		     char *note, size_t notelen, char *err, size_t errlen);

#endif

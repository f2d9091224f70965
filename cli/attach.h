/*
 * attach: calling jemalloc's mallctl inside a running process that has no
 * control library, with ptrace, as "gdb -p PID" and
 * "call mallctl(...)" would, without gdb.  Used by cli/attachctl.c.
 *
 * What it does to the process (x86-64 only):
 *   1. Nothing until mallctl is found (symbolize/procmods.h: the maps and
 *      the objects' symbol tables are read from the outside).
 *   2. It picks one thread and stops only that one (PTRACE_SEIZE,
 *      PTRACE_INTERRUPT); the others run on.  Threads running user code
 *      or waiting in a system call that the kernel restarts unseen
 *      (futex, read, poll, wait4, ...) are tried first; a thread waiting
 *      in epoll_wait (which returns EINTR after any stop, as after gdb or
 *      SIGSTOP) only when no other will do; never a thread in
 *      uninterruptible sleep, nor one whose stack holds a frame of the
 *      allocator (its locks and thread cache are in use there), nor one
 *      with less than 64 KiB of stack left.
 *   3. On that thread it saves the registers (general and the whole
 *      x87/SSE/AVX state), writes the call's arguments and strings into
 *      its stack below the 128-byte red zone (saving what was there),
 *      sets orig_rax to -1 so that an interrupted system call is not
 *      restarted into the call, and runs mallctl with a return address
 *      of 0: its return faults at address 0, which jheap catches (the
 *      process never sees that SIGSEGV).  Signals that arrive meanwhile
 *      are held back and delivered when the thread is given back.
 *   4. It restores the stack bytes and registers (a system call that was
 *      interrupted restarts as the kernel would restart it) and detaches.
 * The thread is held for the duration of the calls only: a few
 * milliseconds, the dump's writing included for a modest heap.
 *
 * Nothing here forks or prints; every function returns 0 or a negative
 * JH_ code with a message that says why and what to do.
 */
#ifndef JHEAP_ATTACH_H
#define JHEAP_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct attach;
struct procmods_fn;

/* What decides whether the kernel lets jheap attach, for
 * attach_refusal(). */
struct attach_perm {
	int yama;                 /* kernel.yama.ptrace_scope, -1 without Yama */
	bool cap_ptrace;          /* jheap has CAP_SYS_PTRACE */
	uid_t uid;                /* jheap's user */
	uid_t target_uid[3];      /* the process's real, effective, saved user */
	bool dumpable;            /* the process's /proc files are its own */
	pid_t pid;
	const char *user, *target_user;   /* names, may be NULL */
};

/* The message for a refused attach under P (ptrace said EPERM, or the
 * process's maps could not be read): the likeliest reason and what to do,
 * into BUF.  Returns BUF. */
char *attach_refusal(const struct attach_perm *p, char *buf, size_t len);

/* Fills P for process PID from /proc and jheap's own credentials. */
void attach_perm_read(pid_t pid, struct attach_perm *p);

/* Looks at process PID from the outside (its state, its user, its maps,
 * its objects) and finds mallctl.  The process is not touched.  Returns 0
 * with *OUT, or a message: no such process, a zombie, stopped, traced by
 * another program, another user's, no jemalloc in it, not x86-64. */
int attach_open(pid_t pid, struct attach **out, char *err, size_t errlen);

/* mallctl as found. */
const struct procmods_fn *attach_fn(const struct attach *a);

/* Picks a thread and stops it, trying until DEADLINE (CLOCK_MONOTONIC
 * seconds).  Returns 0, or a message saying why no thread could be used
 * (each thread's reason), or that attaching is not permitted. */
int attach_stop(struct attach *a, double deadline, char *err, size_t errlen);

/* Copies LEN bytes into the stopped thread's scratch area (its stack);
 * *REMOTE is their address there.  At most 6 KiB in all between
 * attach_stop and attach_resume. */
int attach_put(struct attach *a, const void *data, size_t len, uint64_t *remote, char *err,
	       size_t errlen);

/* Calls mallctl(NAME, OLDP, OLDLENP, NEWP, NEWLEN) on the stopped thread:
 * *OLDLENP bytes (at most 64) are read back into OLDP, NEWLEN bytes (at
 * most 64) of NEWP are copied in.  *RESULT is mallctl's return value.
 * Returns 0, or a message when the call could not be made or did not
 * return (the process exited meanwhile, or mallctl faulted). */
int attach_mallctl(struct attach *a, const char *name, void *oldp, size_t *oldlenp,
		   const void *newp, size_t newlen, int *result, char *err, size_t errlen);

/* Reads at most LEN-1 bytes of the NUL-terminated string at ADDR in the
 * process into BUF (NUL-terminated).  Returns 0 or -1. */
int attach_read_string(struct attach *a, uint64_t addr, char *buf, size_t len);

/* Restores the stopped thread and lets it go.  Returns 0, or a message
 * when the thread could not be restored (it exited).  Idempotent. */
int attach_resume(struct attach *a, char *err, size_t errlen);

/* The thread used, how long it was held (milliseconds, from its stop to
 * its release), the calls made, and anything the program may have
 * noticed ("" when nothing: it waited in epoll_wait, which returned
 * EINTR), valid after attach_resume. */
pid_t attach_tid(const struct attach *a);
double attach_held_ms(const struct attach *a);
const char *attach_notice(const struct attach *a);

/* A marker callback: called with true just before the thread is first
 * made to run mallctl and with false once it is restored: in between,
 * ending jheap would leave the thread to run into address 0, which kills
 * the process. */
void attach_on_phase(struct attach *a, void (*fn)(void *arg, bool in_call), void *arg);

/* Resumes the thread if still stopped, then frees A; NULL is a no-op. */
void attach_free(struct attach *a);

#endif

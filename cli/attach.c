/*
 * attach.c: the ptrace session of cli/attach.h (see there for what it does
 * to the process); attachperm.c explains a refusal.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/attach.h"
#include "symbolize/procmods.h"
#include "lib/errors.h"
#include "lib/safefile.h"

#define SCRATCH 8192          /* bytes of stack the calls use for data */
#define RED_ZONE 128          /* the x86-64 ABI's: never touched */
#define STACK_NEEDED (64 * 1024)  /* free stack below the scratch area */
#define HDR_NAME 0            /* scratch layout: the name, */
#define HDR_OLDLEN 128        /* *oldlenp, */
#define HDR_OLD 136           /* the old value, */
#define HDR_NEW 200           /* the new value, */
#define HDR_END 272           /* then what attach_put places */
#define MAX_THREADS 4096
#define MAX_SIGNALS 32

#ifdef __x86_64__
struct saved {
	struct user_regs_struct regs;
	unsigned char xstate[16384];
	struct iovec xiov;
	int xtype;                /* NT_X86_XSTATE, NT_PRFPREG or 0 */
};
#else
struct saved {
	int unused;
};
#endif

struct attach {
	pid_t pid;
	char label[96];           /* "process 1234 (name)" */
	struct procmods *pm;
	struct procmods_fn fn;
	/* the thread in use */
	pid_t tid;
	bool stopped;             /* held by us (registers may be changed) */
	bool changed;             /* its registers or stack were changed */
	bool in_call;             /* from the first call until it is restored */
	struct saved saved;
	uint64_t top, base, sp;   /* scratch: [sp, top) saved in stack_copy */
	unsigned char stack_copy[SCRATCH + 64];
	size_t put_used;
	double t_stop, held_ms;
	int calls;
	/* signals that arrived during a call: the first with its siginfo */
	siginfo_t first_info;
	bool have_first;
	int more[MAX_SIGNALS];
	int nmore;
	bool restart_lost;        /* an interrupted sleep's restart data was reused */
	char notice[256];
	pid_t stuck[16];          /* seized threads that never stopped */
	int nstuck;
	void (*phase)(void *, bool);
	void *phase_arg;
};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void pause_us(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, NULL);
}

/* The value after "KEY:\t" in /proc/PID/status text S, or NULL. */
static const char *status_field(const char *s, const char *key)
{
	size_t n = strlen(key);
	for (const char *p = s; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, n) && p[n] == ':')
			return p + n + 1 + strspn(p + n + 1, " \t");
	return NULL;
}

/* ---- memory of the process ---- */

static ssize_t mem_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct attach *a = arg;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(a->pid, &local, 1, &remote, 1, 0);
	if (n >= 0 || !a->stopped || (errno != ENOSYS && errno != EPERM))
		return n;
	/* without process_vm_readv: word by word from the stopped thread */
	size_t done = 0;
	while (done < len) {
		uint64_t at = (addr + done) & ~(uint64_t)7;
		errno = 0;
		long w = ptrace(PTRACE_PEEKDATA, a->tid, (void *)(uintptr_t)at, NULL);
		if (errno)
			break;
		size_t skip = (size_t)(addr + done - at), k = 8 - skip;
		if (k > len - done)
			k = len - done;
		memcpy((char *)buf + done, (char *)&w + skip, k);
		done += k;
	}
	return done ? (ssize_t)done : -1;
}

static int mem_write(struct attach *a, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };
	if (process_vm_writev(a->pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
		return 0;
	size_t done = 0;
	while (done < len) {
		uint64_t at = (addr + done) & ~(uint64_t)7;
		size_t skip = (size_t)(addr + done - at), k = 8 - skip;
		if (k > len - done)
			k = len - done;
		long w = 0;
		if (skip || k < 8) {
			errno = 0;
			w = ptrace(PTRACE_PEEKDATA, a->tid, (void *)(uintptr_t)at, NULL);
			if (errno)
				return -1;
		}
		memcpy((char *)&w + skip, (const char *)buf + done, k);
		if (ptrace(PTRACE_POKEDATA, a->tid, (void *)(uintptr_t)at, (void *)w))
			return -1;
		done += k;
	}
	return 0;
}

int attach_read_string(struct attach *a, uint64_t addr, char *buf, size_t len)
{
	if (!len)
		return -1;
	size_t n = 0;
	buf[0] = '\0';
	while (n + 1 < len) {
		/* up to the end of the page, so as not to fail on the next one */
		size_t k = 4096 - (size_t)((addr + n) & 4095);
		if (k > len - 1 - n)
			k = len - 1 - n;
		ssize_t got = mem_read(a, addr + n, buf + n, k);
		if (got <= 0)
			return -1;
		void *z = memchr(buf + n, 0, (size_t)got);
		if (z)
			return 0;
		n += (size_t)got;
		buf[n] = '\0';
	}
	return 0;
}

/* ---- looking at the process before touching it ---- */

int attach_open(pid_t pid, struct attach **out, char *err, size_t errlen)
{
	char path[64], st[4096], comm[64] = "";
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (safefile_read_small(path, st, sizeof(st)) <= 0)
		return jh_err(err, errlen, JH_EIO, "no process %d", (int)pid);
	const char *name = status_field(st, "Name");
	if (name)
		snprintf(comm, sizeof(comm), "%.*s", (int)strcspn(name, "\n"), name);
	char label[96];
	snprintf(label, sizeof(label), "process %d (%s)", (int)pid, comm);
	const char *tgid = status_field(st, "Tgid"), *state = status_field(st, "State"),
		   *tracer = status_field(st, "TracerPid");
	if (tgid && atoi(tgid) != (int)pid)
		return jh_err(err, errlen, JH_EUSAGE, "%d is a thread of process %d, not a process: jheap dump %d",
			      (int)pid, atoi(tgid), atoi(tgid));
	if (state && (*state == 'Z' || *state == 'X'))
		return jh_err(err, errlen, JH_EIO, "%s has exited (a zombie its parent has not collected)", label);
	if (tracer && atoi(tracer) > 0) {
		char tp[64], tn[64] = "?";
		snprintf(tp, sizeof(tp), "/proc/%d/comm", atoi(tracer));
		if (safefile_read_small(tp, tn, sizeof(tn)) > 0)
			tn[strcspn(tn, "\n")] = '\0';
		return jh_err(err, errlen, JH_EIO, "%s is being traced by process %d (%s), a debugger or tracer: a process has one tracer at a time; detach it first",
			      label, atoi(tracer), tn);
	}
	if (state && (*state == 'T' || *state == 't'))
		return jh_err(err, errlen, JH_EIO, "%s is stopped (state %c): jheap runs no code in a stopped process, whose threads may hold the allocator's locks; continue it first (kill -CONT %d)",
			      label, *state, (int)pid);
#ifndef __x86_64__
	return jh_err(err, errlen, JH_EUSAGE, "%s has no control library, and jheap attaches to such a process only on x86-64: start it with 'jheap record -- PROGRAM' (or LD_PRELOAD naming libjheapctl.so)",
		      label);
#else
	struct attach *a = calloc(1, sizeof(*a));
	if (!a)
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	a->pid = pid;
	snprintf(a->label, sizeof(a->label), "%s", label);
	char why[1024];
	int rc = procmods_open(pid, &a->pm, why, sizeof(why));
	if (rc) {
		int e = errno;
		if (rc == JH_EIO && (e == EACCES || e == EPERM)) {
			struct attach_perm p;
			attach_perm_read(pid, &p);
			attach_refusal(&p, why, sizeof(why));
			rc = jh_err(err, errlen, JH_EIO, "cannot look into %s: %s", label, why);
		} else {
			rc = jh_err(err, errlen, rc, "%s: %s", label, why);
		}
		attach_free(a);
		return rc;
	}
	rc = procmods_find_mallctl(a->pm, &a->fn, why, sizeof(why));
	if (rc) {
		rc = jh_err(err, errlen, JH_EIO, "%s has no control library and no jemalloc to ask: %s; jheap dumps only jemalloc's heap profiles (a program on glibc's malloc can be started with 'jheap record -- PROGRAM', which preloads jemalloc)",
			    label, why);
		attach_free(a);
		return rc;
	}
	if (a->fn.machine != EM_X86_64 || a->fn.elfclass != ELFCLASS64) {
		rc = jh_err(err, errlen, JH_EUSAGE, "%s is not an x86-64 process (%s in %s is %s): jheap attaches to x86-64 processes only; start it with 'jheap record -- PROGRAM'",
			    label, a->fn.name, a->fn.module, a->fn.elfclass == ELFCLASS32 ? "32-bit" : "for another machine");
		attach_free(a);
		return rc;
	}
	/* a CET shadow stack would fault at mallctl's return, which jheap's
	 * call does not push there */
	const char *feat = status_field(st, "x86_Thread_features");
	char line[128] = "";
	if (feat)
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(feat, "\n"), feat);
	if (strstr(line, "shstk")) {
		rc = jh_err(err, errlen, JH_EIO, "%s runs with a CET shadow stack (x86_Thread_features: shstk), which jheap's call into it cannot follow: start it with 'jheap record -- PROGRAM'",
			    label);
		attach_free(a);
		return rc;
	}
	uint64_t s, e;
	const char *mp;
	if (!procmods_mapping(a->pm, 0, &s, &e, &mp)) {
		rc = jh_err(err, errlen, JH_EIO, "%s maps address 0, where jheap makes mallctl return to: not attaching", label);
		attach_free(a);
		return rc;
	}
	*out = a;
	return 0;
#endif
}

const struct procmods_fn *attach_fn(const struct attach *a)
{
	return &a->fn;
}

void attach_on_phase(struct attach *a, void (*fn)(void *arg, bool in_call), void *arg)
{
	a->phase = fn;
	a->phase_arg = arg;
}

pid_t attach_tid(const struct attach *a)
{
	return a->tid;
}

double attach_held_ms(const struct attach *a)
{
	return a->held_ms;
}

const char *attach_notice(const struct attach *a)
{
	return a->notice;
}

#ifdef __x86_64__

/* ---- choosing a thread ---- */

/* System calls that return EINTR to the program after any stop, even
 * with no signal handler (signal(7)): used last. */
static const struct { long nr; const char *name; } eintr_calls[] = {
	{ 232, "epoll_wait" }, { 281, "epoll_pwait" }, { 441, "epoll_pwait2" },
	{ 128, "rt_sigtimedwait" }, { 208, "io_getevents" }, { 333, "io_pgetevents" },
	{ 65, "semop" }, { 220, "semtimedop" }, { 426, "io_uring_enter" },
	{ 243, "mq_timedreceive" },
};

static const char *eintr_name(long nr)
{
	for (size_t i = 0; i < sizeof(eintr_calls) / sizeof(eintr_calls[0]); i++)
		if (eintr_calls[i].nr == nr)
			return eintr_calls[i].name;
	return NULL;
}

struct cand {
	pid_t tid;
	int tier;                 /* 0 a restartable wait, 1 user code, 2 last resort */
	char why[192];            /* why it was not used */
};

/* Thread TID's tier from its state and system call, or -1 with WHY. */
static int tier_of(pid_t pid, pid_t tid, char *why, size_t len)
{
	char path[96], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (safefile_read_small(path, buf, sizeof(buf)) <= 0) {
		snprintf(why, len, "it ended");
		return -1;
	}
	const char *p = strrchr(buf, ')');
	char state = p && p[1] == ' ' ? p[2] : '?';
	if (state == 'D') {
		snprintf(why, len, "it was in uninterruptible sleep (state D)");
		return -1;
	}
	if (state == 'T' || state == 't' || state == 'Z' || state == 'X') {
		snprintf(why, len, "it was stopped or exiting (state %c)", state);
		return -1;
	}
	/* a sleeping thread first: it is likelier to be outside the
	 * allocator, and a woken sleeper gets the CPU sooner than a thread
	 * that has used its share, so each call returns sooner */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)pid, (int)tid);
	if (safefile_read_small(path, buf, sizeof(buf)) <= 0 || !strncmp(buf, "running", 7))
		return 1;
	long nr = strtol(buf, NULL, 10);
	const char *n = eintr_name(nr);
	if (n) {
		snprintf(why, len, "it waited in %s, which would return EINTR to the program", n);
		return 2;
	}
	return nr >= 0 ? 0 : 1;
}

static int list_threads(pid_t pid, struct cand *c, int max)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *e;
	while (n < max && (e = readdir(d))) {
		int tid = atoi(e->d_name);
		if (tid > 0) {
			c[n].tid = tid;
			c[n].why[0] = '\0';
			c[n].tier = tier_of(pid, tid, c[n].why, sizeof(c[n].why));
			n++;
		}
	}
	closedir(d);
	return n;
}

enum try_result { TRY_OK, TRY_SKIP, TRY_FATAL };

/* Whether the stopped thread TID is inside a restartable sequence (rseq)
 * critical section at IP.  The kernel moves such a thread to the
 * section's abort handler when it next returns to user space, but only
 * while the thread's rseq_cs names the section, and the kernel clears it
 * when the thread returns to mallctl instead: given back, the section
 * would run on unaborted, perhaps on another CPU.  Such a thread is left
 * for a later look. */
static bool in_rseq(struct attach *a, pid_t tid, uint64_t ip)
{
	struct __ptrace_rseq_configuration conf;
	memset(&conf, 0, sizeof(conf));
	if (ptrace(PTRACE_GET_RSEQ_CONFIGURATION, tid, (void *)sizeof(conf), &conf) <= 0 ||
	    !conf.rseq_abi_pointer)
		return false;   /* no rseq, or a kernel too old to say (before 5.13) */
	uint64_t cs = 0, desc[4];   /* struct rseq's rseq_cs, at offset 8 */
	if (mem_read(a, conf.rseq_abi_pointer + 8, &cs, 8) != 8 || !cs)
		return false;
	/* struct rseq_cs: version and flags, start_ip, post_commit_offset,
	 * abort_ip */
	if (mem_read(a, cs, desc, sizeof(desc)) != (ssize_t)sizeof(desc))
		return true;   /* unreadable: assume the worst */
	return ip >= desc[1] && ip - desc[1] < desc[2];
}

static void dwarf_regs(const struct user_regs_struct *r, uint64_t *d)
{
	const uint64_t v[17] = { r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp,
				 r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip };
	memcpy(d, v, sizeof(v));
}

static void on_alarm(int sig)
{
}

/* Waits for TID's interrupt stop, passing on signals that come first;
 * 1 stopped, 0 not within LIMIT seconds, -1 gone or group-stopped (in
 * *GROUP the stop signal).  A blocking wait, cut short by a timer: a
 * polling tracer would itself wait for the CPU on a busy machine. */
static int wait_interrupt(pid_t tid, double limit, int *group)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;     /* no SA_RESTART: waitpid returns EINTR */
	sigaction(SIGALRM, &sa, &old);
	struct itimerval it = { { 0, 0 }, { (long)limit, (long)((limit - (long)limit) * 1e6) } }, off = { 0 };
	setitimer(ITIMER_REAL, &it, NULL);
	int rc = 0;
	*group = 0;
	for (;;) {
		int st;
		pid_t w = waitpid(tid, &st, __WALL);
		if (w < 0 && errno == EINTR) {
			rc = 0;   /* the timer */
			break;
		}
		if (w < 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
			rc = -1;
			break;
		}
		int sig = WSTOPSIG(st), ev = st >> 16;
		if (ev == PTRACE_EVENT_STOP && sig == SIGTRAP) {
			rc = 1;
			break;
		}
		if (ev == PTRACE_EVENT_STOP) {
			*group = sig;
			rc = -1;
			break;
		}
		ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig);   /* deliver it */
	}
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	return rc;
}

static enum try_result try_thread(struct attach *a, struct cand *c, char *err, size_t errlen)
{
	pid_t tid = c->tid;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL)) {
		int e = errno;
		if (e == ESRCH) {
			snprintf(c->why, sizeof(c->why), "it ended");
			return TRY_SKIP;
		}
		if (e == EPERM) {
			struct attach_perm p;
			char why[768];
			attach_perm_read(a->pid, &p);
			attach_refusal(&p, why, sizeof(why));
			jh_err(err, errlen, JH_EIO, "cannot attach to %s: %s", a->label, why);
			return TRY_FATAL;
		}
		jh_err(err, errlen, JH_EIO, "cannot attach to %s: ptrace(PTRACE_SEIZE): %s", a->label, strerror(e));
		return TRY_FATAL;
	}
	double t0 = now();
	int group = 0;
	ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
	int w = wait_interrupt(tid, 0.25, &group);
	if (w == 0) {
		/* it stays attached until this process ends: it cannot be
		 * detached before it stops */
		snprintf(c->why, sizeof(c->why), "it did not stop within 250 ms (waiting in the kernel)");
		if (a->nstuck < (int)(sizeof(a->stuck) / sizeof(a->stuck[0])))
			a->stuck[a->nstuck++] = tid;
		return TRY_SKIP;
	}
	if (w < 0) {
		if (group) {
			ptrace(PTRACE_DETACH, tid, NULL, NULL);
			jh_err(err, errlen, JH_EIO, "%s was stopped (signal %d) as jheap attached; it is left stopped",
			       a->label, group);
			return TRY_FATAL;
		}
		snprintf(c->why, sizeof(c->why), "it ended");
		return TRY_SKIP;
	}
	/* held from here: till now it ran on in the kernel, towards the stop */
	t0 = now();
	struct saved *s = &a->saved;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &s->regs)) {
		snprintf(c->why, sizeof(c->why), "its registers could not be read (%s)", strerror(errno));
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return TRY_SKIP;
	}
	/* room on its stack: the scratch area, then what mallctl needs */
	uint64_t start, end;
	const char *path;
	uint64_t top = s->regs.rsp - RED_ZONE, base = (top - SCRATCH) & ~(uint64_t)15;
	if (procmods_mapping(a->pm, s->regs.rsp, &start, &end, &path) || base - 8 < start ||
	    (strcmp(path, "[stack]") && base - 8 - start < STACK_NEEDED)) {
		snprintf(c->why, sizeof(c->why), "its stack had less than %d KiB left", (SCRATCH + STACK_NEEDED) / 1024);
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return TRY_SKIP;
	}
	uint64_t dregs[17], where = 0;
	dwarf_regs(&s->regs, dregs);
	a->tid = tid;
	a->stopped = true;
	if (in_rseq(a, tid, s->regs.rip)) {
		snprintf(c->why, sizeof(c->why), "it was inside a restartable sequence (rseq)");
		a->stopped = false;
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return TRY_SKIP;
	}
	enum procmods_verdict v = procmods_check_thread(a->pm, tid, dregs, 17, s->regs.rip, mem_read, a, &where);
	if (v != PROCMODS_CLEAN) {
		char d[120];
		procmods_describe(a->pm, where, d, sizeof(d));
		snprintf(c->why, sizeof(c->why), "it was inside the allocator (%s)", d);
		a->stopped = false;
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return TRY_SKIP;
	}
	s->xiov.iov_base = s->xstate;
	s->xiov.iov_len = sizeof(s->xstate);
	s->xtype = NT_X86_XSTATE;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)(long)NT_X86_XSTATE, &s->xiov)) {
		s->xiov.iov_len = sizeof(s->xstate);
		s->xtype = NT_PRFPREG;
		if (ptrace(PTRACE_GETREGSET, tid, (void *)(long)NT_PRFPREG, &s->xiov))
			s->xtype = 0;
	}
	if (!s->xtype) {
		snprintf(c->why, sizeof(c->why), "its floating-point registers could not be saved");
		a->stopped = false;
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return TRY_SKIP;
	}
	a->top = top;
	a->base = base;
	a->sp = base - 8;
	if (mem_read(a, a->sp, a->stack_copy, (size_t)(top - a->sp)) != (ssize_t)(top - a->sp)) {
		snprintf(c->why, sizeof(c->why), "its stack could not be read");
		a->stopped = false;
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return TRY_SKIP;
	}
	long nr = (long)s->regs.orig_rax, rv = (long)s->regs.rax;
	const char *en = nr >= 0 ? eintr_name(nr) : NULL;
	if (nr >= 0 && rv == -EINTR)
		snprintf(a->notice, sizeof(a->notice), "thread %d was waiting in %s, which returned EINTR to the program (as after any stop: gdb, SIGSTOP)",
			 (int)tid, en ? en : "a system call");
	a->t_stop = t0;
	a->put_used = 0;
	return TRY_OK;
}

int attach_stop(struct attach *a, double deadline, char *err, size_t errlen)
{
	static struct cand c[MAX_THREADS];
	double start = now();
	if (deadline > start + 5)
		deadline = start + 5;
	int n = 0, rounds = 0;
	long nap = 200;
	while (now() < deadline) {
		n = list_threads(a->pid, c, MAX_THREADS);
		if (n <= 0)
			return jh_err(err, errlen, JH_EIO, "%s has exited", a->label);
		bool last_resort = now() - start > 0.3;
		rounds++;
		for (int tier = 0; tier <= 2; tier++) {
			if (tier == 2 && !last_resort)
				break;
			for (int i = 0; i < n; i++) {
				bool stuck = false;
				for (int k = 0; k < a->nstuck; k++)
					stuck |= a->stuck[k] == c[i].tid;
				if (stuck) {
					snprintf(c[i].why, sizeof(c[i].why), "it did not stop within 250 ms (waiting in the kernel)");
					continue;
				}
				if (c[i].tier != tier)
					continue;
				enum try_result r = try_thread(a, &c[i], err, errlen);
				if (r == TRY_OK)
					return 0;
				if (r == TRY_FATAL)
					return JH_EIO;
				if (now() >= deadline)
					break;
			}
		}
		pause_us(nap);
		if (nap < 20000)
			nap *= 2;
	}
	/* why each thread was not used (the first few) */
	char why[1536];
	size_t k = 0;
	why[0] = '\0';
	for (int i = 0; i < n && i < 6 && k + 1 < sizeof(why); i++)
		k += (size_t)snprintf(why + k, sizeof(why) - k, "%sthread %d: %s", i ? "; " : "", (int)c[i].tid,
				      c[i].why[0] ? c[i].why : "not tried");
	if (n > 6 && k + 1 < sizeof(why))
		snprintf(why + k, sizeof(why) - k, "; and %d more", n - 6);
	bool inside = false;
	for (int i = 0; i < n; i++)
		inside |= strstr(c[i].why, "inside") != NULL;
	return jh_err(err, errlen, JH_EIO, "no thread of %s could be used in %.1f s (%d tries): %s; %s",
		      a->label, now() - start, rounds, why,
		      inside ? "try again: a thread leaves the allocator soon, unless it waits in it" :
		      "try again when a thread is free");
}

/* ---- the call ---- */

int attach_put(struct attach *a, const void *data, size_t len, uint64_t *remote, char *err,
	       size_t errlen)
{
	size_t room = (size_t)(a->top - (a->base + HDR_END));
	size_t at = (a->put_used + 15) & ~(size_t)15;
	if (!a->stopped || at + len > room)
		return jh_err(err, errlen, JH_ELIMIT, "too much data for the thread's stack (%zu bytes)", len);
	if (mem_write(a, a->base + HDR_END + at, data, len))
		return jh_err(err, errlen, JH_EIO, "cannot write into the stack of thread %d: %s", (int)a->tid,
			      strerror(errno));
	a->changed = true;
	*remote = a->base + HDR_END + at;
	a->put_used = at + len;
	return 0;
}

/* Keeps signal SIG (that arrived during a call) for later. */
static void hold_signal(struct attach *a, int sig)
{
	if (!a->have_first && !ptrace(PTRACE_GETSIGINFO, a->tid, NULL, &a->first_info)) {
		a->have_first = true;
		return;
	}
	for (int i = 0; i < a->nmore; i++)
		if (a->more[i] == sig)
			return;
	if (a->nmore < MAX_SIGNALS)
		a->more[a->nmore++] = sig;
}

int attach_mallctl(struct attach *a, const char *name, void *oldp, size_t *oldlenp,
		   const void *newp, size_t newlen, int *result, char *err, size_t errlen)
{
	size_t nl = strlen(name) + 1, oldlen = oldlenp ? *oldlenp : 0;
	if (!a->stopped)
		return jh_err(err, errlen, JH_EUSAGE, "no thread is stopped");
	if (nl > HDR_OLDLEN || oldlen > HDR_NEW - HDR_OLD || newlen > HDR_END - HDR_NEW)
		return jh_err(err, errlen, JH_ELIMIT, "mallctl arguments too large");
	unsigned char hdr[8 + HDR_END];
	memset(hdr, 0, sizeof(hdr));          /* hdr[0..8): the return address, 0 */
	memcpy(hdr + 8 + HDR_NAME, name, nl);
	uint64_t ol = oldlen;
	memcpy(hdr + 8 + HDR_OLDLEN, &ol, 8);
	if (newlen)
		memcpy(hdr + 8 + HDR_NEW, newp, newlen);
	if (mem_write(a, a->sp, hdr, sizeof(hdr)))
		return jh_err(err, errlen, JH_EIO, "cannot write into the stack of thread %d: %s", (int)a->tid,
			      strerror(errno));
	a->changed = true;
	struct user_regs_struct r = a->saved.regs;
	r.rip = a->fn.addr;
	r.rsp = a->sp;              /* rsp % 16 == 8 at entry, as after a call */
	r.rdi = a->base + HDR_NAME;
	r.rsi = oldp ? a->base + HDR_OLD : 0;
	r.rdx = oldlenp ? a->base + HDR_OLDLEN : 0;
	r.rcx = newlen ? a->base + HDR_NEW : 0;
	r.r8 = newlen;
	r.rax = 0;
	r.orig_rax = (unsigned long long)-1;   /* no system call restart into the call */
	r.eflags &= ~(0x400ULL | 0x100ULL);    /* DF and TF clear, as the ABI wants */
	if (ptrace(PTRACE_SETREGS, a->tid, NULL, &r))
		return jh_err(err, errlen, JH_EIO, "cannot set the registers of thread %d: %s", (int)a->tid,
			      strerror(errno));
	if (a->phase && !a->in_call)
		a->phase(a->phase_arg, true);
	a->in_call = true;
	a->calls++;
	int sig = 0;
	for (;;) {
		if (ptrace(PTRACE_CONT, a->tid, NULL, (void *)(long)sig) && errno == ESRCH) {
			a->stopped = false;
			return jh_err(err, errlen, JH_EIO, "%s ended during mallctl(\"%s\")", a->label, name);
		}
		sig = 0;
		int st;
		pid_t w;
		while ((w = waitpid(a->tid, &st, __WALL)) < 0 && errno == EINTR)
			;
		if (w < 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
			a->stopped = false;
			return jh_err(err, errlen, JH_EIO, "%s ended during mallctl(\"%s\") (it exited or was killed)",
				      a->label, name);
		}
		int s = WSTOPSIG(st), ev = st >> 16;
		if (ev)
			continue;   /* a group stop or an interrupt: finish the call first */
		struct user_regs_struct now_r;
		if (ptrace(PTRACE_GETREGS, a->tid, NULL, &now_r))
			return jh_err(err, errlen, JH_EIO, "cannot read the registers of thread %d", (int)a->tid);
		if (s == SIGSEGV && now_r.rip == 0) {
			*result = (int)now_r.rax;
			break;
		}
		if (s == SIGSEGV || s == SIGBUS || s == SIGILL || s == SIGFPE) {
			return jh_err(err, errlen, JH_EIO, "mallctl(\"%s\") in %s faulted (signal %d at 0x%llx); the thread is put back as it was, but the allocator may be left in a bad state",
				      name, a->label, s, (unsigned long long)now_r.rip);
		}
		/* a system call of the call that was interrupted and will be
		 * restarted through its restart data, which the thread's own
		 * interrupted sleep needed too */
		if ((long)now_r.orig_rax >= 0 && (long)now_r.rax == -516 && (long)a->saved.regs.orig_rax >= 0 &&
		    (long)a->saved.regs.rax == -516)
			a->restart_lost = true;
		hold_signal(a, s);
	}
	if (oldlenp) {
		uint64_t got = 0;
		if (mem_read(a, a->base + HDR_OLDLEN, &got, 8) != 8 ||
		    (oldlen && mem_read(a, a->base + HDR_OLD, oldp, oldlen) != (ssize_t)oldlen))
			return jh_err(err, errlen, JH_EIO, "cannot read mallctl's answer from thread %d", (int)a->tid);
		*oldlenp = (size_t)got;
	}
	return 0;
}

int attach_resume(struct attach *a, char *err, size_t errlen)
{
	if (!a->stopped)
		return 0;
	int rc = 0;
	struct saved *s = &a->saved;
	if (a->changed) {
		if (a->restart_lost) {
			/* its sleep cannot resume where it was: it returns EINTR,
			 * as it would after a signal handler */
			s->regs.rax = (unsigned long long)-EINTR;
			snprintf(a->notice, sizeof(a->notice), "thread %d's interrupted sleep returned EINTR to the program (a signal came during the call)",
				 (int)a->tid);
		}
		if (mem_write(a, a->sp, a->stack_copy, (size_t)(a->top - a->sp)))
			rc = jh_err(err, errlen, JH_EIO, "could not restore the stack of thread %d of %s: %s",
				    (int)a->tid, a->label, strerror(errno));
		if (ptrace(PTRACE_SETREGSET, a->tid, (void *)(long)s->xtype, &s->xiov) ||
		    ptrace(PTRACE_SETREGS, a->tid, NULL, &s->regs))
			rc = jh_err(err, errlen, JH_EIO, "could not restore the registers of thread %d of %s: %s",
				    (int)a->tid, a->label, strerror(errno));
	}
	int sig = 0;
	if (a->have_first && !ptrace(PTRACE_SETSIGINFO, a->tid, NULL, &a->first_info))
		sig = a->first_info.si_signo;
	ptrace(PTRACE_DETACH, a->tid, NULL, (void *)(long)sig);
	a->stopped = false;
	a->held_ms = (now() - a->t_stop) * 1000;
	for (int i = 0; i < a->nmore; i++)
		syscall(SYS_tgkill, a->pid, a->tid, a->more[i]);
	if (a->phase && a->in_call)
		a->phase(a->phase_arg, false);
	a->in_call = false;
	return rc;
}

#else /* not x86-64: attach_open refuses, so nothing below runs */

int attach_stop(struct attach *a, double deadline, char *err, size_t errlen)
{
	return jh_err(err, errlen, JH_EUSAGE, "attaching is implemented for x86-64 only");
}

int attach_put(struct attach *a, const void *data, size_t len, uint64_t *remote, char *err,
	       size_t errlen)
{
	return jh_err(err, errlen, JH_EUSAGE, "attaching is implemented for x86-64 only");
}

int attach_mallctl(struct attach *a, const char *name, void *oldp, size_t *oldlenp,
		   const void *newp, size_t newlen, int *result, char *err, size_t errlen)
{
	return jh_err(err, errlen, JH_EUSAGE, "attaching is implemented for x86-64 only");
}

int attach_resume(struct attach *a, char *err, size_t errlen)
{
	return 0;
}

#endif

void attach_free(struct attach *a)
{
	if (!a)
		return;
	char err[256];
	attach_resume(a, err, sizeof(err));
	procmods_free(a->pm);
	free(a);
}

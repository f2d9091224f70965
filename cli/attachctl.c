/*
 * attachctl.c: the commands of `jheap dump` and `jheap ctl` carried out by
 * attaching (cli/attachctl.h).  The replies are those of the control
 * library (preload/prof.c), so the two ways read alike.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/attach.h"
#include "cli/attachctl.h"
#include "cli/attachdir.h"
#include "cli/control.h"
#include "symbolize/procmods.h"
#include "lib/errors.h"

/* What the child sends back after its markers ('C': the thread is being
 * used, 'R': it is given back, 'S': this struct follows). */
struct result {
	int rc;
	pid_t tid;
	double held_ms;
	char err[2048];
	char reply[8192];
	char notice[256];
};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t k = write(fd, p, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		p += k;
		len -= (size_t)k;
	}
}

static void marker(void *arg, bool in_call)
{
	char c = in_call ? 'C' : 'R';
	write_all(*(int *)arg, &c, 1);
}

/* Appends printf-style text to the reply. */
__attribute__((format(printf, 2, 3)))
static void add(struct result *r, const char *fmt, ...)
{
	size_t n = strlen(r->reply);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->reply + n, sizeof(r->reply) - n, fmt, ap);
	va_end(ap);
}

/* S escaped (a string from the process) into a static buffer. */
static const char *esc(const char *s, int which)
{
	static char buf[3][1024];
	return escape_into(buf[which], sizeof(buf[which]), s, strlen(s));
}

/* mallctl of a value of SIZE bytes: 0, or mallctl's error number. */
static int get(struct attach *a, const char *name, void *v, size_t size, struct result *r)
{
	size_t len = size;
	int ret = 0;
	if (attach_mallctl(a, name, v, &len, NULL, 0, &ret, r->err, sizeof(r->err)))
		return -1;
	return ret ? ret : len == size ? 0 : EINVAL;
}

static const char *enable_prof_hint(const struct procmods_fn *fn)
{
	return !strcmp(fn->name, "_rjem_mallctl") ?
		"--enable-prof; in Rust, the \"profiling\" feature of jemalloc-sys or tikv-jemalloc-sys" :
		"--enable-prof";
}

/* The state read for status. */
struct state {
	bool compiled, enabled, active, accum, final;
	size_t lg;
	ssize_t interval;
	uint64_t version, prefix;
};

/* Says in r->err why profiling does not work in this process; 1, or -1
 * when a call failed. */
static int why_not(struct attach *a, struct state *s, struct result *r)
{
	const struct procmods_fn *fn = attach_fn(a);
	if (!s->compiled) {
		jh_err(r->err, sizeof(r->err), JH_EIO, "the jemalloc in this process (%s in %s) was built without profiling (%s)",
		       fn->name, fn->module, enable_prof_hint(fn));
		return 1;
	}
	jh_err(r->err, sizeof(r->err), JH_EIO, "heap profiling is not enabled in this process: jemalloc reads %s=prof:true only when the program starts; start it with %s=prof:true,prof_active:false (sampling stays off, and costs next to nothing, until 'jheap ctl PID on')",
	       fn->conf, fn->conf);
	return 1;
}

/* opt.prof, which answers ENOENT when profiling is not compiled in. */
static int profiling(struct attach *a, struct state *s, struct result *r)
{
	int e = get(a, "opt.prof", &s->enabled, sizeof(bool), r);
	if (e < 0)
		return -1;
	s->compiled = e != ENOENT;
	if (e)
		s->enabled = false;
	return 0;
}

/* The calls of COMMAND on the stopped thread, as few as can be: each
 * waits for the thread to get the CPU.  The reply is written once the
 * thread is given back.  Returns 0, 1 when the reply is an error (in
 * r->err), -1 when a call failed (r->err). */
static int calls(struct attach *a, const char *command, const char *target, struct state *s,
		 bool *was, struct result *r)
{
	int ret = 0;
	if (!strcmp(command, "dump")) {
		/* prof.dump fails by itself, changing nothing, without
		 * profiling: only then is the reason asked for */
		uint64_t name;
		if (attach_put(a, target, strlen(target) + 1, &name, r->err, sizeof(r->err)) ||
		    attach_mallctl(a, "prof.dump", NULL, NULL, &name, sizeof(name), &ret, r->err, sizeof(r->err)))
			return -1;
		if (!ret)
			return 0;
		if (profiling(a, s, r))
			return -1;
		if (!s->compiled || !s->enabled)
			return why_not(a, s, r);
		jh_err(r->err, sizeof(r->err), JH_EIO, "jemalloc could not write a dump to %s (prof.dump: %s)",
		       target, strerror(ret));
		return 1;
	}
	if (profiling(a, s, r))
		return -1;
	if (!strcmp(command, "status")) {
		if (get(a, "version", &s->version, sizeof(s->version), r) < 0)
			return -1;
		if (!s->compiled || !s->enabled)
			return 0;
		s->interval = -1;
		if (get(a, "prof.active", &s->active, sizeof(bool), r) < 0 ||
		    get(a, "opt.prof_accum", &s->accum, sizeof(bool), r) < 0 ||
		    get(a, "opt.prof_final", &s->final, sizeof(bool), r) < 0 ||
		    get(a, "prof.lg_sample", &s->lg, sizeof(s->lg), r) < 0 ||
		    get(a, "opt.prof_prefix", &s->prefix, sizeof(s->prefix), r) < 0 ||
		    get(a, "opt.lg_prof_interval", &s->interval, sizeof(s->interval), r) < 0)
			return -1;
		return 0;
	}
	/* the commands that change something: never without profiling
	 * (jemalloc's prof.reset is not safe then) */
	if (!s->compiled || !s->enabled)
		return why_not(a, s, r);
	if (!strcmp(command, "on") || !strcmp(command, "off")) {
		bool on = !strcmp(command, "on");
		size_t len = sizeof(*was);
		if (attach_mallctl(a, "prof.active", was, &len, &on, sizeof(on), &ret, r->err, sizeof(r->err)))
			return -1;
		s->active = on;
	} else {
		/* reset, or "sample LG" */
		size_t lg = 0;
		bool sample = !strncmp(command, "sample ", 7);
		if (sample)
			lg = (size_t)strtoul(command + 7, NULL, 10);
		if (attach_mallctl(a, "prof.reset", NULL, NULL, sample ? &lg : NULL, sample ? sizeof(lg) : 0,
				   &ret, r->err, sizeof(r->err)))
			return -1;
		if (!ret && get(a, "prof.lg_sample", &s->lg, sizeof(s->lg), r) < 0)
			return -1;
	}
	if (ret) {
		jh_err(r->err, sizeof(r->err), JH_EIO, "%s: %s", strncmp(command, "o", 1) ? "prof.reset" : "prof.active",
		       strerror(ret));
		return 1;
	}
	return 0;
}

static void status_reply(struct attach *a, pid_t pid, const struct state *s, struct result *r)
{
	const struct procmods_fn *fn = attach_fn(a);
	char exe[4096] = "", path[64], version[256] = "?", prefix[4096] = "";
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	if (s->version)
		attach_read_string(a, s->version, version, sizeof(version));
	add(r, "pid: %d\nprogram: %s\n", (int)pid, esc(exe, 0));
	add(r, "jemalloc: %s%s (%s in %s)\n", esc(version, 1),
	    strncmp(version, "0.0.0-", 6) ? "" : ", its build recorded no version", fn->name, esc(fn->module, 2));
	add(r, "control: none; jheap attached with ptrace (thread %d, held %.1f ms)\n", (int)attach_tid(a),
	    attach_held_ms(a));
	if (!s->compiled) {
		add(r, "profiling: not compiled in (jemalloc was built without %s)\n", enable_prof_hint(fn));
		return;
	}
	if (!s->enabled) {
		add(r, "profiling: not enabled (start the program with %s=prof:true)\n", fn->conf);
		return;
	}
	add(r, "profiling: enabled\nactive: %s\n", s->active ? "yes" : "no");
	if (s->lg)
		add(r, "sample: one per %zu bytes on average (lg_prof_sample:%zu)\n", (size_t)1 << (s->lg & 63), s->lg);
	else
		add(r, "sample: every allocation (lg_prof_sample:0)\n");
	add(r, "accum: %s\n", s->accum ? "yes (prof_accum: --alloc_space works)" : "no");
	if (s->prefix)
		attach_read_string(a, s->prefix, prefix, sizeof(prefix));
	add(r, "dumps: jheap dump writes to jheap-%d/ in its current folder; jemalloc's own to %s%s.%d.<seq>.<kind>.heap\n",
	    (int)pid, prefix[0] ? "" : "none: ", prefix[0] ? esc(prefix, 0) : "(prof_prefix is empty)", (int)pid);
	add(r, "at exit: %s\n", s->final ? "a dump (prof_final)" : "no dump");
	if (s->interval >= 0)
		add(r, "interval dumps: every %llu bytes allocated (lg_prof_interval:%zd)\n",
		    1ULL << (s->interval & 63), s->interval);
}

/* The child's work: attach, the calls, the reply. */
static void run(pid_t pid, const char *command, double deadline, const char *target, int fd,
		struct result *r)
{
	struct attach *a = NULL;
	struct state s = { 0 };
	bool was = false;
	r->rc = attach_open(pid, &a, r->err, sizeof(r->err));
	if (r->rc)
		return;
	attach_on_phase(a, marker, &fd);
	r->rc = attach_stop(a, deadline, r->err, sizeof(r->err));
	if (r->rc) {
		attach_free(a);
		return;
	}
	int c = calls(a, command, target, &s, &was, r);
	char err[1024];
	int rr = attach_resume(a, err, sizeof(err));
	r->tid = attach_tid(a);
	r->held_ms = attach_held_ms(a);
	snprintf(r->notice, sizeof(r->notice), "%s", attach_notice(a));
	if (rr && !c)
		snprintf(r->err, sizeof(r->err), "%s", err);
	r->rc = c || rr ? JH_EIO : 0;
	if (r->rc) {
		attach_free(a);
		return;
	}
	if (!strcmp(command, "status"))
		status_reply(a, pid, &s, r);
	else if (!strcmp(command, "on") || !strcmp(command, "off"))
		add(r, "profiling in process %d is %s (it was %s)", (int)pid, s.active ? "active" : "inactive",
		    was ? "active" : "inactive");
	else if (strcmp(command, "dump") && s.lg)
		add(r, "profile of process %d reset; one sample per %zu bytes on average (lg_prof_sample:%zu)",
		    (int)pid, (size_t)1 << (s.lg & 63), s.lg);
	else if (strcmp(command, "dump"))
		add(r, "profile of process %d reset; every allocation is sampled (lg_prof_sample:0)", (int)pid);
	attach_free(a);
}

/* "process 1234 (name)" */
static void label(pid_t pid, char *out, size_t len)
{
	char path[64], comm[64] = "";
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(out, len, "process %d (%s)", (int)pid, comm);
}

/* The base name of the process's program, for the dump's name. */
static void program_name(pid_t pid, char *out, size_t len)
{
	char path[64], exe[4096];
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0) {
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
		FILE *f = fopen(path, "re");
		out[0] = '\0';
		if (f) {
			if (fgets(out, (int)len, f))
				out[strcspn(out, "\n")] = '\0';
			fclose(f);
		}
		return;
	}
	exe[n] = '\0';
	if (n > 10 && !strcmp(exe + n - 10, " (deleted)"))
		exe[n - 10] = '\0';
	const char *b = strrchr(exe, '/');
	b = b ? b + 1 : exe;
	size_t k = strlen(b) < len ? strlen(b) : len - 1;
	memcpy(out, b, k);
	out[k] = '\0';
}

int attachctl_attach(pid_t pid, const char *command, double timeout, char *reply, size_t replylen,
		     char *note, size_t notelen, char *err, size_t errlen)
{
	double start = now(), deadline = start + timeout;
	char lab[128];
	label(pid, lab, sizeof(lab));
	note[0] = '\0';
	/* a refusal that is certain needs no folder and no child */
	struct attach_perm perm;
	attach_perm_read(pid, &perm);
	bool other = perm.target_uid[0] != perm.uid || perm.target_uid[1] != perm.uid ||
		     perm.target_uid[2] != perm.uid;
	if (other && !perm.cap_ptrace) {
		/* its maps are closed to jheap too: whether it has the control
		 * library is not known, and its socket would not answer */
		char why[1024], maps[64];
		attach_refusal(&perm, why, sizeof(why));
		snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
		int fd = open(maps, O_RDONLY | O_CLOEXEC);   /* access() goes by the file's mode */
		if (fd >= 0)
			close(fd);
		if (fd < 0)
			return jh_err(err, errlen, JH_EIO, "jheap can neither ask %s through a control socket (which answers its own user and root) nor attach to it: %s",
				      lab, why);
		return jh_err(err, errlen, JH_EIO, "%s has no control library, and jheap cannot attach to it: %s",
			      lab, why);
	}
	bool dump = !strcmp(command, "dump");
	struct attachdir dir = { .dirfd = -1, .subfd = -1 };
	if (dump) {
		char why[1024];
		if (attachdir_prepare(&dir, pid, why, sizeof(why))) {
			attachdir_release(&dir);
			return jh_err(err, errlen, JH_EIO, "%s: %s", lab, why);
		}
	}
	int p[2];
	if (pipe2(p, O_CLOEXEC)) {
		attachdir_release(&dir);
		return jh_err(err, errlen, JH_EIO, "pipe: %s", strerror(errno));
	}
	fflush(NULL);
	pid_t h = fork();
	if (h < 0) {
		close(p[0]);
		close(p[1]);
		attachdir_release(&dir);
		return jh_err(err, errlen, JH_EIO, "fork: %s", strerror(errno));
	}
	if (h == 0) {
		close(p[0]);
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		static struct result r;
		/* the search for a thread ends in time for the answer */
		double select_by = start + (timeout * 0.75 < 5 ? timeout * 0.75 : 5);
		run(pid, command, select_by, dir.target, p[1], &r);
		char s = 'S';
		write_all(p[1], &s, 1);
		write_all(p[1], &r, sizeof(r));
		_exit(0);
	}
	close(p[1]);
	static struct result r;
	memset(&r, 0, sizeof(r));
	bool in_call = false, got = false;
	size_t have = 0;
	char *rp = (char *)&r;
	for (;;) {
		double left = deadline - now();
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		int k = left > 0 ? poll(&pf, 1, (int)(left * 1000) + 1) : 0;
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0)
			break;
		char buf[4096];
		ssize_t n = read(p[0], buf, got ? (sizeof(r) - have < sizeof(buf) ? sizeof(r) - have : sizeof(buf)) : 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (!got) {
			if (buf[0] == 'C')
				in_call = true;
			else if (buf[0] == 'R')
				in_call = false;
			else if (buf[0] == 'S')
				got = true;
			continue;
		}
		memcpy(rp + have, buf, (size_t)n);
		have += (size_t)n;
		if (have == sizeof(r))
			break;
	}
	close(p[0]);
	if (have != sizeof(r)) {
		if (in_call) {
			/* killing the helper now would kill the process: it stays
			 * and gives the thread back once mallctl returns */
			attachdir_release(&dir);
			return jh_err(err, errlen, JH_EIO, "%s has not returned from mallctl within %g s (a large heap takes a while to dump: --timeout=SECONDS); jheap's helper process %d stays attached until it returns and then gives the thread back",
				      lab, timeout, (int)h);
		}
		kill(h, SIGKILL);
		waitpid(h, NULL, 0);
		attachdir_release(&dir);
		return jh_err(err, errlen, JH_EIO, "jheap's helper could not attach to %s within %g s", lab, timeout);
	}
	waitpid(h, NULL, 0);
	/* the line for the user, escaped as every message (the process's
	 * name is the process's to choose) */
	if (r.tid)
		jh_err(note, notelen, 0, "%s has no control library: jheap attached to its thread %d with ptrace and held it %.1f ms%s%s",
		       lab, (int)r.tid, r.held_ms, r.notice[0] ? "; " : "", r.notice);
	if (r.rc) {
		attachdir_release(&dir);
		if (strstr(r.err, lab) || !strncmp(r.err, "process ", 8))
			return jh_err(err, errlen, JH_EIO, "%s", r.err);
		return jh_err(err, errlen, JH_EIO, "%s: %s", lab, r.err);
	}
	if (dump) {
		char name[256], why[1024];
		program_name(pid, name, sizeof(name));
		int rc = attachdir_finish(&dir, name, reply, replylen, why, sizeof(why));
		if (!rc && dir.note[0] && strlen(note) + 3 < notelen)
			jh_err(note + strlen(note), notelen - strlen(note), 0, "; %s", dir.note);
		attachdir_release(&dir);
		if (rc)
			return jh_err(err, errlen, JH_EIO, "%s: %s", lab, why);
		return 0;
	}
	snprintf(reply, replylen, "%s", r.reply);
	return 0;
}

int attachctl_request(pid_t pid, const char *command, double timeout, char *reply, size_t replylen,
		      char *note, size_t notelen, char *err, size_t errlen)
{
	char path[64];
	note[0] = '\0';
	int rc = control_request(pid, command, timeout, reply, replylen, err, errlen);
	if (rc == CONTROL_ENOLIB)
		return attachctl_attach(pid, command, timeout, reply, replylen, note, notelen, err, errlen);
	/* no socket found, and maps jheap may not read: another user's
	 * process, which attaching explains better (whose, and what to do) */
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	int fd = rc ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (fd >= 0)
		close(fd);
	if (rc && fd < 0 && errno == EACCES && !strncmp(err, "no control socket of ", 21))
		return attachctl_attach(pid, command, timeout, reply, replylen, note, notelen, err, errlen);
	return rc;
}

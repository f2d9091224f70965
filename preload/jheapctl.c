/*
 * libjheapctl.so: jheap's control library.  Preloaded into a program that
 * allocates with jemalloc (jheap record does both), it starts one thread
 * that listens on a Unix socket for this process, and carries out what
 * `jheap dump PID` and `jheap ctl PID ...` ask for (prof.c).
 *
 * The socket is PID.sock in $XDG_RUNTIME_DIR/jheap when XDG_RUNTIME_DIR is
 * a folder of the process's user, else in /tmp/jheap-UID; the folder is
 * made with mode 0700 and not used unless it is a real folder of that user
 * closed to others.  Every connection's peer is checked with SO_PEERCRED:
 * the process's own user or root, nobody else.
 *
 * Protocol (version 1), one request per connection:
 *   request: "jheap1 COMMAND[ ARGUMENT]\n": status, dump, on, off, reset,
 *            sample LG
 *   reply:   "ok ..." or "error MESSAGE", then for status "name: value"
 *            lines, then an empty line; then the connection is closed.
 *
 * What the program pays: one thread blocked in poll() (no timer unless
 * JHEAP_CTL_EVERY asks for periodic dumps, after five looks at its socket
 * in the first 3.1 s: see settle_ms), a 256 KiB stack reserved for it
 * and a socket.  The thread blocks every signal, so signals reach the
 * program's threads as before (a program that waits for them with sigwait
 * still gets them); it installs no signal handler and allocates nothing
 * with malloc once it runs.
 *
 * fork(): the child closes the parent's socket (it must not answer, or
 * hold a connection open, for the parent's pid) and starts a listener of
 * its own, as a daemon's or a pre-forked worker's child is worth profiling.
 * exec(): the socket is close-on-exec; a new image that loads the library
 * again replaces the socket file of its pid.
 *
 * A program that closes the socket (a daemon closes every descriptor as
 * it starts; varnishd does): the thread makes a new one, up to REOPENS
 * times, in the folder of the user the process runs as by then, so a
 * daemon that dropped root answers where jheap looks for its user.
 *
 * The library is built apart from jheap (see the Makefile): never with
 * sanitizers, which would have to come first in every program it is
 * loaded into; with hidden visibility, so it exports no symbol of its
 * own but creat and creat64, which make jemalloc's dumps safely
 * (dumpfile.c); and against nothing but libc, including nothing from
 * jheap's other folders.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <limits.h>

#include "preload/jheapctl.h"

long jheapctl_every_ms;

static volatile int listen_fd = -1;  /* -1 also once the thread gave up */
static ino_t listen_ino;              /* the socket's inode: is the fd still ours? */
static volatile int conn_fd = -1;     /* the connection being served */
static ino_t conn_ino;
static pid_t owner;                   /* the pid the socket answers for */
static char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];

/* One line on standard error, written at once (no stdio: this also runs
 * in a child of fork). */
__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...)
{
	char buf[600];
	int n = snprintf(buf, sizeof(buf), "jheap-ctl: process %d: ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(buf))
		n += vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(buf) - 2)
		n = (int)sizeof(buf) - 2;
	buf[n++] = '\n';
	ssize_t w = write(STDERR_FILENO, buf, (size_t)n);
	(void)w;
}

/* True when DIR is a folder (not a link) of user UID closed to others. */
static bool private_dir(const char *dir, uid_t uid, char *why, size_t whylen)
{
	struct stat st;
	if (lstat(dir, &st)) {
		snprintf(why, whylen, "cannot use %s: %s", dir, strerror(errno));
		return false;
	}
	if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077)) {
		snprintf(why, whylen, "%s is not a private folder of user %u (owner %u, mode %04o%s)",
			 dir, (unsigned)uid, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
			 S_ISDIR(st.st_mode) ? "" : ", not a folder");
		return false;
	}
	return true;
}

/* The socket folder, made when missing; false with WHY when unusable. */
static bool socket_dir(char *dir, size_t len, char *why, size_t whylen)
{
	uid_t uid = geteuid();
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct stat st;
	if (xdg && xdg[0] == '/' && !stat(xdg, &st) && S_ISDIR(st.st_mode) && st.st_uid == uid)
		snprintf(dir, len, "%s/jheap", xdg);
	else
		snprintf(dir, len, "/tmp/jheap-%u", (unsigned)uid);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(why, whylen, "cannot create %s: %s", dir, strerror(errno));
		return false;
	}
	return private_dir(dir, uid, why, whylen);
}

/* Removes the sockets of processes that are gone (killed, or ended with
 * _exit, they left their file behind).  Only names "N.sock". */
static void sweep(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	char buf[4096], path[sizeof(sock_path) + 300];
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			char *end;
			long pid = strtol(d->d_name, &end, 10);
			if (end == d->d_name || strcmp(end, ".sock") || pid <= 0)
				continue;
			if (kill((pid_t)pid, 0) && errno == ESRCH) {
				snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
				unlink(path);
			}
		}
	}
	close(fd);
}

static long ms_since(const struct timespec *a)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - a->tv_sec) * 1000 + (now.tv_nsec - a->tv_nsec) / 1000000;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* Reads one request line, answers it, closes nothing. */
static void serve_one(int c)
{
	char out[8192], req[256];
	struct reply r = { out, 0, sizeof(out) };
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	socklen_t clen = sizeof(cred);
	struct timeval tv = { 5, 0 };
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	size_t n = 0;
	while (n < sizeof(req) - 1) {
		ssize_t k = recv(c, req + n, sizeof(req) - 1 - n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
		if (memchr(req, '\n', n))
			break;
	}
	req[n] = '\0';
	char *nl = strchr(req, '\n');
	if (!nl)
		return;   /* the client went away or sent no request */
	*nl = '\0';
	/* a client that gave up while the process was stopped left its
	 * request in the queue: no dump for nobody */
	struct pollfd gone = { .fd = c, .events = POLLRDHUP };
	if (poll(&gone, 1, 0) == 1 && (gone.revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return;
	/* the request is read first, so that a refused client reads the
	 * answer rather than a broken pipe */
	if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &clen) ||
	    (cred.uid != 0 && cred.uid != geteuid())) {
		reply_add(&r, "error refused: user %u may not control process %d, which runs as user %u (only that user and root may)\n\n",
			  (unsigned)cred.uid, (int)getpid(), (unsigned)geteuid());
		send_all(c, r.buf, r.len);
		return;
	}
	char *end;
	if (!strcmp(req, "jheap1 status"))
		prof_cmd_status(&r);
	else if (!strcmp(req, "jheap1 dump"))
		prof_cmd_dump(&r);
	else if (!strcmp(req, "jheap1 on") || !strcmp(req, "jheap1 off"))
		prof_cmd_active(&r, req[8] == 'n');
	else if (!strcmp(req, "jheap1 reset"))
		prof_cmd_reset(&r, -1);
	else if (!strncmp(req, "jheap1 sample ", 14) && req[14] >= '0' && req[14] <= '9' &&
		 strtol(req + 14, &end, 10) <= 62 && !*end)
		prof_cmd_reset(&r, strtol(req + 14, NULL, 10));
	else
		reply_add(&r, "error unknown request '%.100s' (jheap and libjheapctl.so of different versions?)\n", req);
	reply_add(&r, "\n");
	send_all(c, r.buf, r.len);
}

/* FD is still the socket of inode INO: a program may close every
 * descriptor (daemons do) and reuse the number for a socket of its own,
 * whose connections are not ours to take, nor ours to close. */
static bool still_ours(int fd, ino_t ino)
{
	struct stat st;
	return fd >= 0 && !fstat(fd, &st) && S_ISSOCK(st.st_mode) && st.st_ino == ino;
}

/* How many times the thread makes a new socket after the program closed
 * its own (a daemon closes every descriptor as it starts, some once more
 * when it drops its privileges); a program that keeps closing it wins. */
#define REOPENS 3

static int open_socket(bool first, bool loud);

/* The program closed the listening socket (or reused its number): a new
 * one, after a pause that lets a loop closing every descriptor finish,
 * in the folder of the user the process runs as now (a daemon that
 * dropped root listens where jheap looks for that user).  The new
 * descriptor, or -1 once REOPENS are spent or it cannot be made.  OLD,
 * when it is still the socket (poll failed on it), is closed. */
static int reopen_socket(int old, int *reopens)
{
	if (still_ours(old, listen_ino))
		close(old);
	if (owner == getpid())
		unlink(sock_path);
	if ((*reopens)++ >= REOPENS) {
		say("the program closed the control socket %d times: not listening any more", REOPENS + 1);
		return -1;
	}
	/* quietly: a daemon's children (varnishd's compiler) may hand their
	 * standard error to the user as the program's own warnings.  A few
	 * tries: a process that is changing its user (its threads one by
	 * one) may refuse a folder it owned a moment before. */
	int fd = -1;
	for (int i = 0; i < 5 && fd < 0; i++) {
		struct timespec ts = { 0, (i ? 100 : 50) * 1000 * 1000 };
		nanosleep(&ts, NULL);
		fd = open_socket(false, i == 4);
	}
	return fd;
}

/* A thread blocked in poll() does not learn that another thread closed
 * the descriptor.  Daemons close every descriptor as they start, so the
 * thread looks at its socket these many milliseconds after it starts
 * listening (3.1 s in all), and after that only when it wakes: a
 * connection to the socket wakes it, and jheap asks again when the first
 * try found the socket closed. */
static const int settle_ms[] = { 100, 200, 400, 800, 1600 };
#define NSETTLE ((int)(sizeof(settle_ms) / sizeof(settle_ms[0])))

static void *serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	int reopens = 0, settle = 0;
	struct timespec last;
	clock_gettime(CLOCK_MONOTONIC, &last);
	for (;;) {
		int timeout = -1;
		if (jheapctl_every_ms) {
			long left = jheapctl_every_ms - ms_since(&last);
			timeout = left > 0 ? (int)(left < 1L << 30 ? left : 1L << 30) : 0;
		}
		bool settling = settle < NSETTLE && (timeout < 0 || settle_ms[settle] < timeout);
		if (settling)
			timeout = settle_ms[settle];
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = poll(&p, 1, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (p.revents & POLLNVAL) || !still_ours(fd, listen_ino)) {
			if ((fd = reopen_socket(fd, &reopens)) < 0)
				break;
			settle = 0;
			continue;
		}
		if (n == 0 && settling) {
			settle++;
			continue;
		}
		if (n == 0) {
			char out[1024];
			struct reply r = { out, 0, sizeof(out) };
			clock_gettime(CLOCK_MONOTONIC, &last);
			if (prof_periodic_dump(&r)) {
				say("periodic dumps stopped: %.*s", (int)(r.len && out[r.len - 1] == '\n' ? r.len - 1 : r.len),
				    out + (strncmp(out, "error ", 6) ? 0 : 6));
				jheapctl_every_ms = 0;
			}
			continue;
		}
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0) {
			if ((errno == EBADF || errno == ENOTSOCK || errno == EINVAL) &&
			    (fd = reopen_socket(fd, &reopens)) < 0)
				break;
			continue;
		}
		struct stat cst;
		conn_ino = fstat(c, &cst) ? 0 : cst.st_ino;
		conn_fd = c;
		serve_one(c);
		conn_fd = -1;
		close(c);
	}
	/* the program kept closing the socket: stop, and leave no dead file
	 * behind */
	listen_fd = -1;
	if (owner == getpid())
		unlink(sock_path);
	return NULL;
}

/* Makes the listening socket in the folder of the process's effective
 * user (FIRST, in the program's own start: also removes dead sockets
 * there) and sets listen_fd, listen_ino, owner and sock_path.  Returns the
 * descriptor, or -1 (after saying why when LOUD). */
static int open_socket(bool first, bool loud)
{
	char dir[sizeof(sock_path)], why[400];
	if (!socket_dir(dir, sizeof(dir), why, sizeof(why))) {
		if (loud)
			say("not listening: %s", why);
		return -1;
	}
	if (first)
		sweep(dir);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%d.sock", dir, (int)getpid()) >=
	    (int)sizeof(sa.sun_path)) {
		if (loud)
			say("not listening: the socket path under %s is too long", dir);
		return -1;
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		if (loud)
			say("not listening: socket: %s", strerror(errno));
		return -1;
	}
	unlink(sa.sun_path);   /* left by a process that had this pid, or by our own image before exec */
	struct stat st;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(sa.sun_path, 0600) ||
	    listen(fd, 16) || fstat(fd, &st)) {
		if (loud)
			say("not listening on %s: %s", sa.sun_path, strerror(errno));
		close(fd);
		return -1;
	}
	memcpy(sock_path, sa.sun_path, sizeof(sock_path));
	listen_fd = fd;
	listen_ino = st.st_ino;
	owner = getpid();
	return fd;
}

/* Makes the socket and starts the thread; FIRST as open_socket().  True
 * when listening. */
static bool start_listener(bool first)
{
	int fd = open_socket(first, true);
	if (fd < 0)
		return false;

	pthread_attr_t attr;
	pthread_t th;
	sigset_t all, old;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	bool was;
	int quiet = prof_quiet_begin(&was);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);   /* the thread inherits it */
	int e = pthread_create(&th, &attr, serve, (void *)(intptr_t)fd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!quiet)
		prof_quiet_end(was);
	pthread_attr_destroy(&attr);
	if (e) {
		say("not listening: cannot start a thread: %s", strerror(e));
		unlink(sock_path);
		close(fd);
		listen_fd = -1;
		return false;
	}
	pthread_setname_np(th, "jheap-ctl");
	return true;
}

static void after_fork_child(void)
{
	int c = conn_fd, l = listen_fd;
	if (still_ours(c, conn_ino))
		close(c);
	if (still_ours(l, listen_ino))
		close(l);
	conn_fd = listen_fd = -1;
	owner = 0;
	prof_after_fork();
	start_listener(false);
}

__attribute__((constructor))
static void jheapctl_init(void)
{
	dumpfile_init();
	const char *every = getenv("JHEAP_CTL_EVERY");
	if (every && *every) {
		char *end;
		double s = strtod(every, &end);
		if (*end || !(s >= 0.001 && s <= 1e7))
			say("JHEAP_CTL_EVERY='%s' is not a number of seconds; no periodic dumps", every);
		else
			jheapctl_every_ms = (long)(s * 1000 + 0.5);
	}
	/* jheap record names the process it started: that one says at once
	 * when it cannot be profiled (its children, and processes that load
	 * the library by hand, say so when asked) */
	const char *check = getenv("JHEAP_CTL_CHECK");
	if (check && strtol(check, NULL, 10) == (long)getpid()) {
		char why[PATH_MAX + 300];
		struct reply r = { why, 0, sizeof(why) };
		if (prof_check_start(&r))
			say("no heap profiles: %.*s", (int)(r.len && why[r.len - 1] == '\n' ? r.len - 1 : r.len), why);
	}
	/* Registered after the thread started, which allocated: jemalloc has
	 * registered its own fork handlers by then, and its child handler
	 * (which makes its locks usable again) runs before ours. */
	if (start_listener(true))
		pthread_atfork(NULL, NULL, after_fork_child);
}

__attribute__((destructor))
static void jheapctl_fini(void)
{
	if (listen_fd >= 0 && owner == getpid())
		unlink(sock_path);
}

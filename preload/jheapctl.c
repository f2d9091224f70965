/*
 * libjheapctl.so: jheap's control library.  Preloaded into a program that
 * allocates with jemalloc (jheap record does both), it starts one thread
 * that listens on a Unix socket for this process, and carries out what
 * `jheap dump PID` and `jheap ctl PID ...` ask for (prof.c).
 *
 * The socket is PID.sock in a folder of the process's user closed to
 * everybody else (sockdir.c): $XDG_RUNTIME_DIR/jheap when XDG_RUNTIME_DIR
 * is a folder of that user, else $TMPDIR/jheap-UID.XXXXXX (then /tmp's), a
 * name nobody else can predict, made by mkdtemp; a folder of that name
 * that is not the user's own and private is skipped, never used.  jheap
 * finds the socket from /proc/PID/net/unix (cli/control.c) and checks the
 * folder, the socket and the peer itself.  Every connection's peer is
 * checked with SO_PEERCRED: the process's own user or root, nobody else.
 *
 * Protocol (version 1), one request per connection:
 *   request: "jheap1 COMMAND[ ARGUMENT]\n": status, dump, on, off, reset,
 *            sample LG, peaks on, peaks off (peak dumps: peaks.c)
 *   reply:   "ok ..." or "error MESSAGE", then for status "name: value"
 *            lines, then an empty line; then the connection is closed.
 * A request must come whole within REQUEST_MS of the connection (a total,
 * not per read), else the connection is closed unanswered.  Up to
 * NCLIENTS connections are read at once, so one slow or silent client
 * does not hold up another (the oldest is dropped when a new one finds
 * every place taken).  The reply to "dump" names the dump jemalloc wrote,
 * an absolute path PREFIX.PID.SEQ.mN.heap; jheap trusts none of it until
 * it has opened the file and checked it (cli/dump.c).
 *
 * What the program pays: one thread blocked in poll() (no timer unless
 * JHEAP_CTL_EVERY asks for periodic dumps, after five looks at its socket
 * in the first 3.1 s: see settle_ms), a 256 KiB stack reserved for it
 * and a socket.  The thread blocks every signal, so signals reach the
 * program's threads as before (a program that waits for them with sigwait
 * still gets them); it installs no signal handler and allocates nothing
 * with malloc once it runs (the connections' buffers are static).
 *
 * fork(): the child closes the parent's socket and connections (it must
 * not answer, or hold a connection open, for the parent's pid) and starts
 * a listener of its own, as a daemon's or a pre-forked worker's child is
 * worth profiling.  exec(): the socket is close-on-exec; a new image that
 * loads the library again replaces the socket file of its pid.
 *
 * A program that closes the socket (a daemon closes every descriptor as
 * it starts; varnishd does): the thread makes a new one, up to REOPENS
 * times, in the folder of the user the process runs as by then, so a
 * daemon that dropped root answers as its user.
 *
 * Test builds only (make unit builds build/tests/libjheapctl-test.so with
 * JHEAPCTL_TESTING; never installed, never preloaded by jheap record):
 * JHEAP_CTL_TEST_PEER_UID=N makes every peer appear to be user N, so
 * that the refusal of other users is tested without a second user.
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
static pid_t owner;                   /* the pid the socket answers for */

/* The connections being read: fd -1 when the place is free. */
#define NCLIENTS 4
#define REQUEST_MS 5000
struct client {
	volatile int fd;
	ino_t ino;
	long deadline;        /* now_ms() */
	size_t n;
	char req[256];
};
static struct client clients[NCLIENTS] = { { .fd = -1 }, { .fd = -1 }, { .fd = -1 }, { .fd = -1 } };

#ifdef JHEAPCTL_TESTING
static long test_peer_uid = -1;       /* JHEAP_CTL_TEST_PEER_UID */
#endif
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

static long now_ms(void)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* The reply, at once or not at all: the socket's buffer holds it, and a
 * client that does not read must not hold the thread. */
static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* Whether the peer CRED may control this process: its own user or root. */
static bool peer_allowed(const struct ucred *cred)
{
	return cred->uid == 0 || cred->uid == geteuid();
}

/* Answers the request REQ (its line, without the newline) on C. */
static void serve_request(int c, const char *req)
{
	char out[8192];
	struct reply r = { out, 0, sizeof(out) };
	struct ucred cred = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
	socklen_t clen = sizeof(cred);
	/* a client that gave up while the process was stopped left its
	 * request in the queue: no dump for nobody */
	struct pollfd gone = { .fd = c, .events = POLLRDHUP };
	if (poll(&gone, 1, 0) == 1 && (gone.revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return;
	/* the request is read first, so that a refused client reads the
	 * answer rather than a broken pipe */
	int bad = getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &clen);
#ifdef JHEAPCTL_TESTING
	if (test_peer_uid >= 0)
		cred.uid = (uid_t)test_peer_uid;
#endif
	if (bad || !peer_allowed(&cred)) {
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
	else if (!strcmp(req, "jheap1 peaks on") || !strcmp(req, "jheap1 peaks off"))
		peaks_cmd(&r, req[14] == 'n', now_ms());
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

/* Closes the connection of place C (unless the program closed it and
 * reused its number) and frees the place. */
static void client_close(struct client *c)
{
	if (still_ours(c->fd, c->ino))
		close(c->fd);
	c->fd = -1;
}

/* Reads what came on connection C; answers and closes it once its
 * request line is whole; closes it when the client went away or sent
 * more than a request. */
static void client_read(struct client *c)
{
	if (!still_ours(c->fd, c->ino)) {
		c->fd = -1;   /* the program closed it: not ours to close */
		return;
	}
	ssize_t k = recv(c->fd, c->req + c->n, sizeof(c->req) - 1 - c->n, MSG_DONTWAIT);
	if (k < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (k <= 0) {
		client_close(c);
		return;
	}
	c->n += (size_t)k;
	char *nl = memchr(c->req, '\n', c->n);
	if (!nl) {
		if (c->n >= sizeof(c->req) - 1)
			client_close(c);
		return;
	}
	*nl = '\0';
	serve_request(c->fd, c->req);
	client_close(c);
}

/* Takes a new connection on listening socket FD into a free place (the
 * oldest connection is dropped when there is none).  Returns -1 when FD
 * is no socket any more. */
static int client_accept(int fd, long now)
{
	int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (c < 0)
		return errno == EBADF || errno == ENOTSOCK || errno == EINVAL ? -1 : 0;
	struct client *slot = NULL;
	for (int i = 0; i < NCLIENTS && !slot; i++)
		if (clients[i].fd < 0)
			slot = &clients[i];
	if (!slot) {
		slot = &clients[0];
		for (int i = 1; i < NCLIENTS; i++)
			if (clients[i].deadline < slot->deadline)
				slot = &clients[i];
		client_close(slot);
	}
	struct stat st;
	slot->ino = fstat(c, &st) ? 0 : st.st_ino;
	slot->deadline = now + REQUEST_MS;
	slot->n = 0;
	slot->fd = c;
	return 0;
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
	long now = now_ms();
	long settle_at = now + settle_ms[0], every_at = now + jheapctl_every_ms;
	for (;;) {
		/* the next thing to do: a look at the socket, a periodic dump,
		 * a connection's deadline */
		long wake = settle < NSETTLE ? settle_at : -1;
		if (jheapctl_every_ms && (wake < 0 || every_at < wake))
			wake = every_at;
		long peak_at = peaks_next_ms();
		if (peak_at >= 0 && (wake < 0 || peak_at < wake))
			wake = peak_at;
		struct pollfd p[1 + NCLIENTS] = { { .fd = fd, .events = POLLIN } };
		for (int i = 0; i < NCLIENTS; i++) {
			p[1 + i].fd = clients[i].fd;   /* -1: not polled */
			p[1 + i].events = POLLIN;
			if (clients[i].fd >= 0 && (wake < 0 || clients[i].deadline < wake))
				wake = clients[i].deadline;
		}
		now = now_ms();
		int timeout = wake < 0 ? -1 : wake <= now ? 0 : wake - now < 1L << 30 ? (int)(wake - now) : 1 << 30;
		int n = poll(p, 1 + NCLIENTS, timeout);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (p[0].revents & POLLNVAL) || !still_ours(fd, listen_ino)) {
			if ((fd = reopen_socket(fd, &reopens)) < 0)
				break;
			settle = 0;
			settle_at = now_ms() + settle_ms[0];
			continue;
		}
		now = now_ms();
		for (int i = 0; i < NCLIENTS; i++) {
			if (clients[i].fd >= 0 && p[1 + i].fd == clients[i].fd && p[1 + i].revents)
				client_read(&clients[i]);
			if (clients[i].fd >= 0 && now_ms() >= clients[i].deadline)
				client_close(&clients[i]);   /* too slow: unanswered */
		}
		if (settle < NSETTLE && now >= settle_at) {
			settle++;
			if (settle < NSETTLE)
				settle_at = now + settle_ms[settle];
		}
		if (jheapctl_every_ms && now >= every_at) {
			char out[1024];
			struct reply r = { out, 0, sizeof(out) };
			if (prof_periodic_dump(&r)) {
				say("periodic dumps stopped: %.*s", (int)(r.len && out[r.len - 1] == '\n' ? r.len - 1 : r.len),
				    out + (strncmp(out, "error ", 6) ? 0 : 6));
				jheapctl_every_ms = 0;
			}
			every_at = now_ms() + jheapctl_every_ms;
		}
		peaks_tick(now_ms());
		if ((p[0].revents & POLLIN) && client_accept(fd, now_ms()) < 0 &&
		    (fd = reopen_socket(fd, &reopens)) < 0)
			break;
	}
	/* the program kept closing the socket: stop, and leave no dead file
	 * behind */
	for (int i = 0; i < NCLIENTS; i++)
		if (clients[i].fd >= 0)
			client_close(&clients[i]);
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
	if (sockdir_find(dir, sizeof(dir), why, sizeof(why))) {
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
	int l = listen_fd;
	for (int i = 0; i < NCLIENTS; i++)
		if (clients[i].fd >= 0)
			client_close(&clients[i]);
	if (still_ours(l, listen_ino))
		close(l);
	listen_fd = -1;
	owner = 0;
	family_after_fork();
	prof_after_fork();
	peaks_after_fork();
	start_listener(false);
}

__attribute__((constructor))
static void jheapctl_init(void)
{
	dumpfile_init();
	peaks_init();
	leakmsg_init();
#ifdef JHEAPCTL_TESTING
	const char *peer = getenv("JHEAP_CTL_TEST_PEER_UID");
	if (peer && *peer >= '0' && *peer <= '9')
		test_peer_uid = strtol(peer, NULL, 10);
#endif
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
	bool first = check && strtol(check, NULL, 10) == (long)getpid();
	/* a program a recorded process started is not followed (family.c):
	 * no socket, no dump */
	if (!family_init())
		return;
	if (first) {
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

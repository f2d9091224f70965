/*
 * control.c: finds a process's control socket and asks it one thing
 * (the protocol is described in preload/jheapctl.c).
 *
 * The socket of process PID is PID.sock in $XDG_RUNTIME_DIR/jheap of that
 * process (read from /proc/PID/environ) or in /tmp/jheap-UID, UID being
 * the process's user, or, for a daemon that dropped root after it made
 * its socket, in /tmp/jheap-0.  A socket is used only when it and its folder belong
 * to that user (or root) and the folder is closed to others, so another
 * user cannot stand in for the process.  Every wait has a deadline: a
 * stopped or hung process makes jheap give up with a message, never hang.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/control.h"
#include "lib/errors.h"

int control_parse_pid(const char *s, pid_t *pid)
{
	char *end;
	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < 1 || v > INT_MAX)
		return -1;
	*pid = (pid_t)v;
	return 0;
}

/* Reads at most LEN-1 bytes of a small /proc file; -1 when unreadable. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	ssize_t k;
	while (n + 1 < len && (k = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)k;
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

/* The process's state letter from /proc/PID/stat (R, S, T, Z, ...), or 0
 * when the process is gone. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	const char *p = strrchr(buf, ')');   /* the name may hold spaces and ')' */
	return p && p[1] == ' ' ? p[2] : 0;
}

/* "process 1234 (name)" for messages. */
static void proc_label(pid_t pid, char *out, size_t len)
{
	char path[64], comm[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (read_small(path, comm, sizeof(comm)) > 0) {
		comm[strcspn(comm, "\n")] = '\0';
		snprintf(out, len, "process %d (%s)", (int)pid, comm);
	} else {
		snprintf(out, len, "process %d", (int)pid);
	}
}

/* True when the process has the control library mapped; false when not or
 * when its maps cannot be read (then *KNOWN is false). */
static bool has_library(pid_t pid, bool *known)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	*known = false;
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	*known = true;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libjheapctl.so") != NULL;
	if (ferror(f))
		*known = false;
	fclose(f);
	return found;
}

/* The folder and the socket belong to UID or root, and the folder is
 * closed to others. */
static bool trusted(const char *dir, const char *sock, uid_t uid)
{
	struct stat d, s;
	return !lstat(dir, &d) && S_ISDIR(d.st_mode) && (d.st_uid == uid || d.st_uid == 0) &&
	       !(d.st_mode & 022) && !lstat(sock, &s) && S_ISSOCK(s.st_mode) &&
	       (s.st_uid == uid || s.st_uid == 0);
}

/* Finds the socket of PID (user UID): fills PATH and returns true. */
static bool find_socket(pid_t pid, uid_t uid, char *path, size_t len, bool *untrusted)
{
	char dirs[3][PATH_MAX];
	int n = 0;
	char env[65536], file[64];
	snprintf(file, sizeof(file), "/proc/%d/environ", (int)pid);
	ssize_t k = read_small(file, env, sizeof(env));
	for (ssize_t i = 0; k > 0 && i < k; i += (ssize_t)strlen(env + i) + 1) {
		const char *v = env + i;
		struct stat st;
		if (!strncmp(v, "XDG_RUNTIME_DIR=/", 17) && !stat(v + 16, &st) && st.st_uid == uid) {
			snprintf(dirs[n++], sizeof(dirs[0]), "%s/jheap", v + 16);
			break;
		}
	}
	snprintf(dirs[n++], sizeof(dirs[0]), "/tmp/jheap-%u", (unsigned)uid);
	/* a daemon started as root made its socket in root's folder before
	 * it dropped its privileges: only root can open it there */
	if (uid != 0)
		snprintf(dirs[n++], sizeof(dirs[0]), "/tmp/jheap-0");
	*untrusted = false;
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (snprintf(path, len, "%s/%d.sock", dirs[i], (int)pid) >= (int)len ||
		    lstat(path, &st))
			continue;
		if (trusted(dirs[i], path, uid))
			return true;
		*untrusted = true;
	}
	return false;
}

static double now_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Why the process said nothing more: it ended, or it is a zombie, or not.
 * A dying process closes its sockets before it becomes a zombie: give it
 * half a second to get there. */
static int ended(pid_t pid, const char *label, char *err, size_t errlen)
{
	char st = proc_state(pid);
	for (int i = 0; i < 50 && st && st != 'Z' && st != 'X'; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		st = proc_state(pid);
	}
	if (!st || st == 'Z' || st == 'X')
		return jh_err(err, errlen, JH_EIO, "%s ended before it answered%s", label,
			      st ? " (it is a zombie: it exited or was killed)" : " (it exited or was killed)");
	return jh_err(err, errlen, JH_EIO, "%s closed the connection without an answer", label);
}

/* One try of control_request() until DEADLINE; *AGAIN says a second try
 * may succeed: the socket refused the connection, or closed it before a
 * byte of answer, while the process runs on (the program had closed the
 * socket, and the control thread noticed only then: it listens again at
 * once). */
static int request_once(pid_t pid, const char *command, double timeout, double deadline,
			char *reply, size_t replylen, char *err, size_t errlen, bool *again)
{
	char label[128], proc[64], path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct stat pst;
	proc_label(pid, label, sizeof(label));
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (stat(proc, &pst))
		return jh_err(err, errlen, JH_EIO, "no process %d", (int)pid);
	char state = proc_state(pid);
	if (state == 'Z' || state == 'X')
		return jh_err(err, errlen, JH_EIO, "%s has exited (a zombie its parent has not collected)", label);
	bool untrusted = false;
	if (!find_socket(pid, pst.st_uid, path, sizeof(path), &untrusted)) {
		bool known;
		bool lib = has_library(pid, &known);
		if (untrusted)
			return jh_err(err, errlen, JH_EIO, "%s: its control socket is not in a private folder of its user (%u) or root; not using it",
				      label, (unsigned)pst.st_uid);
		if (known && !lib)
			return jh_err(err, errlen, JH_EIO, "%s does not have jheap's control library loaded: start it with 'jheap record -- PROGRAM', or with LD_PRELOAD naming libjheapctl.so and MALLOC_CONF=prof:true",
				      label);
		if (known)
			return jh_err(err, errlen, JH_EIO, "%s has jheap's control library but no socket in /tmp/jheap-%u or its $XDG_RUNTIME_DIR/jheap (see its standard error for why)",
				      label, (unsigned)pst.st_uid);
		return jh_err(err, errlen, JH_EIO, "no control socket of %s found (in /tmp/jheap-%u or its $XDG_RUNTIME_DIR/jheap); it runs as user %u: is it started with jheap record, and are you that user or root?",
			      label, (unsigned)pst.st_uid, (unsigned)pst.st_uid);
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return jh_err(err, errlen, JH_EIO, "socket: %s", strerror(errno));
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	memcpy(sa.sun_path, path, sizeof(sa.sun_path));
	/* A full backlog (the process is stopped) says EAGAIN: retry till the deadline. */
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;
		if ((e == EAGAIN || e == EINTR) && now_seconds() < deadline) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			nanosleep(&ts, NULL);
			continue;
		}
		close(fd);
		if (e == EAGAIN)
			return jh_err(err, errlen, JH_EIO, "%s did not accept a connection within %g s (is it stopped? state %c)",
				      label, timeout, proc_state(pid) ? proc_state(pid) : '?');
		if (e == ECONNREFUSED)
			*again = true;
		if (e == ECONNREFUSED)
			return jh_err(err, errlen, JH_EIO, "%s does not listen on %s: the socket was left by an earlier process with that id, or its control thread stopped (the program closed its socket)",
				      label, path);
		if (e == EACCES || e == EPERM) {
			struct passwd *pw = getpwuid(pst.st_uid);
			return jh_err(err, errlen, JH_EIO, "cannot reach the control socket of %s (%s): %s; it runs as user %s: run jheap as that user or as root",
				      label, path, strerror(e), pw ? pw->pw_name : "?");
		}
		return jh_err(err, errlen, JH_EIO, "cannot connect to %s (%s): %s", path, label, strerror(e));
	}
	char req[128];
	int rn = snprintf(req, sizeof(req), "jheap1 %s\n", command);
	/* a process that refused us may have answered and closed already:
	 * then the answer is read all the same */
	if (send(fd, req, (size_t)rn, MSG_NOSIGNAL) != rn && errno != EPIPE && errno != ECONNRESET) {
		int e = errno;
		close(fd);
		return jh_err(err, errlen, JH_EIO, "cannot send to %s: %s", label, strerror(e));
	}
	size_t n = 0;
	int rc = 0;
	for (;;) {
		if (n >= 2 && reply[n - 1] == '\n' && reply[n - 2] == '\n')
			break;
		if (n + 1 >= replylen) {
			rc = jh_err(err, errlen, JH_EIO, "%s sent a longer answer than expected", label);
			break;
		}
		double left = deadline - now_seconds();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int k = left > 0 ? poll(&p, 1, (int)(left * 1000) + 1) : 0;
		if (k < 0 && errno == EINTR)
			continue;
		if (k == 0) {
			char st = proc_state(pid);
			rc = jh_err(err, errlen, JH_EIO, "%s did not answer within %g s%s", label, timeout,
				    st == 'T' || st == 't' ? " (it is stopped)" : " (a large heap takes a while to dump: --timeout=SECONDS)");
			break;
		}
		ssize_t r = read(fd, reply + n, replylen - 1 - n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0) {
			rc = ended(pid, label, err, errlen);
			char st = proc_state(pid);
			*again = !n && st && st != 'Z' && st != 'X';
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	if (rc)
		return rc;
	reply[n - 2] = '\0';   /* drop the empty line that ends it */
	if (!strncmp(reply, "ok", 2) && (reply[2] == ' ' || reply[2] == '\n' || !reply[2])) {
		size_t skip = 2 + (reply[2] != '\0');
		memmove(reply, reply + skip, strlen(reply + skip) + 1);
		return 0;
	}
	const char *msg = strncmp(reply, "error ", 6) ? reply : reply + 6;
	return jh_err(err, errlen, JH_EIO, "%s: %s", label, msg);
}

int control_request(pid_t pid, const char *command, double timeout,
		    char *reply, size_t replylen, char *err, size_t errlen)
{
	double deadline = now_seconds() + timeout;
	bool again = false;
	int rc = request_once(pid, command, timeout, deadline, reply, replylen, err, errlen, &again);
	if (rc && again && now_seconds() + 0.3 < deadline) {
		struct timespec ts = { 0, 300 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		again = false;
		rc = request_once(pid, command, timeout, deadline, reply, replylen, err, errlen, &again);
	}
	return rc;
}

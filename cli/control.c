/*
 * control.c: finds a process's control socket and asks it one thing
 * (the protocol is described in preload/jheapctl.c).
 *
 * Everything about the socket comes from the process, and the process
 * may be another user's: jheap run as root must not be made to talk to
 * another process than the one named, nor to trust a socket someone else
 * could swap.  So:
 *   - The socket is found from /proc/PID/net/unix: a listening socket
 *     named DIR/PID.sock, DIR being one of the library's folders
 *     ($XDG_RUNTIME_DIR/jheap, or jheap-UID.XXXXXX in $TMPDIR or /tmp,
 *     whose name is not predictable: preload/sockdir.c), those the
 *     process holds (/proc/PID/fd) first.
 *   - DIR is opened without following a link and checked on the
 *     descriptor: a folder of the process's user or root, closed to
 *     others; the socket in it is that user's or root's.
 *   - The connection goes through that descriptor (/proc/self/fd/N/
 *     PID.sock), not a second lookup of DIR.
 *   - Once connected, SO_PEERCRED must name process PID itself, of its
 *     user or root: a socket swapped for a link to another process's
 *     socket between the checks and the connection is refused before a
 *     byte is sent.
 *   - The answer is text from the process: the callers check what it
 *     names and escape it before printing (cli/dump.c).
 * The process's user is its effective uid, from /proc/PID/status.  A
 * daemon that made its socket as root before dropping root is reached
 * there by root.  Every wait has a deadline: a stopped or hung process
 * makes jheap give up with a message, never hang.
 */
#include <dirent.h>
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
#include "cli/privdir.h"
#include "lib/errors.h"
#include "lib/safefile.h"

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

/* The process's state letter from /proc/PID/stat (R, S, T, Z, ...), or 0
 * when the process is gone. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (safefile_read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	const char *p = strrchr(buf, ')');   /* the name may hold spaces and ')' */
	return p && p[1] == ' ' ? p[2] : 0;
}

/* "process 1234 (name)" for messages. */
static void proc_label(pid_t pid, char *out, size_t len)
{
	char path[64], comm[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (safefile_read_small(path, comm, sizeof(comm)) > 0) {
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

/* The effective user of PID (as the library sees itself: geteuid) from
 * /proc/PID/status; 0, or -1 when the process is gone. */
static int proc_euid(pid_t pid, uid_t *uid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (safefile_read_small(path, buf, sizeof(buf)) <= 0)
		return -1;
	const char *u = strstr(buf, "\nUid:");
	unsigned real, eff;
	if (!u || sscanf(u + 5, "%u %u", &real, &eff) != 2)
		return -1;
	*uid = (uid_t)eff;
	return 0;
}

/* A socket the process may listen on, from its network namespace's
 * table of Unix sockets. */
struct candidate {
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	unsigned long inode;
	bool held;   /* the process holds it (its /proc/PID/fd says so) */
};
#define MAX_CANDIDATES 8

/* The listening sockets named DIR/PID.sock, DIR's last component "jheap"
 * or "jheap-..." (the library's folders: preload/sockdir.c), from
 * /proc/PID/net/unix (readable by anyone); those whose inode PID holds
 * first.  Nothing here is trusted: each is checked when it is tried. */
static int find_candidates(pid_t pid, struct candidate *c, int max)
{
	char path[64], line[4096], tail[32];
	int n = 0;
	snprintf(path, sizeof(path), "/proc/%d/net/unix", (int)pid);
	snprintf(tail, sizeof(tail), "/%d.sock", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t tl = strlen(tail);
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned refs, proto, flags, type, st;
		unsigned long inode;
		int at = 0;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%*[0-9a-fA-F]: %x %x %x %x %x %lu %n", &refs, &proto, &flags, &type, &st,
			   &inode, &at) < 6 || !at || type != 1 || !(flags & 0x10000))
			continue;   /* not a listening stream socket */
		const char *p = line + at, *slash;
		size_t len = strlen(p);
		if (p[0] != '/' || len < tl || len >= sizeof(c->path) || strcmp(p + len - tl, tail))
			continue;
		slash = p + len - tl;   /* the '/' before PID.sock */
		const char *d = slash;
		while (d > p && d[-1] != '/')
			d--;
		if (!(slash - d == 5 && !strncmp(d, "jheap", 5)) && strncmp(d, "jheap-", 6))
			continue;
		snprintf(c[n].path, sizeof(c[n].path), "%s", p);
		c[n].inode = inode;
		c[n].held = false;
		n++;
	}
	fclose(f);
	/* which of them the process holds (readable by its user and root) */
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	DIR *dir = n ? opendir(path) : NULL;
	struct dirent *e;
	while (dir && (e = readdir(dir))) {
		char link[64 + 256 + 2], to[64];
		snprintf(link, sizeof(link), "%s/%s", path, e->d_name);
		ssize_t k = readlink(link, to, sizeof(to) - 1);
		unsigned long ino;
		if (k <= 0)
			continue;
		to[k] = '\0';
		if (sscanf(to, "socket:[%lu]", &ino) == 1)
			for (int i = 0; i < n; i++)
				c[i].held |= c[i].inode == ino;
	}
	if (dir)
		closedir(dir);
	/* held first, else in the table's order */
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && c[j].held && !c[j - 1].held; j--) {
			struct candidate t = c[j];
			c[j] = c[j - 1];
			c[j - 1] = t;
		}
	return n;
}

/* UID may stand for a process of user EUID: that user or root. */
static bool trusted_uid(uid_t uid, uid_t euid)
{
	return uid == euid || uid == 0;
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

/* Connects to candidate C of process PID (effective user EUID) through
 * a descriptor of its folder, after checking the folder (a private one of
 * that user or root, opened without following a link) and the socket
 * (that user's or root's), and checks the peer with SO_PEERCRED: it must
 * be process PID itself, of that user or root.  A socket swapped for a
 * link to another process's, between any check and the connection, fails
 * the last.  Returns the connected descriptor, or a negative code with a
 * message; *AGAIN as request_once(). */
static int connect_candidate(pid_t pid, uid_t euid, const struct candidate *c, const char *label,
			     double timeout, double deadline, char *err, size_t errlen, bool *again)
{
	char dir[sizeof(c->path)], what[128];
	const char *name = strrchr(c->path, '/') + 1;
	snprintf(dir, sizeof(dir), "%.*s", (int)(name - 1 - c->path), c->path);
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (dfd < 0 || fstat(dfd, &st)) {
		int e = errno;
		if (dfd >= 0)
			close(dfd);
		return jh_err(err, errlen, JH_EIO, "%s: cannot open the folder of its control socket %s: %s",
			      label, dir, strerror(e));
	}
	if (!trusted_uid(st.st_uid, euid) || (st.st_mode & 077)) {
		privdir_describe(&st, what, sizeof(what));
		close(dfd);
		return jh_err(err, errlen, JH_EIO, "%s: the folder of its control socket %s is not a private folder of its user (%u) or root (%s); not using it",
			      label, dir, (unsigned)euid, what);
	}
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) && (errno == EACCES || errno == EPERM)) {
		struct passwd *pw = getpwuid(euid);
		close(dfd);
		return jh_err(err, errlen, JH_EIO, "cannot reach the control socket of %s (%s): %s; it runs as user %s: run jheap as that user or as root",
			      label, c->path, strerror(EACCES), pw ? pw->pw_name : "?");
	}
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISSOCK(st.st_mode) ||
	    !trusted_uid(st.st_uid, euid)) {
		close(dfd);
		return jh_err(err, errlen, JH_EIO, "%s: %s is not a socket of its user (%u) or root; not using it",
			      label, c->path, (unsigned)euid);
	}
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		int e = errno;
		close(dfd);
		return jh_err(err, errlen, JH_EIO, "socket: %s", strerror(e));
	}
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dfd, name);
	/* A full backlog (the process is stopped) says EAGAIN: retry till the deadline. */
	int rc;
	while ((rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa)))) {
		int e = errno;
		if ((e == EAGAIN || e == EINTR) && now_seconds() < deadline) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };
			nanosleep(&ts, NULL);
			continue;
		}
		close(fd);
		close(dfd);
		if (e == EAGAIN)
			return jh_err(err, errlen, JH_EIO, "%s did not accept a connection within %g s (is it stopped? state %c)",
				      label, timeout, proc_state(pid) ? proc_state(pid) : '?');
		if (e == ECONNREFUSED) {
			*again = true;
			return jh_err(err, errlen, JH_EIO, "%s does not listen on %s: its control thread stopped (the program closed its socket)",
				      label, c->path);
		}
		if (e == EACCES || e == EPERM) {
			struct passwd *pw = getpwuid(euid);
			return jh_err(err, errlen, JH_EIO, "cannot reach the control socket of %s (%s): %s; it runs as user %s: run jheap as that user or as root",
				      label, c->path, strerror(e), pw ? pw->pw_name : "?");
		}
		return jh_err(err, errlen, JH_EIO, "cannot connect to %s (%s): %s", c->path, label, strerror(e));
	}
	close(dfd);
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.pid != pid ||
	    !trusted_uid(cred.uid, euid)) {
		close(fd);
		return jh_err(err, errlen, JH_EIO, "%s: the socket %s answers for process %d of user %u, not for process %d of user %u or root; not using it",
			      label, c->path, (int)cred.pid, (unsigned)cred.uid, (int)pid, (unsigned)euid);
	}
	return fd;
}

/* One try of control_request() until DEADLINE; *AGAIN says a second try
 * may succeed: the socket refused the connection, or closed it before a
 * byte of answer, while the process runs on (the program had closed the
 * socket, and the control thread noticed only then: it listens again at
 * once). */
static int request_once(pid_t pid, const char *command, double timeout, double deadline,
			char *reply, size_t replylen, char *err, size_t errlen, bool *again)
{
	char label[128], proc[64];
	struct stat pst;
	uid_t euid;
	proc_label(pid, label, sizeof(label));
	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	if (stat(proc, &pst) || proc_euid(pid, &euid))
		return jh_err(err, errlen, JH_EIO, "no process %d", (int)pid);
	char state = proc_state(pid);
	if (state == 'Z' || state == 'X')
		return jh_err(err, errlen, JH_EIO, "%s has exited (a zombie its parent has not collected)", label);
	struct candidate cands[MAX_CANDIDATES];
	int ncand = find_candidates(pid, cands, MAX_CANDIDATES);
	int fd = -1, rc = 0;
	for (int i = 0; i < ncand && fd < 0; i++) {
		/* the first refusal says most: the socket the process holds */
		char e2[1024];
		int r = connect_candidate(pid, euid, &cands[i], label, timeout, deadline,
					  i ? e2 : err, i ? sizeof(e2) : errlen, again);
		if (r >= 0)
			fd = r;
		else if (!i)
			rc = r;
	}
	if (fd < 0 && ncand)
		return rc;
	if (fd < 0) {
		bool known;
		bool lib = has_library(pid, &known);
		if (known && !lib)
			return jh_err(err, errlen, CONTROL_ENOLIB, "%s does not have jheap's control library loaded: start it with 'jheap record -- PROGRAM', or with LD_PRELOAD naming libjheapctl.so and MALLOC_CONF=prof:true",
				      label);
		if (known)
			return jh_err(err, errlen, JH_EIO, "%s has jheap's control library but no control socket (see its standard error for why)",
				      label);
		return jh_err(err, errlen, JH_EIO, "no control socket of %s found; it runs as user %u: is it started with jheap record, and are you that user or root?",
			      label, (unsigned)euid);
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
	rc = 0;
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

/* The prof_prefix settings in the environment PID started with (its
 * MALLOC_CONF, JE_MALLOC_CONF and _RJEM_MALLOC_CONF, the last setting of
 * each), into PREFIXES; their number, 0 when none or unreadable. */
static int env_prefixes(pid_t pid, char prefixes[3][PATH_MAX])
{
	static const char *const vars[] = { "MALLOC_CONF=", "JE_MALLOC_CONF=", "_RJEM_MALLOC_CONF=" };
	char path[64];
	size_t cap = 1 << 20;
	char *env = malloc(cap);
	int n = 0;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	ssize_t len = env ? safefile_read_small(path, env, cap) : -1;
	for (ssize_t i = 0; len > 0 && i < len; i += (ssize_t)strlen(env + i) + 1) {
		const char *v = env + i, *found = NULL;
		for (int k = 0; k < 3; k++)
			if (!strncmp(v, vars[k], strlen(vars[k])))
				v += strlen(vars[k]), found = v;
		if (!found)
			continue;
		const char *last = NULL;
		for (const char *p = v; *p; p++)
			if ((p == v || p[-1] == ',') && !strncmp(p, "prof_prefix:", 12))
				last = p + 12;
		if (last && n < 3)
			snprintf(prefixes[n++], PATH_MAX, "%.*s", (int)strcspn(last, ","), last);
	}
	free(env);
	return n;
}

/* PATH is absolute and plain: no control character, no empty, "." or
 * ".." component, no trailing slash. */
static bool plain_path(const char *path)
{
	if (path[0] != '/' || strlen(path) >= PATH_MAX)
		return false;
	for (const unsigned char *p = (const unsigned char *)path; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	for (const char *p = path; *p; p++) {
		if (*p != '/')
			continue;
		size_t k = strcspn(p + 1, "/");
		if (!k || (k == 1 && p[1] == '.') || (k == 2 && p[1] == '.' && p[2] == '.'))
			return false;
	}
	return true;
}

/* NAME is BASE.PID.SEQ.mN.heap, as jemalloc names a dump it was asked
 * for; *BASELEN gets BASE's length. */
static bool dump_name(const char *name, pid_t pid, size_t *baselen)
{
	size_t n = strlen(name);
	const char *p = name + n;
	if (n < 6 || strcmp(p - 5, ".heap"))
		return false;
	p -= 6;   /* N's last digit */
	const char *q = p;
	while (q >= name && *q >= '0' && *q <= '9')
		q--;
	if (q == p || q - 1 < name || *q != 'm' || q[-1] != '.')
		return false;
	p = q - 2;   /* SEQ's last digit */
	q = p;
	while (q >= name && *q >= '0' && *q <= '9')
		q--;
	if (q == p || q < name || *q != '.')
		return false;
	char want[32];
	int k = snprintf(want, sizeof(want), ".%d", (int)pid);
	if (q - name < k + 1 || strncmp(q - k, want, (size_t)k))
		return false;
	*baselen = (size_t)(q - k - name);
	return true;
}

int control_open_dump(pid_t pid, const char *reply, char *path, size_t pathlen,
		      char *err, size_t errlen)
{
	char label[128], prefixes[3][PATH_MAX], dir[PATH_MAX], what[160];
	uid_t euid;
	proc_label(pid, label, sizeof(label));
	if (proc_euid(pid, &euid))
		return jh_err(err, errlen, JH_EIO, "no process %d", (int)pid);
	size_t baselen;
	const char *slash = strrchr(reply, '/');
	if (!plain_path(reply) || !dump_name(slash + 1, pid, &baselen))
		return jh_err(err, errlen, JH_EFORMAT, "%s answered '%s', which is not the absolute path of one of its dumps (PREFIX.%d.SEQ.mN.heap): not using it",
			      label, reply, (int)pid);
	const char *base = slash + 1;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - reply + (slash == reply)), reply);
	/* the dump folder its environment named when it started, if any */
	int np = env_prefixes(pid, prefixes);
	bool in_folder = !np;
	for (int i = 0; i < np && !in_folder; i++) {
		const char *pb = strrchr(prefixes[i], '/');
		const char *pname = pb ? pb + 1 : prefixes[i];
		if (strlen(pname) != baselen || strncmp(pname, base, baselen))
			continue;
		if (prefixes[i][0] != '/')
			in_folder = true;   /* relative: from its current folder then */
		else
			in_folder = (size_t)(pb - prefixes[i]) == (size_t)(slash - reply) &&
				    !strncmp(prefixes[i], reply, (size_t)(slash - reply));
	}
	if (!in_folder)
		return jh_err(err, errlen, JH_EFORMAT, "%s answered '%s', which is not in the dump folder of its prof_prefix (%s): not using it",
			      label, reply, prefixes[0]);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return jh_err(err, errlen, JH_EIO, "cannot open the dump folder '%s' of %s: %s", dir, label,
			      strerror(errno));
	int fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st, dst, wst;
	if (fd < 0 || fstat(fd, &st)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		close(dfd);
		return jh_err(err, errlen, JH_EIO, "cannot open the dump '%s' of %s: %s", reply, label,
			      e == ELOOP ? "it is a symbolic link" : strerror(e));
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != euid || st.st_nlink != 1) {
		privdir_describe(&st, what, sizeof(what));
		close(fd);
		close(dfd);
		return jh_err(err, errlen, JH_EFORMAT, "the dump '%s' of %s is not a regular file of its user %u with one link (%s%s, %u links): not using it",
			      reply, label, (unsigned)euid, S_ISREG(st.st_mode) ? "" : "not a regular file, ",
			      what, (unsigned)st.st_nlink);
	}
	/* Handed on by its path only when nobody but us and root can change
	 * what the path names; else through the descriptor checked here. */
	char e2[512];
	int wfd = fstat(dfd, &dst) ? -1 : privdir_walk(dir, geteuid(), &wst, e2, sizeof(e2));
	bool stable = wfd >= 0 && wst.st_dev == dst.st_dev && wst.st_ino == dst.st_ino &&
		      (dst.st_uid == geteuid() || dst.st_uid == 0) && !(dst.st_mode & 022);
	if (wfd >= 0)
		close(wfd);
	close(dfd);
	int k = stable ? snprintf(path, pathlen, "%s", reply) :
			 snprintf(path, pathlen, "/proc/self/fd/%d", fd);
	if (k < 0 || (size_t)k >= pathlen) {
		close(fd);
		return jh_err(err, errlen, JH_ELIMIT, "the dump path '%s' is too long", reply);
	}
	if (stable)
		close(fd);
	return 0;
}

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/errors.h"
#include "lib/escape.h"
#include "output/child.h"

#define DEFAULT_TIMEOUT 300.0
#define DEFAULT_MAX_OUT ((size_t)1 << 30)
#define KILL_GRACE 3.0     /* seconds */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* The limits: the caller's, unless the environment replaces them. */
static void limits(const struct child *c, double *timeout, size_t *max_out)
{
	const char *t = getenv("JHEAP_CHILD_TIMEOUT"), *m = getenv("JHEAP_CHILD_MAX_OUTPUT");
	char *end;
	*timeout = c->timeout > 0 ? c->timeout : DEFAULT_TIMEOUT;
	*max_out = c->max_out ? c->max_out : DEFAULT_MAX_OUT;
	if (t && *t) {
		double v = strtod(t, &end);
		if (!*end && v > 0 && isfinite(v))
			*timeout = v;
	}
	if (m && *m) {
		unsigned long long v = strtoull(m, &end, 10);
		if (!*end && v > 0)
			*max_out = (size_t)v;
	}
}

/* The parent's ends of the pipes. */
struct ends {
	int in, out, err;
};

/* Keeps the pipes moving until the child closes its output and error
 * pipes; stops it (SIGKILL) past the deadline or the size cap. */
static int pump(struct child *c, pid_t pid, struct ends *e, char *err, size_t errlen)
{
	double timeout;
	size_t max_out, off = 0, cap = 0, total = 0;
	limits(c, &timeout, &max_out);
	double deadline = now() + timeout;
	char buf[65536];
	int rc = 0;
	bool killed = false;
	if (e->in >= 0)
		fcntl(e->in, F_SETFL, fcntl(e->in, F_GETFL) | O_NONBLOCK);
	while (e->out >= 0 || e->err >= 0) {
		struct pollfd fds[3];
		int nfds = 0, iin = -1, iout = -1, ierr = -1;
		if (e->in >= 0) {
			fds[nfds] = (struct pollfd){ .fd = e->in, .events = POLLOUT };
			iin = nfds++;
		}
		if (e->out >= 0) {
			fds[nfds] = (struct pollfd){ .fd = e->out, .events = POLLIN };
			iout = nfds++;
		}
		if (e->err >= 0) {
			fds[nfds] = (struct pollfd){ .fd = e->err, .events = POLLIN };
			ierr = nfds++;
		}
		double left = deadline - now();
		if (left <= 0 && !killed) {
			c->timed_out = killed = true;
			kill(-pid, SIGKILL);
		}
		/* once killed, its pipes close at once, unless something it
		 * started outside its process group holds them: wait no more
		 * than a few seconds */
		if (killed && left < -KILL_GRACE)
			break;
		int ms = killed ? 100 : left > 3600 ? 3600000 : (int)ceil(left * 1000);
		int n = poll(fds, (nfds_t)nfds, ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = jh_err(err, errlen, JH_EIO, "%s: poll: %s", c->argv[0], strerror(errno));
			kill(-pid, SIGKILL);
			break;
		}
		if (iin >= 0 && fds[iin].revents) {
			size_t want = c->inlen - off;
			ssize_t w = write(e->in, c->in + off, want > sizeof(buf) ? sizeof(buf) : want);
			if (w > 0)
				off += (size_t)w;
			else if (w < 0 && errno != EAGAIN && errno != EINTR)
				c->input_closed = true;   /* EPIPE: its status says why */
			if (off == c->inlen || c->input_closed)
				close_fd(&e->in);
		}
		if (iout >= 0 && fds[iout].revents) {
			ssize_t r = read(e->out, buf, sizeof(buf));
			if (r > 0 && !killed) {
				size_t take = (size_t)r;
				if (total + take > max_out) {
					take = max_out - total;
					c->too_much = killed = true;
					deadline = now();
					kill(-pid, SIGKILL);
				}
				total += take;
				if (c->out) {
					if (fwrite(buf, 1, take, c->out) != take && !rc) {
						rc = jh_err(err, errlen, JH_EIO, "cannot write the output of %s: %s",
							    c->argv[0], strerror(errno));
						killed = true;
						deadline = now();
						kill(-pid, SIGKILL);
					}
				} else if (jh_grow(&c->buf, &cap, c->len + take + 1, 1)) {
					rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
					killed = true;
					deadline = now();
					kill(-pid, SIGKILL);
				} else {
					memcpy(c->buf + c->len, buf, take);
					c->len += take;
				}
			} else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
				close_fd(&e->out);
			}
		}
		if (ierr >= 0 && fds[ierr].revents) {
			ssize_t r = read(e->err, buf, sizeof(buf));
			if (r > 0) {
				size_t keep = (size_t)r;
				if (keep > sizeof(c->msg) - 1 - c->nmsg)
					keep = sizeof(c->msg) - 1 - c->nmsg;
				memcpy(c->msg + c->nmsg, buf, keep);
				c->nmsg += keep;
			} else if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
				close_fd(&e->err);
			}
		}
	}
	return rc;
}

int child_run(struct child *c, char *err, size_t errlen)
{
	int pin[2] = { -1, -1 }, pout[2] = { -1, -1 }, perr[2] = { -1, -1 }, pexec[2] = { -1, -1 };
	int rc = 0;
	c->buf = NULL;
	c->len = c->nmsg = 0;
	c->msg[0] = '\0';
	c->status = c->exec_errno = 0;
	c->timed_out = c->too_much = c->input_closed = false;
	if ((c->in ? pipe2(pin, O_CLOEXEC) : (pin[0] = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) ||
	    pipe2(pout, O_CLOEXEC) || pipe2(perr, O_CLOEXEC) || pipe2(pexec, O_CLOEXEC)) {
		rc = jh_err(err, errlen, JH_EIO, "cannot run %s: %s", c->argv[0], strerror(errno));
		goto out;
	}
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	if (c->out)
		fflush(c->out);
	pid_t pid = fork();
	if (pid < 0) {
		rc = jh_err(err, errlen, JH_EIO, "cannot run %s: fork: %s", c->argv[0], strerror(errno));
		sigaction(SIGPIPE, &old, NULL);
		goto out;
	}
	if (pid == 0) {
		/* dup2 gives the copies no close-on-exec; every other
		 * descriptor of jheap has it */
		signal(SIGPIPE, SIG_DFL);
		/* a group of its own, so that stopping it stops what it started */
		setpgid(0, 0);
		if (dup2(pin[0], 0) >= 0 && dup2(pout[1], 1) >= 0 && dup2(perr[1], 2) >= 0) {
			/* libdw opens a split unit's .dwo or a dwz file without
			 * close-on-exec: nothing but 0, 1, 2 and the exec pipe
			 * (close-on-exec) may stay */
			if (pexec[1] > 3)
				close_range(3, (unsigned)pexec[1] - 1, 0);
			close_range((unsigned)pexec[1] + 1, ~0u, 0);
			execvp(c->argv[0], (char *const *)c->argv);
		}
		int e = errno;
		ssize_t unused = write(pexec[1], &e, sizeof(e));
		(void)unused;
		_exit(127);
	}
	setpgid(pid, pid);
	close_fd(&pin[0]);
	close_fd(&pout[1]);
	close_fd(&perr[1]);
	close_fd(&pexec[1]);
	/* the exec pipe closes on a successful exec, or carries errno */
	ssize_t got;
	do
		got = read(pexec[0], &c->exec_errno, sizeof(c->exec_errno));
	while (got < 0 && errno == EINTR);
	if (got != (ssize_t)sizeof(c->exec_errno))
		c->exec_errno = 0;
	struct ends e = { pin[1], pout[0], perr[0] };
	pin[1] = pout[0] = perr[0] = -1;
	if (!c->exec_errno)
		rc = pump(c, pid, &e, err, errlen);
	close_fd(&e.in);
	close_fd(&e.out);
	close_fd(&e.err);
	while (waitpid(pid, &c->status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGPIPE, &old, NULL);
	c->msg[c->nmsg] = '\0';
	if (!rc && !c->out && !c->buf && !(c->buf = calloc(1, 1)))
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
	if (c->buf)
		c->buf[c->len] = '\0';
out:
	close_fd(&pin[0]);
	close_fd(&pin[1]);
	close_fd(&pout[0]);
	close_fd(&pout[1]);
	close_fd(&perr[0]);
	close_fd(&perr[1]);
	close_fd(&pexec[0]);
	close_fd(&pexec[1]);
	return rc;
}

int child_failure(const struct child *c, const char *name, char *err, size_t errlen)
{
	double timeout;
	size_t max_out;
	limits(c, &timeout, &max_out);
	if (c->timed_out)
		return jh_err(err, errlen, JH_EIO,
			      "%s did not finish within %g s: stopped (JHEAP_CHILD_TIMEOUT sets the limit)",
			      name, timeout);
	if (c->too_much)
		return jh_err(err, errlen, JH_EIO,
			      "%s wrote more than %zu bytes: stopped (JHEAP_CHILD_MAX_OUTPUT sets the limit)",
			      name, max_out);
	if (WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0)
		return 0;
	char how[64], msg[sizeof(c->msg)];
	if (WIFEXITED(c->status))
		snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(c->status));
	else
		snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(c->status));
	size_t n = c->nmsg;
	while (n > 0 && (c->msg[n - 1] == '\n' || c->msg[n - 1] == '\r'))
		n--;
	escape_into(msg, sizeof(msg), c->msg, n);
	return jh_err(err, errlen, JH_EIO, "%s failed (%s)%s%s", name, how, n ? ": " : "", msg);
}

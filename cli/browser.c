#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/browser.h"
#include "lib/errors.h"

/* Splits CMD (LEN bytes) into words and puts the file in; ARGV gets at
 * most MAX - 1 words and a NULL, pointing into BUF (BUFLEN bytes). */
static int command_words(const char *cmd, size_t len, const char *path, char **argv, int max,
			 char *buf, size_t buflen)
{
	int n = 0;
	bool had_file = false;
	size_t o = 0;
	size_t i = 0;
	while (i < len && n < max - 2) {
		while (i < len && cmd[i] == ' ')
			i++;
		if (i >= len)
			break;
		argv[n++] = buf + o;
		while (i < len && cmd[i] != ' ') {
			const char *add = NULL;
			char one[2] = { cmd[i], 0 };
			if (cmd[i] == '%' && i + 1 < len && cmd[i + 1] == 's') {
				add = path;
				had_file = true;
				i += 2;
			} else if (cmd[i] == '%' && i + 1 < len && cmd[i + 1] == '%') {
				add = "%";
				i += 2;
			} else {
				add = one;
				i++;
			}
			size_t k = strlen(add);
			if (o + k + 1 >= buflen)
				return 0;
			memcpy(buf + o, add, k);
			o += k;
		}
		buf[o++] = '\0';
	}
	if (n && !had_file)
		argv[n++] = (char *)path;
	argv[n] = NULL;
	return n;
}

/* Starts ARGV detached: a child forks the command and exits at once, so
 * nothing is left to reap.  Returns 0 when the command was executed, else
 * the errno of the attempt. */
static int spawn_detached(char **argv)
{
	int pexec[2];
	if (pipe2(pexec, O_CLOEXEC))
		return errno;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(pexec[0]);
		close(pexec[1]);
		return e;
	}
	if (pid == 0) {
		close(pexec[0]);
		setsid();
		pid_t g = fork();
		if (g < 0) {
			int e = errno;
			ssize_t unused = write(pexec[1], &e, sizeof(e));
			(void)unused;
			_exit(1);
		}
		if (g == 0) {
			/* the browser keeps neither the terminal's input nor
			 * jheap's report output */
			int null = open("/dev/null", O_RDWR);
			if (null >= 0) {
				dup2(null, 0);
				dup2(null, 1);
				if (null > 2)
					close(null);
			}
			/* nor the signals jheap blocks (the web UI waits
			 * for Ctrl-C with them blocked) */
			signal(SIGPIPE, SIG_DFL);
			sigset_t none;
			sigemptyset(&none);
			sigprocmask(SIG_SETMASK, &none, NULL);
			execvp(argv[0], argv);
			int e = errno;
			ssize_t unused = write(pexec[1], &e, sizeof(e));
			(void)unused;
			_exit(127);
		}
		_exit(0);
	}
	close(pexec[1]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	int e = 0;
	ssize_t got;
	do
		got = read(pexec[0], &e, sizeof(e));
	while (got < 0 && errno == EINTR);
	close(pexec[0]);
	return got == (ssize_t)sizeof(e) ? (e ? e : EIO) : 0;
}

int browser_open(const char *path, char *err, size_t errlen)
{
	const char *env = getenv("BROWSER");
	char *argv[64];
	char buf[8192];
	int last = 0;
	const char *tried = NULL;
	size_t tried_len = 0;
	if (env && *env) {
		for (const char *s = env; *s;) {
			const char *colon = strchr(s, ':');
			size_t len = colon ? (size_t)(colon - s) : strlen(s);
			if (command_words(s, len, path, argv, 64, buf, sizeof(buf))) {
				last = spawn_detached(argv);
				if (!last)
					return 0;
				tried = s;
				tried_len = len;
			}
			s += len + (colon != NULL);
		}
	}
	char *xdg[] = { "xdg-open", (char *)path, NULL };
	int e = spawn_detached(xdg);
	if (!e)
		return 0;
	if (tried)
		return jh_err(err, errlen, JH_EIO,
			      "cannot open '%s' in a browser: $BROWSER ('%.*s': %s) and xdg-open (%s) failed",
			      path, (int)tried_len, tried, strerror(last), strerror(e));
	return jh_err(err, errlen, JH_EIO,
		      "cannot open '%s' in a browser: xdg-open: %s (set $BROWSER to your browser)",
		      path, strerror(e));
}

int browser_temp_file(const char *suffix, char *path, size_t len, char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	int n = snprintf(path, len, "%s/jheap-XXXXXX.%s", dir, suffix);
	if (n < 0 || (size_t)n >= len) {
		jh_err(err, errlen, JH_EIO, "the temporary folder's name is too long");
		return -1;
	}
	int fd = mkostemps(path, (int)strlen(suffix) + 1, O_CLOEXEC);
	if (fd < 0)
		jh_err(err, errlen, JH_EIO, "cannot create a file in '%s': %s", dir, strerror(errno));
	return fd;
}

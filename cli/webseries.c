/* The web UI's series of dumps and the live folder (see webseries.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/control.h"
#include "cli/webseries.h"
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/escape.h"

/* jemalloc's PREFIX.PID.SEQ.KIND.heap: the sequence number, and the
 * length of "PREFIX.PID." in *STEM; -1 when NAME is not one. */
static long long parse_name(const char *name, size_t *stem)
{
	size_t n = strlen(name);
	if (n < 5 || strcmp(name + n - 5, ".heap"))
		return -1;
	/* back over ".KIND", ".SEQ", ".PID" */
	const char *dots[3];
	int found = 0;
	for (const char *q = name + n - 5; q > name && found < 3; q--)
		if (q[-1] == '.')
			dots[found++] = q;
	if (found < 3)
		return -1;
	char *end;
	long long seq = strtoll(dots[1], &end, 10);
	if (end == dots[1] || *end != '.')
		return -1;
	strtoll(dots[2], &end, 10);
	if (end == dots[2] || *end != '.')
		return -1;
	*stem = (size_t)(dots[1] - name);
	return seq;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static int cmp_dumps(const void *x, const void *y)
{
	const struct webseries_dump *a = x, *b = y;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return strcmp(a->path, b->path);
}

static int set_paths(struct webseries *s)
{
	const char **p = realloc(s->paths, (s->n + 1) * sizeof(*p));
	if (!p)
		return JH_ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		p[i] = s->dumps[i].path;
	p[s->n] = NULL;
	s->paths = p;
	return 0;
}

static int add(struct webseries *s, const char *path, long long seq, const struct stat *st)
{
	struct webseries_dump d = { .path = strdup(path), .seq = seq,
				    .mtime = (double)st->st_mtim.tv_sec + st->st_mtim.tv_nsec / 1e9,
				    .size = (long long)st->st_size };
	if (!d.path || JH_PUSH(s->dumps, s->n, s->cap, d)) {
		free(d.path);
		return JH_ENOMEM;
	}
	return 0;
}

/* The dumps in folder FD (PATH) whose names start with STEM (any when
 * empty), of the user when OWN; sorted. */
static int read_folder(struct webseries *s, int fd, const char *path, bool own, char *err,
		       size_t errlen)
{
	int dfd = dup(fd);
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return jh_err(err, errlen, JH_EIO, "cannot read the folder '%s': %s", path, strerror(errno));
	}
	rewinddir(dir);
	struct dirent *e;
	int rc = 0;
	while (!rc && (e = readdir(dir))) {
		size_t stem;
		long long seq = parse_name(e->d_name, &stem);
		if (seq < 0 || (s->stem[0] && strncmp(e->d_name, s->stem, strlen(s->stem))))
			continue;
		struct stat st;
		if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    (own && st.st_uid != geteuid()))
			continue;
		bool known = false;
		for (size_t i = 0; i < s->n && !known; i++)
			known = !strcmp(base_name(s->dumps[i].path), e->d_name);
		if (known)
			continue;
		char full[8192];
		snprintf(full, sizeof(full), "%s/%s", path, e->d_name);
		rc = add(s, full, seq, &st);
	}
	closedir(dir);
	if (!rc) {
		jh_qsort(s->dumps, s->n, sizeof(*s->dumps), cmp_dumps);
		rc = set_paths(s);
	}
	return rc == JH_ENOMEM ? jh_err(err, errlen, rc, "out of memory") : rc;
}

int webseries_from_args(struct webseries *s, const char *const *args, size_t n, char *err,
			size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
	struct stat st;
	if (n == 1 && !stat(args[0], &st) && S_ISDIR(st.st_mode)) {
		int fd = open(args[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return jh_err(err, errlen, JH_EIO, "cannot open the folder '%s': %s", args[0], strerror(errno));
		snprintf(s->dir, sizeof(s->dir), "%s", args[0]);
		size_t len = strlen(s->dir);
		while (len > 1 && s->dir[len - 1] == '/')
			s->dir[--len] = '\0';
		int rc = read_folder(s, fd, s->dir, false, err, errlen);
		close(fd);
		if (!rc && !s->n)
			rc = jh_err(err, errlen, JH_EFORMAT, "the folder '%s' holds no dump (NAME.PID.SEQ.KIND.heap)", args[0]);
		return rc ? rc : 1;
	}
	if (n < 2)
		return 0;
	char stem[512] = "";
	for (size_t i = 0; i < n; i++) {
		size_t len;
		const char *b = base_name(args[i]);
		if (parse_name(b, &len) < 0 || len >= sizeof(stem) || stat(args[i], &st))
			return 0;
		if (!i)
			snprintf(stem, sizeof(stem), "%.*s", (int)len, b);
		else if (strncmp(b, stem, len) || strlen(stem) != len)
			return 0;   /* dumps of several processes: summed */
	}
	for (size_t i = 0; i < n; i++) {
		size_t len;
		if (stat(args[i], &st) || add(s, args[i], parse_name(base_name(args[i]), &len), &st))
			return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	}
	jh_qsort(s->dumps, s->n, sizeof(*s->dumps), cmp_dumps);
	return set_paths(s) ? jh_err(err, errlen, JH_ENOMEM, "out of memory") : 1;
}

/* The "dumps: PREFIX.PID.<seq>.<kind>.heap" line of a status reply. */
static int dump_prefix(const char *reply, char *prefix, size_t len)
{
	const char *l = strstr(reply, "\ndumps: ");
	if (!l)
		return -1;
	l += 8;
	const char *end = strstr(l, ".<seq>.");
	const char *nl = strchr(l, '\n');
	if (!end || (nl && nl < end) || !strncmp(l, "none", 4))
		return -1;
	/* PREFIX.PID */
	const char *dot = end;
	while (dot > l && dot[-1] != '.')
		dot--;
	if (dot <= l + 1 || (size_t)(dot - l) >= len)
		return -1;
	snprintf(prefix, len, "%.*s", (int)(dot - l - 1), l);
	return 0;
}

int webseries_watch(struct webseries *s, pid_t pid, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
	s->pid = pid;
	char reply[8192], why[1024], prefix[4096];
	if (control_request(pid, "status", 30, reply, sizeof(reply), why, sizeof(why)))
		return jh_err(err, errlen, JH_EIO, "--pid: %s", why);
	if (dump_prefix(reply, prefix, sizeof(prefix)) || prefix[0] != '/')
		return jh_err(err, errlen, JH_EFORMAT, "--pid: process %d writes no dumps to a folder (jheap ctl %d status says where dumps go)",
			      (int)pid, (int)pid);
	char *slash = strrchr(prefix, '/');
	snprintf(s->dir, sizeof(s->dir), "%.*s", slash == prefix ? 1 : (int)(slash - prefix), prefix);
	snprintf(s->stem, sizeof(s->stem), "%s.%d.", slash + 1, (int)pid);
	s->dirfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	if (s->dirfd < 0 || fstat(s->dirfd, &st))
		return jh_err(err, errlen, JH_EIO, "--pid: cannot open the dump folder '%s': %s", s->dir, strerror(errno));
	bool sticky = st.st_mode & S_ISVTX;
	if ((st.st_uid != geteuid() && st.st_uid != 0) || ((st.st_mode & 022) && !sticky))
		return jh_err(err, errlen, JH_EUSAGE, "--pid: the dump folder '%s' is not yours alone (owner %u, mode %04o): its files are not read",
			      s->dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	int rc = read_folder(s, s->dirfd, s->dir, true, err, errlen);
	if (!rc && !s->n) {
		char path[4096];
		rc = webseries_dump_now(s, path, sizeof(path), err, errlen);
		if (!rc)
			rc = read_folder(s, s->dirfd, s->dir, true, err, errlen);
		if (!rc && !s->n)
			rc = jh_err(err, errlen, JH_EFORMAT, "--pid: process %d dumped to '%s', which is not in '%s'", (int)pid, path, s->dir);
	}
	return rc;
}

int webseries_poll(struct webseries *s, char *err, size_t errlen)
{
	if (s->dirfd < 0)
		return 0;
	struct webseries saw = { .dirfd = -1 };
	memcpy(saw.stem, s->stem, sizeof(saw.stem));
	/* every dump there now: the known ones are in s */
	int rc = read_folder(&saw, s->dirfd, s->dir, true, err, errlen);
	int added = 0;
	for (size_t i = 0; i < saw.n && !rc; i++) {
		bool known = false;
		for (size_t k = 0; k < s->n && !known; k++)
			known = !strcmp(s->dumps[k].path, saw.dumps[i].path);
		if (known)
			continue;
		/* taken once its size held for one look */
		bool stable = false;
		for (size_t k = 0; k < s->npending; k++)
			if (!strcmp(s->pending[k].path, saw.dumps[i].path)) {
				stable = s->pending[k].size == saw.dumps[i].size && saw.dumps[i].size > 0;
				s->pending[k].size = saw.dumps[i].size;
				goto seen;
			}
		struct webseries_dump p = { .path = strdup(saw.dumps[i].path), .size = saw.dumps[i].size };
		if (!p.path || JH_PUSH(s->pending, s->npending, s->cap_pending, p)) {
			free(p.path);
			rc = JH_ENOMEM;
		}
seen:
		if (stable) {
			struct stat st;
			const struct webseries_dump *d = &saw.dumps[i];
			if (fstatat(s->dirfd, base_name(d->path), &st, AT_SYMLINK_NOFOLLOW))
				continue;
			rc = add(s, d->path, d->seq, &st);
			added++;
		}
	}
	webseries_release(&saw);
	if (rc)
		return jh_err(err, errlen, rc, "out of memory");
	if (added) {
		jh_qsort(s->dumps, s->n, sizeof(*s->dumps), cmp_dumps);
		if (set_paths(s))
			return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	}
	return added;
}

int webseries_dump_now(struct webseries *s, char *path, size_t len, char *err, size_t errlen)
{
	char why[1024];
	if (!s->pid)
		return jh_err(err, errlen, JH_EUSAGE, "no process to dump: start the UI with --pid=PID");
	if (control_request(s->pid, "dump", 60, path, len, why, sizeof(why)))
		return jh_err(err, errlen, JH_EIO, "%s", why);
	char *nl = strchr(path, '\n');
	if (nl)
		*nl = '\0';
	return 0;
}

void webseries_release(struct webseries *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->dumps[i].path);
	for (size_t i = 0; i < s->npending; i++)
		free(s->pending[i].path);
	free(s->dumps);
	free(s->pending);
	free(s->paths);
	if (s->dirfd >= 0)
		close(s->dirfd);
	memset(s, 0, sizeof(*s));
	s->dirfd = -1;
}

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/attachdir.h"
#include "lib/errors.h"

#define DUMP_FILE "dump.heap"

/* The process's file system user and group from /proc/PID/status. */
static int proc_ids(pid_t pid, uid_t *uid, gid_t *gid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	int got = 0;
	for (char *p = buf; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		unsigned long v[4];
		bool u = !strncmp(p, "Uid:", 4), g = !strncmp(p, "Gid:", 4);
		if ((u || g) && sscanf(p + 4, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) == 4) {
			if (u)
				*uid = (uid_t)v[3];
			else
				*gid = (gid_t)v[3];
			got++;
		}
	}
	return got == 2 ? 0 : -1;
}

/* Whether user UID (group GID) may search every folder from / to PATH. */
static bool reachable(const char *path, uid_t uid, gid_t gid)
{
	gid_t groups[256];
	int ng = 256;
	struct passwd *pw = getpwuid(uid);
	if (!pw || getgrouplist(pw->pw_name, gid, groups, &ng) < 0) {
		groups[0] = gid;
		ng = 1;
	}
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	size_t len = strlen(buf);
	for (size_t i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		char c = buf[i];
		buf[i] = '\0';
		struct stat st;
		bool ok = !stat(buf, &st);
		if (ok) {
			mode_t bit = S_IXOTH;
			if (st.st_uid == uid) {
				bit = S_IXUSR;
			} else {
				for (int k = 0; k < ng; k++)
					if (groups[k] == st.st_gid)
						bit = S_IXGRP;
			}
			ok = (st.st_mode & bit) != 0;
		}
		buf[i] = c;
		if (!ok)
			return false;
	}
	return true;
}

static void random_name(char *out, size_t len, const char *head)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned char r[10];
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		for (size_t i = 0; i < sizeof(r); i++)
			r[i] = (unsigned char)(rand() ^ getpid() ^ (int)i);
	size_t n = (size_t)snprintf(out, len, "%s", head);
	for (size_t i = 0; i < sizeof(r) && n + 1 < len; i++)
		out[n++] = abc[r[i] % (sizeof(abc) - 1)];
	out[n] = '\0';
}

int attachdir_prepare(struct attachdir *d, pid_t pid, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->pid = pid;
	d->dirfd = d->subfd = -1;
	uid_t me = geteuid();
	if (proc_ids(pid, &d->uid, &d->gid))
		return jh_err(err, errlen, JH_EIO, "no process %d", (int)pid);
	d->other = d->uid != me;
	if (d->other && me != 0)
		return jh_err(err, errlen, JH_EIO, "process %d runs as another user (uid %u): only that user or root can have it write a dump for jheap",
			      (int)pid, (unsigned)d->uid);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return jh_err(err, errlen, JH_EIO, "cannot tell the current folder: %s", strerror(errno));
	if (d->other && !reachable(cwd, d->uid, d->gid)) {
		char tmp[64];
		snprintf(tmp, sizeof(tmp), "/tmp/jheap-%d-XXXXXX", (int)pid);
		if (!mkdtemp(tmp))
			return jh_err(err, errlen, JH_EIO, "cannot create a folder in /tmp: %s", strerror(errno));
		d->made = true;
		snprintf(d->dir, sizeof(d->dir), "%s", tmp);
		snprintf(d->note, sizeof(d->note), "process %d runs as uid %u, who cannot reach %.2048s: the dump goes to %s",
			 (int)pid, (unsigned)d->uid, cwd, tmp);
	} else {
		if (snprintf(d->dir, sizeof(d->dir), "%s/jheap-%d", strcmp(cwd, "/") ? cwd : "", (int)pid) >=
		    (int)sizeof(d->dir) - 64)
			return jh_err(err, errlen, JH_ELIMIT, "the current folder's name is too long");
		if (!mkdir(d->dir, 0700))
			d->made = true;
		else if (errno != EEXIST)
			return jh_err(err, errlen, JH_EIO, "cannot create the folder '%s': %s", d->dir, strerror(errno));
	}
	d->dirfd = open(d->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	if (d->dirfd < 0 || fstat(d->dirfd, &st))
		return jh_err(err, errlen, JH_EIO, "cannot open the folder '%s': %s%s", d->dir, strerror(errno),
			      errno == ELOOP || errno == ENOTDIR ? " (it is a symbolic link or no folder)" : "");
	mode_t mode = st.st_mode & 07777;
	if (st.st_uid != me || (mode != 0700 && mode != 0711))
		return jh_err(err, errlen, JH_EIO, "'%s' is not a private folder of yours (owner uid %u, mode %04o): jheap writes dumps only into a folder of its user's with mode 0700; remove it, or run jheap from another folder",
			      d->dir, (unsigned)st.st_uid, (unsigned)mode);
	if (d->other && mode != 0711 && fchmod(d->dirfd, 0711))
		return jh_err(err, errlen, JH_EIO, "cannot open '%s' to the process's user: %s", d->dir, strerror(errno));
	for (int i = 0; i < 16; i++) {
		random_name(d->sub, sizeof(d->sub), ".attach-");
		if (!mkdirat(d->dirfd, d->sub, 0700))
			break;
		if (errno != EEXIST)
			return jh_err(err, errlen, JH_EIO, "cannot create a folder in '%s': %s", d->dir, strerror(errno));
		d->sub[0] = '\0';
	}
	if (!d->sub[0])
		return jh_err(err, errlen, JH_EIO, "cannot create a folder in '%s'", d->dir);
	d->subfd = openat(d->dirfd, d->sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->subfd < 0 || fstat(d->subfd, &st) || st.st_uid != me)
		return jh_err(err, errlen, JH_EIO, "cannot open the folder '%s/%s' that jheap made", d->dir, d->sub);
	if (d->other && fchown(d->subfd, d->uid, d->gid))
		return jh_err(err, errlen, JH_EIO, "cannot give the folder '%s/%s' to uid %u: %s", d->dir, d->sub,
			      (unsigned)d->uid, strerror(errno));
	snprintf(d->target, sizeof(d->target), "%s/%s/%s", d->dir, d->sub, DUMP_FILE);
	return 0;
}

/* The highest SEQ of the files NAME.PID.SEQ.aSEQ.heap in the folder, -1
 * when none. */
static long last_seq(int dirfd, const char *name, pid_t pid)
{
	int fd = dup(dirfd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	if (!dir) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char head[128];
	snprintf(head, sizeof(head), "%s.%d.", name, (int)pid);
	size_t hl = strlen(head);
	long best = -1;
	struct dirent *e;
	while ((e = readdir(dir))) {
		char *end;
		if (strncmp(e->d_name, head, hl))
			continue;
		long v = strtol(e->d_name + hl, &end, 10);
		if (end > e->d_name + hl && !strncmp(end, ".a", 2) && v > best)
			best = v;
	}
	closedir(dir);
	return best;
}

/* NAME escaped to letters, digits and ._-+ (at most 64 bytes). */
static void clean_name(const char *in, char *out, size_t len)
{
	size_t n = 0;
	for (; *in && n + 1 < len && n < 64; in++) {
		char c = *in;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '.' || c == '_' || c == '-' || c == '+';
		out[n++] = ok ? c : '_';
	}
	out[n] = '\0';
	if (!n || out[0] == '.')
		snprintf(out, len, "process");
}

int attachdir_finish(struct attachdir *d, const char *name, char *path, size_t pathlen, char *err,
		     size_t errlen)
{
	uid_t me = geteuid();
	/* first the folder back: from now on no name in it can change */
	if (d->other && (fchown(d->subfd, me, getegid()) || fchmod(d->subfd, 0700)))
		return jh_err(err, errlen, JH_EIO, "cannot take back the folder '%s/%s': %s", d->dir, d->sub,
			      strerror(errno));
	int fd = openat(d->subfd, DUMP_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return jh_err(err, errlen, JH_EIO, "process %d wrote no dump to %s (%s)", (int)d->pid, d->target,
			      errno == ELOOP ? "a symbolic link is there: not followed" : strerror(errno));
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != d->uid || st.st_nlink != 1) {
		close(fd);
		return jh_err(err, errlen, JH_EIO, "%s is not the file jemalloc writes (a regular file of uid %u with one link): not reading it",
			      d->target, (unsigned)d->uid);
	}
	fchmod(fd, 0600);
	if (d->other && me == 0 && fchown(fd, 0, 0)) {
		close(fd);
		return jh_err(err, errlen, JH_EIO, "cannot take the dump %s: %s", d->target, strerror(errno));
	}
	char base[96], final[160];
	clean_name(name, base, sizeof(base));
	long seq = last_seq(d->dirfd, base, d->pid) + 1;
	int rc = -1;
	for (int tries = 0; tries < 1000 && rc; tries++, seq++) {
		snprintf(final, sizeof(final), "%s.%d.%ld.a%ld.heap", base, (int)d->pid, seq, seq);
		rc = renameat2(d->subfd, DUMP_FILE, d->dirfd, final, RENAME_NOREPLACE);
		if (rc && (errno == EINVAL || errno == ENOSYS)) {
			/* a file system without RENAME_NOREPLACE: a link fails
			 * on an existing name too */
			rc = linkat(d->subfd, DUMP_FILE, d->dirfd, final, 0);
			if (!rc)
				unlinkat(d->subfd, DUMP_FILE, 0);
		}
		if (rc && errno != EEXIST)
			break;
	}
	struct stat moved;
	if (rc || fstatat(d->dirfd, final, &moved, AT_SYMLINK_NOFOLLOW) || moved.st_ino != st.st_ino ||
	    moved.st_dev != st.st_dev) {
		int e = errno;
		close(fd);
		return jh_err(err, errlen, JH_EIO, "cannot move the dump into '%s': %s", d->dir, strerror(e));
	}
	close(fd);
	if (snprintf(path, pathlen, "%s/%s", d->dir, final) >= (int)pathlen)
		return jh_err(err, errlen, JH_ELIMIT, "the dump's path is too long");
	return 0;
}

void attachdir_release(struct attachdir *d)
{
	if (d->subfd >= 0) {
		if (d->other)
			fchown(d->subfd, geteuid(), getegid());
		int fd = dup(d->subfd);
		DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *e;
		while (dir && (e = readdir(dir)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
			    unlinkat(d->subfd, e->d_name, 0) && errno == EISDIR)
				unlinkat(d->subfd, e->d_name, AT_REMOVEDIR);
		if (dir)
			closedir(dir);
		else if (fd >= 0)
			close(fd);
		close(d->subfd);
		d->subfd = -1;
	}
	if (d->dirfd >= 0) {
		if (d->sub[0])
			unlinkat(d->dirfd, d->sub, AT_REMOVEDIR);
		close(d->dirfd);
		d->dirfd = -1;
	}
	/* a folder made for nothing goes too (one holding a dump stays) */
	if (d->made)
		rmdir(d->dir);
}

/*
 * sockdir.c: the folder of the control socket, one per user.
 *
 * $XDG_RUNTIME_DIR/jheap when XDG_RUNTIME_DIR is a folder of the
 * process's user (systemd makes /run/user/UID, mode 0700: nobody else
 * can put anything there).  Else a folder in $TMPDIR (then /tmp) whose
 * name nobody else can predict, "jheap-UID.XXXXXX" made by mkdtemp(3) as
 * ssh-agent makes its own: a fixed name such as /tmp/jheap-UID could be
 * made first by another user, who would then keep the user's programs
 * from ever listening.  The first folder of that pattern that is the
 * user's own and closed to others is used by every process of the user;
 * any other (another user's, open to others, a link) is skipped, never
 * used, and a new one is made when none is left.  jheap does not need
 * the name: it finds a process's socket from /proc/PID (cli/control.c).
 *
 * A folder is opened (never through a link) and then checked on the
 * descriptor; the socket is bound by its path afterwards, so every folder
 * on the way must be one that only root and the user may change (owned
 * by one of them, writable by nobody else unless sticky, as /tmp is):
 * else another user could rename the folder away and put theirs in its
 * place between the check and the bind.
 *
 * Runs in the program's start and on the control thread: no malloc
 * (getdents64 into a buffer on the stack).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "preload/jheapctl.h"

/* ST is a folder only UID and root may change. */
static bool safe_on_the_way(const struct stat *st, uid_t uid)
{
	return S_ISDIR(st->st_mode) && (st->st_uid == 0 || st->st_uid == uid) &&
	       (!(st->st_mode & 022) || (st->st_mode & S_ISVTX));
}

/* Opens the folder PATH (absolute) one component at a time, following no
 * link, every folder on the way and PATH itself safe for UID.  Returns an
 * O_PATH descriptor or -1 with WHY. */
static int walk(const char *path, uid_t uid, char *why, size_t whylen)
{
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	struct stat st;
	size_t at = 0;
	for (;;) {
		if (fd < 0 || fstat(fd, &st)) {
			snprintf(why, whylen, "cannot open %.*s: %s", (int)(at ? at : 1), path, strerror(errno));
			if (fd >= 0)
				close(fd);
			return -1;
		}
		if (!safe_on_the_way(&st, uid)) {
			snprintf(why, whylen, "%.*s may be changed by others than user %u and root (owner %u, mode %04o)",
				 (int)(at ? at : 1), path, (unsigned)uid, (unsigned)st.st_uid,
				 (unsigned)(st.st_mode & 07777));
			close(fd);
			return -1;
		}
		while (path[at] == '/')
			at++;
		size_t end = at;
		while (path[end] && path[end] != '/')
			end++;
		if (end == at)
			return fd;
		char name[NAME_MAX + 1];
		if (end - at > NAME_MAX || (end - at <= 2 && path[at] == '.' &&
					    (end - at == 1 || path[at + 1] == '.'))) {
			snprintf(why, whylen, "cannot use %s: a component is '.', '..' or too long", path);
			close(fd);
			return -1;
		}
		memcpy(name, path + at, end - at);
		name[end - at] = '\0';
		int next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
		at = end;
	}
}

/* The folder NAME in the folder open on DFD is the user's own and closed
 * to others. */
static bool private_at(int dfd, const char *name, uid_t uid, char *why, size_t whylen)
{
	struct stat st;
	int fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		snprintf(why, whylen, "cannot use %s: %s", name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(fd);
	if (st.st_uid != uid || (st.st_mode & 077)) {
		snprintf(why, whylen, "is not a private folder of user %u (owner %u, mode %04o)",
			 (unsigned)uid, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return false;
	}
	return true;
}

/* $XDG_RUNTIME_DIR/jheap: 1 with DIR set, 0 when XDG_RUNTIME_DIR is not
 * the user's, -1 with WHY when its jheap folder is unusable. */
static int xdg_dir(uid_t uid, char *dir, size_t len, char *why, size_t whylen)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char tmp[300];
	if (!xdg || xdg[0] != '/')
		return 0;
	int fd = walk(xdg, uid, tmp, sizeof(tmp));
	struct stat st;
	if (fd < 0 || fstat(fd, &st) || st.st_uid != uid) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (snprintf(dir, len, "%s/jheap", xdg) >= (int)len) {
		close(fd);
		snprintf(why, whylen, "cannot use %s: too long a path", xdg);
		return -1;
	}
	if (mkdirat(fd, "jheap", 0700) && errno != EEXIST) {
		snprintf(why, whylen, "cannot create %s: %s", dir, strerror(errno));
		close(fd);
		return -1;
	}
	bool ok = private_at(fd, "jheap", uid, tmp, sizeof(tmp));
	close(fd);
	if (!ok) {
		snprintf(why, whylen, "%s %s", dir, tmp);
		return -1;
	}
	return 1;
}

/* The first folder "jheap-UID.XXXXXX" of the folder BASE that is the
 * user's own and closed to others, or a new one: 0 with DIR set, -1 with
 * WHY. */
static int tmp_dir(const char *base, uid_t uid, char *dir, size_t len, char *why, size_t whylen)
{
	int bfd = walk(base, uid, why, whylen);
	if (bfd < 0)
		return -1;
	char head[32], buf[4096], tmp[200];
	int hl = snprintf(head, sizeof(head), "jheap-%u.", (unsigned)uid);
	int rd = openat(bfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	long n;
	bool found = false;
	while (!found && rd >= 0 && (n = syscall(SYS_getdents64, rd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n && !found;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			if (strncmp(d->d_name, head, (size_t)hl) || strlen(d->d_name + hl) != 6)
				continue;
			/* another user's, a link, open to others: skipped */
			if (private_at(bfd, d->d_name, uid, tmp, sizeof(tmp)) &&
			    snprintf(dir, len, "%s/%s", strcmp(base, "/") ? base : "", d->d_name) < (int)len)
				found = true;
		}
	}
	if (rd >= 0)
		close(rd);
	if (!found) {
		if (snprintf(dir, len, "%s/%sXXXXXX", strcmp(base, "/") ? base : "", head) >= (int)len) {
			snprintf(why, whylen, "cannot use %s: too long a path", base);
			close(bfd);
			return -1;
		}
		if (!mkdtemp(dir)) {
			snprintf(why, whylen, "cannot create a folder in %s: %s", base, strerror(errno));
			close(bfd);
			return -1;
		}
		const char *name = strrchr(dir, '/') + 1;
		if (!private_at(bfd, name, uid, tmp, sizeof(tmp))) {
			snprintf(why, whylen, "%s %s", dir, tmp);
			close(bfd);
			return -1;
		}
	}
	close(bfd);
	return 0;
}

int sockdir_find(char *dir, size_t len, char *why, size_t whylen)
{
	uid_t uid = geteuid();
	int x = xdg_dir(uid, dir, len, why, whylen);
	if (x)
		return x > 0 ? 0 : -1;
	const char *tmpdir = getenv("TMPDIR");
	if (tmpdir && tmpdir[0] == '/' && !tmp_dir(tmpdir, uid, dir, len, why, whylen))
		return 0;
	return tmp_dir("/tmp", uid, dir, len, why, whylen);
}

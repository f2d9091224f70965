/*
 * privdir.c: folders opened then checked (see privdir.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/privdir.h"
#include "lib/errors.h"

void privdir_describe(const struct stat *st, char *out, size_t len)
{
	struct passwd *pw = getpwuid(st->st_uid);
	snprintf(out, len, "owner %u%s%s%s, mode %04o", (unsigned)st->st_uid, pw ? " (" : "",
		 pw ? pw->pw_name : "", pw ? ")" : "", (unsigned)(st->st_mode & 07777));
}

/* Whether a folder on the way to another is safe for user UID. */
static bool safe_on_the_way(const struct stat *st, uid_t uid)
{
	if (st->st_uid != 0 && st->st_uid != uid)
		return false;
	return !(st->st_mode & 022) || (st->st_mode & S_ISVTX);
}

int privdir_walk(const char *path, uid_t uid, struct stat *st, char *err, size_t errlen)
{
	char shown[PATH_MAX];
	size_t len = strlen(path);
	if (path[0] != '/' || len >= sizeof(shown))
		return jh_err(err, errlen, JH_EUSAGE, "'%s' is not an absolute path", path);
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, st)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return jh_err(err, errlen, JH_EIO, "cannot open '/': %s", strerror(e));
	}
	size_t at = 1;
	snprintf(shown, sizeof(shown), "/");
	for (;;) {
		while (path[at] == '/')
			at++;
		size_t end = at;
		while (path[end] && path[end] != '/')
			end++;
		if (end == at)
			break;   /* the folder itself is open on FD */
		/* FD is a folder on the way to the next component */
		if (!safe_on_the_way(st, uid)) {
			char what[128];
			privdir_describe(st, what, sizeof(what));
			close(fd);
			return jh_err(err, errlen, JH_EUSAGE,
				      "the folder '%s' on the way to '%s' may be changed by another user (%s): a folder only root and you may change is needed",
				      shown, path, what);
		}
		char name[NAME_MAX + 1];
		if (end - at > NAME_MAX) {
			close(fd);
			return jh_err(err, errlen, JH_EUSAGE, "'%s': a component is too long", path);
		}
		memcpy(name, path + at, end - at);
		name[end - at] = '\0';
		if (!strcmp(name, ".") || !strcmp(name, "..")) {
			close(fd);
			return jh_err(err, errlen, JH_EUSAGE, "'%s' holds '.' or '..'", path);
		}
		snprintf(shown, sizeof(shown), "%.*s", (int)end, path);
		bool last = !path[end] || !path[end + strspn(path + end, "/")];
		int next = openat(fd, name, (last ? O_RDONLY : O_PATH) | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && last && errno == EACCES)
			next = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int e = errno;
		close(fd);
		if (next < 0) {
			struct stat lst;
			if ((e == ELOOP || e == ENOTDIR) && !lstat(shown, &lst) && S_ISLNK(lst.st_mode))
				return jh_err(err, errlen, JH_EIO, "'%s' is a symbolic link: jheap follows none here", shown);
			return jh_err(err, errlen, JH_EIO, "cannot open the folder '%s': %s", shown, strerror(e));
		}
		fd = next;
		if (fstat(fd, st)) {
			e = errno;
			close(fd);
			return jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", shown, strerror(e));
		}
		at = end;
	}
	return fd;
}

int privdir_fd_path(int fd, char *out, size_t len)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, out, len - 1);
	if (n <= 0 || (size_t)n >= len - 1 || out[0] != '/')
		return -1;
	out[n] = '\0';
	return 0;
}

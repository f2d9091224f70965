#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/safefile.h"
#include "lib/array.h"
#include "lib/errors.h"

static const char *kind(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISDIR(m))
		return "a folder";
	return "not a regular file";
}

/* The checks on ST of PATH: 0, or a code and message. */
static int check(const char *path, const struct stat *st, uint64_t max_size, char *err,
		 size_t errlen)
{
	int rc = 0;
	if (!S_ISREG(st->st_mode)) {
		rc = jh_err(err, errlen, JH_EFORMAT, "'%s' is not a regular file (%s): not read",
			    path, kind(st->st_mode));
		errno = EINVAL;
	} else if (max_size && (uint64_t)st->st_size > max_size) {
		rc = jh_err(err, errlen, JH_ELIMIT, "'%s' is larger than %llu MiB: not read", path,
			    (unsigned long long)(max_size >> 20));
		errno = EFBIG;
	}
	return rc;
}

int safefile_open(const char *path, uint64_t max_size, char *err, size_t errlen)
{
	struct stat st;
	int rc;
	if (stat(path, &st)) {
		int e = errno;
		rc = jh_err(err, errlen, JH_EIO, "cannot open '%s': %s", path, strerror(e));
		errno = e;
		return rc;
	}
	if ((rc = check(path, &st, max_size, err, errlen)))
		return rc;
	/* O_NONBLOCK: the file may have been replaced by a FIFO since */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		rc = jh_err(err, errlen, JH_EIO, "cannot open '%s': %s", path, strerror(e));
		errno = e;
		return rc;
	}
	if (fstat(fd, &st)) {
		int e = errno;
		close(fd);
		rc = jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", path, strerror(e));
		errno = e;
		return rc;
	}
	if ((rc = check(path, &st, max_size, err, errlen))) {
		int e = errno;
		close(fd);
		errno = e;
		return rc;
	}
	/* a regular file ignores O_NONBLOCK; clear it for whoever reads it */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int safefile_is_special(const char *path)
{
	struct stat st;
	return !stat(path, &st) && !S_ISREG(st.st_mode);
}

int safefile_read(const char *path, uint64_t max_size, char **buf, size_t *len,
		  char *err, size_t errlen)
{
	*buf = NULL;
	*len = 0;
	int fd = safefile_open(path, max_size, err, errlen);
	if (fd < 0)
		return fd;
	struct stat st;
	size_t cap = 0, n = 0;
	char *b = NULL;
	int rc = fstat(fd, &st) ? JH_EIO : 0;
	/* the size may change while it is read: read to the end, within
	 * the limit */
	size_t want = rc ? 0 : (size_t)st.st_size + 1;
	while (!rc) {
		if (jh_grow(&b, &cap, (n + 1 > want ? n + 65536 : want) + 1, 1)) {
			rc = jh_err(err, errlen, JH_ENOMEM, "out of memory reading '%s'", path);
			break;
		}
		ssize_t got = read(fd, b + n, cap - n - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		if (!got)
			break;
		n += (size_t)got;
		if (max_size && n > max_size)
			rc = jh_err(err, errlen, JH_ELIMIT, "'%s' is larger than %llu MiB: not read",
				    path, (unsigned long long)(max_size >> 20));
	}
	close(fd);
	if (rc) {
		free(b);
		return rc;
	}
	if (!b && !(b = malloc(1)))
		return jh_err(err, errlen, JH_ENOMEM, "out of memory reading '%s'", path);
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

ssize_t safefile_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	size_t n = 0;
	ssize_t k;
	while (n + 1 < len && (k = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)k;
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

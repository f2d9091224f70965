#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/outfile.h"
#include "lib/errors.h"

static void release(struct outfile *o)
{
	free(o->path);
	free(o->tmp);
	o->path = o->tmp = NULL;
	o->f = NULL;
}

/* Writes straight to PATH, as a plain fopen would. */
static int open_direct(struct outfile *o, const char *path, char *err, size_t errlen)
{
	free(o->path);
	o->path = strdup(path);
	if (!(o->f = fopen(path, "we"))) {
		int e = errno;
		release(o);
		return jh_err(err, errlen, JH_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	return 0;
}

int outfile_open(struct outfile *o, const char *path, char *err, size_t errlen)
{
	struct stat st;
	bool exists = !stat(path, &st);
	*o = (struct outfile){ 0 };
	if (exists && !S_ISREG(st.st_mode))
		return open_direct(o, path, err, errlen);
	/* a link is followed: the file it points at is the one replaced */
	o->path = exists ? realpath(path, NULL) : strdup(path);
	if (!o->path)
		return open_direct(o, path, err, errlen);
	const char *slash = strrchr(o->path, '/');
	int dirlen = slash ? (int)(slash + 1 - o->path) : 0;
	if (asprintf(&o->tmp, "%.*s.%s.XXXXXX", dirlen, o->path, o->path + dirlen) < 0) {
		o->tmp = NULL;
		release(o);
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	}
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		/* a folder jheap may not write to, holding a file it may */
		free(o->tmp);
		o->tmp = NULL;
		return open_direct(o, path, err, errlen);
	}
	mode_t mode;
	if (exists) {
		mode = st.st_mode & 07777;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	if (fchmod(fd, mode) || !(o->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		release(o);
		return jh_err(err, errlen, JH_EIO, "cannot write '%s': %s", path, strerror(e));
	}
	return 0;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
	int rc = 0;
	const char *shown = o->path ? o->path : "the output";
	if (!o->f)
		return 0;
	bool bad = fflush(o->f) || ferror(o->f);
	int e = errno;
	if (fclose(o->f) && !bad) {
		bad = true;
		e = errno;
	}
	o->f = NULL;
	if (bad)
		rc = jh_err(err, errlen, JH_EIO, "cannot write '%s': %s", shown, strerror(e));
	else if (o->tmp && rename(o->tmp, o->path))
		rc = jh_err(err, errlen, JH_EIO, "cannot write '%s': %s", shown, strerror(errno));
	if (rc && o->tmp)
		unlink(o->tmp);
	release(o);
	return rc;
}

void outfile_abort(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	release(o);
}

/*
 * dumpfile.c: jemalloc's dump files, made safely.
 *
 * jemalloc (4.x and 5.x, every build) makes each dump with
 * creat(NAME, 0644): it follows a link named like the dump, truncates a
 * file that another user put there (or a hard link to one of ours), and
 * leaves the dump readable by every local user under the usual umask.  A
 * dump holds the process's whole memory map.  This library defines creat
 * (and creat64), so the program's and jemalloc's calls come here first
 * (LD_PRELOAD puts it before libc).  A name of jemalloc's dump shape,
 * PREFIX.PID.SEQ.KIND.heap with this process's pid, is made:
 *   - without following a link (O_NOFOLLOW), without blocking on a FIFO;
 *   - only as a regular file of this process's user with one link, else
 *     refused (EEXIST): a file another user planted is never written;
 *   - with the mode from JHEAP_CTL_DUMP_MODE (jheap record --dump-mode,
 *     0600 by default), also when the file was there before.
 * A process that jheap record does not follow (family.c) writes its dumps
 * to /dev/null: jemalloc writes its final dump at exit whatever the
 * library says, and a failed creat() would make it complain on the
 * program's standard error.
 * Every other name goes to open(O_WRONLY|O_CREAT|O_TRUNC), which is what
 * creat() is.  These two are the only symbols the library exports.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload/jheapctl.h"

static mode_t dump_mode = 0600;
static char refused[400];   /* why the last dump was refused, for the reply */
static char last_made[4096]; /* the last dump made (leakmsg.c names its summary after it) */
static bool discard;        /* dumpfile_discard(): every dump to /dev/null */

void dumpfile_discard(void)
{
	discard = true;
}

void dumpfile_init(void)
{
	const char *m = getenv("JHEAP_CTL_DUMP_MODE");
	if (m && *m) {
		char *end;
		unsigned long v = strtoul(m, &end, 8);
		if (!*end && !(v & ~0666UL) && (v & 0600) == 0600)
			dump_mode = (mode_t)v;
	}
}

const char *dumpfile_refused(void)
{
	return refused;
}

void dumpfile_forget(void)
{
	refused[0] = '\0';
}

/* Digits from P back to LIMIT; returns where they start (P+1: none). */
static const char *digits_back(const char *p, const char *limit)
{
	while (p >= limit && *p >= '0' && *p <= '9')
		p--;
	return p + 1;
}

/* PATH's last component is PREFIX.PID.SEQ.KIND.heap for this process,
 * KIND "f" or one of i, m, u with a number (jemalloc's names). */
static bool is_dump_name(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(base);
	if (n < 6 || strcmp(base + n - 5, ".heap"))
		return false;
	const char *p = base + n - 6;   /* the kind's last character */
	if (*p == 'f') {
		p--;
	} else {
		const char *d = digits_back(p, base);
		if (d > p || d - 1 < base || !strchr("imu", d[-1]))
			return false;
		p = d - 2;
	}
	if (p < base || *p != '.')
		return false;
	const char *seq = digits_back(p - 1, base);   /* SEQ */
	if (seq > p - 1 || seq - 1 <= base || seq[-1] != '.')
		return false;
	const char *pid = digits_back(seq - 2, base);
	if (pid > seq - 2 || pid - 1 <= base || pid[-1] != '.')
		return false;
	char want[24];
	int k = snprintf(want, sizeof(want), "%d", (int)getpid());
	return (size_t)(seq - 1 - pid) == (size_t)k && !memcmp(pid, want, (size_t)k);
}

static int make_dump(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, dump_mode);
	if (fd < 0) {
		int e = errno;
		/* a folder the process may not write in is told by prof.c */
		if (e == ELOOP)
			snprintf(refused, sizeof(refused), "not writing through the symbolic link %.300s", path);
		else if (e == ENXIO)
			snprintf(refused, sizeof(refused), "refused a FIFO or device: %.300s", path);
		errno = e;
		return -1;
	}
	struct stat st;
	const char *why = NULL;
	if (fstat(fd, &st))
		why = "cannot read";
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file:";
	else if (st.st_uid != geteuid())
		why = "another user owns";
	else if (st.st_nlink != 1)
		why = "a file with another link (a hard link to it was planted):";
	else if (ftruncate(fd, 0) || fchmod(fd, dump_mode))
		why = "cannot truncate";
	if (why) {
		snprintf(refused, sizeof(refused), "refused %s %.300s", why, path);
		close(fd);
		errno = EEXIST;
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	refused[0] = '\0';
	if (strlen(path) < sizeof(last_made))
		memcpy(last_made, path, strlen(path) + 1);
	return fd;
}

const char *dumpfile_last(void)
{
	return last_made;
}

__attribute__((visibility("default"))) int creat(const char *path, mode_t mode);
__attribute__((visibility("default"))) int creat64(const char *path, mode_t mode);

int creat(const char *path, mode_t mode)
{
	if (is_dump_name(path))
		return discard ? open("/dev/null", O_WRONLY | O_CLOEXEC) : make_dump(path);
	return open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
}

int creat64(const char *path, mode_t mode)
{
	return creat(path, mode);
}

/*
 * leakmsg.c: jemalloc's leak summary, kept where jheap finds it.
 *
 * With prof_leak:true, jemalloc prints its leak summary as it writes the
 * dump at exit ("<jemalloc>: Leak approximation summary: ~B bytes, ~N
 * objects, >= C contexts") through its message hook, malloc_message (a
 * variable jemalloc exports for programs to set; je_malloc_message and
 * _rjem_malloc_message in prefixed builds).  The library puts its own
 * function there at start, which passes every message on as before (to
 * the program's own hook when it had set one, else to standard error, as
 * jemalloc does) and also writes the summary line into PREFIX.PID.leak
 * beside the dump at exit just made (dumpfile.c saw its name), for
 * `jheap DUMP` (analyzer/leaksum.h).  The file is made as the dumps are:
 * never through a link, only as a regular file of the process's user,
 * mode 0600.  A message hook must not allocate: nothing here does.
 * A program whose jemalloc the dynamic linker cannot see (linked
 * statically) keeps its summary on standard error only.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload/jheapctl.h"

typedef void (*message_fn)(void *, const char *);

static message_fn before;       /* the hook's value before ours */
static bool written;            /* this process wrote its file once */

/* PREFIX.PID.leak for the dump at exit DUMP (PREFIX.PID.SEQ.f.heap) into
 * OUT; false when DUMP is not one. */
static bool leak_path(const char *dump, char *out, size_t len)
{
	size_t n = strlen(dump);
	if (n < 8 || strcmp(dump + n - 7, ".f.heap"))
		return false;
	const char *seq = dump + n - 7;   /* the dot before "f" */
	while (seq > dump && seq[-1] >= '0' && seq[-1] <= '9')
		seq--;
	if (seq == dump || seq[-1] != '.' || (size_t)(seq - 1 - dump) + 6 > len)
		return false;
	memcpy(out, dump, (size_t)(seq - 1 - dump));
	memcpy(out + (seq - 1 - dump), ".leak", 6);
	return true;
}

static void keep_summary(const char *s)
{
	char path[4096];
	if (!leak_path(dumpfile_last(), path, sizeof(path)))
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | (written ? O_APPEND : 0),
		      0600);
	if (fd < 0)
		return;
	struct stat st;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_nlink == 1 &&
	    (written || !ftruncate(fd, 0))) {
		ssize_t w = write(fd, s, strlen(s));
		(void)w;
		written = true;
	}
	close(fd);
}

static void on_message(void *cbopaque, const char *s)
{
	if (before) {
		before(cbopaque, s);
	} else {
		ssize_t w = write(STDERR_FILENO, s, strlen(s));
		(void)w;
	}
	if (strstr(s, "Leak approximation summary") || strstr(s, "Leak summary"))
		keep_summary(s);
}

void leakmsg_init(void)
{
	static const char *const names[] = { "malloc_message", "je_malloc_message", "_rjem_malloc_message" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		message_fn *slot = (message_fn *)dlsym(RTLD_DEFAULT, names[i]);
		if (slot) {
			before = *slot;
			*slot = on_message;
			return;
		}
	}
}

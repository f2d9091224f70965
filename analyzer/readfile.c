#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/bigarray.h"
#include "lib/errors.h"
#include "analyzer/parse.h"
#include "analyzer/pprof.h"
#include "analyzer/readfile.h"

/* What the first bytes are read for, before any limit but this one. */
#define FIRST_BYTES ((size_t)64 << 10)
/* The most read at once, so that the limits are checked as it goes. */
#define CHUNK ((size_t)8 << 20)

enum kind { K_UNKNOWN, K_TEXT, K_PPROF, K_GZIP };

/* The mapping in use, for readfile_guard(): one at a time (the profiles
 * are read one after the other). */
static const char *volatile guard_start;
static volatile size_t guard_len;
static const char *volatile guard_path;

const char *readfile_guard(const void *addr)
{
	const char *a = addr, *start = guard_start;
	return start && a >= start && a < start + guard_len ? guard_path : NULL;
}

struct reader {
	struct readfile *rf;
	const char *path;
	size_t cap;
	enum kind kind;
	size_t limit;             /* the most bytes the kind may have, 0: none */
	size_t run;               /* text: bytes since the last newline */
	char *err;
	size_t errlen;
};

static int grow(struct reader *r, size_t need)
{
	if (need <= r->cap)
		return 0;
	size_t want = need < r->cap * 2 ? r->cap * 2 : need;
	if (jh_big_grow(&r->rf->buf, &r->cap, r->rf->len, want, 1))
		return jh_err(r->err, r->errlen, JH_ENOMEM, "out of memory reading '%s'", r->path);
	return 0;
}

/* The kind of data the first LEN bytes at B start: 0, or an error for
 * binary data that is no profile. */
static int classify(struct reader *r, const unsigned char *b, size_t len)
{
	if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
		r->kind = K_GZIP;
		r->limit = READFILE_MAX_GZIP;
	} else if (len && (pprof_sniff(b, len) || pprof_broken_at(b, len))) {
		r->kind = K_PPROF;
		r->limit = PPROF_MAX_BYTES;
	} else {
		const char *what = parse_sniff(b, len);
		if (what)
			return jh_err(r->err, r->errlen, JH_EFORMAT, "%s: %s", r->path, what);
		r->kind = K_TEXT;
	}
	return 0;
}

/* The limits on the N bytes just read at the end of the buffer. */
static int check(struct reader *r, size_t n)
{
	struct readfile *rf = r->rf;
	if (r->kind == K_UNKNOWN) {
		if (rf->len < FIRST_BYTES)
			return 0;
		int rc = classify(r, (const unsigned char *)rf->buf, rf->len);
		if (rc)
			return rc;
		n = rf->len;
	}
	if (r->limit && rf->len > r->limit)
		return jh_err(r->err, r->errlen, JH_ELIMIT, "%s: %s of more than %zu MiB", r->path,
			      r->kind == K_GZIP ? "gzip-compressed data" : "a pprof profile",
			      r->limit >> 20);
	if (r->kind != K_TEXT)
		return 0;
	const char *start = rf->buf + rf->len - n;
	const char *nl = memrchr(start, '\n', n);
	r->run = nl ? (size_t)(rf->buf + rf->len - (nl + 1)) : r->run + n;
	if (r->run <= PARSE_MAX_LINE)
		return 0;
	/* the long line's number, as the parser counts lines */
	unsigned long line = 1;
	for (const char *s = rf->buf, *e = rf->buf + rf->len; (s = memchr(s, '\n', (size_t)(e - s))); s++)
		line++;
	return jh_err(r->err, r->errlen, JH_ELIMIT, "%s:%lu: line longer than %u bytes", r->path,
		      line, PARSE_MAX_LINE);
}

int readfile_read(struct readfile *rf, const char *path, char *err, size_t errlen)
{
	*rf = (struct readfile){ 0 };
	struct reader r = { .rf = rf, .path = path, .err = err, .errlen = errlen };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return jh_err(err, errlen, JH_EIO, "cannot open '%s': %s", path, strerror(errno));
	struct stat st;
	int rc = 0;
	if (fstat(fd, &st))
		rc = jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", path, strerror(errno));
	else if (S_ISDIR(st.st_mode))
		rc = jh_err(err, errlen, JH_EIO, "cannot read '%s': Is a directory", path);
	/* a regular file is mapped as it is now, once its first bytes and
	 * its size pass */
	if (!rc && S_ISREG(st.st_mode) && st.st_size > 0) {
		size_t size = (size_t)st.st_size;
		unsigned char head[FIRST_BYTES];
		ssize_t n = pread(fd, head, sizeof(head) < size ? sizeof(head) : size, 0);
		if (n < 0)
			rc = jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", path, strerror(errno));
		else if (!(rc = classify(&r, head, (size_t)n)) && r.limit && size > r.limit)
			rc = jh_err(err, errlen, JH_ELIMIT, "%s: %s of more than %zu MiB", path,
				    r.kind == K_GZIP ? "gzip-compressed data" : "a pprof profile",
				    r.limit >> 20);
		void *m = rc ? MAP_FAILED : mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (!rc && m == MAP_FAILED)
			rc = jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", path, strerror(errno));
		close(fd);
		if (rc)
			return rc;
		rf->buf = m;
		rf->len = rf->mapped = size;
		guard_path = path;
		guard_len = size;
		guard_start = m;
		return 0;
	}
	/* a pipe or a device: read as it comes */
	while (!rc) {
		if ((rc = grow(&r, rf->len + 65536)))
			break;
		size_t room = r.cap - rf->len;
		ssize_t n = read(fd, rf->buf + rf->len, room > CHUNK ? CHUNK : room);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", path, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		rf->len += (size_t)n;
		rc = check(&r, (size_t)n);
	}
	close(fd);
	if (!rc && r.kind == K_UNKNOWN && rf->len)
		rc = classify(&r, (const unsigned char *)rf->buf, rf->len);
	return rc;
}

void readfile_release(struct readfile *rf)
{
	if (rf->mapped) {
		guard_start = NULL;
		munmap(rf->buf, rf->mapped);
	} else {
		jh_big_free(rf->buf);
	}
	*rf = (struct readfile){ 0 };
}

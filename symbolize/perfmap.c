/* perfmap: JIT code names from perf map files; see perfmap.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/chars.h"
#include "lib/errors.h"
#include "symbolize/perfmap.h"

struct entry {
	uint64_t start, end;
	uint32_t name;    /* offset into names */
	uint32_t seq;     /* line order: the later wins */
};

struct perfmap {
	struct entry *e;
	size_t n, cap;
	char *names;
	size_t nlen, ncap;
};

/* A hex number at *S (an optional 0x), up to 16 digits; 0 or -1. */
static int hex(const char **s, const char *e, uint64_t *v)
{
	const char *p = *s;
	if (e - p > 2 && p[0] == '0' && (p[1] | 32) == 'x')
		p += 2;
	int digits = 0;
	*v = 0;
	for (; p < e && jh_hexval(*p) >= 0; p++, digits++)
		*v = *v << 4 | (uint64_t)jh_hexval(*p);
	if (!digits || digits > 16)
		return -1;
	*s = p;
	return 0;
}

static int add_line(struct perfmap *m, const char *s, const char *e, uint32_t seq)
{
	uint64_t start, size;
	if (hex(&s, e, &start) || s == e || *s != ' ')
		return 0;
	s++;
	if (hex(&s, e, &size) || s == e || *s != ' ' || !size || start + size < start)
		return 0;
	s++;
	while (e > s && (e[-1] == '\r' || e[-1] == ' '))
		e--;
	if (e == s || m->nlen > UINT32_MAX - (size_t)(e - s) - 1)
		return 0;
	size_t k = (size_t)(e - s);
	if (jh_grow(&m->names, &m->ncap, m->nlen + k + 1, 1))
		return JH_ENOMEM;
	struct entry en = { start, start + size, (uint32_t)m->nlen, seq };
	memcpy(m->names + m->nlen, s, k);
	m->names[m->nlen + k] = 0;
	m->nlen += k + 1;
	return JH_PUSH(m->e, m->n, m->cap, en);
}

static int by_start(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

int perfmap_open(const char *path, uid_t owner, struct perfmap **out, char *err, size_t errlen)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return jh_err(err, errlen, JH_EIO, "cannot open '%s': %s", path, strerror(errno));
	struct stat st;
	char *buf = NULL;
	int rc = 0;
	if (fstat(fd, &st))
		rc = jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", path, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rc = jh_err(err, errlen, JH_EIO, "'%s' is not a regular file: not read", path);
	else if (owner != (uid_t)-1 && st.st_uid != owner)
		rc = jh_err(err, errlen, JH_EIO,
			    "'%s' belongs to user %u, not to the dump's owner (%u): not read (give it with --perf-map=FILE to use it)",
			    path, (unsigned)st.st_uid, (unsigned)owner);
	else if ((uint64_t)st.st_size > PERFMAP_MAX_BYTES)
		rc = jh_err(err, errlen, JH_ELIMIT, "'%s' is larger than %zu MiB: not read", path,
			    PERFMAP_MAX_BYTES >> 20);
	else if (!(buf = malloc((size_t)st.st_size + 1)))
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory reading '%s'", path);
	size_t len = 0;
	while (!rc && len < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + len, (size_t)st.st_size - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			rc = jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", path, strerror(errno));
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	struct perfmap *m = rc ? NULL : calloc(1, sizeof(*m));
	if (!rc && !m)
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory reading '%s'", path);
	uint32_t seq = 0;
	for (const char *s = buf, *e = buf + len; !rc && s < e; seq++) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		const char *le = nl ? nl : e;
		if (le - s <= PERFMAP_MAX_LINE && add_line(m, s, le, seq))
			rc = jh_err(err, errlen, JH_ENOMEM, "out of memory reading '%s'", path);
		s = le + 1;
	}
	free(buf);
	if (rc) {
		perfmap_free(m);
		errno = EINVAL;   /* the file is there: not ENOENT */
		return rc;
	}
	jh_qsort(m->e, m->n, sizeof(*m->e), by_start);
	*out = m;
	return 0;
}

int perfmap_for_dump(const char *dump, struct perfmap **out, char *why, size_t whylen)
{
	*out = NULL;
	why[0] = 0;
	struct stat st;
	int fd = open(dump, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int bad = fstat(fd, &st) || !S_ISREG(st.st_mode);
	close(fd);
	if (bad)
		return 0;
	char cand[2][4200];
	snprintf(cand[0], sizeof(cand[0]), "%s.perf.map", dump);
	cand[1][0] = 0;
	const char *base = strrchr(dump, '/') ? strrchr(dump, '/') + 1 : dump;
	for (const char *f = strchr(base, '.'); f; f = strchr(f + 1, '.')) {
		size_t k = strspn(f + 1, "0123456789");
		if (k && k < 11 && (f[1 + k] == '.' || !f[1 + k])) {
			snprintf(cand[1], sizeof(cand[1]), "/tmp/perf-%.*s.map", (int)k, f + 1);
			break;
		}
	}
	for (int i = 0; i < 2; i++) {
		if (!cand[i][0])
			continue;
		char err[1024];
		int rc = perfmap_open(cand[i], st.st_uid, out, err, sizeof(err));
		if (!rc)
			return 0;
		if (rc == JH_ENOMEM)
			return rc;
		if (errno != ENOENT && !why[0])
			snprintf(why, whylen, "perf map: %s", err);
	}
	return 0;
}

/* How far back a lookup looks for an entry that holds the address when
 * the one starting just below does not (overlapping entries). */
#define PERFMAP_BACK 64

const char *perfmap_lookup(const struct perfmap *m, uint64_t addr)
{
	if (!m || !m->n)
		return NULL;
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct entry *best = NULL;
	for (size_t i = lo, k = 0; i-- > 0 && k < PERFMAP_BACK; k++)
		if (addr < m->e[i].end && (!best || m->e[i].seq > best->seq))
			best = &m->e[i];
	return best ? m->names + best->name : NULL;
}

size_t perfmap_count(const struct perfmap *m)
{
	return m ? m->n : 0;
}

void perfmap_free(struct perfmap *m)
{
	if (!m)
		return;
	free(m->e);
	free(m->names);
	free(m);
}

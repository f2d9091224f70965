/* jemalloc's leak summary for a dump at exit (see leaksum.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/dumpname.h"
#include "analyzer/leaksum.h"

/* Skips "~" or ">=" and spaces, reads a number, then expects WORD. */
static bool field(const char **s, const char *end, const char *word, double *v)
{
	const char *p = *s;
	while (p < end && (*p == ' ' || *p == '~' || *p == '>' || *p == '=' || *p == ','))
		p++;
	if (p >= end || *p < '0' || *p > '9')
		return false;
	double x = 0;
	int ndig = 0;
	while (p < end && *p >= '0' && *p <= '9' && ndig++ < 20)
		x = x * 10 + (*p++ - '0');
	size_t wl = strlen(word);
	if (p >= end || *p != ' ' || (size_t)(end - p - 1) < wl || memcmp(p + 1, word, wl))
		return false;
	p += 1 + wl;
	while (p < end && *p >= 'a' && *p <= 'z')
		p++;   /* "s" */
	*v = x;
	*s = p;
	return true;
}

int leaksum_parse(const char *text, size_t n, struct leaksum *ls)
{
	static const char *const heads[] = { "Leak approximation summary:", "Leak summary:" };
	int found = 0;
	const char *end = text + n;
	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		const char *le = nl ? nl : end;
		for (int h = 0; h < 2; h++) {
			size_t hl = strlen(heads[h]);
			const char *at = line;
			/* "<jemalloc>: " or another prefix before the head */
			while (at + hl <= le && memcmp(at, heads[h], hl))
				at++;
			if (at + hl > le)
				continue;
			const char *p = at + hl;
			struct leaksum one = { .approx = h == 0 };
			if (field(&p, le, "byte", &one.bytes) && field(&p, le, "object", &one.objects) &&
			    field(&p, le, "context", &one.contexts)) {
				ls->bytes = one.bytes;
				ls->objects = one.objects;
				ls->contexts = one.contexts;
				ls->approx = one.approx;
				found = 1;
			}
			break;
		}
		line = le + 1;
	}
	return found;
}

int leaksum_find(const char *dump, struct leaksum *ls)
{
	struct dumpname dn;
	dumpname_parse(dump, &dn);
	if (!dn.jemalloc || dn.kind != 'f')
		return 0;
	size_t dirlen = (size_t)(dn.base - dump);
	int n = snprintf(ls->path, sizeof(ls->path), "%.*s%.*s.%lld.leak", (int)dirlen, dump,
			 (int)dn.prefix_len, dn.base, dn.pid);
	if (n < 0 || (size_t)n >= sizeof(ls->path))
		return 0;
	struct stat ds, st;
	if (stat(dump, &ds))
		return 0;
	int fd = open(ls->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int found = 0;
	char *buf = NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != ds.st_uid ||
	    st.st_size > LEAKSUM_MAX || !(buf = malloc((size_t)st.st_size + 1)))
		goto out;
	size_t len = 0;
	while (len < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + len, (size_t)st.st_size - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	found = leaksum_parse(buf, len, ls);
out:
	free(buf);
	close(fd);
	return found;
}

#include "analyzer/forks.h"

#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/errors.h"

/* Where Linux puts a position-independent program when address
 * randomization is off. */
#define NORANDOM_PIE 0x555555554000ULL

void forks_init(struct forks *f)
{
	memset(f, 0, sizeof(*f));
}

static void entry_release(struct forks_entry *e)
{
	free(e->name);
	free(e->main.path);
	for (size_t i = 0; i < e->nlibs; i++)
		free(e->libs[i].path);
	free(e->libs);
}

void forks_release(struct forks *f)
{
	for (size_t i = 0; i < f->n; i++)
		entry_release(&f->e[i]);
	free(f->e);
	memset(f, 0, sizeof(*f));
}

long forks_pid_of(const char *name)
{
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	/* NAME.PID.SEQ.KIND.heap[.gz]: the fourth dot-separated field from
	 * the end, ".heap" (and ".gz") first taken off */
	size_t n = strlen(base);
	if (n > 3 && !strcmp(base + n - 3, ".gz"))
		n -= 3;
	if (n < 5 || memcmp(base + n - 5, ".heap", 5))
		return -1;
	n -= 5;
	const char *field[3];
	size_t len[3];
	for (int k = 2; k >= 0; k--) {
		const char *dot = NULL;
		for (size_t i = n; i > 0; i--)
			if (base[i - 1] == '.') {
				dot = base + i - 1;
				break;
			}
		if (!dot)
			return -1;
		field[k] = dot + 1;
		len[k] = (size_t)(base + n - field[k]);
		n = (size_t)(dot - base);
	}
	/* field[0] PID, field[1] SEQ, field[2] KIND (f, i3, m0, u1) */
	if (!n || !len[0] || len[0] > 9 || !len[1] || !len[2] || !strchr("fimu", field[2][0]))
		return -1;
	long pid = 0;
	for (size_t i = 0; i < len[0]; i++) {
		if (field[0][i] < '0' || field[0][i] > '9')
			return -1;
		pid = pid * 10 + (field[0][i] - '0');
	}
	for (size_t i = 0; i < len[1]; i++)
		if (field[1][i] < '0' || field[1][i] > '9')
			return -1;
	return pid > 0 ? pid : -1;
}

static int cmp_map(const void *x, const void *y)
{
	const struct forks_map *a = x, *b = y;
	int c = strcmp(a->path, b->path);
	if (c)
		return c;
	return a->start < b->start ? -1 : a->start > b->start;
}

int forks_add(struct forks *f, const struct profile *p, const char *name)
{
	if (jh_grow(&f->e, &f->cap, f->n + 1, sizeof(*f->e)))
		return JH_ENOMEM;
	struct forks_entry *e = &f->e[f->n];
	memset(e, 0, sizeof(*e));
	e->group = f->n;
	e->pid = forks_pid_of(name);
	if (!(e->name = strdup(name)))
		return JH_ENOMEM;
	size_t cap = 0;
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct pf_mapping *m = &p->maps[i];
		if (m->kind != PF_MAP_FILE || !m->exec)
			continue;
		const char *path = strtab_get(&p->strs, m->path);
		if (i == p->main_mapping) {
			if (!e->main.path && !(e->main.path = strdup(path)))
				goto nomem;
			e->main.start = m->start;
			continue;
		}
		if (jh_grow(&e->libs, &cap, e->nlibs + 1, sizeof(*e->libs)))
			goto nomem;
		e->libs[e->nlibs].start = m->start;
		if (!(e->libs[e->nlibs].path = strdup(path)))
			goto nomem;
		e->nlibs++;
	}
	/* by path, then address: forks_related() walks two lists side by side
	 * (a dump may map thousands of objects) */
	jh_qsort(e->libs, e->nlibs, sizeof(*e->libs), cmp_map);
	f->n++;
	return 0;
nomem:
	entry_release(e);
	return JH_ENOMEM;
}

bool forks_related(const struct forks *f, size_t i, size_t j)
{
	const struct forks_entry *a = &f->e[i], *b = &f->e[j];
	if (!a->main.path || !b->main.path || strcmp(a->main.path, b->main.path) ||
	    a->main.start != b->main.start || a->main.start == NORANDOM_PIE)
		return false;
	/* every object both map, at the same addresses in both: the lists are
	 * sorted by path, then address */
	size_t x = 0, y = 0, common = 0;
	while (x < a->nlibs && y < b->nlibs) {
		int c = strcmp(a->libs[x].path, b->libs[y].path);
		if (c < 0) {
			x++;
		} else if (c > 0) {
			y++;
		} else {
			const char *path = a->libs[x].path;
			size_t x1 = x, y1 = y;
			while (x1 < a->nlibs && !strcmp(a->libs[x1].path, path))
				x1++;
			while (y1 < b->nlibs && !strcmp(b->libs[y1].path, path))
				y1++;
			if (x1 - x != y1 - y)
				return false;
			for (size_t k = 0; k < x1 - x; k++)
				if (a->libs[x + k].start != b->libs[y + k].start)
					return false;
			common++;
			x = x1;
			y = y1;
		}
	}
	return common > 0;
}

size_t forks_group_of(const struct forks *f, size_t i)
{
	return f->e[i].group;
}

void forks_group(struct forks *f)
{
	/* each entry against the first member of each group so far: one
	 * layout is one group, so a sum of hundreds of a server's dumps
	 * costs about one comparison each */
	for (size_t i = 0; i < f->n; i++) {
		f->e[i].group = i;
		for (size_t j = 0; j < i; j++)
			if (f->e[j].group == j && forks_related(f, j, i)) {
				f->e[i].group = j;
				break;
			}
	}
}

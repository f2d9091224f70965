/* Which dumps a report of a series loads (see seriesload.h). */
#include <stdlib.h>
#include <sys/stat.h>

#include "cli/driver.h"
#include "cli/remote.h"
#include "cli/seriesload.h"
#include "lib/errors.h"
#include "output/text.h"

enum seriesload_kind seriesload_kind(const struct cli *c)
{
	if (c->mode == MODE_TIMELINE)
		return SERIESLOAD_ALL;
	if (c->growth)
		return SERIESLOAD_GROWTH;
	if (c->peak)
		return SERIESLOAD_PEAK;
	return SERIESLOAD_NONE;
}

void seriesload_release(struct seriesload *sl)
{
	series_release(&sl->ser);
	series_release(&sl->left);
	free(sl->paths);
	memset(sl, 0, sizeof(*sl));
}

static const char *kind_option(enum seriesload_kind k)
{
	return k == SERIESLOAD_ALL ? "--timeline" : k == SERIESLOAD_GROWTH ? "--growth" : "--peak";
}

/* A file's modification time, or -1 (standard input, a URL, no file). */
static double file_time(const char *path)
{
	struct stat st;
	if (!strcmp(path, "-") || remote_is_url(path) || stat(path, &st) || !S_ISREG(st.st_mode))
		return -1;
	return (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9;
}

/* --peak: reads each dump for its totals, then the largest is the one. */
static int find_peak(struct driver *r, const struct cli *c, struct seriesload *sl)
{
	enum pf_value v = c->value == PF_INUSE_OBJECTS ? PF_INUSE_OBJECTS : PF_INUSE_SPACE;
	for (size_t k = 0; k < sl->ser.n; k++) {
		struct profile one;
		int rc = driver_read_dump(r, sl->ser.dumps[k].path, &one, &sl->ser, k);
		if (rc)
			return rc;
		for (int j = 0; j < PF_NVALUES; j++)
			sl->ser.dumps[k].total[j] = profile_total(&one, (enum pf_value)j);
		profile_release(&one);
	}
	sl->peak = series_peak(&sl->ser, v);
	const struct series_dump *d = &sl->ser.dumps[sl->peak];
	sl->paths[0] = d->path;
	sl->n = 1;
	if (!c->quiet) {
		enum units u = text_units(v, c->show_bytes);
		char val[64], name[1024];
		text_format_value(val, sizeof(val), d->total[v], u);
		escape_into(name, sizeof(name), d->path, strlen(d->path));
		fprintf(stderr, "jheap: --peak: the largest of the %zu dumps is %s, %s %s in use (dump %zu in order); the report is of it\n",
			sl->ser.n, name, val, text_unit_name(u), sl->peak + 1);
	}
	return EXIT_OK;
}

int seriesload_plan(struct driver *r, const struct cli *c, const char *const *paths, size_t n,
		    struct seriesload *sl)
{
	char err[2048];
	memset(sl, 0, sizeof(*sl));
	sl->kind = seriesload_kind(c);
	const char *opt = kind_option(sl->kind);
	if (n < 2 && !(n == 1 && r->model.series_of_one)) {
		fprintf(stderr, "jheap: %s reads a series: two or more dumps of one process (%zu given)%s\n",
			opt, n, sl->kind == SERIESLOAD_PEAK ? "; to report one dump, give it without --peak" : "");
		return EXIT_USAGE;
	}
	double *times = malloc(n * sizeof(*times));
	sl->paths = calloc(n + 1, sizeof(*sl->paths));
	if (!times || !sl->paths) {
		free(times);
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	for (size_t k = 0; k < n; k++)
		times[k] = file_time(paths[k]);
	int rc = series_plan(&sl->ser, paths, times, n, err, sizeof(err));
	free(times);
	if (rc) {
		fprintf(stderr, "jheap: %s: %s\n", opt, err);
		return rc == JH_EUSAGE ? EXIT_USAGE : EXIT_DATA;
	}
	if (sl->kind == SERIESLOAD_PEAK)
		return find_peak(r, c, sl);
	if (sl->kind == SERIESLOAD_GROWTH && !c->all_dumps) {
		if (series_split_irregular(&sl->ser, &sl->left)) {
			fprintf(stderr, "jheap: out of memory\n");
			return EXIT_DATA;
		}
		if (sl->ser.n < 2) {
			fprintf(stderr, "jheap: --growth fits the regular dumps of a series (interval and manual ones): %zu of the %zu given %s; --all-dumps fits the dump at exit and peak dumps too\n",
				sl->ser.n, n, sl->ser.n == 1 ? "is one" : "are");
			return EXIT_USAGE;
		}
		if (sl->left.n && c->mode != MODE_TEXT && !c->quiet) {
			/* the text table lists them; other formats cannot */
			fprintf(stderr, "jheap: --growth: left out %zu dump%s not of the regular series (at exit, peaks); --all-dumps fits them too\n",
				sl->left.n, sl->left.n == 1 ? "" : "s");
		}
	}
	for (size_t k = 0; k < sl->ser.n; k++)
		sl->paths[k] = sl->ser.dumps[k].path;
	sl->n = sl->ser.n;
	return EXIT_OK;
}

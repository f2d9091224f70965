/* Many profiles streamed into one model by symbol (see fleet.h). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzer/merge.h"
#include "analyzer/parse.h"
#include "cli/fleet.h"
#include "cli/remote.h"
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/hash.h"

static size_t stream_min(void)
{
	const char *e = getenv("JHEAP_STREAM_MIN");
	long n = e && *e ? atol(e) : 0;
	return n > 0 ? (size_t)n : FLEET_MIN;
}

bool fleet_wanted(const struct cli *c, const char *const *paths, size_t npaths)
{
	if (npaths + c->nbases < stream_min() || c->growth || c->nadd_libs)
		return false;
	for (size_t i = 0; i < npaths; i++)
		if (remote_is_url(paths[i]))
			return false;
	for (size_t i = 0; i < c->nbases; i++)
		if (remote_is_url(c->bases[i]))
			return false;
	return true;
}

bool fleet_skips(const struct cli *c, size_t npaths)
{
	return !c->strict && npaths + c->nbases > 1;
}

/* The symbolizer's warnings, once each: a thousand dumps of one program
 * would repeat each a thousand times. */
struct once {
	struct driver *r;
	uint64_t *seen;
	size_t n, cap;
};

static void warn_once(void *ctx, const char *msg)
{
	struct once *o = ctx;
	uint64_t h = jh_mix64(jh_hash_bytes(msg, strlen(msg), 0));
	for (size_t i = 0; i < o->n; i++)
		if (o->seen[i] == h)
			return;
	if (!JH_PUSH(o->seen, o->n, o->cap, h))
		driver_warn(o->r, msg);
}

static void note_through(void *ctx, const char *msg)
{
	struct once *o = ctx;
	driver_note(o->r, msg);
}

/* The progress bar: DONE of TOTAL inputs. */
static void show_progress(struct driver *r, size_t done, size_t total, size_t skipped)
{
	enum { WIDTH = 30 };
	char bar[WIDTH + 1];
	size_t full = total ? done * WIDTH / total : 0;
	for (size_t i = 0; i < WIDTH; i++)
		bar[i] = i < full ? '#' : '.';
	bar[WIDTH] = '\0';
	char sk[48] = "";
	if (skipped)
		snprintf(sk, sizeof(sk), ", %zu skipped", skipped);
	console_progress(&r->con, "[%s] %zu of %zu profiles%s", bar, done, total, sk);
}

/* What the symbolization of every input found, as one. */
static void gather(struct symbolize_stats *all, const struct symbolize_stats *one, bool first)
{
	if (first) {
		*all = *one;
		return;
	}
	all->pcs += one->pcs;
	all->pcs_dwarf += one->pcs_dwarf;
	all->pcs_symtab += one->pcs_symtab;
	all->pcs_unknown += one->pcs_unknown;
	all->pcs_presym += one->pcs_presym;
	all->pcs_jit += one->pcs_jit;
	all->sigframes += one->sigframes;
	all->binary_mismatch |= one->binary_mismatch;
	all->resource_failed |= one->resource_failed;
	all->main_stripped |= one->main_stripped;
	if (!all->main_pcs && one->main_pcs)
		all->main_calls = one->main_calls;
	all->main_pcs += one->main_pcs;
	all->main_resolved += one->main_resolved;
}

/* The program a profile is of: its main mapping's path, or "". */
static const char *program_of(const struct profile *p)
{
	if (p->main_mapping < p->nmaps)
		return strtab_get(&p->strs, p->maps[p->main_mapping].path);
	return strtab_get(&p->strs, p->presym_binary);
}

/* Reads input K (a PROFILE below NPATHS, else a --base profile) into the
 * total.  Returns an exit status; *SKIPPED when it could not be read and
 * was left out. */
static int add_one(struct driver *r, struct symmerge *m, struct profile *dst, const char *path,
		   bool base, size_t index, const struct cli *c, struct inlabels *il,
		   const struct symbolize_options *so, struct symbolize_stats *st, bool *first_st,
		   bool skip, bool *skipped, char **base_prog)
{
	struct profile one;
	char err[1024];
	*skipped = false;
	if (profile_init(&one)) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	bool truncated = false;
	struct parse_options po = { .warn = so->warn, .ctx = so->ctx, .truncated = &truncated };
	int rc = parse_file(&one, strcmp(path, "-") ? path : "/dev/stdin", &po, err, sizeof(err));
	if (truncated)
		r->degraded = true;
	if (rc && skip && rc != JH_ENOMEM) {
		char msg[1200];
		snprintf(msg, sizeof(msg), "skipping %s (--strict stops here instead)", err);
		driver_warn(r, msg);
		r->degraded = true;
		*skipped = true;
		profile_release(&one);
		return EXIT_OK;
	}
	if (!rc)
		rc = inlabels_apply(il, base, index, path, &one, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "jheap: %s\n", err);
		profile_release(&one);
		return EXIT_DATA;
	}
	if (base && c->thread && one.nsamples && !one.ntvals) {
		fprintf(stderr, "jheap: --thread: the --base profile '%s' has no per-thread values (%s): it cannot be subtracted thread by thread; leave out --thread or --base\n",
			path, one.format == PF_FMT_PPROF ? "a pprof profile" : "no 't' lines");
		profile_release(&one);
		return EXIT_DATA;
	}
	if (base && !*base_prog) {
		const char *was = program_of(dst), *now = program_of(&one);
		if (*was && *now && strcmp(was, now)) {
			char msg[2400];
			snprintf(msg, sizeof(msg), "the base profile '%s' is of '%s', the profile of '%s': the difference is between two programs",
				 path, now, was);
			driver_warn(r, msg);
		}
		*base_prog = strdup(now);
	}
	int64_t left = symmerge_known(m, &one);
	if (left < 0) {
		fprintf(stderr, "jheap: out of memory\n");
		profile_release(&one);
		return EXIT_DATA;
	}
	if (left || one.npresyms) {
		struct symbolize_stats s1;
		if (symbolize_profile(&one, r->sym.sc, so, &s1, err, sizeof(err))) {
			fprintf(stderr, "jheap: %s\n", err);
			profile_release(&one);
			return EXIT_DATA;
		}
		gather(st, &s1, *first_st);
		*first_st = false;
	}
	rc = symmerge_add(m, &one, base ? -1 : 1);
	profile_release(&one);
	if (rc) {
		fprintf(stderr, "jheap: out of memory while adding '%s'\n", path);
		return EXIT_DATA;
	}
	return EXIT_OK;
}

int fleet_load(struct driver *r, struct profile *dst, const char *const *paths, size_t npaths,
	       size_t args0, const struct cli *c, struct inlabels *il,
	       const struct symbolize_options *so, struct symbolize_stats *st, char **shown)
{
	struct once once = { .r = r };
	struct symbolize_options o = *so;
	o.warn = warn_once;
	o.note = so->note ? note_through : NULL;
	o.ctx = &once;
	o.progress = NULL;
	struct symmerge *m = symmerge_new(dst, c->gran == GRAN_ADDRESSES);
	if (!m) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	memset(st, 0, sizeof(*st));
	bool first_st = true, skip = fleet_skips(c, npaths);
	char *base_prog = NULL;
	size_t total = npaths + c->nbases, skipped = 0;
	int rc = EXIT_OK;
	/* the names first: a small block kept from each dump's turn would
	 * sit among the blocks the dumps free and keep the heap from
	 * reusing them (a thousand dumps grew it to 700 MB, 80 MB in use) */
	for (size_t k = 0; k < npaths && !rc; k++)
		if (!(shown[k] = strdup(paths[k]))) {
			fprintf(stderr, "jheap: out of memory\n");
			rc = EXIT_DATA;
		}
	for (size_t k = 0; k < total && !rc; k++) {
		bool base = k >= npaths, sk;
		const char *path = base ? c->bases[k - npaths] : paths[k];
		size_t index = base ? k - npaths : args0 + k;
		rc = add_one(r, m, dst, path, base, index, c, il, &o, st, &first_st, skip, &sk,
			     &base_prog);
		if (sk && !base) {
			free(shown[k]);
			shown[k] = NULL;
		}
		skipped += sk;
		show_progress(r, k + 1, total, skipped);
	}
	console_clear(&r->con);
	if (!rc)
		symmerge_finish(m);
	symmerge_free(m);
	free(base_prog);
	free(once.seen);
	return rc;
}

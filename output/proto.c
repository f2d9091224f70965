/*
 * --proto: a gzipped pprof profile.proto (google/pprof's
 * proto/profile.proto), laid out as Go's own heap profile (what Go's
 * runtime/pprof writes; tests/t0320-proto.sh reads ours back with go
 * tool pprof) so that go tool pprof, pprof and profiling backends read
 * it as a first-class heap profile.
 *
 * Rules, each chosen so that "go tool pprof -top" agrees with "jheap --text":
 *
 * - Sample types in Go's order: alloc_objects/count, alloc_space/bytes,
 *   inuse_objects/count, inuse_space/bytes; only the two in-use ones when
 *   the dump has no accumulated counts.  default_sample_type is the value
 *   the user chose (pprof's -sample_index overrides it).  period_type
 *   space/bytes, period = the dump's sampling period.
 * - Values: the model's unsampled doubles truncated toward zero, per pprof
 *   sample (Go's runtime converts its unsampled values the same way, and
 *   jeprof prints %d).  A sampled dump's totals may thus be a few units
 *   below --text, whose sums are truncated once.
 * - Allocator frames: cut from each stack with jheap's own rule (the
 *   leading run of allocator frames, from the leaf up to the first frame
 *   that is not the allocator's: in libjemalloc, or named on the skip
 *   list), so the user's function is the leaf exactly as in --text.  Where
 *   the cut ends inside a location (inline frames of the allocator's in a
 *   program's function), the stack uses a second location at the same
 *   address holding only the frames after the cut.  drop_frames carries
 *   the skip list as a regular expression only in the --no-symbolize form,
 *   where pprof symbolizes and must cut the frames itself: pprof cuts up
 *   to the outermost match, which would also cut a program's frames
 *   above an allocator that calls back into the program.
 *   --keep-allocator-frames writes whole stacks and no drop_frames.
 * - Threads: a dump's per-thread counts add up to its t* counts, so each
 *   stack is written once per thread with labels thread=tN (and
 *   thread_name), its values the thread's shares of the stack's values
 *   (scaled so that they add up exactly: unsampling per thread and per
 *   stack differ slightly in sampled dumps).  Totals are never counted
 *   twice.  A stack whose thread values cannot be split that way (negative
 *   values) is written once without labels; so is every stack with --base
 *   (thread ids of two runs are unrelated).  With --thread=N the samples
 *   hold that thread's values already and all carry its label.
 * - Where a sample came from: its labels (--label, --label-from-path:
 *   analyzer/labels.h) follow, one Label with key and str each, so that
 *   go tool pprof -tags and -tagfocus, and the servers that read pprof
 *   (Pyroscope, Parca, Grafana), see them.
 * - Mappings: one per run of consecutive executable maps lines of one file
 *   (contiguous in memory and in the file), with the real start, limit and
 *   offset, the main program first, ids 1..N; locations and functions are
 *   numbered 1..N too.  time_nanos is the first dump's modification time;
 *   a comment names the dumps.
 * - --base: Go's -diff_base form: each stack's "after" values (profile +
 *   base share) and, negated with label pprof::base=true, its "before"
 *   values; pprof shows the net change, with percentages of the base.
 * - --focus/--ignore leave out the stacks that --text leaves out;
 *   --retain/--exclude leave out the locations all of whose frames they
 *   drop.
 * - Addresses: the lookup pc (return address - 1 for callers, the leaf as
 *   is), as Go writes call pcs: pprof never adjusts proto addresses, so
 *   these are what it must symbolize in the --no-symbolize form.
 * - Functions: name = the name --text shows (jeprof's short form, or the
 *   full demangled one with --full-names), system_name = the linkage name,
 *   filename and start_line from the declaration.  pprof's own symbolizer
 *   names C++ functions the same short way.
 * - --no-symbolize: locations hold only address and mapping, mappings keep
 *   their real ranges and has_* = false, so pprof symbolizes them later.
 */
#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/errors.h"
#include "analyzer/names.h"
#include "analyzer/profile.h"
#include "output/gzout.h"
#include "output/output.h"
#include "output/pbenc.h"

/* Field numbers of profile.proto. */
enum {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6,
	PROFILE_DROP_FRAMES = 7, PROFILE_TIME_NANOS = 9, PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12, PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,
	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,
	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,
	LABEL_KEY = 1, LABEL_STR = 2,
	MAPPING_ID = 1, MAPPING_START = 2, MAPPING_LIMIT = 3, MAPPING_OFFSET = 4,
	MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6, MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LINE_FUNCTION_ID = 1, LINE_LINE = 2, LINE_COLUMN = 3,
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4, FUNCTION_START_LINE = 5,
};

/* A run of model mappings that is one pprof Mapping: consecutive lines of
 * the same file, contiguous in memory and in the file. */
struct run {
	uint32_t first, last;    /* model mapping ids */
	uint32_t id;             /* pprof id, 0 when not written */
	bool used;
};

struct pw {
	const struct report *r;
	const struct profile *p;
	struct pbenc e;
	struct strtab strs;          /* the output's string_table */
	int nvals;
	enum pf_value vidx[PF_NALL_VALUES];  /* model value of each sample type */
	uint32_t *loc_id;            /* model location -> pprof id (0: unused) */
	uint32_t *cut_id;            /* model location -> pprof id of the location
	                                without its leading allocator frames, where
	                                a stack's allocator cut ends inside it */
	uint32_t *func_id;           /* model function -> pprof id */
	uint32_t *func_order;        /* pprof id - 1 -> model function */
	size_t nfuncs;
	uint32_t *map_run;           /* model mapping -> run index */
	struct run *runs;
	size_t nruns;
	uint32_t *run_order;         /* pprof mapping id - 1 -> run */
	size_t nused_runs;
	uint32_t *tv_start;          /* sample -> first entry in tv_order */
	uint32_t *tv_order;          /* tvals sorted by sample, then thread uid */
	bool marking;                /* first pass: mark used locations only */
	uint64_t *locbuf;
	size_t cap_locbuf;
	struct gzout *gz;            /* where the finished bytes go */
	uint32_t *thread_ids;        /* per thread: its label strings' ids */
	uint8_t *thread_done;        /* per thread: thread_ids made */
};

/* The encoded bytes are handed to the gzip stream in blocks of about
 * this many, between two top-level messages (whose bytes are final). */
#define GZ_BLOCK ((size_t)4 << 20)

/* Hands the bytes encoded so far to the stream, when there are enough
 * (ALL: whatever there is); a failure is the encoder's, sticky. */
static void hand_over(struct pw *w, bool all)
{
	if (w->e.oom || (!all && w->e.len < GZ_BLOCK))
		return;
	if (gzout_write(w->gz, w->e.buf, w->e.len))
		w->e.oom = true;
	w->e.len = 0;
}

/* ---- strings ---- */

static uint32_t str(struct pw *w, const char *s)
{
	int64_t id = strtab_intern(&w->strs, s ? s : "");
	if (id < 0) {
		w->e.oom = true;
		return 0;
	}
	return (uint32_t)id;
}

/* ---- the allocator skip list as a regular expression ----
 * The same test as names_is_allocator(): the whole name, optionally with a
 * jemalloc or Mach-O prefix, or a one-word entry followed by a space and
 * anything. */
static int rx_append(char **buf, size_t *len, size_t *cap, const char *s, bool quote)
{
	for (; *s; s++) {
		if (quote && strchr("\\.+*?()|[]{}^$", *s) &&
		    JH_PUSH(*buf, *len, *cap, '\\'))
			return JH_ENOMEM;
		if (JH_PUSH(*buf, *len, *cap, *s))
			return JH_ENOMEM;
	}
	return 0;
}

/* The drop_frames expression (pprof anchors it as ^(...)$). */
static int alloc_regex(struct pw *w, uint32_t *out)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = 0;
	for (int spaced = 0; spaced < 2 && !rc; spaced++) {
		rc = rx_append(&buf, &len, &cap, len ? "|" : "", false) ||
		     rx_append(&buf, &len, &cap, "(?:", false);
		bool first = true;
		for (const char *const *pf = names_allocator_prefixes(); *pf && !rc; pf++) {
			rc = rx_append(&buf, &len, &cap, first ? "" : "|", false) ||
			     rx_append(&buf, &len, &cap, *pf, true);
			first = false;
		}
		rc = rc || rx_append(&buf, &len, &cap, ")?(?:", false);
		first = true;
		for (const char *const *n = names_allocator_list(); *n && !rc; n++) {
			if ((strchr(*n, ' ') != NULL) != spaced)
				continue;
			rc = rx_append(&buf, &len, &cap, first ? "" : "|", false) ||
			     rx_append(&buf, &len, &cap, *n, true);
			first = false;
		}
		if (!rc)
			rc = rx_append(&buf, &len, &cap, spaced ? ")" : ")(?: .*)?", false);
	}
	if (!rc)
		rc = rx_append(&buf, &len, &cap, "|.*TCMalloc.*|tcmalloc::.*", false);
	for (const char *const *pt = names_allocator_patterns(); *pt && !rc; pt++)
		rc = rx_append(&buf, &len, &cap, "|", false) || rx_append(&buf, &len, &cap, *pt, false);
	if (!rc)
		rc = JH_PUSH(buf, len, cap, '\0');
	if (!rc)
		*out = str(w, buf);
	free(buf);
	return rc ? JH_ENOMEM : 0;
}

/* ---- samples ---- */

/* jheap's --retain/--exclude drop single frames: a location all of whose
 * frames they drop is left out of the stacks (one whose frames are only
 * partly dropped is kept whole: a location cannot lose inline frames in
 * one sample only). */
static bool loc_dropped(const struct aggregate *a, uint32_t loc)
{
	const struct agg_locinfo *li = &a->locinfo[loc];
	if (!a->filtered || !a->keyflags || !li->nkeys)
		return false;
	for (uint32_t k = li->key0; k < li->key0 + li->nkeys; k++)
		if (!(a->keyflags[k] & AGG_F_DROP))
			return false;
	return true;
}

/* jheap's --focus/--ignore: whether the stack of S from K0 on is left out,
 * the same test as aggregate_stack_keys(). */
static bool stack_dropped(const struct pw *w, const struct pf_sample *s, uint32_t k0)
{
	const struct aggregate *a = w->r->a;
	if (!a->filtered || !a->keyflags)
		return false;
	uint8_t seen = 0;
	for (uint32_t i = k0; i < s->depth; i++) {
		const struct agg_locinfo *li = &a->locinfo[w->p->stacks[s->stack0 + i]];
		for (uint32_t k = li->key0; k < li->key0 + li->nkeys; k++)
			if (!(a->keyflags[k] & AGG_F_DROP))
				seen |= a->keyflags[k];
	}
	return aggregate_drops(a, seen);
}

static int64_t trunc64(double v)
{
	if (!(v == v))
		return 0;
	if (v >= 9.2e18)
		return INT64_MAX;
	if (v <= -9.2e18)
		return INT64_MIN;
	return (int64_t)v;   /* C conversion truncates toward zero */
}

static void write_label(struct pw *w, uint32_t key, uint32_t val);

/* Writes (or, in the marking pass, records the locations of) one pprof
 * sample of model sample SI with values V; labels are THREAD's (a thread
 * id, UINT32_MAX none), KEYS[i] = VALS[i] and the sample's own. */
static void emit(struct pw *w, uint32_t si, const int64_t *v,
		 const char *const *keys, const char *const *vals, int nlabels,
		 uint32_t thread)
{
	bool any = false;
	for (int k = 0; k < w->nvals; k++)
		any |= v[k] != 0;
	if (!any)
		return;
	const struct pf_sample *s = &w->p->samples[si];
	uint32_t skip;
	uint32_t k0 = aggregate_stack_start(w->r->a, w->p, si, &skip);
	if (stack_dropped(w, s, k0))
		return;
	if (w->marking) {
		for (uint32_t i = k0; i < s->depth; i++) {
			uint32_t loc = w->p->stacks[s->stack0 + i];
			if (!loc_dropped(w->r->a, loc))
				*(i == k0 && skip ? &w->cut_id[loc] : &w->loc_id[loc]) = 1;
		}
		return;
	}
	if (jh_grow(&w->locbuf, &w->cap_locbuf, s->depth + 1, sizeof(*w->locbuf))) {
		w->e.oom = true;
		return;
	}
	size_t n = 0;
	for (uint32_t i = k0; i < s->depth; i++) {
		uint32_t loc = w->p->stacks[s->stack0 + i];
		if (!loc_dropped(w->r->a, loc))
			w->locbuf[n++] = i == k0 && skip ? w->cut_id[loc] : w->loc_id[loc];
	}
	size_t m = pbenc_begin(&w->e, PROFILE_SAMPLE);
	pbenc_packed_uint64(&w->e, SAMPLE_LOCATION_ID, w->locbuf, n);
	pbenc_packed_int64(&w->e, SAMPLE_VALUE, v, (size_t)w->nvals);
	if (thread != UINT32_MAX) {
		/* a thread's labels as string ids, made the first time they
		 * are written (the string table's order stays the same) */
		const struct pf_thread *th = &w->p->threads[thread];
		uint32_t *ids = &w->thread_ids[4 * (size_t)thread];
		if (!w->thread_done[thread]) {
			char uid[32];
			snprintf(uid, sizeof(uid), "t%lld", (long long)th->uid);
			ids[0] = str(w, "thread");
			ids[1] = str(w, uid);
			if (th->name) {
				ids[2] = str(w, "thread_name");
				ids[3] = str(w, strtab_get(&w->p->strs, th->name));
			}
			w->thread_done[thread] = 1;
		}
		write_label(w, ids[0], ids[1]);
		if (th->name)
			write_label(w, ids[2], ids[3]);
	}
	for (int i = 0; i < nlabels; i++) {
		uint32_t key = str(w, keys[i]), val = str(w, vals[i]);
		write_label(w, key, val);
	}
	/* where the sample came from (--label, --label-from-path) */
	size_t nl;
	const struct pf_label *own = labeltab_get(&w->p->labels, s->labels, &nl);
	for (size_t i = 0; i < nl; i++)
		write_label(w, str(w, strtab_get(&w->p->strs, own[i].key)),
			    str(w, strtab_get(&w->p->strs, own[i].value)));
	pbenc_end(&w->e, m);
}

/* A Label of a Sample: KEY = VAL (string table ids). */
static void write_label(struct pw *w, uint32_t key, uint32_t val)
{
	size_t l = pbenc_begin(&w->e, SAMPLE_LABEL);
	pbenc_int64(&w->e, LABEL_KEY, key);
	pbenc_int64(&w->e, LABEL_STR, val);
	pbenc_end(&w->e, l);
}

static int cmp_tv(const void *a, const void *b, void *arg)
{
	const struct profile *p = arg;
	const struct pf_thread_value *x = &p->tvals[*(const uint32_t *)a];
	const struct pf_thread_value *y = &p->tvals[*(const uint32_t *)b];
	if (x->sample != y->sample)
		return x->sample < y->sample ? -1 : 1;
	int64_t ux = p->threads[x->thread].uid, uy = p->threads[y->thread].uid;
	if (ux != uy)
		return ux < uy ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int index_threads(struct pw *w)
{
	const struct profile *p = w->p;
	w->tv_start = calloc(p->nsamples + 1, sizeof(*w->tv_start));
	w->tv_order = malloc((p->ntvals + 1) * sizeof(*w->tv_order));
	if (!w->tv_start || !w->tv_order)
		return JH_ENOMEM;
	for (size_t i = 0; i < p->ntvals; i++)
		w->tv_order[i] = (uint32_t)i;
	jh_qsort_r(w->tv_order, p->ntvals, sizeof(*w->tv_order), cmp_tv, (void *)p);
	size_t j = 0;
	for (size_t s = 0; s <= p->nsamples; s++) {
		while (j < p->ntvals && p->tvals[w->tv_order[j]].sample < s)
			j++;
		w->tv_start[s] = (uint32_t)j;
	}
	return 0;
}

/* Writes the thread shares of sample SI; false when its thread values
 * cannot be split. */
static bool emit_threads(struct pw *w, uint32_t si)
{
	const struct profile *p = w->p;
	uint32_t t0 = w->tv_start[si], t1 = w->tv_start[si + 1];
	if (t0 == t1)
		return false;
	double sum[PF_NALL_VALUES] = { 0 };
	for (uint32_t t = t0; t < t1; t++)
		for (int k = 0; k < w->nvals; k++) {
			double x = pf_value_of(p->tvals[w->tv_order[t]].v, w->vidx[k]);
			if (x < 0)
				return false;
			sum[k] += x;
		}
	const double *sv = aggregate_values(w->r->a, p, si);
	for (int k = 0; k < w->nvals; k++) {
		double a = pf_value_of(sv, w->vidx[k]);
		if (a < 0 || (sum[k] <= 0 && trunc64(a) != 0))
			return false;
	}
	/* Share of thread i: floor(T * cum_i / S) - floor(T * cum_{i-1} / S),
	 * T the stack's truncated value and cum_i the running sum of the
	 * thread values: non-negative, adding up to exactly T, and equal to
	 * the thread's own values whenever they add up to T. */
	double cum[PF_NALL_VALUES] = { 0 };
	int64_t prev[PF_NALL_VALUES] = { 0 };
	for (uint32_t t = t0; t < t1; t++) {
		const struct pf_thread_value *tv = &p->tvals[w->tv_order[t]];
		int64_t v[PF_NALL_VALUES];
		for (int k = 0; k < w->nvals; k++) {
			int64_t total = trunc64(pf_value_of(sv, w->vidx[k]));
			cum[k] += pf_value_of(tv->v, w->vidx[k]);
			int64_t c = total;
			if (t + 1 < t1 && sum[k] > 0) {
				double f = floor(cum[k] * ((double)total / sum[k]) + 1e-7);
				c = f < 0 ? 0 : f > (double)total ? total : (int64_t)f;
			}
			if (c < prev[k])
				c = prev[k];
			v[k] = c - prev[k];
			prev[k] = c;
		}
		emit(w, si, v, NULL, NULL, 0, tv->thread);
	}
	return true;
}

static void emit_sample(struct pw *w, uint32_t si)
{
	const double *sv = aggregate_values(w->r->a, w->p, si);
	const double *base = aggregate_base(w->r->a, w->p, si);
	int64_t v[PF_NALL_VALUES];
	for (int k = 0; k < w->nvals; k++)
		v[k] = trunc64(pf_value_of(sv, w->vidx[k]));
	if (w->r->thread) {
		/* --thread: the aggregate's values are the thread's (net of
		 * any --base); the label is "tN" or "tN NAME" */
		char uid[64];
		const char *t = w->r->thread, *sp = strchr(t, ' ');
		snprintf(uid, sizeof(uid), "%.*s", sp ? (int)(sp - t) : (int)strlen(t), t);
		const char *keys[2] = { "thread", "thread_name" };
		const char *vals[2] = { uid, sp ? sp + 1 : "" };
		emit(w, si, v, keys, vals, sp ? 2 : 1, UINT32_MAX);
		return;
	}
	if (w->r->diff) {
		for (int k = 0; k < w->nvals; k++)
			v[k] = trunc64(pf_value_of(sv, w->vidx[k]) + pf_value_of(base, w->vidx[k]));
		emit(w, si, v, NULL, NULL, 0, UINT32_MAX);
		for (int k = 0; k < w->nvals; k++)
			v[k] = -trunc64(pf_value_of(base, w->vidx[k]));
		const char *key = "pprof::base", *val = "true";
		emit(w, si, v, &key, &val, 1, UINT32_MAX);
		return;
	}
	if (emit_threads(w, si))
		return;
	emit(w, si, v, NULL, NULL, 0, UINT32_MAX);
}

/* ---- mappings, locations, functions ---- */

static bool same_run(const struct pf_mapping *a, const struct pf_mapping *b)
{
	return a->kind == PF_MAP_FILE && b->kind == PF_MAP_FILE && a->exec && b->exec &&
	       a->path == b->path && a->limit == b->start &&
	       b->offset == a->offset + (a->limit - a->start);
}

static int number_mappings(struct pw *w)
{
	const struct profile *p = w->p;
	w->map_run = malloc((p->nmaps + 1) * sizeof(*w->map_run));
	w->runs = calloc(p->nmaps + 1, sizeof(*w->runs));
	if (!w->map_run || !w->runs)
		return JH_ENOMEM;
	for (size_t i = 0; i < p->nmaps; i++) {
		if (!i || !same_run(&p->maps[i - 1], &p->maps[i]))
			w->runs[w->nruns++].first = (uint32_t)i;
		w->runs[w->nruns - 1].last = (uint32_t)i;
		w->map_run[i] = (uint32_t)(w->nruns - 1);
	}
	for (size_t i = 0; i < p->nlocs; i++)
		if ((w->loc_id[i] || w->cut_id[i]) && p->locs[i].mapping < p->nmaps)
			w->runs[w->map_run[p->locs[i].mapping]].used = true;
	w->run_order = malloc((w->nruns + 1) * sizeof(*w->run_order));
	if (!w->run_order)
		return JH_ENOMEM;
	if (p->main_mapping < p->nmaps) {
		uint32_t ri = w->map_run[p->main_mapping];
		if (w->runs[ri].used) {
			w->run_order[w->nused_runs++] = ri;
			w->runs[ri].id = (uint32_t)w->nused_runs;
		}
	}
	for (size_t i = 0; i < w->nruns; i++)
		if (w->runs[i].used && !w->runs[i].id) {
			w->run_order[w->nused_runs++] = (uint32_t)i;
			w->runs[i].id = (uint32_t)w->nused_runs;
		}
	return 0;
}

static const char *mapping_file(const struct pw *w, const struct pf_mapping *m)
{
	const struct strtab *s = &w->p->strs;
	if (m->object)
		return strtab_get(s, m->object);
	if (m->is_main && w->r->program && *w->r->program)
		return w->r->program;
	return strtab_get(s, m->path);
}

static void write_mappings(struct pw *w)
{
	const struct profile *p = w->p;
	for (size_t ri = 0; ri < w->nused_runs; ri++) {
		const struct run *r = &w->runs[w->run_order[ri]];
		const struct pf_mapping *m = &p->maps[r->first];
		bool fn = false, fl = false, ln = false, in = false;
		uint32_t bid = 0;
		for (uint32_t i = r->first; i <= r->last; i++) {
			fn |= p->maps[i].has_functions;
			fl |= p->maps[i].has_filenames;
			ln |= p->maps[i].has_line_numbers;
			in |= p->maps[i].has_inline_frames;
			if (!bid)
				bid = p->maps[i].build_id;
		}
		size_t mk = pbenc_begin(&w->e, PROFILE_MAPPING);
		pbenc_uint64(&w->e, MAPPING_ID, r->id);
		pbenc_uint64_opt(&w->e, MAPPING_START, m->start);
		pbenc_uint64_opt(&w->e, MAPPING_LIMIT, p->maps[r->last].limit);
		pbenc_uint64_opt(&w->e, MAPPING_OFFSET, m->offset);
		pbenc_int64_opt(&w->e, MAPPING_FILENAME, str(w, mapping_file(w, m)));
		if (bid)
			pbenc_int64(&w->e, MAPPING_BUILD_ID, str(w, strtab_get(&p->strs, bid)));
		pbenc_bool_opt(&w->e, MAPPING_HAS_FUNCTIONS, fn);
		pbenc_bool_opt(&w->e, MAPPING_HAS_FILENAMES, fl);
		pbenc_bool_opt(&w->e, MAPPING_HAS_LINE_NUMBERS, ln);
		pbenc_bool_opt(&w->e, MAPPING_HAS_INLINE_FRAMES, in);
		pbenc_end(&w->e, mk);
	}
}

/* Whether location L is written with its frames: not in the
 * --no-symbolize form, where only names read from a symbolized input
 * count as frames (module+offset names are left to pprof). */
static bool has_frames(const struct pw *w, const struct pf_location *l)
{
	return l->nlines && !(w->r->no_symbolize && l->sym == PF_SYM_UNKNOWN);
}

/* The frames of location I that its pprof location ID holds: all of
 * them, or those after the leading allocator frames for a cut_id. */
static uint32_t first_frame(const struct pw *w, size_t i, bool cut)
{
	return cut ? w->r->a->locinfo[i].nalloc : 0;
}

static void write_location(struct pw *w, size_t i, uint32_t id, bool cut)
{
	const struct profile *p = w->p;
	const struct pf_location *l = &p->locs[i];
	size_t mk = pbenc_begin(&w->e, PROFILE_LOCATION);
	pbenc_uint64(&w->e, LOCATION_ID, id);
	if (l->mapping < p->nmaps)
		pbenc_uint64_opt(&w->e, LOCATION_MAPPING_ID, w->runs[w->map_run[l->mapping]].id);
	pbenc_uint64_opt(&w->e, LOCATION_ADDRESS, addr_pc(l->addr, l->leaf));
	for (uint32_t j = first_frame(w, i, cut); has_frames(w, l) && j < l->nlines; j++) {
		const struct pf_line *ln = &p->lines[l->line0 + j];
		size_t lk = pbenc_begin(&w->e, LOCATION_LINE);
		pbenc_uint64(&w->e, LINE_FUNCTION_ID, w->func_id[ln->function]);
		pbenc_int64_opt(&w->e, LINE_LINE, ln->line);
		pbenc_int64_opt(&w->e, LINE_COLUMN, ln->column);
		pbenc_end(&w->e, lk);
	}
	pbenc_end(&w->e, mk);
}

static void write_locations(struct pw *w)
{
	for (size_t i = 0; i < w->p->nlocs; i++)
		if (w->loc_id[i])
			write_location(w, i, w->loc_id[i], false);
	for (size_t i = 0; i < w->p->nlocs; i++)
		if (w->cut_id[i])
			write_location(w, i, w->cut_id[i], true);
}

static void write_functions(struct pw *w)
{
	const struct profile *p = w->p;
	char buf[4096];
	for (size_t i = 0; i < w->nfuncs; i++) {
		uint32_t f = w->func_order[i];
		const struct pf_function *fn = &p->funcs[f];
		const char *name = aggregate_func_name(p, f, w->r->full_names,
						       buf, sizeof(buf));
		size_t mk = pbenc_begin(&w->e, PROFILE_FUNCTION);
		pbenc_uint64(&w->e, FUNCTION_ID, i + 1);
		pbenc_int64_opt(&w->e, FUNCTION_NAME, str(w, name));
		/* the linkage name; for C (no linkage name) the symbol itself */
		pbenc_int64_opt(&w->e, FUNCTION_SYSTEM_NAME,
				str(w, strtab_get(&p->strs, fn->system_name ? fn->system_name
									     : fn->name)));
		pbenc_int64_opt(&w->e, FUNCTION_FILENAME,
				str(w, strtab_get(&p->strs, fn->filename)));
		pbenc_int64_opt(&w->e, FUNCTION_START_LINE, fn->start_line);
		pbenc_end(&w->e, mk);
	}
}

/* Numbers the used locations 1..N in model order, then the cut ones,
 * and their functions in order of first use. */
static int number_locations(struct pw *w)
{
	const struct profile *p = w->p;
	w->func_id = calloc(p->nfuncs + 1, sizeof(*w->func_id));
	w->func_order = malloc((p->nfuncs + 1) * sizeof(*w->func_order));
	if (!w->func_id || !w->func_order)
		return JH_ENOMEM;
	uint32_t nl = 0;
	for (int cut = 0; cut < 2; cut++) {
		uint32_t *ids = cut ? w->cut_id : w->loc_id;
		for (size_t i = 0; i < p->nlocs; i++) {
			if (!ids[i])
				continue;
			ids[i] = ++nl;
			const struct pf_location *l = &p->locs[i];
			for (uint32_t j = first_frame(w, i, cut); has_frames(w, l) && j < l->nlines; j++) {
				uint32_t f = p->lines[l->line0 + j].function;
				if (!w->func_id[f]) {
					w->func_order[w->nfuncs++] = f;
					w->func_id[f] = (uint32_t)w->nfuncs;
				}
			}
		}
	}
	return 0;
}

/* ---- the profile ---- */

static const char *const type_names[2][PF_NALL_VALUES] = {
	{ [PF_INUSE_OBJECTS] = "inuse_objects", [PF_INUSE_SPACE] = "inuse_space",
	  [PF_ALLOC_OBJECTS] = "alloc_objects", [PF_ALLOC_SPACE] = "alloc_space",
	  [PF_CHURN_OBJECTS] = "churn_objects", [PF_CHURN_SPACE] = "churn_space" },
	/* --growth: each value is the fitted growth over the series */
	{ [PF_INUSE_OBJECTS] = "inuse_objects_growth", [PF_INUSE_SPACE] = "inuse_space_growth",
	  [PF_ALLOC_OBJECTS] = "alloc_objects_growth", [PF_ALLOC_SPACE] = "alloc_space_growth",
	  [PF_CHURN_OBJECTS] = "churn_objects_growth", [PF_CHURN_SPACE] = "churn_space_growth" },
};

static void write_header(struct pw *w)
{
	const struct profile *p = w->p;
	const struct report *r = w->r;
	for (int k = 0; k < w->nvals; k++) {
		enum pf_value v = w->vidx[k];
		bool count = pf_value_is_objects(v);
		size_t mk = pbenc_begin(&w->e, PROFILE_SAMPLE_TYPE);
		pbenc_int64(&w->e, VALUETYPE_TYPE, str(w, type_names[r->growth][v]));
		pbenc_int64(&w->e, VALUETYPE_UNIT, str(w, count ? "count" : "bytes"));
		pbenc_end(&w->e, mk);
	}
	size_t mk = pbenc_begin(&w->e, PROFILE_PERIOD_TYPE);
	pbenc_int64(&w->e, VALUETYPE_TYPE, str(w, "space"));
	pbenc_int64(&w->e, VALUETYPE_UNIT, str(w, "bytes"));
	pbenc_end(&w->e, mk);
	pbenc_int64_opt(&w->e, PROFILE_PERIOD, (int64_t)(p->period > INT64_MAX ? INT64_MAX : p->period));
	for (int k = 0; k < w->nvals; k++)
		if (w->vidx[k] == r->value)
			pbenc_int64(&w->e, PROFILE_DEFAULT_SAMPLE_TYPE, str(w, type_names[r->growth][r->value]));
	if (!r->keep_allocator && r->no_symbolize) {
		uint32_t rx = 0;
		if (alloc_regex(w, &rx))
			w->e.oom = true;
		pbenc_int64(&w->e, PROFILE_DROP_FRAMES, rx);
	}
	/* The dump's modification time stands for the time it was taken. */
	struct stat st;
	const char *first = r->profile_paths ? r->profile_paths[0] : NULL;
	if (first && strcmp(first, "-") && !stat(first, &st))
		pbenc_int64_opt(&w->e, PROFILE_TIME_NANOS,
				(int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
	/* Provenance, shown by pprof in its report header. */
	char c[1024];
	size_t n = (size_t)snprintf(c, sizeof(c), "jheap:");
	for (const char *const *pp = r->profile_paths; pp && *pp && n < sizeof(c); pp++)
		n += (size_t)snprintf(c + n, sizeof(c) - n, " %s", *pp);
	if (r->diff && n < sizeof(c))
		snprintf(c + n, sizeof(c) - n, " minus --base");
	pbenc_int64(&w->e, PROFILE_COMMENT, str(w, c));
}

static int build(struct pw *w)
{
	const struct profile *p = w->p;
	if (p->has_alloc) {
		static const enum pf_value go_order[] = {
			PF_ALLOC_OBJECTS, PF_ALLOC_SPACE, PF_INUSE_OBJECTS, PF_INUSE_SPACE };
		memcpy(w->vidx, go_order, sizeof(go_order));
		w->nvals = 4;
		/* --churn: its two values after the stored ones */
		if (w->r->value == PF_CHURN_OBJECTS || w->r->value == PF_CHURN_SPACE) {
			w->vidx[w->nvals++] = PF_CHURN_OBJECTS;
			w->vidx[w->nvals++] = PF_CHURN_SPACE;
		}
	} else {
		w->vidx[0] = PF_INUSE_OBJECTS;
		w->vidx[1] = PF_INUSE_SPACE;
		w->nvals = 2;
	}
	w->thread_ids = malloc((4 * p->nthreads + 1) * sizeof(*w->thread_ids));
	w->thread_done = calloc(p->nthreads + 1, 1);
	if (!w->thread_ids || !w->thread_done)
		return JH_ENOMEM;
	w->loc_id = calloc(p->nlocs + 1, sizeof(*w->loc_id));
	w->cut_id = calloc(p->nlocs + 1, sizeof(*w->cut_id));
	if (!w->loc_id || !w->cut_id || index_threads(w))
		return JH_ENOMEM;
	/* pass 1: which locations the written samples use */
	w->marking = true;
	for (size_t i = 0; i < p->nsamples; i++)
		emit_sample(w, (uint32_t)i);
	w->marking = false;
	if (number_locations(w) || number_mappings(w))
		return JH_ENOMEM;
	/* pass 2: the messages, handed to the gzip stream as they are
	 * done; the string table goes last, once every string is known
	 * (field order does not matter in protobuf) */
	write_header(w);
	for (size_t i = 0; i < p->nsamples; i++) {
		emit_sample(w, (uint32_t)i);
		hand_over(w, false);
	}
	write_mappings(w);
	hand_over(w, false);
	write_locations(w);
	hand_over(w, false);
	write_functions(w);
	hand_over(w, false);
	for (size_t i = 0; i < w->strs.len; i++) {
		pbenc_bytes(&w->e, PROFILE_STRING_TABLE, w->strs.ents[i].s, w->strs.ents[i].n);
		hand_over(w, false);
	}
	hand_over(w, true);
	return pbenc_failed(&w->e) ? JH_ENOMEM : 0;
}

int output_proto(FILE *out, const struct report *r, char *err, size_t errlen)
{
	if (isatty(fileno(out)))
		return jh_err(err, errlen, JH_EUSAGE,
			      "--proto writes gzipped binary data; not writing it to a terminal (use -o FILE or redirect the output)");
	struct pw w;
	memset(&w, 0, sizeof(w));
	w.r = r;
	w.p = r->p;
	pbenc_init(&w.e);
	/* gzip at the fastest level, as Go's own runtime/pprof writes: on a
	 * 200,000-stack dump the best level took half of --proto's time for
	 * a file 10% smaller */
	if (!(w.gz = gzout_open(out, err, errlen)))
		return JH_ENOMEM;
	int rc = strtab_init(&w.strs) ? JH_ENOMEM : build(&w);
	char zerr[300];
	int zrc = gzout_close(w.gz, zerr, sizeof(zerr));
	if (rc)
		rc = jh_err(err, errlen, rc, "out of memory while writing the profile");
	else if (zrc)
		rc = jh_err(err, errlen, zrc, "%s", zerr);
	pbenc_release(&w.e);
	strtab_release(&w.strs);
	free(w.loc_id);
	free(w.cut_id);
	free(w.func_id);
	free(w.func_order);
	free(w.run_order);
	free(w.map_run);
	free(w.runs);
	free(w.tv_start);
	free(w.tv_order);
	free(w.locbuf);
	free(w.thread_ids);
	free(w.thread_done);
	return rc;
}

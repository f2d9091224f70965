/*
 * pprof: profile.proto in (see pprof.h).
 *
 * Wire format: a message is a sequence of fields, each a varint key
 * (number << 3 | wire type) and a payload: a varint (type 0), 8 bytes (1),
 * a varint length and that many bytes (2: strings, nested messages,
 * packed repeated scalars) or 4 bytes (5).  Fields may come in any order
 * and a repeated scalar may be packed or not, so the profile is read in
 * passes over its top level: counts, then the tables (strings, sample
 * types, mappings, functions, locations), then the samples, which refer
 * to the tables by id.
 */
#include <math.h>
#include <zlib.h>

#include "lib/array.h"
#include "lib/errors.h"
#include "analyzer/parse.h"
#include "analyzer/pprof.h"
#include "lib/varint.h"

/* Field numbers of profile.proto. */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5,
	P_STRING_TABLE = 6, P_DROP_FRAMES = 7, P_KEEP_FRAMES = 8, P_TIME_NANOS = 9,
	P_DURATION = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12, P_COMMENT = 13,
	P_DEFAULT_SAMPLE_TYPE = 14, P_DOC_URL = 15,
};

struct pbf {
	uint32_t field;
	unsigned wt;
	uint64_t v;                  /* types 0, 1 and 5 */
	const unsigned char *data;   /* type 2 */
	size_t len;
};

static uint64_t le(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* The next field of the message ending at END: 1, 0 at the end, -1 when
 * malformed (groups, wire types 3 and 4, are not in profile.proto). */
static int pb_next(const unsigned char **p, const unsigned char *end, struct pbf *f)
{
	uint64_t key, n;
	if (*p >= end)
		return 0;
	if (varint_get(p, end, &key) || key >> 32 || !(key >> 3))
		return -1;
	f->field = (uint32_t)(key >> 3);
	f->wt = (unsigned)(key & 7);
	switch (f->wt) {
	case 0:
		return varint_get(p, end, &f->v) ? -1 : 1;
	case 1:
	case 5:
		n = f->wt == 1 ? 8 : 4;
		if ((uint64_t)(end - *p) < n)
			return -1;
		f->v = le(*p, (int)n);
		*p += n;
		return 1;
	case 2:
		if (varint_get(p, end, &n) || n > (uint64_t)(end - *p))
			return -1;
		f->data = *p;
		f->len = (size_t)n;
		*p += n;
		return 1;
	default:
		return -1;
	}
}

/* The wire type a top-level field of profile.proto has (repeated scalars
 * may be packed, 2, or not, 0), or -1 for a field it does not name. */
static int top_wt(uint32_t field, unsigned wt)
{
	switch (field) {
	case P_SAMPLE_TYPE: case P_SAMPLE: case P_MAPPING: case P_LOCATION:
	case P_FUNCTION: case P_STRING_TABLE: case P_PERIOD_TYPE:
		return wt == 2;
	case P_DROP_FRAMES: case P_KEEP_FRAMES: case P_TIME_NANOS: case P_DURATION:
	case P_PERIOD: case P_DEFAULT_SAMPLE_TYPE: case P_DOC_URL:
		return wt == 0;
	case P_COMMENT:
		return wt == 0 || wt == 2;
	default:
		return -1;
	}
}

bool pprof_sniff(const unsigned char *buf, size_t len)
{
	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b)
		return true;
	const unsigned char *p = buf, *end = buf + len;
	struct pbf f;
	int r, n = 0;
	while ((r = pb_next(&p, end, &f)) > 0) {
		/* every field one profile.proto names, with its wire type:
		 * text is never that for long */
		if (top_wt(f.field, f.wt) != 1)
			return false;
		n++;
	}
	return r == 0 && n > 0;
}

size_t pprof_broken_at(const unsigned char *buf, size_t len)
{
	const unsigned char *p = buf, *end = buf + len, *last = buf;
	struct pbf f;
	int n = 0;
	bool binary = false;
	for (size_t i = 0; i < len && i < 256; i++)
		binary |= !buf[i] || buf[i] >= 0x80;
	while (pb_next(&p, end, &f) > 0 && top_wt(f.field, f.wt) == 1) {
		last = p;
		n++;
	}
	return binary && n >= 2 && last < end ? (size_t)(last - buf) : 0;
}

int pprof_inflate(const char *name, const unsigned char *buf, size_t len,
		  unsigned char **out, size_t *outlen, char *err, size_t errlen)
{
	z_stream zs = { 0 };
	*out = NULL;
	*outlen = 0;
	if (len > UINT32_MAX)
		return jh_err(err, errlen, JH_ELIMIT, "%s: more than 4 GiB of gzip data", name);
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return jh_err(err, errlen, JH_ENOMEM, "%s: out of memory", name);
	size_t cap = len < 16384 ? 65536 : len * 4;
	if (cap > PPROF_MAX_BYTES)
		cap = PPROF_MAX_BYTES;
	unsigned char *o = malloc(cap);
	int rc = o ? 0 : jh_err(err, errlen, JH_ENOMEM, "%s: out of memory", name);
	zs.next_in = (unsigned char *)buf;
	zs.avail_in = (uInt)len;
	size_t n = 0;
	while (!rc) {
		if (n == cap) {
			if (cap == PPROF_MAX_BYTES) {
				rc = jh_err(err, errlen, JH_ELIMIT,
					    "%s: the gzip data inflates to more than %u MiB", name,
					    PPROF_MAX_BYTES >> 20);
				break;
			}
			size_t ncap = cap * 2 > PPROF_MAX_BYTES ? PPROF_MAX_BYTES : cap * 2;
			unsigned char *g = realloc(o, ncap);
			if (!g) {
				rc = jh_err(err, errlen, JH_ENOMEM, "%s: out of memory", name);
				break;
			}
			o = g;
			cap = ncap;
		}
		zs.next_out = o + n;
		zs.avail_out = (uInt)(cap - n);
		int z = inflate(&zs, Z_NO_FLUSH);
		n = cap - zs.avail_out;
		if (z == Z_STREAM_END) {
			/* gzip members one after another, as cat makes them */
			if (!zs.avail_in)
				break;
			if (inflateReset(&zs) != Z_OK)
				rc = jh_err(err, errlen, JH_ENOMEM, "%s: out of memory", name);
		} else if (z == Z_BUF_ERROR && !zs.avail_in) {
			rc = jh_err(err, errlen, JH_EFORMAT,
				    "%s: the gzip data ends early (truncated file?)", name);
		} else if (z != Z_OK && z != Z_BUF_ERROR) {
			rc = jh_err(err, errlen, z == Z_MEM_ERROR ? JH_ENOMEM : JH_EFORMAT,
				    "%s: corrupt gzip data after %lu bytes: %s", name,
				    (unsigned long)zs.total_in, zs.msg ? zs.msg : "inflate failed");
		}
	}
	inflateEnd(&zs);
	if (rc) {
		free(o);
		return rc;
	}
	*out = o;
	*outlen = n;
	return 0;
}

/* --- the reader --- */

/* A table entry: its id, where its message is, the model's id for it. */
struct ent {
	uint64_t id;
	uint32_t off, len;
	uint32_t model;              /* UINT32_MAX: not made yet */
	uint32_t file;               /* a function's filename string id, once made */
};

struct table {
	struct ent *e;
	size_t n;
	bool direct;                 /* ids are 1..n in order */
};

struct rd {
	struct profile *p;
	const char *name;
	const unsigned char *base, *end;
	char *err;
	size_t errlen;
	void (*warn)(void *ctx, const char *msg);
	void *ctx;
	struct { uint32_t off, len, sid; } *strs;   /* sid: model string id + 1, 0 not yet */
	size_t nstrs;
	struct table maps, funcs, locs;
	int *vmap;                   /* sample value index -> enum pf_value or -1 */
	size_t nvalues;
	uint64_t *ids;               /* one sample's location ids */
	uint32_t *stack;
	size_t cap_ids, cap_stack;
	int64_t *vals;
	size_t cap_vals;
	size_t frames;               /* in all samples so far, inline frames too */
	double sum[PF_NVALUES];      /* of the values' magnitudes so far */
};

__attribute__((format(printf, 3, 4)))
static int bad(struct rd *r, const unsigned char *at, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return jh_err(r->err, r->errlen, JH_EFORMAT, "%s: byte %zu of the profile: %s", r->name,
		      (size_t)(at - r->base), msg);
}

static int oom(struct rd *r)
{
	return jh_err(r->err, r->errlen, JH_ENOMEM, "%s: out of memory", r->name);
}

/* The model's string id for string table entry IDX (at AT, for messages). */
static int str(struct rd *r, const unsigned char *at, uint64_t idx, uint32_t *out)
{
	if (idx >= r->nstrs)
		return bad(r, at, "string index %llu past the string table's %zu entries",
			   (unsigned long long)idx, r->nstrs);
	if (!r->strs[idx].sid) {
		int64_t id = strtab_intern_n(&r->p->strs, (const char *)r->base + r->strs[idx].off,
					     r->strs[idx].len);
		if (id < 0)
			return oom(r);
		r->strs[idx].sid = (uint32_t)id + 1;
	}
	*out = r->strs[idx].sid - 1;
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct ent *)a)->id, y = ((const struct ent *)b)->id;
	return x < y ? -1 : x > y;
}

/* Sorts table T by id after reading each entry's id (field 1 of its
 * message); a zero or repeated id is an error, as in pprof. */
static int table_index(struct rd *r, struct table *t, const char *what)
{
	t->direct = true;
	for (size_t i = 0; i < t->n; i++) {
		const unsigned char *p = r->base + t->e[i].off, *end = p + t->e[i].len;
		struct pbf f;
		int k;
		t->e[i].id = 0;
		while ((k = pb_next(&p, end, &f)) > 0)
			if (f.field == 1 && f.wt == 0)
				t->e[i].id = f.v;
		if (k < 0)
			return bad(r, p, "malformed %s message", what);
		if (!t->e[i].id)
			return bad(r, r->base + t->e[i].off, "a %s without an id", what);
		if (t->e[i].id != i + 1)
			t->direct = false;
	}
	if (t->direct)
		return 0;
	jh_qsort(t->e, t->n, sizeof *t->e, ent_cmp);
	for (size_t i = 1; i < t->n; i++)
		if (t->e[i].id == t->e[i - 1].id)
			return bad(r, r->base + t->e[i].off, "two %ss with id %llu", what,
				   (unsigned long long)t->e[i].id);
	return 0;
}

static struct ent *table_find(struct table *t, uint64_t id)
{
	if (t->direct)
		return id && id <= t->n ? &t->e[id - 1] : NULL;
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->e[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < t->n && t->e[lo].id == id ? &t->e[lo] : NULL;
}

static int value_kind(const char *type)
{
	static const char *const names[PF_NVALUES] = {
		[PF_INUSE_OBJECTS] = "inuse_objects", [PF_INUSE_SPACE] = "inuse_space",
		[PF_ALLOC_OBJECTS] = "alloc_objects", [PF_ALLOC_SPACE] = "alloc_space",
	};
	for (int k = 0; k < PF_NVALUES; k++)
		if (!strcmp(type, names[k]))
			return k;
	return -1;
}

static int read_sample_types(struct rd *r, const unsigned char *at, size_t ntypes)
{
	r->vmap = malloc((ntypes ? ntypes : 1) * sizeof *r->vmap);
	if (!r->vmap)
		return oom(r);
	r->nvalues = 0;
	bool seen[PF_NVALUES] = { false };
	char types[256] = "";
	const unsigned char *p = at, *end = r->end;
	struct pbf f;
	int k;
	while ((k = pb_next(&p, end, &f)) > 0) {
		if (f.field != P_SAMPLE_TYPE)
			continue;
		uint64_t type = 0, unit = 0;
		const unsigned char *q = f.data, *qe = f.data + f.len;
		struct pbf g;
		int m;
		while ((m = pb_next(&q, qe, &g)) > 0) {
			if (g.field == 1 && g.wt == 0)
				type = g.v;
			else if (g.field == 2 && g.wt == 0)
				unit = g.v;
		}
		uint32_t ts, us;
		if (m < 0)
			return bad(r, q, "malformed sample type");
		if (str(r, f.data, type, &ts) || str(r, f.data, unit, &us))
			return JH_EFORMAT;
		const char *tn = strtab_get(&r->p->strs, ts);
		int kind = value_kind(tn);
		if (kind >= 0 && seen[kind])
			kind = -1;
		if (kind >= 0)
			seen[kind] = true;
		r->vmap[r->nvalues++] = kind;
		size_t used = strlen(types);
		snprintf(types + used, sizeof types - used, "%s%s/%s", used ? ", " : "", tn,
			 strtab_get(&r->p->strs, us));
	}
	if (!seen[PF_INUSE_OBJECTS] && !seen[PF_INUSE_SPACE] && !seen[PF_ALLOC_OBJECTS] &&
	    !seen[PF_ALLOC_SPACE])
		return jh_err(r->err, r->errlen, JH_EFORMAT,
			      "%s: a pprof profile of %s, not a heap profile: jheap reads the sample types inuse_space, inuse_objects, alloc_space and alloc_objects",
			      r->name, types[0] ? types : "no sample types");
	if (r->warn && (!seen[PF_INUSE_OBJECTS] || !seen[PF_INUSE_SPACE])) {
		char msg[1024];
		snprintf(msg, sizeof msg, "%s: the profile has no %s values (its sample types: %s); they read as 0",
			 r->name, seen[PF_INUSE_SPACE] ? "inuse_objects" :
			 seen[PF_INUSE_OBJECTS] ? "inuse_space" : "in-use", types);
		r->warn(r->ctx, msg);
	}
	return 0;
}

static int read_mapping(struct rd *r, struct ent *e)
{
	const unsigned char *p = r->base + e->off, *end = p + e->len;
	struct pf_mapping m = { .exec = true };
	uint64_t file = 0, build = 0;
	struct pbf f;
	int k;
	while ((k = pb_next(&p, end, &f)) > 0) {
		if (f.wt != 0)
			continue;
		switch (f.field) {
		case 2: m.start = f.v; break;
		case 3: m.limit = f.v; break;
		case 4: m.offset = f.v; break;
		case 5: file = f.v; break;
		case 6: build = f.v; break;
		case 7: m.has_functions = f.v; break;
		case 8: m.has_filenames = f.v; break;
		case 9: m.has_line_numbers = f.v; break;
		case 10: m.has_inline_frames = f.v; break;
		}
	}
	if (k < 0)
		return bad(r, p, "malformed mapping");
	const unsigned char *at = r->base + e->off;
	/* pprof's "addresses adjusted already" mapping covers everything */
	if (!m.start && !m.offset && !m.limit)
		m.limit = UINT64_MAX;
	if (m.limit < m.start)
		return bad(r, at, "mapping %llu ends (%#llx) before it starts (%#llx)",
			   (unsigned long long)e->id, (unsigned long long)m.limit,
			   (unsigned long long)m.start);
	if (str(r, at, file, &m.path) || str(r, at, build, &m.build_id))
		return JH_EFORMAT;
	const char *path = strtab_get(&r->p->strs, m.path);
	m.kind = profile_map_kind(path, strlen(path));
	int64_t id = profile_mapping(r->p, &m);
	if (id < 0)
		return oom(r);
	e->model = (uint32_t)id;
	return 0;
}

/* The model's function for function id ID (made on first use). */
static int function(struct rd *r, const unsigned char *at, uint64_t id, uint32_t *out,
		    uint32_t *file)
{
	struct ent *e = table_find(&r->funcs, id);
	if (!e)
		return bad(r, at, "function id %llu is not in the profile", (unsigned long long)id);
	if (e->model != UINT32_MAX) {
		*out = e->model;
		*file = e->file;
		return 0;
	}
	const unsigned char *p = r->base + e->off, *end = p + e->len;
	uint64_t name = 0, sys = 0, fname = 0;
	int64_t start = 0;
	struct pbf f;
	int k;
	while ((k = pb_next(&p, end, &f)) > 0) {
		if (f.wt != 0)
			continue;
		switch (f.field) {
		case 2: name = f.v; break;
		case 3: sys = f.v; break;
		case 4: fname = f.v; break;
		case 5: start = (int64_t)f.v; break;
		}
	}
	if (k < 0)
		return bad(r, p, "malformed function");
	uint32_t n, s, fl;
	at = r->base + e->off;
	if (str(r, at, name, &n) || str(r, at, sys, &s) || str(r, at, fname, &fl))
		return JH_EFORMAT;
	*file = e->file = fl;
	/* no name: the linkage name, else its id */
	if (!*strtab_get(&r->p->strs, n))
		n = s;
	if (!*strtab_get(&r->p->strs, n)) {
		char buf[48];
		snprintf(buf, sizeof buf, "function#%llu", (unsigned long long)e->id);
		int64_t sid = strtab_intern(&r->p->strs, buf);
		if (sid < 0)
			return oom(r);
		n = (uint32_t)sid;
	}
	int64_t fn = profile_function(r->p, n, s, fl, start);
	if (fn < 0)
		return oom(r);
	e->model = (uint32_t)fn;
	*out = e->model;
	return 0;
}

static int read_location(struct rd *r, struct ent *e, size_t index)
{
	const unsigned char *p = r->base + e->off, *end = p + e->len;
	uint64_t addr = 0;
	size_t nlines = 0;
	struct pbf f;
	int k;
	while ((k = pb_next(&p, end, &f)) > 0) {
		if (f.field == 3 && f.wt == 0)
			addr = f.v;
		else if (f.field == 4 && f.wt == 2)
			nlines++;
	}
	if (k < 0)
		return bad(r, p, "malformed location");
	const unsigned char *at = r->base + e->off;
	if (nlines > PPROF_MAX_INLINE)
		return bad(r, at, "location %llu has more than %u lines (inline frames)",
			   (unsigned long long)e->id, PPROF_MAX_INLINE);
	/* Locations without an address (symbolized ones from some
	 * producers) are kept apart by their place in the table, at
	 * addresses no program has. */
	if (!addr && nlines)
		addr = UINT64_MAX - index;
	int64_t id = profile_location(r->p, addr, true, UINT32_MAX);
	if (id < 0)
		return oom(r);
	e->model = (uint32_t)id;
	if (!nlines || r->p->locs[id].nlines)
		return 0;
	uint32_t first = (uint32_t)r->p->nlines;
	size_t i = 0;
	p = at;
	while (pb_next(&p, end, &f) > 0) {
		if (f.field != 4 || f.wt != 2)
			continue;
		const unsigned char *q = f.data, *qe = f.data + f.len;
		struct pbf g;
		uint64_t fid = 0;
		int64_t line = 0, column = 0;
		int m;
		while ((m = pb_next(&q, qe, &g)) > 0) {
			if (g.wt != 0)
				continue;
			if (g.field == 1)
				fid = g.v;
			else if (g.field == 2)
				line = (int64_t)g.v;
			else if (g.field == 3)
				column = (int64_t)g.v;
		}
		if (m < 0)
			return bad(r, q, "malformed line of location %llu", (unsigned long long)e->id);
		struct pf_line ln = {
			.line = line > 0 && line <= INT32_MAX ? (int32_t)line : 0,
			.column = column > 0 && column <= INT32_MAX ? (int32_t)column : 0,
			.inlined = ++i < nlines,
		};
		if (function(r, f.data, fid, &ln.function, &ln.file))
			return JH_EFORMAT;
		if (profile_add_line(r->p, &ln) < 0)
			return oom(r);
	}
	struct pf_location *l = &r->p->locs[id];
	l->line0 = first;
	l->nlines = (uint32_t)nlines;
	l->sym = PF_SYM_PROFILE;
	return 0;
}

/* How many numbers the repeated scalar F holds: its values end at the
 * bytes without the high bit, counted before anything is allocated. */
static size_t scalar_count(const struct pbf *f)
{
	size_t count = 0;
	if (f->wt != 2)
		return 1;
	for (size_t i = 0; i < f->len; i++)
		count += !(f->data[i] & 0x80);
	return count;
}

/* The repeated scalar in F (packed or one value) appended to *ARR, which
 * may hold no more than MAX values (the error names WHAT). */
static int push_scalars(struct rd *r, const struct pbf *f, uint64_t **arr, size_t *n,
			size_t *cap, size_t max, const char *what)
{
	if (f->wt == 0) {
		if (*n + 1 > max)
			return bad(r, f->data, "more than %zu %s", max, what);
		if (jh_grow(arr, cap, *n + 1, sizeof **arr))
			return oom(r);
		(*arr)[(*n)++] = f->v;
		return 0;
	}
	if (f->wt != 2)
		return bad(r, f->data, "a repeated number of the wrong wire type");
	const unsigned char *q = f->data, *qe = f->data + f->len;
	size_t count = scalar_count(f);
	if (*n + count > max)
		return bad(r, f->data, "more than %zu %s", max, what);
	if (jh_grow(arr, cap, *n + count + 1, sizeof **arr))
		return oom(r);
	while (q < qe)
		if (varint_get(&q, qe, &(*arr)[(*n)++]))
			return bad(r, q, "malformed packed numbers");
	return 0;
}

static int read_sample(struct rd *r, const struct pbf *s, size_t index)
{
	const unsigned char *p = s->data, *end = s->data + s->len;
	size_t nids = 0, nvals = 0;
	struct pbf f;
	int k;
	while ((k = pb_next(&p, end, &f)) > 0) {
		if (f.field == 1 && push_scalars(r, &f, &r->ids, &nids, &r->cap_ids, PARSE_MAX_FRAMES,
						 "frames in one sample"))
			return JH_EFORMAT;
		/* no more values than sample types are kept */
		if (f.field == 2 && push_scalars(r, &f, (uint64_t **)&r->vals, &nvals, &r->cap_vals,
						 r->nvalues, "values in one sample"))
			return bad(r, s->data, "sample %zu has %zu values for %zu sample types",
				   index + 1, nvals + scalar_count(&f), r->nvalues);
	}
	if (k < 0)
		return bad(r, p, "malformed sample");
	if (nvals != r->nvalues)
		return bad(r, s->data, "sample %zu has %zu values for %zu sample types", index + 1,
			   nvals, r->nvalues);
	if (jh_grow(&r->stack, &r->cap_stack, nids + 1, sizeof *r->stack))
		return oom(r);
	/* with its inline frames, a stack is no deeper than a dump's may be,
	 * and all of them together stay within PPROF_MAX_FRAMES */
	size_t depth = 0;
	for (size_t i = 0; i < nids; i++) {
		struct ent *e = table_find(&r->locs, r->ids[i]);
		if (!e)
			return bad(r, s->data, "sample %zu: location id %llu is not in the profile",
				   index + 1, (unsigned long long)r->ids[i]);
		r->stack[i] = e->model;
		uint32_t nl = r->p->locs[e->model].nlines;
		depth += nl ? nl : 1;
	}
	if (depth > PARSE_MAX_FRAMES)
		return bad(r, s->data, "sample %zu is deeper than %u frames with its inline frames",
			   index + 1, PARSE_MAX_FRAMES);
	if ((r->frames += depth) > PPROF_MAX_FRAMES)
		return bad(r, s->data, "the samples have more than %u frames in all", PPROF_MAX_FRAMES);
	int64_t id = profile_sample(r->p, r->stack, nids);
	if (id < 0)
		return oom(r);
	struct pf_sample *sm = &r->p->samples[id];
	for (size_t i = 0; i < nvals; i++) {
		if (r->vmap[i] < 0)
			continue;
		/* the values are as given, within what a dump may hold */
		if ((r->sum[r->vmap[i]] += fabs((double)r->vals[i])) > PARSE_MAX_VALUE)
			return bad(r, s->data, "sample %zu: the values up to this one add up to more than 2^60",
				   index + 1);
		sm->v[r->vmap[i]] += (double)r->vals[i];
		if (r->vals[i] && (r->vmap[i] == PF_ALLOC_OBJECTS || r->vmap[i] == PF_ALLOC_SPACE))
			r->p->has_alloc = true;
	}
	return 0;
}

static int table_alloc(struct rd *r, struct table *t, size_t n)
{
	t->e = malloc((n ? n : 1) * sizeof *t->e);
	t->n = 0;
	return t->e ? 0 : oom(r);
}

static void table_add(struct rd *r, struct table *t, const struct pbf *f)
{
	t->e[t->n++] = (struct ent){ .off = (uint32_t)(f->data - r->base), .len = (uint32_t)f->len,
				     .model = UINT32_MAX };
}

static int read_all(struct rd *r)
{
	const unsigned char *p = r->base, *end = r->end;
	struct pbf f;
	int k;
	size_t n[16] = { 0 };
	/* pass 1: the top level's counts, wire types and the period */
	while ((k = pb_next(&p, end, &f)) > 0) {
		int ok = top_wt(f.field, f.wt);
		if (ok == 0)
			return bad(r, p, "field %u of the profile has wire type %u", f.field, f.wt);
		if (f.field < 16)
			n[f.field]++;
		if (f.field == P_PERIOD && (int64_t)f.v > 0)
			r->p->period = f.v;
	}
	if (k < 0)
		return bad(r, p, "malformed protobuf (a truncated or damaged file?)");
	if (!n[P_STRING_TABLE])
		return bad(r, r->base, "no string table: not a pprof profile");
	r->strs = malloc(n[P_STRING_TABLE] * sizeof *r->strs);
	int rc = r->strs ? 0 : oom(r);
	if (!rc)
		rc = table_alloc(r, &r->maps, n[P_MAPPING]);
	if (!rc)
		rc = table_alloc(r, &r->funcs, n[P_FUNCTION]);
	if (!rc)
		rc = table_alloc(r, &r->locs, n[P_LOCATION]);
	if (rc)
		return rc;
	/* pass 2: where the tables' entries are */
	p = r->base;
	while (pb_next(&p, end, &f) > 0) {
		if (f.field == P_STRING_TABLE)
			r->strs[r->nstrs++] = (typeof(*r->strs)){ (uint32_t)(f.data - r->base),
								  (uint32_t)f.len, 0 };
		else if (f.field == P_MAPPING)
			table_add(r, &r->maps, &f);
		else if (f.field == P_FUNCTION)
			table_add(r, &r->funcs, &f);
		else if (f.field == P_LOCATION)
			table_add(r, &r->locs, &f);
	}
	if (r->strs[0].len)
		return bad(r, r->base + r->strs[0].off, "the string table does not start with \"\"");
	if ((rc = read_sample_types(r, r->base, n[P_SAMPLE_TYPE])))
		return rc;
	/* the mappings in the file's order, before they are sorted by id:
	 * the first is the program */
	for (size_t i = 0; i < r->maps.n; i++)
		if ((rc = read_mapping(r, &r->maps.e[i])))
			return rc;
	if ((rc = table_index(r, &r->maps, "mapping")) ||
	    (rc = table_index(r, &r->funcs, "function")) ||
	    (rc = table_index(r, &r->locs, "location")))
		return rc;
	r->p->has_maps = r->maps.n > 0;
	for (size_t i = 0; i < r->locs.n; i++)
		if ((rc = read_location(r, &r->locs.e[i], i)))
			return rc;
	/* pass 3: the samples */
	p = r->base;
	size_t ns = 0;
	while (pb_next(&p, end, &f) > 0)
		if (f.field == P_SAMPLE && (rc = read_sample(r, &f, ns++)))
			return rc;
	return 0;
}

int pprof_read(struct profile *p, const char *name, const unsigned char *buf, size_t len,
	       void (*warn)(void *ctx, const char *msg), void *ctx, char *err, size_t errlen)
{
	if (len > PPROF_MAX_BYTES)
		return jh_err(err, errlen, JH_ELIMIT, "%s: a pprof profile of more than %u MiB",
			      name, PPROF_MAX_BYTES >> 20);
	struct rd r = {
		.p = p, .name = name, .base = buf, .end = buf + len, .err = err, .errlen = errlen,
		.warn = warn, .ctx = ctx,
	};
	p->format = PF_FMT_PPROF;
	int rc = read_all(&r);
	free(r.strs);
	free(r.maps.e);
	free(r.funcs.e);
	free(r.locs.e);
	free(r.vmap);
	free(r.ids);
	free(r.stack);
	free(r.vals);
	return rc;
}

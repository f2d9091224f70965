#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/parse.h"
#include "analyzer/unsample.h"
#include "analyzer/util.h"
#include "symbolize/maps.h"

struct parser {
	struct profile *p;
	const char *name;
	const char *buf, *end, *pos;
	unsigned long lineno;
	bool last_unterminated;
	const struct parse_options *o;
	char *err;
	size_t errlen;
	enum unsample_kind uk;
	double rate;
	uint32_t *frames;
	size_t cap_frames;
	/* Consecutive stacks share most of their frames: a direct-mapped
	 * cache of (address, leaf) -> location id in front of the model's
	 * hash table.  Allocated on the first stack. */
	struct loc_cache { uint64_t key; uint32_t id; } *lcache;
	int64_t cur;            /* current sample, -1 before the first stack */
	unsigned long cur_line; /* line of the current stack's '@' */
	bool cur_has_counts;
};

__attribute__((format(printf, 3, 4)))
static int perr(struct parser *ps, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return jh_err(ps->err, ps->errlen, code, "%s:%lu: %s", ps->name, ps->lineno, msg);
}

__attribute__((format(printf, 2, 3)))
static void pwarn(struct parser *ps, const char *fmt, ...)
{
	if (!ps->o || !ps->o->warn)
		return;
	char msg[600], full[800];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(full, sizeof(full), "%s:%lu: %s", ps->name, ps->lineno, msg);
	ps->o->warn(ps->o->ctx, full);
}

/* Next line without its newline (and a trailing \r); false at the end. */
static int next_line(struct parser *ps, const char **line, size_t *len)
{
	if (ps->pos >= ps->end)
		return 0;
	const char *s = ps->pos;
	const char *nl = memchr(s, '\n', (size_t)(ps->end - s));
	const char *e = nl ? nl : ps->end;
	ps->pos = nl ? nl + 1 : ps->end;
	ps->lineno++;
	ps->last_unterminated = !nl;
	if (!(ps->lineno & 0xffff) && ps->o && ps->o->progress)
		ps->o->progress(ps->o->ctx, ps->name, (size_t)(ps->pos - ps->buf),
				(size_t)(ps->end - ps->buf));
	if ((size_t)(e - s) > PARSE_MAX_LINE)
		return perr(ps, JH_ELIMIT, "line longer than %u bytes", PARSE_MAX_LINE);
	if (e > s && e[-1] == '\r')
		e--;
	*line = s;
	*len = (size_t)(e - s);
	return 1;
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
		(*n)--;
}

static bool starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);
	return n >= k && !memcmp(s, prefix, k);
}

/* "---" followed by optional spaces then WORD. */
static bool section(const char *s, size_t n, const char *word)
{
	if (!starts(s, n, "---"))
		return false;
	s += 3;
	n -= 3;
	while (n && *s == ' ') {
		s++;
		n--;
	}
	return starts(s, n, word);
}

static void skip_sp(const char **s, const char *e)
{
	while (*s < e && (**s == ' ' || **s == '\t'))
		(*s)++;
}

/* Decimal u64; 1 ok, 0 no digits, -1 overflow. */
static int read_u64(const char **s, const char *e, uint64_t *out)
{
	const char *q = *s;
	uint64_t v = 0;
	if (q < e && *q == '-')
		return -2;
	while (q < e && *q >= '0' && *q <= '9') {
		unsigned d = (unsigned)(*q - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
		q++;
	}
	if (q == *s)
		return 0;
	*s = q;
	*out = v;
	return 1;
}

static int expect_num(struct parser *ps, const char **s, const char *e, uint64_t *v,
		      const char *what)
{
	skip_sp(s, e);
	int r = read_u64(s, e, v);
	if (r == 1)
		return 0;
	if (r == -1)
		return perr(ps, JH_EFORMAT, "%s does not fit in 64 bits", what);
	if (r == -2)
		return perr(ps, JH_EFORMAT, "%s is negative", what);
	return perr(ps, JH_EFORMAT, "expected %s", what);
}

static int expect_char(struct parser *ps, const char **s, const char *e, char c,
		       const char *what)
{
	skip_sp(s, e);
	if (*s < e && **s == c) {
		(*s)++;
		return 0;
	}
	return perr(ps, JH_EFORMAT, "expected '%c' %s", c, what);
}

/* "objs: bytes [aobjs: abytes]" into v[4], raw (not yet unsampled). */
static int read_counts(struct parser *ps, const char **s, const char *e, double v[PF_NVALUES])
{
	uint64_t a, b, c, d;
	if (expect_num(ps, s, e, &a, "an object count") ||
	    expect_char(ps, s, e, ':', "after the object count") ||
	    expect_num(ps, s, e, &b, "a byte count") ||
	    expect_char(ps, s, e, '[', "before the accumulated counts") ||
	    expect_num(ps, s, e, &c, "an accumulated object count") ||
	    expect_char(ps, s, e, ':', "after the accumulated object count") ||
	    expect_num(ps, s, e, &d, "an accumulated byte count") ||
	    expect_char(ps, s, e, ']', "after the accumulated counts"))
		return JH_EFORMAT;
	v[PF_INUSE_OBJECTS] = (double)a;
	v[PF_INUSE_SPACE] = (double)b;
	v[PF_ALLOC_OBJECTS] = (double)c;
	v[PF_ALLOC_SPACE] = (double)d;
	if (c || d)
		ps->p->has_alloc = true;
	return 0;
}

static void adjust(struct parser *ps, double v[PF_NVALUES])
{
	unsample_pair(ps->uk, ps->rate, &v[PF_INUSE_OBJECTS], &v[PF_INUSE_SPACE]);
	unsample_pair(ps->uk, ps->rate, &v[PF_ALLOC_OBJECTS], &v[PF_ALLOC_SPACE]);
}

/* One address "0x1a2b" (the 0x is optional, as in jeprof). */
/* jh_hexval() plus one as a table (0: not a hex digit): addresses are most
 * of a dump's bytes. */
static const unsigned char hex_table[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
	['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
	['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15,
	['F'] = 16,
};

static int read_addr(struct parser *ps, const char **s, const char *e, uint64_t *out)
{
	const char *q = *s;
	if (e - q >= 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	uint64_t v = 0;
	const char *digits = q;
	int d;
	while (q < e && (d = hex_table[(unsigned char)*q] - 1) >= 0) {
		if (v >> 60)
			return perr(ps, JH_EFORMAT, "address '%.*s' is longer than 64 bits",
				    (int)(e - *s > 40 ? 40 : e - *s), *s);
		v = v << 4 | (uint64_t)d;
		q++;
	}
	if (q == digits || (q < e && *q != ' ' && *q != '\t')) {
		const char *w = *s;
		while (w < e && *w != ' ' && *w != '\t')
			w++;
		return perr(ps, JH_EFORMAT, "expected a hex address, found '%.*s'",
			    (int)(w - *s > 40 ? 40 : w - *s), *s);
	}
	*s = q;
	*out = v;
	return 0;
}

#define LCACHE_BITS 16

/* Location id of ADDR (a leaf when LEAF), through the cache. */
static int64_t location(struct parser *ps, uint64_t addr, bool leaf)
{
	uint64_t key = addr << 1 | leaf;
	struct loc_cache *slot = NULL;
	if (!ps->lcache)
		ps->lcache = calloc((size_t)1 << LCACHE_BITS, sizeof(*ps->lcache));
	if (ps->lcache) {
		slot = &ps->lcache[(key * 0x9e3779b97f4a7c15ULL) >> (64 - LCACHE_BITS)];
		/* key 0 (address 0, not a leaf) is never cached: 0 marks empty */
		if (slot->key == key && key)
			return slot->id;
	}
	int64_t id = profile_location(ps->p, addr, leaf, UINT32_MAX);
	if (id >= 0 && slot) {
		slot->key = key;
		slot->id = (uint32_t)id;
	}
	return id;
}

/* The frames after '@' (or after "@ " in a gperftools entry) into a sample. */
static int read_stack(struct parser *ps, const char *s, const char *e)
{
	size_t n = 0;
	for (;;) {
		skip_sp(&s, e);
		if (s >= e)
			break;
		if (n >= PARSE_MAX_FRAMES)
			return perr(ps, JH_ELIMIT, "stack deeper than %u frames", PARSE_MAX_FRAMES);
		uint64_t addr;
		if (read_addr(ps, &s, e, &addr))
			return JH_EFORMAT;
		int64_t id = location(ps, addr, n == 0);
		if (id < 0)
			return perr(ps, (int)id, "out of memory");
		if (JH_PUSH(ps->frames, n, ps->cap_frames, (uint32_t)id))
			return perr(ps, JH_ENOMEM, "out of memory");
	}
	int64_t sid = profile_sample(ps->p, ps->frames, n);
	if (sid < 0)
		return perr(ps, (int)sid, "out of memory");
	ps->cur = sid;
	ps->cur_line = ps->lineno;
	ps->cur_has_counts = false;
	return 0;
}

static int check_stack_done(struct parser *ps)
{
	if (ps->cur >= 0 && !ps->cur_has_counts) {
		unsigned long l = ps->lineno;
		ps->lineno = ps->cur_line;
		int rc = perr(ps, JH_EFORMAT,
			      "stack record has no 't*:' counts line (truncated dump?)");
		ps->lineno = l;
		return rc;
	}
	return 0;
}

static int read_maps(struct parser *ps)
{
	const char *line;
	size_t len;
	int r;
	ps->p->has_maps = true;
	while ((r = next_line(ps, &line, &len)) > 0) {
		trim(&line, &len);
		if (!len || starts(line, len, "build="))
			continue;
		struct maps_line ml;
		char msg[256];
		if (maps_parse_line(line, len, &ml, msg, sizeof(msg))) {
			if (ps->last_unterminated)
				return perr(ps, JH_EFORMAT, "%s (the file ends in the middle of this line: truncated dump?)", msg);
			return perr(ps, JH_EFORMAT, "%s", msg);
		}
		struct pf_mapping m = {
			.start = ml.start, .limit = ml.end, .offset = ml.offset,
			.exec = ml.exec, .deleted = ml.deleted, .kind = PF_MAP_FILE,
		};
		if (!ml.pathlen)
			m.kind = PF_MAP_ANON;
		else if (ml.pathlen == 6 && !memcmp(ml.path, "[vdso]", 6))
			m.kind = PF_MAP_VDSO;
		else if (ml.path[0] == '[')
			m.kind = PF_MAP_SPECIAL;
		int64_t sid = strtab_intern_n(&ps->p->strs, ml.path, ml.pathlen);
		if (sid < 0)
			return perr(ps, (int)sid, "out of memory");
		m.path = (uint32_t)sid;
		if (profile_mapping(ps->p, &m) < 0)
			return perr(ps, JH_ENOMEM, "out of memory");
	}
	if (r < 0)
		return r;
	if (ps->last_unterminated)
		pwarn(ps, "the file does not end with a newline (truncated dump?)");
	return 0;
}

static int parse_v2(struct parser *ps, const char *hdr, size_t hlen)
{
	struct profile *p = ps->p;
	const char *s = hdr + 8, *e = hdr + hlen;
	uint64_t period;
	if (read_u64(&s, e, &period) != 1 || s != e)
		return perr(ps, JH_EFORMAT, "expected 'heap_v2/PERIOD' with a decimal sampling period");
	p->format = PF_FMT_HEAP_V2;
	p->period = period;
	ps->uk = UNSAMPLE_V2;
	ps->rate = (double)period;
	const char *line;
	size_t len;
	int r;
	while ((r = next_line(ps, &line, &len)) > 0) {
		trim(&line, &len);
		s = line;
		e = line + len;
		if (!len)
			continue;
		if (*s == '@') {
			if (check_stack_done(ps) || read_stack(ps, s + 1, e))
				return JH_EFORMAT;
			continue;
		}
		if (*s == 't' && len > 1 && (s[1] == '*' || (s[1] >= '0' && s[1] <= '9'))) {
			bool all = s[1] == '*';
			uint64_t uid = 0;
			s++;
			if (all)
				s++;
			else if (read_u64(&s, e, &uid) != 1 || uid > INT64_MAX)
				return perr(ps, JH_EFORMAT, "expected a thread id after 't'");
			if (expect_char(ps, &s, e, ':', "after the thread id"))
				return JH_EFORMAT;
			double v[PF_NVALUES];
			if (read_counts(ps, &s, e, v))
				return JH_EFORMAT;
			skip_sp(&s, e);
			if (ps->cur < 0) {
				/* header summaries: the dump's own totals and thread names */
				if (all) {
					if (s != e)
						return perr(ps, JH_EFORMAT, "unexpected text after the counts");
					memcpy(p->header_total, v, sizeof(v));
					continue;
				}
				int64_t tid = profile_thread(p, (int64_t)uid);
				if (tid < 0)
					return perr(ps, JH_ENOMEM, "out of memory");
				memcpy(p->threads[tid].v, v, sizeof(v));
				if (s != e) {
					int64_t nid = strtab_intern_n(&p->strs, s, (size_t)(e - s));
					if (nid < 0)
						return perr(ps, JH_ENOMEM, "out of memory");
					p->threads[tid].name = (uint32_t)nid;
				}
				continue;
			}
			if (s != e)
				return perr(ps, JH_EFORMAT, "unexpected text after the counts");
			adjust(ps, v);
			if (all) {
				for (int j = 0; j < PF_NVALUES; j++)
					p->samples[ps->cur].v[j] += v[j];
				ps->cur_has_counts = true;
			} else {
				int64_t tid = profile_thread(p, (int64_t)uid);
				if (tid < 0 || profile_thread_add(p, (uint32_t)ps->cur, (uint32_t)tid, v))
					return perr(ps, JH_ENOMEM, "out of memory");
			}
			continue;
		}
		if (starts(line, len, "MAPPED_LIBRARIES:") || section(line, len, "Memory map:")) {
			if (check_stack_done(ps))
				return JH_EFORMAT;
			return read_maps(ps);
		}
		if (ps->last_unterminated)
			return perr(ps, JH_EFORMAT, "the file ends in the middle of a line (truncated dump?)");
		return perr(ps, JH_EFORMAT,
			    "expected a stack '@ 0x...', a counts line 't*: N: N [N: N]' or 'MAPPED_LIBRARIES:', found '%.*s'",
			    (int)(len > 40 ? 40 : len), line);
	}
	if (r < 0)
		return r;
	if (ps->cur >= 0 && !ps->cur_has_counts && ps->last_unterminated)
		return perr(ps, JH_EFORMAT, "the file ends in the middle of a stack record (truncated dump?)");
	if (check_stack_done(ps))
		return JH_EFORMAT;
	if (!p->npresyms)
		pwarn(ps, "no MAPPED_LIBRARIES section (truncated dump?): addresses can only be symbolized in the BINARY given on the command line");
	return 0;
}

static bool contains(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

static int parse_gperf(struct parser *ps, const char *hdr, size_t hlen)
{
	struct profile *p = ps->p;
	const char *s = hdr + strlen("heap profile:"), *e = hdr + hlen;
	double hv[PF_NVALUES];
	if (read_counts(ps, &s, e, hv))
		return JH_EFORMAT;
	memcpy(p->header_total, hv, sizeof(hv));
	p->format = PF_FMT_GPERF;
	skip_sp(&s, e);
	if (s < e && *s == '@') {
		s++;
		skip_sp(&s, e);
		const char *type = s;
		while (s < e && *s != '/' && *s != ' ')
			s++;
		size_t tlen = (size_t)(s - type);
		uint64_t period = 0;
		bool has_period = false;
		if (s < e && *s == '/') {
			s++;
			if (read_u64(&s, e, &period) != 1)
				return perr(ps, JH_EFORMAT, "expected a sampling period after '/'");
			has_period = true;
		}
		if ((tlen == 11 && !memcmp(type, "heapprofile", 11)) || !contains(type, tlen, "heap")) {
			ps->uk = UNSAMPLE_NONE;
		} else if (contains(type, tlen, "_v2")) {
			ps->uk = UNSAMPLE_V2;
			ps->rate = has_period ? (double)period : 131072;
		} else {
			ps->uk = UNSAMPLE_V1;
			ps->rate = has_period ? (double)period / 2 : 131072;
		}
		p->period = has_period && period ? period : 1;
	} else if (hv[0] == hv[2] && hv[1] == hv[3]) {
		ps->uk = UNSAMPLE_V1;
		ps->rate = 131072;
	}
	const char *line;
	size_t len;
	int r;
	while ((r = next_line(ps, &line, &len)) > 0) {
		trim(&line, &len);
		if (!len)
			continue;
		if (starts(line, len, "MAPPED_LIBRARIES:") || section(line, len, "Memory map:"))
			return read_maps(ps);
		s = line;
		e = line + len;
		double v[PF_NVALUES];
		if (read_counts(ps, &s, e, v) || expect_char(ps, &s, e, '@', "before the stack"))
			return JH_EFORMAT;
		adjust(ps, v);
		if (read_stack(ps, s, e))
			return JH_EFORMAT;
		for (int j = 0; j < PF_NVALUES; j++)
			p->samples[ps->cur].v[j] += v[j];
		ps->cur_has_counts = true;
	}
	return r;
}

/* "--- symbol" section: "binary=..." and "0xADDR name--name" lines up to "---". */
static int parse_symbols(struct parser *ps, const char **line, size_t *len)
{
	int r;
	while ((r = next_line(ps, line, len)) > 0) {
		trim(line, len);
		const char *s = *line, *e = *line + *len;
		if (!*len)
			continue;
		if (starts(s, *len, "---"))
			return 1;
		if (starts(s, *len, "binary=")) {
			int64_t id = strtab_intern_n(&ps->p->strs, s + 7, *len - 7);
			if (id < 0)
				return perr(ps, JH_ENOMEM, "out of memory");
			ps->p->presym_binary = (uint32_t)id;
			continue;
		}
		uint64_t addr;
		const char *q = s;
		while (q < e && *q != ' ' && *q != '\t')
			q++;
		const char *a = s;
		if (read_addr(ps, &a, q, &addr))
			return JH_EFORMAT;
		skip_sp(&q, e);
		if (q == e)
			return perr(ps, JH_EFORMAT, "expected a symbol name after the address");
		int64_t id = strtab_intern_n(&ps->p->strs, q, (size_t)(e - q));
		if (id < 0 || profile_presym(ps->p, addr, (uint32_t)id))
			return perr(ps, JH_ENOMEM, "out of memory");
	}
	if (r < 0)
		return r;
	return perr(ps, JH_EFORMAT, "symbol section ends without a '---' line (truncated?)");
}

const char *parse_sniff(const unsigned char *b, size_t n)
{
	if (n >= 4 && !memcmp(b, "\177ELF", 4))
		return "an ELF file (a program or library), not a heap profile";
	if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return "gzip-compressed data (perhaps a pprof protobuf profile), not a text heap profile";
	if (n >= 1 && (b[0] < 0x20 || b[0] >= 0x7f) && b[0] != '\n' && b[0] != '\r' &&
	    b[0] != '\t')
		return "binary data, not a text heap profile";
	return NULL;
}

int parse_buffer(struct profile *p, const char *name, const char *buf, size_t len,
		 const struct parse_options *o, char *err, size_t errlen)
{
	struct parser ps = {
		.p = p, .name = name, .buf = buf, .end = buf + len, .pos = buf,
		.o = o, .err = err, .errlen = errlen, .cur = -1,
	};
	int rc;
	if (!len)
		return jh_err(err, errlen, JH_EFORMAT, "%s: the file is empty", name);
	const char *what = parse_sniff((const unsigned char *)buf, len);
	if (what)
		return jh_err(err, errlen, JH_EFORMAT, "%s: %s", name, what);
	const char *line = NULL;
	size_t llen = 0;
	bool have = false;
	while ((rc = next_line(&ps, &line, &llen)) > 0) {
		trim(&line, &llen);
		if (!llen)
			continue;
		if (line[0] == '%') {
			if (starts(line, llen, "%warn")) {
				const char *w = line + 5, *we = line + llen;
				skip_sp(&w, we);
				pwarn(&ps, "WARNING: %.*s", (int)(we - w), w);
			}
			else
				pwarn(&ps, "ignoring unknown command '%.*s'", (int)(llen > 60 ? 60 : llen), line);
			continue;
		}
		have = true;
		break;
	}
	if (rc < 0)
		goto out;
	if (!have) {
		rc = jh_err(err, errlen, JH_EFORMAT, "%s: the profile is empty", name);
		goto out;
	}
	if (section(line, llen, "symbol")) {
		rc = parse_symbols(&ps, &line, &llen);
		if (rc < 0)
			goto out;
		/* the closing "---" may itself be the next section marker */
		if (llen == 3 || (llen > 3 && !section(line, llen, "heap") && !section(line, llen, "growth"))) {
			if (next_line(&ps, &line, &llen) <= 0) {
				rc = perr(&ps, JH_EFORMAT, "expected a profile after the symbol section");
				goto out;
			}
			trim(&line, &llen);
		}
	}
	if (section(line, llen, "heap") || section(line, llen, "growth")) {
		if (next_line(&ps, &line, &llen) <= 0) {
			rc = perr(&ps, JH_EFORMAT, "expected a profile header after '%s'", "--- heap");
			goto out;
		}
		trim(&line, &llen);
	}
	if (starts(line, llen, "heap_v2/"))
		rc = parse_v2(&ps, line, llen);
	else if (starts(line, llen, "heap profile:"))
		rc = parse_gperf(&ps, line, llen);
	else if (starts(line, llen, "heap"))
		rc = perr(&ps, JH_EFORMAT, "unsupported heap profile version: expected 'heap_v2/PERIOD'");
	else if (section(line, llen, "contention") || section(line, llen, "Stacks:"))
		rc = perr(&ps, JH_EFORMAT, "this is a contention profile; jheap reads heap profiles");
	else if (section(line, llen, "profile"))
		rc = perr(&ps, JH_EFORMAT, "this is a CPU profile; jheap reads heap profiles");
	else
		rc = perr(&ps, JH_EFORMAT,
			  "not a heap profile: expected 'heap_v2/PERIOD' or 'heap profile:', found '%.*s'",
			  (int)(llen > 40 ? 40 : llen), line);
out:
	free(ps.frames);
	free(ps.lcache);
	if (profile_resolve_mappings(p) && !rc)
		rc = perr(&ps, JH_ENOMEM, "out of memory");
	return rc;
}

int parse_file(struct profile *p, const char *path, const struct parse_options *o,
	       char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return jh_err(err, errlen, JH_EIO, "cannot open '%s': %s", path, strerror(errno));
	struct stat st;
	if (fstat(fd, &st)) {
		int e = errno;
		close(fd);
		return jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", path, strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return jh_err(err, errlen, JH_EIO, "cannot read '%s': Is a directory", path);
	}
	int rc;
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		/* MAP_POPULATE: the whole file is read anyway, and prefaulting
		 * it at once costs far less than a page fault per 4 KiB */
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
		if (m == MAP_FAILED) {
			int e = errno;
			close(fd);
			return jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", path, strerror(e));
		}
		close(fd);
		rc = parse_buffer(p, path, m, (size_t)st.st_size, o, err, errlen);
		munmap(m, (size_t)st.st_size);
		return rc;
	}
	/* pipes, character devices and empty files: read it all */
	char *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (jh_grow(&buf, &cap, len + 65536, 1)) {
			free(buf);
			close(fd);
			return jh_err(err, errlen, JH_ENOMEM, "out of memory reading '%s'", path);
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(buf);
			close(fd);
			return jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", path, strerror(e));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	rc = parse_buffer(p, path, buf ? buf : "", len, o, err, errlen);
	free(buf);
	return rc;
}

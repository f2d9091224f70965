/*
 * parser: the text parser's state and the helpers its files share.
 * Internal to the parser: the rest of jheap uses analyzer/parse.h.
 *
 *   analyzer/parse.c        entry points, the "--- symbol" section, heap_v2
 *                           records and the maps section
 *   analyzer/parse_gperf.c  gperftools' "heap profile:" format
 *   analyzer/parse_split.c  a large heap_v2 body in two threads, and the
 *                           replay that makes the result that of one
 *
 * A parser reads a buffer line by line (next_line) and reports an error
 * as "NAME:LINE: what" (perr) and a warning through parse_options.warn
 * (pwarn).  In the second half of a split body, both are kept for the
 * first half to pass on with the right line numbers once it knows them.
 */
#ifndef JHEAP_PARSER_H
#define JHEAP_PARSER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lib/errors.h"
#include "analyzer/parse.h"
#include "analyzer/profile.h"
#include "analyzer/unsample.h"

struct split;

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
	bool whole;              /* each unsampled value truncated to an integer,
	                            as pprof reads gperftools' and Go's profiles */
	/* a stack's text, addresses, location ids and where each address is
	 * in the text: stk[cur] the one being read, the other the one before
	 * it */
	struct stackbuf {
		const char *text;
		size_t len;
		uint64_t *addrs;
		uint32_t *frames;
		struct tokpos { uint32_t start, end; } *tok;
		size_t n, cap;
	} stk[2];
	int cur_stk;
	/* Consecutive stacks share most of their frames: a cache of
	 * (address, leaf) -> location id in front of the model's hash table,
	 * in sets of two slots (lcache_set).  Allocated on the first stack. */
	struct loc_cache { uint64_t addr; uint32_t tag, id; } *lcache;
	int lcache_bits;        /* it has 1 << lcache_bits slots */
	int64_t cur;            /* current sample, -1 before the first stack */
	unsigned long cur_line; /* line of the current stack's '@' */
	bool cur_has_counts;
	bool symbolized;        /* a "--- symbol" section came first */
	/* Every frame of a stack is a return address, the first one too
	 * (gperftools' "heap profile:": its sampler records its caller's
	 * return address first); in heap_v2 the first is a pc inside
	 * jemalloc.  The one place that decides each location's lookup pc
	 * (pf_location.leaf). */
	bool all_return;
	/* A heap_v2 body parsed in two halves (parse_v2_split): the first
	 * half's parser points at the split while it runs (end is then the
	 * split point); the second half's parser has second set. */
	struct split *sp;
	bool second;
	bool cur_fresh;         /* the current stack made a new sample that has
	                           had no "t*" line yet */
	/* the text after "tN:" of the last counts line of a record read and
	 * its values (unsampled), when counts_known (record_counts) */
	bool counts_known;
	const char *counts_text;
	size_t counts_len;
	double counts_v[PF_NVALUES];
	double sum[PF_NVALUES];  /* of the records read (PARSE_MAX_VALUE) */
};

/* Defined in parse.c, used by its other files too. */

/* Writes "NAME:LINE: " and the message into ps->err; returns CODE. */
__attribute__((format(printf, 3, 4)))
int perr(struct parser *ps, int code, const char *fmt, ...);
/* Passes a warning about the current line to parse_options.warn. */
__attribute__((format(printf, 2, 3)))
void pwarn(struct parser *ps, const char *fmt, ...);
/* The file looks cut short (parse_options.truncated). */
void note_truncated(struct parser *ps);
/* Progress, every 65536 lines (next_line). */
int tick(struct parser *ps);
/* "objs: bytes [aobjs: abytes]" at *S into V, raw (not yet unsampled). */
int read_counts(struct parser *ps, const char **s, const char *e, double v[PF_NVALUES]);
/* A record's counts V unsampled in place; an error when they cannot be. */
int adjust(struct parser *ps, double v[PF_NVALUES]);
/* Adds a record's values to the file's running sums; an error past
 * PARSE_MAX_VALUE. */
int add_sums(struct parser *ps, const double v[PF_NVALUES]);
/* The addresses of the stack in S[0..e) into a new or found sample,
 * which becomes the current one (ps->cur). */
int read_stack(struct parser *ps, const char *s, const char *e);
/* The maps section, from the line after its header to the end. */
int read_maps(struct parser *ps);
/* The stack records and the maps of a heap_v2 dump, from ps->pos. */
int v2_body(struct parser *ps);
/* Room in P for the records of a heap_v2 body of BYTES bytes. */
void reserve_body(struct profile *p, size_t bytes);
/* Frees the parser's own buffers (not the profile). */
void parser_free(struct parser *ps);

/* parse_gperf.c: the rest of a gperftools heap profile after its header
 * line HDR[0..hlen). */
int parse_gperf(struct parser *ps, const char *hdr, size_t hlen);

/* parse_split.c: where a second thread should take over the heap_v2
 * body at ps->pos, or NULL to parse it in one thread. */
const char *split_point(const struct parser *ps);
/* The body from ps->pos in two threads, split at CUT; messages and the
 * profile are those of v2_body() in one thread. */
int parse_v2_split(struct parser *ps, const char *cut);
/* What the parser of a second half keeps for the first to pass on: the
 * line of its error, a warning (MSG at LINE, counted from the split), the
 * file being cut short. */
void split_error_line(struct split *sp, unsigned long line);
void split_warning(struct split *sp, unsigned long line, const char *msg);
void split_truncated(struct split *sp);
/* A second half's progress (DONE bytes read); true when the first half
 * asks it to stop. */
bool split_tick(struct split *sp, size_t done);
/* The bytes the second half has read, for the first half's progress. */
size_t split_done(struct split *sp);
/* The end of the whole body. */
const char *split_end(const struct split *sp);
/* A "t*" line's values V for the second half's current sample. */
int split_add_counts(struct parser *ps, const double v[PF_NVALUES]);

/* Small helpers, inline in the hot loops. */

static inline void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
		(*n)--;
}

static inline bool starts(const char *s, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);
	return n >= k && !memcmp(s, prefix, k);
}

/* "---" followed by optional spaces then WORD. */
static inline bool section(const char *s, size_t n, const char *word)
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

static inline void skip_sp(const char **s, const char *e)
{
	while (*s < e && (**s == ' ' || **s == '\t'))
		(*s)++;
}

/* Decimal u64; 1 ok, 0 no digits, -1 overflow, -2 negative. */
static inline int read_u64(const char **s, const char *e, uint64_t *out)
{
	const char *q = *s;
	uint64_t v = 0;
	if (q < e && *q == '-')
		return -2;
	/* 19 digits cannot overflow; only longer numbers are checked */
	const char *safe = e - q > 19 ? q + 19 : e;
	while (q < safe && (unsigned char)(*q - '0') < 10)
		v = v * 10 + (unsigned)(*q++ - '0');
	while (q < e && (unsigned char)(*q - '0') < 10) {
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

static inline int expect_char(struct parser *ps, const char **s, const char *e, char c,
		       const char *what)
{
	skip_sp(s, e);
	if (*s < e && **s == c) {
		(*s)++;
		return 0;
	}
	return perr(ps, JH_EFORMAT, "expected '%c' %s", c, what);
}

/* Next line without its newline (and a trailing \r); false at the end. */
static inline int next_line(struct parser *ps, const char **line, size_t *len)
{
	if (ps->pos >= ps->end)
		return 0;
	const char *s = ps->pos;
	/* no further than a line may be long: the rest of a huge file is
	 * not touched */
	size_t left = (size_t)(ps->end - s);
	const char *nl = memchr(s, '\n', left > PARSE_MAX_LINE + 1 ? PARSE_MAX_LINE + 1 : left);
	const char *e = nl ? nl : ps->end;
	ps->pos = nl ? nl + 1 : ps->end;
	ps->lineno++;
	ps->last_unterminated = !nl;
	if (!(ps->lineno & 0xffff)) {
		int r = tick(ps);
		if (r < 0)
			return r;
	}
	if ((size_t)(e - s) > PARSE_MAX_LINE) {
		perr(ps, JH_ELIMIT, "line longer than %u bytes", PARSE_MAX_LINE);
		return JH_ELIMIT;
	}
	if (e > s && e[-1] == '\r')
		e--;
	*line = s;
	*len = (size_t)(e - s);
	return 1;
}

#endif

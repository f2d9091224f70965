/*
 * parser: the text parser's state and the helpers its files share.
 * Internal to the parser: the rest of jheap uses analyzer/parse.h.
 *
 *   analyzer/parse.c        entry points, the "--- symbol" section, heap_v2
 *                           records and the maps section
 *   analyzer/parse_gperf.c  gperftools' "heap profile:" format
 *   analyzer/parse_split.c  a large heap_v2 body in two threads, and the
 *                           replay that makes the result that of one
 *   analyzer/parse_addr.h   one address of a stack line (read_addr)
 *
 * A parser reads a buffer line by line (next_line) and reports through
 * its sink (struct parse_sink): an error (perr), a warning (pwarn), a
 * file cut short (note_truncated) and its progress (tick).  The parse of
 * a whole buffer plugs in the caller's parse_options ("NAME:LINE: what");
 * the two-thread parse plugs in its own for each half (parse_split.c:
 * the second half keeps its messages for the first to pass on with the
 * right line numbers, and both halves' progress is summed), so the code
 * that reports never asks which half it is in.
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

/* Where a parser's findings go. */
struct parse_sink {
	/* An error MSG about line LINE, written into ERR[0..errlen). */
	void (*error)(void *ctx, unsigned long line, const char *msg, char *err, size_t errlen);
	/* A warning MSG about line LINE; NULL when warnings are not wanted. */
	void (*warning)(void *ctx, unsigned long line, const char *msg);
	/* The file looks cut short. */
	void (*truncated)(void *ctx);
	/* DONE of TOTAL bytes of the parser's buffer read (every 65536
	 * lines); true: stop now (the other half of a split failed). */
	bool (*progress)(void *ctx, size_t done, size_t total);
	void *ctx;
};

struct parser {
	struct profile *p;
	const char *name;
	const char *buf, *end, *pos;
	unsigned long lineno;
	bool last_unterminated;
	const struct parse_options *o;  /* the caller's: the split settings, core_idle */
	const struct parse_sink *sink;  /* where its findings go */
	struct parse_sink to_caller;    /* the sink of a whole parse: o's callbacks */
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
	/* heap_v2 (late set): a stack's sample is looked up one record
	 * late, once the next stack's text is read, so that its slot of the
	 * model's sample index (a cache miss, the parse's largest single
	 * cost) is on its way meanwhile.  Until then (pending) ps->cur is
	 * PARSE_CUR_PENDING and its counts lines are queued, to be applied
	 * in order by resolve_stack().  The pending stack is
	 * stk[!cur_stk]. */
	bool late, pending;
	uint64_t pending_hash;   /* its stack's (profile_stack_hash()) */
	struct pending_counts { uint32_t thread; double v[PF_NVALUES]; } *queued;
	size_t nqueued, cap_queued;
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
	 * split point); the second half's parser has second set, and keeps
	 * a sample's "t*" lines apart for the replay (split_add_counts). */
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
	/* gperftools records with nothing after '@', left out as jeprof
	 * leaves them out (parse_gperf): how many, their in-use bytes and
	 * the first one's line */
	unsigned long nostack_n, nostack_line;
	double nostack_bytes;
};

/* Defined in parse.c, used by its other files too. */

/* An error about the current line, through the sink into ps->err
 * ("NAME:LINE: what" for the caller); returns CODE. */
__attribute__((format(printf, 3, 4)))
int perr(struct parser *ps, int code, const char *fmt, ...);
/* A warning about the current line, through the sink. */
__attribute__((format(printf, 2, 3)))
void pwarn(struct parser *ps, const char *fmt, ...);
/* The file looks cut short, through the sink. */
void note_truncated(struct parser *ps);
/* Progress, every 65536 lines (next_line), through the sink; an error
 * when the sink asks to stop. */
int tick(struct parser *ps);
/* Points PS's sink at the caller's options O (a whole parse). */
void parser_report_to(struct parser *ps, const struct parse_options *o);
/* "objs: bytes [aobjs: abytes]" at *S into V, raw (not yet unsampled). */
int read_counts(struct parser *ps, const char **s, const char *e, double v[PF_NVALUES]);
/* A record's counts V unsampled in place; an error when they cannot be. */
int adjust(struct parser *ps, double v[PF_NVALUES]);
/* Adds a record's values to the file's running sums; an error past
 * PARSE_MAX_VALUE. */
int add_sums(struct parser *ps, const double v[PF_NVALUES]);
/* The addresses of the stack in S[0..e) into a new or found sample,
 * which becomes the current one (ps->cur); with ps->late, the one before
 * it gets its sample now and this one is pending. */
int read_stack(struct parser *ps, const char *s, const char *e);
/* ps->cur while the current stack's sample is pending (ps->late). */
#define PARSE_CUR_PENDING INT64_MAX
/* The pending stack's sample, and its queued counts applied: called
 * where a body ends (whatever the outcome).  0 or JH_ENOMEM (with a
 * message). */
int resolve_stack(struct parser *ps);
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
/* The first half has found the maps before the split: it reads on to
 * the end of the body on its own, reporting as a whole parse does. */
void split_drop(struct parser *ps);
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

/*
 * parse_gperf: gperftools' heap profile format ("heap profile:"), as its
 * heap profiler, Go's runtime and pprof's legacy profiles write it.
 *
 * The header line holds the totals and, after '@', the kind and the
 * sampling period ("heap_v2/524288", "heap/1048576", "heapprofile"),
 * which decide how the counts are unsampled: spec/jeprof-format.md
 * section 2, and Go's rule below.  pprof is the reference reader of
 * these files (jeprof of jemalloc's): as it does, each record's
 * unsampled values are truncated to integers, one by one, before any
 * sum (jemalloc's heap_v2 dumps keep jeprof's doubles).  Each record is one line, the counts
 * then '@' and the stack, every frame of which is a return address.
 * The maps section follows, as in a heap_v2 dump.
 */
#include <string.h>

#include "lib/errors.h"
#include "analyzer/parser.h"
#include "analyzer/unsample.h"

static bool contains(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

int parse_gperf(struct parser *ps, const char *hdr, size_t hlen)
{
	struct profile *p = ps->p;
	const char *s = hdr + strlen("heap profile:"), *e = hdr + hlen;
	double hv[PF_NVALUES];
	if (read_counts(ps, &s, e, hv))
		return JH_EFORMAT;
	memcpy(p->header_total, hv, sizeof(hv));
	p->format = PF_FMT_GPERF;
	ps->all_return = true;
	ps->whole = true;
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
		} else if (tlen == 4 && has_period) {
			/* "heap/N": Go's runtime writes its text heap profiles so,
			 * N being twice its mean sampling interval, and samples
			 * as a Poisson process; pprof unsamples them as v2 at
			 * N/2 (jeprof as v1, for a tcmalloc format gone since) */
			ps->uk = UNSAMPLE_V2;
			ps->rate = (double)(period / 2);
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
		/* '#': Go's comments (each stack's frames, runtime.MemStats) */
		if (!len || line[0] == '#')
			continue;
		if (starts(line, len, "MAPPED_LIBRARIES:") || section(line, len, "Memory map:"))
			return read_maps(ps);
		s = line;
		e = line + len;
		double v[PF_NVALUES];
		if (read_counts(ps, &s, e, v) || expect_char(ps, &s, e, '@', "before the stack") ||
		    adjust(ps, v) || add_sums(ps, v))
			return JH_EFORMAT;
		if (read_stack(ps, s, e))
			return JH_EFORMAT;
		for (int j = 0; j < PF_NVALUES; j++)
			p->samples[ps->cur].v[j] += v[j];
		ps->cur_has_counts = true;
	}
	return r;
}

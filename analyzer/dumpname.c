/* What a dump's file name says (see dumpname.h). */
#include <string.h>

#include "analyzer/dumpname.h"

/* The number of digits S[0..n) hold as a whole, or -1 when they are not
 * all digits or too many to be a sequence (more than 18). */
static long long digits(const char *s, size_t n)
{
	if (!n || n > 18)
		return -1;
	long long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && !memcmp(s + n - k, suffix, k);
}

/* The last run of digits of BASE[0..n), or -1. */
static long long last_number(const char *base, size_t n)
{
	size_t e = n;
	while (e > 0 && (base[e - 1] < '0' || base[e - 1] > '9'))
		e--;
	size_t b = e;
	while (b > 0 && base[b - 1] >= '0' && base[b - 1] <= '9')
		b--;
	return digits(base + b, e - b);
}

void dumpname_parse(const char *path, struct dumpname *dn)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t n = strlen(base);
	*dn = (struct dumpname){ .base = base, .pid = -1, .seq = -1, .kseq = -1 };
	if (ends_with(base, n, ".gz"))
		n -= 3;
	size_t stem = n;   /* the name without ".heap" */
	if (ends_with(base, n, ".heap"))
		stem = n - 5;
	/* from the right: ".KIND", ".SEQ", ".PID", and PREFIX before them */
	size_t dot[3];
	int found = 0;
	for (size_t q = stem; q > 0 && found < 3; q--)
		if (base[q - 1] == '.')
			dot[found++] = q - 1;
	if (stem < n && found == 3 && dot[2] > 0) {
		const char *kind = base + dot[0] + 1;
		size_t klen = stem - dot[0] - 1;
		long long seq = digits(base + dot[1] + 1, dot[0] - dot[1] - 1);
		long long pid = digits(base + dot[2] + 1, dot[1] - dot[2] - 1);
		bool kind_ok = false;
		long long kseq = -1;
		if (klen == 1 && kind[0] == 'f') {
			kind_ok = true;
		} else if (klen >= 2 && strchr("imup", kind[0])) {
			kseq = digits(kind + 1, klen - 1);
			kind_ok = kseq >= 0;
		}
		if (kind_ok && seq >= 0 && pid >= 0) {
			dn->jemalloc = true;
			dn->prefix_len = dot[2];
			dn->pid = pid;
			dn->seq = seq;
			dn->kind = kind[0];
			dn->kseq = kseq;
			return;
		}
	}
	dn->seq = last_number(base, stem);
}

const char *dumpname_kind_word(char kind)
{
	switch (kind) {
	case 'f': return "at exit";
	case 'i': return "interval";
	case 'm': return "manual";
	case 'u': return "high-water (prof_gdump)";
	case 'p': return "peak";
	default: return "";
	}
}

bool dumpname_regular(char kind)
{
	return kind == 0 || kind == 'i' || kind == 'm';
}

bool dumpname_same_process(const struct dumpname *a, const struct dumpname *b)
{
	if (!a->jemalloc || !b->jemalloc)
		return true;
	return a->pid == b->pid && a->prefix_len == b->prefix_len &&
	       !memcmp(a->base, b->base, a->prefix_len);
}

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "lib/errors.h"
#include "lib/escape.h"
#include "lib/pattern.h"

struct pattern {
	pcre2_code *code;
	pcre2_match_data *md;
	const char *opt, *re;
};

int pattern_compile(struct pattern **out, const char *opt, const char *re, char *err,
		    size_t errlen)
{
	int code;
	PCRE2_SIZE off;
	*out = NULL;
	struct pattern *p = calloc(1, sizeof(*p));
	if (!p)
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	p->opt = opt;
	p->re = re;
	p->code = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
	if (!p->code) {
		PCRE2_UCHAR msg[200];
		pcre2_get_error_message(code, msg, sizeof(msg));
		free(p);
		return jh_err(err, errlen, JH_EUSAGE, "--%s: bad regular expression '%s' at offset %zu: %s",
			      opt, re, (size_t)off, (const char *)msg);
	}
	if (!(p->md = pcre2_match_data_create_from_pattern(p->code, NULL))) {
		pattern_free(p);
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	}
	*out = p;
	return 0;
}

int pattern_match(struct pattern *p, const char *s, char *err, size_t errlen)
{
	int rc = pcre2_match(p->code, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, 0, p->md, NULL);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	PCRE2_UCHAR msg[200];
	char subject[100];
	size_t n = strlen(s);
	pcre2_get_error_message(rc, msg, sizeof(msg));
	escape_into(subject, sizeof(subject) - 4, s, n > 80 ? 80 : n);
	return jh_err(err, errlen, JH_ELIMIT,
		      "--%s='%s': matching '%s%s' failed: %s (simplify the regular expression)",
		      p->opt, p->re, subject, n > 80 ? "..." : "", (const char *)msg);
}

int pattern_groups(struct pattern *p, const char *s,
		   void (*fn)(void *ctx, const char *name, const char *value, size_t len), void *ctx,
		   char *err, size_t errlen)
{
	int m = pattern_match(p, s, err, errlen);
	if (m <= 0)
		return m;
	uint32_t count = 0, size = 0;
	PCRE2_SPTR table = NULL;
	pcre2_pattern_info(p->code, PCRE2_INFO_NAMECOUNT, &count);
	pcre2_pattern_info(p->code, PCRE2_INFO_NAMEENTRYSIZE, &size);
	pcre2_pattern_info(p->code, PCRE2_INFO_NAMETABLE, &table);
	PCRE2_SIZE *ov = pcre2_get_ovector_pointer(p->md);
	uint32_t pairs = pcre2_get_ovector_count(p->md);
	for (uint32_t i = 0; i < count; i++) {
		PCRE2_SPTR e = table + (size_t)i * size;
		uint32_t n = (uint32_t)e[0] << 8 | e[1];
		if (n >= pairs || ov[2 * n] == PCRE2_UNSET)
			continue;   /* the group took no part in the match */
		fn(ctx, (const char *)e + 2, s + ov[2 * n], ov[2 * n + 1] - ov[2 * n]);
	}
	return 1;
}

void pattern_free(struct pattern *p)
{
	if (!p)
		return;
	pcre2_match_data_free(p->md);
	pcre2_code_free(p->code);
	free(p);
}

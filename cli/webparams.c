/* The web UI's query parameters (see webparams.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/webparams.h"
#include "lib/errors.h"
#include "lib/escape.h"
#include "lib/pattern.h"

#define MAX_VALUE 4096

static const char *const si_names[] = {
	[PF_INUSE_OBJECTS] = "inuse_objects", [PF_INUSE_SPACE] = "inuse_space",
	[PF_ALLOC_OBJECTS] = "alloc_objects", [PF_ALLOC_SPACE] = "alloc_space",
	[PF_CHURN_OBJECTS] = "churn_objects", [PF_CHURN_SPACE] = "churn_space",
};
static const char *const g_names[] = { "functions", "lines", "files", "addresses" };

struct parse {
	struct web_params *wp;
	char *err;
	size_t errlen;
};

static int bad(struct parse *ps, const char *key, const char *value, const char *what)
{
	char shown[200];
	escape_into(shown, sizeof(shown), value, strlen(value));
	return jh_err(ps->err, ps->errlen, JH_EUSAGE, "parameter %s='%s': %s", key, shown, what);
}

static int regex(struct parse *ps, const char *key, const char *opt, const char *value,
		 const char **out)
{
	struct pattern *p;
	char why[600];
	if (pattern_compile(&p, opt, value, why, sizeof(why)))
		return jh_err(ps->err, ps->errlen, JH_EUSAGE, "parameter %s: %s", key, why);
	pattern_free(p);
	*out = *value ? value : NULL;
	return 0;
}

/* pprof's tf and ti: "[KEY=]RE" on the samples' labels, the RE checked
 * here as the aggregate reads it (after a KEY made of letters, digits,
 * '_', '-' and '.', and '='). */
static int tag(struct parse *ps, const char *key, const char *opt, const char *value,
	       const char **out)
{
	const char *re = value;
	size_t n = strspn(value, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.");
	if (n && value[n] == '=')
		re = value + n + 1;
	const char *checked;
	int rc = regex(ps, key, opt, re, &checked);
	*out = rc || !*value ? NULL : value;
	return rc;
}

static int index_param(struct parse *ps, const char *key, const char *value, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(value, &end, 10);
	if (errno || end == value || *end || v < 0 || value[0] == '+' || value[0] == ' ')
		return bad(ps, key, value, "expects the number of a dump (0 is the first)");
	*out = v;
	return 0;
}

static int one(void *ctx, const char *key, const char *value)
{
	struct parse *ps = ctx;
	struct web_params *wp = ps->wp;
	if (strlen(value) > MAX_VALUE)
		return jh_err(ps->err, ps->errlen, JH_EUSAGE, "parameter %.20s: longer than %d bytes", key, MAX_VALUE);
	if (!strcmp(key, "f"))
		return regex(ps, key, "focus", value, &wp->f);
	if (!strcmp(key, "i"))
		return regex(ps, key, "ignore", value, &wp->i);
	if (!strcmp(key, "h"))
		return regex(ps, key, "exclude", value, &wp->h);
	if (!strcmp(key, "s"))
		return regex(ps, key, "retain", value, &wp->s);
	if (!strcmp(key, "a"))
		return regex(ps, key, "allocator", value, &wp->a);
	if (!strcmp(key, "tf"))
		return tag(ps, key, "tagfocus", value, &wp->tf);
	if (!strcmp(key, "ti"))
		return tag(ps, key, "tagignore", value, &wp->ti);
	if (!strcmp(key, "si")) {
		if (!*value)
			return 0;   /* the default, inuse_space */
		for (int k = 0; k < PF_NALL_VALUES; k++)
			if (!strcmp(value, si_names[k])) {
				wp->si = k;
				return 0;
			}
		return bad(ps, key, value, "expects inuse_space, inuse_objects, alloc_space, alloc_objects, churn_space or churn_objects");
	}
	if (!strcmp(key, "g")) {
		if (!*value)
			return 0;   /* the default, functions */
		for (int k = 0; k < 4; k++)
			if (!strcmp(value, g_names[k])) {
				wp->g = k;
				return 0;
			}
		return bad(ps, key, value, "expects functions, lines, files or addresses");
	}
	if (!strcmp(key, "t")) {
		if (!*value) {
			wp->t = NULL;
			return 0;
		}
		for (const char *c = value; *c; c++)
			if (*c < '0' || *c > '9' || c - value > 18)
				return bad(ps, key, value, "expects a thread number");
		wp->t = value;
		return 0;
	}
	if (!strcmp(key, "d"))
		return index_param(ps, key, value, &wp->d);
	if (!strcmp(key, "b"))
		return index_param(ps, key, value, &wp->b);
	if (!strcmp(key, "sort")) {
		if (*value && strcmp(value, "flat") && strcmp(value, "cum") && strcmp(value, "name"))
			return bad(ps, key, value, "expects flat, cum or name");
		wp->cum = !strcmp(value, "cum");
		return 0;
	}
	if (!strcmp(key, "q") || !strcmp(key, "z") || !strcmp(key, "sw") || !strcmp(key, "cmp"))
		return 0;   /* the page's own state */
	char shown[64];
	escape_into(shown, sizeof(shown), key, strlen(key));
	return jh_err(ps->err, ps->errlen, JH_EUSAGE,
		      "unknown parameter '%s' (the parameters are f, i, h, s, si, g, a, t, tf, ti, d, b, sort, q, z, sw, cmp)", shown);
}

int webparams_parse(const struct httpd_request *req, struct web_params *wp, char *err,
		    size_t errlen)
{
	memset(wp, 0, sizeof(*wp));
	wp->si = -1;
	wp->g = -1;
	wp->d = -1;
	wp->b = -1;
	struct parse ps = { wp, err, errlen };
	int rc = httpd_each_param(req, one, &ps);
	return rc ? JH_EUSAGE : 0;
}

void webparams_apply(const struct web_params *wp, struct cli *o)
{
	/* every setting a parameter names is the URL's, given or not: the
	 * command line's are the first page's parameters (webparams_initial) */
	o->focus = wp->f;
	o->ignore = wp->i;
	o->exclude = wp->h;
	o->retain = wp->s;
	o->allocator = wp->a;
	o->value = wp->si >= 0 ? (enum pf_value)wp->si : PF_INUSE_SPACE;
	o->gran = wp->g >= 0 ? (enum granularity)wp->g : GRAN_FUNCTIONS;
	o->thread = wp->t;
	o->tagfocus = wp->tf;
	o->tagignore = wp->ti;
	o->cum = wp->cum;
}

/* KEY=VALUE appended to F, VALUE percent-encoded but for the characters
 * RFC 3986 leaves as they are. */
static void put_param(FILE *f, bool *first, const char *key, const char *value)
{
	if (!value)
		return;
	fprintf(f, "%s%s=", *first ? "" : "&", key);
	*first = false;
	for (const unsigned char *c = (const unsigned char *)value; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		    *c == '-' || *c == '.' || *c == '_' || *c == '~')
			fputc(*c, f);
		else
			fprintf(f, "%%%02X", *c);
	}
}

int webparams_initial(const struct cli *c, char **out, char *err, size_t errlen)
{
	*out = NULL;
	if (c->thread && !strcmp(c->thread, "*"))
		return jh_err(err, errlen, JH_EUSAGE,
			      "--thread='*' writes one report per thread; the web UI shows every thread or one (--thread=N, its parameter t)");
	const char *opts[] = { "focus", "ignore", "exclude", "retain", "allocator", "tagfocus", "tagignore" };
	const char *vals[] = { c->focus, c->ignore, c->exclude, c->retain, c->allocator, c->tagfocus, c->tagignore };
	for (size_t k = 0; k < sizeof(vals) / sizeof(*vals); k++)
		if (vals[k] && strlen(vals[k]) > MAX_VALUE)
			return jh_err(err, errlen, JH_EUSAGE, "--%s: longer than the %d bytes a parameter of the web UI's URLs may be",
				      opts[k], MAX_VALUE);
	size_t len = 0;
	FILE *f = open_memstream(out, &len);
	if (!f)
		return JH_ENOMEM;
	bool first = true;
	if (c->value != PF_INUSE_SPACE && (int)c->value >= 0 && c->value < PF_NALL_VALUES)
		put_param(f, &first, "si", si_names[c->value]);
	if (c->gran != GRAN_FUNCTIONS && (int)c->gran >= 0 && c->gran < 4)
		put_param(f, &first, "g", g_names[c->gran]);
	put_param(f, &first, "f", c->focus);
	put_param(f, &first, "i", c->ignore);
	put_param(f, &first, "h", c->exclude);
	put_param(f, &first, "s", c->retain);
	put_param(f, &first, "a", c->allocator);
	put_param(f, &first, "t", c->thread);
	put_param(f, &first, "tf", c->tagfocus);
	put_param(f, &first, "ti", c->tagignore);
	if (c->cum)
		put_param(f, &first, "sort", "cum");
	if (fclose(f)) {
		free(*out);
		*out = NULL;
		return JH_ENOMEM;
	}
	return 0;
}
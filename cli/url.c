/* url: jeprof's rules for profiles on servers; see url.h. */
#include "cli/url.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lib/errors.h"

/* The pages jeprof knows (its $PROFILES), and whether the server collects
 * over time before answering (jeprof adds ?seconds=N to those). */
static const struct page {
	const char *path;
	bool collects;
} pages[] = {
	{ "/pprof/heap", false },
	{ "/pprof/growth", false },
	{ "/pprof/profile", true },
	{ "/pprof/pmuprofile", true },
	{ "/pprof/contention", false },
	{ "/pprof/wall", false },
	{ "/pprof/filteredprofile", false },
	{ "/pprof/censusprofile", false },
};

#define SYMBOL_PAGE "/pprof/symbol"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_host_char(char c)
{
	return is_digit(c) || ((c | 32) >= 'a' && (c | 32) <= 'z') || c == '.' || c == '-' ||
	       c == '_';
}

/* Length of the scheme prefix ("http://" or "https://", any case), or 0. */
static size_t scheme_len(const char *s)
{
	if (!strncasecmp(s, "http://", 7))
		return 7;
	if (!strncasecmp(s, "https://", 8))
		return 8;
	return 0;
}

bool url_form(const char *arg)
{
	if (scheme_len(arg))
		return true;
	/* HOST:PORT[/PATH|?QUERY]: a name or [IPv6], ':', 1-5 digits */
	const char *s = arg;
	if (*s == '[') {
		s = strchr(s, ']');
		if (!s || s == arg + 1)
			return false;
		s++;
	} else {
		while (is_host_char(*s))
			s++;
		if (s == arg)
			return false;
	}
	if (*s++ != ':')
		return false;
	const char *d = s;
	while (is_digit(*s))
		s++;
	if (s == d || s - d > 5 || atol(d) > 65535)
		return false;
	return *s == 0 || *s == '/' || *s == '?';
}

void url_redact(char *buf, size_t len, const char *url)
{
	if (!len)
		return;
	size_t sl = scheme_len(url);
	const char *auth = url + sl;
	const char *at = sl ? memrchr(auth, '@', strcspn(auth, "/?#")) : NULL;
	if (at)
		snprintf(buf, len, "%.*s%s", (int)sl, url, at + 1);
	else
		snprintf(buf, len, "%s", url);
}

/* The known page PATH[0..n) ends with, or NULL. */
static const struct page *page_at_end(const char *path, size_t n)
{
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		size_t k = strlen(pages[i].path);
		if (n >= k && !memcmp(path + n - k, pages[i].path, k))
			return &pages[i];
	}
	return NULL;
}

/* The value of "seconds=N" in QUERY (after the '?'), or -1. */
static double query_seconds(const char *q)
{
	for (const char *s = q; s && *s; s = strchr(s, '&'), s = s ? s + 1 : NULL) {
		if (!strncmp(s, "seconds=", 8)) {
			char *end;
			double v = strtod(s + 8, &end);
			if (end > s + 8 && v >= 0 && (*end == 0 || *end == '&'))
				return v;
		}
	}
	return -1;
}

/* FROM[0..n) with '/' turned into '.', into BUF. */
static void path_suffix(char *buf, size_t len, const char *from, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n && k + 1 < len; i++)
		buf[k++] = from[i] == '/' ? '.' : from[i];
	buf[k] = 0;
}

int url_target(const char *arg, long seconds, struct url_target *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	size_t alen = strlen(arg);
	char *shown = t->shown;   /* ARG for messages, until it is the URL's */
	url_redact(shown, sizeof(t->shown), arg);
	if (alen >= URL_MAX - 64)
		return jh_err(err, errlen, JH_EUSAGE, "the URL '%.60s...' is too long (%zu bytes)",
			      shown, alen);
	for (const unsigned char *c = (const unsigned char *)arg; *c; c++)
		if (*c <= ' ' || *c == 0x7f)
			return jh_err(err, errlen, JH_EUSAGE,
				      "a URL may not hold spaces or control characters; encode them (%%20)");
	size_t sl = scheme_len(arg);
	char scheme[9];
	if (sl) {
		for (size_t i = 0; i < sl; i++)
			scheme[i] = (char)(arg[i] | (arg[i] >= 'A' && arg[i] <= 'Z' ? 32 : 0));
		scheme[sl] = 0;
	} else {
		strcpy(scheme, "http://");
	}
	/* authority: up to the path, the query or a fragment */
	const char *auth = arg + sl;
	size_t authlen = strcspn(auth, "/?#");
	if (!authlen)
		return jh_err(err, errlen, JH_EUSAGE, "'%s': no host in the URL", shown);
	const char *rest = auth + authlen;
	/* host: without user info, port or IPv6 brackets */
	const char *h = auth, *hend = auth + authlen;
	const char *at = memrchr(h, '@', authlen);
	if (at)
		h = at + 1;
	if (h < hend && *h == '[') {
		const char *close = memchr(h, ']', (size_t)(hend - h));
		hend = close ? close : hend;
		h++;
	} else {
		const char *colon = memchr(h, ':', (size_t)(hend - h));
		if (colon)
			hend = colon;
	}
	snprintf(t->host, sizeof(t->host), "%.*s", (int)(hend - h), h);
	if (!t->host[0])
		return jh_err(err, errlen, JH_EUSAGE, "'%s': no host in the URL", shown);

	size_t pathlen = strcspn(rest, "?#");
	const struct page *pg = page_at_end(rest, pathlen);
	size_t prefix = pg ? pathlen - strlen(pg->path) : pathlen;
	if (rest[pathlen] == '?') {
		/* jheap's rule: a query string of its own, fetched as written */
		snprintf(t->url, sizeof(t->url), "%s%s", scheme, auth);
		t->collects = pg && pg->collects;
		double q = query_seconds(rest + pathlen + 1);
		t->collect_seconds = !t->collects ? 0 : q >= 0 ? q : (double)seconds;
		if (!pg)
			prefix = 0;
		if (!t->collects)
			path_suffix(t->suffix, sizeof(t->suffix), rest, pathlen);
	} else {
		/* jeprof's: the known page at the end, else /pprof/profile after
		 * the path (one trailing '/' dropped) */
		if (!pg) {
			if (prefix && rest[prefix - 1] == '/')
				prefix--;
			pg = &pages[2];
		}
		t->collects = pg->collects;
		t->collect_seconds = pg->collects ? (double)seconds : 0;
		int n = snprintf(t->url, sizeof(t->url), "%s%.*s%.*s%s", scheme, (int)authlen, auth,
				 (int)prefix, rest, pg->path);
		if (pg->collects)
			snprintf(t->url + n, sizeof(t->url) - (size_t)n, "?seconds=%ld", seconds);
		else
			path_suffix(t->suffix, sizeof(t->suffix), pg->path, strlen(pg->path));
	}
	snprintf(t->symbol_url, sizeof(t->symbol_url), "%s%.*s%.*s%s", scheme, (int)authlen, auth,
		 (int)prefix, rest, SYMBOL_PAGE);
	url_redact(t->shown, sizeof(t->shown), t->url);
	url_redact(t->symbol_shown, sizeof(t->symbol_shown), t->symbol_url);
	t->time_limit = t->collects ? t->collect_seconds * 1.01 + 60 : URL_PLAIN_TIMEOUT;
	return 0;
}

/* Appends S to BUF at *K with unsafe characters made '_'. */
static void put_safe(char *buf, size_t len, size_t *k, const char *s)
{
	for (; *s && *k + 1 < len; s++)
		buf[(*k)++] = is_host_char(*s) ? *s : '_';
	buf[*k] = 0;
}

int url_save_name(char *buf, size_t len, const char *program, time_t when,
		  const struct url_target *t)
{
	const char *base = program && *program ? program : "profile";
	const char *slash = strrchr(base, '/');
	if (slash && slash[1])
		base = slash + 1;
	char num[32];
	snprintf(num, sizeof(num), ".%lld.", (long long)when);
	size_t need = strlen(base) + strlen(num) + strlen(t->host) + strlen(t->suffix) + 1;
	if (need > len)
		return -1;
	size_t k = 0;
	buf[0] = 0;
	put_safe(buf, len, &k, base);
	put_safe(buf, len, &k, num);
	put_safe(buf, len, &k, t->host);
	put_safe(buf, len, &k, t->suffix);
	/* never a hidden file nor "." or ".." */
	if (buf[0] == '.')
		buf[0] = '_';
	return 0;
}

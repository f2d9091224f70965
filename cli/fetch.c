/* fetch: one HTTP(S) request with libcurl; see fetch.h. */
#include "cli/fetch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <curl/curl.h>

#include "lib/dynlib.h"
#include "lib/errors.h"
#include "cli/url.h"

/* The state of one transfer, shared with libcurl's callbacks. */
struct xfer {
	const struct fetch_options *o;
	char *buf;
	size_t len, cap, max;
	size_t max_inflated;      /* the limit of an encoded answer's decoded bytes */
	bool too_big, oom;
	bool in_headers;          /* a status line came, the blank line not yet */
	bool body_seen;           /* some of a body came */
	size_t header_bytes;      /* of this answer's header lines so far */
	char encoding[32];        /* Content-Encoding of this answer, or "" */
	char status_line[128];
	struct timespec start;
	double last_progress;
};

/* The libcurl functions used here, from libcurl.so.4, loaded by the first
 * request (see lib/dynlib.h); curl/curl.h gives their types. */
static struct {
	__typeof__(curl_global_init) *global_init;
	__typeof__(curl_easy_init) *easy_init;
	__typeof__(curl_easy_setopt) *easy_setopt;
	__typeof__(curl_easy_perform) *easy_perform;
	__typeof__(curl_easy_getinfo) *easy_getinfo;
	__typeof__(curl_easy_strerror) *easy_strerror;
	__typeof__(curl_easy_cleanup) *easy_cleanup;
	__typeof__(curl_slist_append) *slist_append;
	__typeof__(curl_slist_free_all) *slist_free_all;
} curl;

#define FN(f) DYNLIB_FN(curl.f, "curl_" #f)
static const struct dynlib_fn curl_fns[] = {
	FN(global_init), FN(easy_init), FN(easy_setopt), FN(easy_perform), FN(easy_getinfo),
	FN(easy_strerror), FN(easy_cleanup), FN(slist_append), FN(slist_free_all),
};
#undef FN

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static char curl_missing[1024];   /* why libcurl cannot be loaded, or "" */
static CURLcode curl_init_rc;

static void curl_init(void)
{
	char why[sizeof(curl_missing) - 100];
	if (dynlib_load("libcurl.so.4", curl_fns, sizeof(curl_fns) / sizeof(*curl_fns), why,
			sizeof(why)))
		snprintf(curl_missing, sizeof(curl_missing),
			 "fetching URLs needs libcurl (libcurl.so.4, Debian package libcurl4): %s", why);
	else
		curl_init_rc = curl.global_init(CURL_GLOBAL_DEFAULT);
}

static double elapsed(const struct xfer *x)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - x->start.tv_sec) + (now.tv_nsec - x->start.tv_nsec) / 1e9;
}

/* Header lines past which a receive error is libcurl's refusal of a
 * header too large (300 KiB in all in libcurl 7.88), not a network's. */
#define FETCH_HEADER_SOME ((size_t)200 << 10)

/* The most bytes the body may have now: a compressed answer
 * (Content-Encoding) arrives here decoded, and the limit counts those. */
static size_t body_limit(const struct xfer *x)
{
	return x->encoding[0] && x->max_inflated < x->max ? x->max_inflated : x->max;
}

/* Room for NEED bytes: the capacity doubles, but never past the limit
 * (plus the NUL), so that a body at the limit costs the limit. */
static int grow(struct xfer *x, size_t need)
{
	if (need <= x->cap)
		return 0;
	size_t top = body_limit(x) + 1, ncap = x->cap ? x->cap : 65536;
	while (ncap < need)
		ncap = ncap > top / 2 ? top : ncap * 2;
	if (ncap < need)
		ncap = need;
	char *b = realloc(x->buf, ncap);
	if (!b)
		return -1;
	x->buf = b;
	x->cap = ncap;
	return 0;
}

/* The body, kept while it stays within the limit: a shorter return than
 * the bytes offered makes libcurl stop with CURLE_WRITE_ERROR at once, in
 * the middle of inflating a compressed answer too (libcurl hands over what
 * it decodes in pieces of at most CURL_MAX_WRITE_SIZE bytes). */
static size_t on_data(char *data, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t k = size * n;
	x->body_seen = true;
	if (k > body_limit(x) - x->len) {
		x->too_big = true;
		return 0;
	}
	if (grow(x, x->len + k + 1)) {
		x->oom = true;
		return 0;
	}
	memcpy(x->buf + x->len, data, k);
	x->len += k;
	return k;
}

/* Copies S[0..n) into BUF, control characters as '?', without a line end. */
static void printable(char *buf, size_t len, const char *s, size_t n)
{
	size_t k = 0;
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		n--;
	for (size_t i = 0; i < n && k + 1 < len; i++) {
		unsigned char c = (unsigned char)s[i];
		buf[k++] = c < ' ' || c == 0x7f ? '?' : (char)c;
	}
	if (len)
		buf[k] = 0;
}

/* Keeps the status line of each answer ("HTTP/1.1 404 Not Found"): the
 * last one is the answer after redirects.  Its body replaces the one
 * before.  Notes its Content-Encoding, which sets the body's limit. */
static size_t on_header(char *data, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	size_t k = size * n;
	x->header_bytes += k;
	if (k > 5 && !memcmp(data, "HTTP/", 5)) {
		const char *sp = memchr(data, ' ', k);
		if (sp)
			printable(x->status_line, sizeof(x->status_line), sp + 1,
				  k - (size_t)(sp + 1 - data));
		x->len = 0;
		x->encoding[0] = 0;
		x->in_headers = true;
		x->header_bytes = 0;
	} else if (k <= 2 && (data[0] == '\r' || data[0] == '\n')) {
		x->in_headers = false;
	} else if (k > 17 && !strncasecmp(data, "Content-Encoding:", 17)) {
		const char *v = data + 17, *e = data + k;
		while (v < e && (*v == ' ' || *v == '\t'))
			v++;
		printable(x->encoding, sizeof(x->encoding), v, (size_t)(e - v));
		if (!strcasecmp(x->encoding, "identity"))
			x->encoding[0] = 0;
	}
	return k;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct xfer *x = ud;
	double t = elapsed(x);
	if (x->o->progress && t - x->last_progress >= 0.2) {
		x->last_progress = t;
		x->o->progress(x->o->ctx, t, (size_t)dlnow, dltotal > 0 ? (size_t)dltotal : 0);
	}
	return 0;
}

static bool looks_html(const char *b, size_t n)
{
	while (n && (*b == ' ' || *b == '\t' || *b == '\r' || *b == '\n')) {
		b++;
		n--;
	}
	return (n >= 14 && !strncasecmp(b, "<!doctype html", 14)) ||
	       (n >= 5 && !strncasecmp(b, "<html", 5));
}

void fetch_excerpt(char *buf, size_t len, const char *body, size_t n, size_t max)
{
	if (max + 1 < len)
		len = max + 1;
	buf[0] = 0;
	if (!body || !n)
		return;
	/* an HTML page's <title> */
	const char *t = memmem(body, n, "<title", 6);
	if (!t)
		t = memmem(body, n, "<TITLE", 6);
	if (t) {
		const char *gt = memchr(t, '>', n - (size_t)(t - body));
		const char *end = gt ? memmem(gt, n - (size_t)(gt - body), "</", 2) : NULL;
		if (end) {
			printable(buf, len, gt + 1, (size_t)(end - gt - 1));
			if (buf[0])
				return;
		}
	}
	/* else the first line with something on it */
	const char *s = body, *e = body + n;
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		const char *le = nl ? nl : e;
		const char *p = s;
		while (p < le && (*p == ' ' || *p == '\t' || *p == '\r'))
			p++;
		if (p < le && !looks_html(p, (size_t)(le - p)) && *p != '<') {
			printable(buf, len, p, (size_t)(le - p));
			return;
		}
		s = le + 1;
	}
}

void fetch_reply_release(struct fetch_reply *r)
{
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* The message for an answer that is not 2xx. */
static int http_error(const char *url, const struct xfer *x, long status, char *err,
		      size_t errlen)
{
	char ex[200], st[140];
	fetch_excerpt(ex, sizeof(ex), x->buf, x->len, 160);
	if (x->status_line[0])
		snprintf(st, sizeof(st), "%s", x->status_line);
	else
		snprintf(st, sizeof(st), "%ld", status);
	if (!strcmp(ex, st))
		ex[0] = 0;
	return jh_err(err, errlen, JH_EIO, "cannot fetch '%s': HTTP %s%s%s", url, st,
		      ex[0] ? ": " : "", ex);
}

/* The message for a transfer libcurl ended with C (not CURLE_OK); URL is
 * the URL to show. */
static int curl_error(const char *url, const struct xfer *x, CURLcode c, const char *cerr,
		      double timeout, char *err, size_t errlen)
{
	const char *why = cerr[0] ? cerr : curl.easy_strerror(c);
	if (x->oom)
		return jh_err(err, errlen, JH_ENOMEM, "cannot fetch '%s': out of memory", url);
	if (x->too_big && x->encoding[0] && body_limit(x) < x->max)
		return jh_err(err, errlen, JH_ELIMIT,
			      "cannot fetch '%s': the answer inflates to more than %zu MiB (Content-Encoding: %s), the most a compressed profile may hold",
			      url, body_limit(x) >> 20, x->encoding);
	if (x->too_big || c == CURLE_FILESIZE_EXCEEDED)
		return jh_err(err, errlen, JH_ELIMIT,
			      "cannot fetch '%s': the answer is larger than the limit of %zu bytes",
			      url, x->max);
	/* libcurl refuses a header line over CURL_MAX_HTTP_HEADER (100 KiB)
	 * as "out of memory", and an answer's header lines over 300 KiB in
	 * all with a receive error: before the body, either is a header too
	 * large */
	if (!x->body_seen &&
	    ((c == CURLE_OUT_OF_MEMORY && (x->in_headers || !x->status_line[0])) ||
	     (c == CURLE_RECV_ERROR && x->in_headers && x->header_bytes > FETCH_HEADER_SOME)))
		return jh_err(err, errlen, JH_ELIMIT,
			      "cannot fetch '%s': response header too large (%s)", url,
			      c == CURLE_OUT_OF_MEMORY ? "a line over 100 KiB" : why);
	if (c == CURLE_OUT_OF_MEMORY)
		return jh_err(err, errlen, JH_ENOMEM, "cannot fetch '%s': out of memory", url);
	if (c == CURLE_OPERATION_TIMEDOUT)
		return jh_err(err, errlen, JH_ELIMIT,
			      "cannot fetch '%s': no complete answer within the time limit of %g s (%s)",
			      url, timeout, why);
	if (c == CURLE_TOO_MANY_REDIRECTS)
		return jh_err(err, errlen, JH_EIO,
			      "cannot fetch '%s': more than %d redirects (a redirect loop?)", url,
			      FETCH_MAX_REDIRECTS);
	return jh_err(err, errlen, JH_EIO, "cannot fetch '%s': %s", url, why);
}

int fetch_url(const char *url, const struct fetch_options *o, struct fetch_reply *r,
	      char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	/* the user name and password in URL are sent, never shown */
	char shown[URL_MAX];
	url_redact(shown, sizeof(shown), url);
	pthread_once(&curl_once, curl_init);
	if (curl_missing[0])
		return jh_err(err, errlen, JH_EIO, "%s", curl_missing);
	if (curl_init_rc)
		return jh_err(err, errlen, JH_EIO, "cannot fetch '%s': libcurl: %s", shown,
			      curl.easy_strerror(curl_init_rc));
	CURL *h = curl.easy_init();
	if (!h)
		return jh_err(err, errlen, JH_ENOMEM, "cannot fetch '%s': out of memory", shown);
	struct xfer x = { .o = o, .max = o->max_bytes ? o->max_bytes : FETCH_MAX_BYTES,
			  .max_inflated = FETCH_MAX_INFLATED };
	clock_gettime(CLOCK_MONOTONIC, &x.start);
	char cerr[CURL_ERROR_SIZE] = "";
	double timeout = o->timeout > 0 ? o->timeout : 60;
	double connect = timeout < FETCH_CONNECT_TIMEOUT ? timeout : FETCH_CONNECT_TIMEOUT;
	struct curl_slist *hdrs = curl.slist_append(NULL, "Expect:");
	const char *cafile = getenv("SSL_CERT_FILE"), *cadir = getenv("SSL_CERT_DIR");
	int rc = 0;
	if (curl.easy_setopt(h, CURLOPT_URL, url) ||
	    curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https") ||
	    curl.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https") ||
	    curl.easy_setopt(h, CURLOPT_FOLLOWLOCATION, 1L) ||
	    curl.easy_setopt(h, CURLOPT_MAXREDIRS, (long)FETCH_MAX_REDIRECTS) ||
	    curl.easy_setopt(h, CURLOPT_POSTREDIR, (long)CURL_REDIR_POST_ALL) ||
	    curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L) ||
	    curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000)) ||
	    curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(connect * 1000)) ||
	    curl.easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x.max) ||
	    curl.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "") ||
	    curl.easy_setopt(h, CURLOPT_USERAGENT, "jheap") ||
	    curl.easy_setopt(h, CURLOPT_HTTPHEADER, hdrs) ||
	    curl.easy_setopt(h, CURLOPT_ERRORBUFFER, cerr) ||
	    curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data) ||
	    curl.easy_setopt(h, CURLOPT_WRITEDATA, &x) ||
	    curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header) ||
	    curl.easy_setopt(h, CURLOPT_HEADERDATA, &x) ||
	    curl.easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress) ||
	    curl.easy_setopt(h, CURLOPT_XFERINFODATA, &x) ||
	    curl.easy_setopt(h, CURLOPT_NOPROGRESS, 0L) ||
	    (cafile && *cafile && curl.easy_setopt(h, CURLOPT_CAINFO, cafile)) ||
	    (cadir && *cadir && curl.easy_setopt(h, CURLOPT_CAPATH, cadir)) ||
	    (o->post && (curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)o->post_len) ||
			 curl.easy_setopt(h, CURLOPT_POSTFIELDS, o->post)))) {
		rc = jh_err(err, errlen, JH_EIO, "cannot fetch '%s': libcurl lacks a needed feature", shown);
		goto out;
	}
	CURLcode c = curl.easy_perform(h);
	long status = 0;
	curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (c != CURLE_OK || x.oom || x.too_big)
		rc = curl_error(shown, &x, c, cerr, timeout, err, errlen);
	else if (status < 200 || status > 299)
		rc = http_error(shown, &x, status, err, errlen);
	if (rc)
		goto out;
	if (grow(&x, x.len + 1)) {
		rc = jh_err(err, errlen, JH_ENOMEM, "cannot fetch '%s': out of memory", shown);
		goto out;
	}
	x.buf[x.len] = 0;
	const char *ctype = NULL;
	curl.easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ctype);
	r->html = (ctype && !strncasecmp(ctype, "text/html", 9)) || looks_html(x.buf, x.len);
	r->body = x.buf;
	r->len = x.len;
	r->status = status;
	snprintf(r->status_line, sizeof(r->status_line), "%s", x.status_line);
	x.buf = NULL;
out:
	free(x.buf);
	curl.slist_free_all(hdrs);
	curl.easy_cleanup(h);
	return rc;
}

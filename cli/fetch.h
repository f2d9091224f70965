/*
 * fetch: one HTTP(S) request with libcurl, the answer kept in memory.
 *
 * Only http and https, redirects followed up to FETCH_MAX_REDIRECTS (a
 * POST stays a POST), a connect and a total time limit, a size limit
 * checked while receiving (and against Content-Length before), https
 * verified against the system's certificates (SSL_CERT_FILE and
 * SSL_CERT_DIR name others), the usual proxy variables (http_proxy,
 * https_proxy, no_proxy, ...), compressed transfers decoded (the limits
 * count decoded bytes, as they are decoded: FETCH_MAX_INFLATED for a
 * compressed answer), a header larger than libcurl takes refused as
 * such.  A user name and password in the URL are sent (basic
 * authentication) and never shown: messages name the URL without them
 * (url_redact).  No child process, no shell.  libcurl is loaded
 * by the first request (dlopen), not by every run of jheap.
 */
#ifndef JHEAP_FETCH_H
#define JHEAP_FETCH_H

#include <stdbool.h>
#include <stddef.h>

/* The most bytes of one answer: a profile held in memory, as a file would
 * be (FETCH_MAX_BYTES; JHEAP_FETCH_MAX_BYTES may lower it). */
#define FETCH_MAX_BYTES ((size_t)1 << 30)
/* The most bytes a compressed answer (Content-Encoding: gzip, br...) may
 * inflate to, counted while libcurl inflates it: as much as a compressed
 * profile file may (PPROF_MAX_BYTES). */
#define FETCH_MAX_INFLATED ((size_t)256 << 20)
#define FETCH_MAX_REDIRECTS 10
#define FETCH_CONNECT_TIMEOUT 30.0

struct fetch_options {
	const char *post;        /* a POST of post[0..post_len), or NULL: GET */
	size_t post_len;
	double timeout;          /* seconds for the whole request, > 0 */
	size_t max_bytes;        /* 0: FETCH_MAX_BYTES */
	/* Called about once a second and as data arrives, with the seconds
	 * since the request began, the bytes received and the bytes expected
	 * (0 when unknown); may be NULL. */
	void (*progress)(void *ctx, double elapsed, size_t received, size_t expected);
	void *ctx;
};

struct fetch_reply {
	char *body;              /* malloc'd, NUL-terminated, body[len] == 0 */
	size_t len;
	long status;             /* the HTTP status of the last answer */
	char status_line[128];   /* "404 Not Found", control characters escaped */
	bool html;               /* Content-Type text/html, or the body starts as HTML */
};

/* Requests URL.  Returns 0 when a 2xx answer arrived whole (R filled; free
 * it with fetch_reply_release); else a negative code and a message in
 * ERR naming URL (without user information): JH_EIO for a network, TLS or HTTP error ("HTTP 404 Not
 * Found", with the page's title or first line) or when libcurl cannot be
 * loaded ("fetching URLs needs libcurl (libcurl.so.4, Debian package
 * libcurl4): ...", without URL), JH_ELIMIT when the answer (or what it
 * inflates to, or its header) is larger than the limit or takes longer
 * than the time limit, JH_ENOMEM.
 * R is released on error. */
int fetch_url(const char *url, const struct fetch_options *o, struct fetch_reply *r,
	      char *err, size_t errlen);

void fetch_reply_release(struct fetch_reply *r);

/* A short printable excerpt of BODY for a message: the <title> of an HTML
 * page, else its first non-empty line, at most MAX bytes, control
 * characters shown as '?'; "" when nothing useful. */
void fetch_excerpt(char *buf, size_t len, const char *body, size_t body_len, size_t max);

#endif

/*
 * httpd: the web UI's HTTP server, GNU libmicrohttpd (libmicrohttpd.so.12,
 * Debian package libmicrohttpd12) opened with dlopen when --http first
 * needs it (lib/dynlib.h), so no other run loads it.
 *
 * What it enforces before a handler sees a request:
 *   - it listens on one address: 127.0.0.1 when HOST is empty;
 *   - the Host header must name the server: the HOST given, the address
 *     bound, localhost, 127.0.0.1 or [::1], with the bound port or none,
 *     so that a page of another site cannot reach it through DNS
 *     rebinding (403 otherwise, 400 without a Host header);
 *   - GET and HEAD only, and POST with the header "X-Jheap: 1" (a form
 *     of another site cannot send one), else 405 or 403;
 *   - query parameters are given at most once each (400 otherwise).
 * Every answer carries a strict Content-Security-Policy (scripts and
 * styles only from the server's own files, nothing inline), nosniff, no
 * referrer and no caching.
 *
 * A pool of threads serves the connections; handlers run in them, so a
 * handler that shares state takes its own lock (cli/webui.c does).
 */
#ifndef JHEAP_HTTPD_H
#define JHEAP_HTTPD_H

#include <stdbool.h>
#include <stddef.h>

struct httpd;
struct httpd_request;

/* What a handler answers: STATUS, a Content-Type and a body (malloc'd:
 * the server frees it).  CSP, when not NULL, replaces the default policy
 * (the sandboxed weblist page). */
struct httpd_response {
	int status;
	const char *type;
	char *body;
	size_t len;
	const char *csp;
	const char *location;   /* a redirect's target, or NULL */
};

typedef void (*httpd_handler)(void *ctx, const struct httpd_request *req,
			      struct httpd_response *resp);

/* The default Content-Security-Policy of every answer. */
#define HTTPD_CSP "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " \
	"connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'"

/* Starts serving on HOSTPORT ("[HOST]:PORT"; PORT 0 picks a free one).
 * Returns 0 with *OUT set, or a negative JH_ code with a message
 * (libmicrohttpd missing, a bad HOSTPORT, the address in use). */
int httpd_start(struct httpd **out, const char *hostport, httpd_handler fn, void *ctx,
		char *err, size_t errlen);
/* Checks that HOSTPORT has the form "[HOST]:PORT" with a port of 0 to
 * 65535 (before the profile is loaded).  Returns 0 or JH_EUSAGE. */
int httpd_check_address(const char *hostport, char *err, size_t errlen);
/* The port bound. */
unsigned httpd_port(const struct httpd *h);
/* The host as URLs should name it: "127.0.0.1", the HOST given, or
 * "[v6 address]". */
const char *httpd_host(const struct httpd *h);
/* Whether HOST was empty or a loopback address. */
bool httpd_loopback(const struct httpd *h);
/* Stops serving, waits for the handlers running, frees H (NULL: nothing). */
void httpd_stop(struct httpd *h);

/* The request's method ("GET", "HEAD", "POST") and path (decoded). */
const char *httpd_method(const struct httpd_request *r);
const char *httpd_path(const struct httpd_request *r);
/* Calls FN for each query parameter (decoded), in order; stops at the
 * first nonzero return and returns it. */
int httpd_each_param(const struct httpd_request *r,
		     int (*fn)(void *ctx, const char *key, const char *value), void *ctx);

/* Sets RESP to a copy of BODY (LEN bytes) with STATUS and TYPE; a copy
 * that cannot be made becomes a 500 with no body. */
void httpd_reply(struct httpd_response *resp, int status, const char *type, const char *body,
		 size_t len);
/* A text/plain answer made with printf's FMT. */
__attribute__((format(printf, 3, 4)))
void httpd_replyf(struct httpd_response *resp, int status, const char *fmt, ...);

#endif

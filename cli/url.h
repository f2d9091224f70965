/*
 * url: which PROFILE arguments name a server, and what is fetched from it.
 *
 * jeprof's rules (its ParseProfileURL and FetchDynamicProfile), plus one
 * of jheap's own:
 * - http://HOST[:PORT]/PATH, https://..., or jeprof's HOST:PORT[/PATH]
 *   (plain http) when no local file has that name: a local file wins.
 * - A PATH ending in a known page (/pprof/heap, /pprof/growth,
 *   /pprof/profile, ...) is fetched as given; an empty PATH, or one
 *   without a known page, gets /pprof/profile appended.
 * - /pprof/profile (and /pprof/pmuprofile) get "?seconds=N": the server
 *   collects for N seconds before it answers, and the fetch may take
 *   N * 1.01 + 60 seconds, as jeprof allows it.
 * - jheap's own: a URL with a query string of its own
 *   (/mtev/heap_profile?trigger_dump=true, .../pprof/profile?seconds=0)
 *   is fetched exactly as written.
 * - Symbols come from the same prefix + /pprof/symbol (the server root
 *   for a URL with a query string and no known page).
 * - User information in a URL (http://USER:PASSWORD@HOST/...) is sent
 *   with the request (HTTP basic authentication) and shown nowhere: every
 *   message, saved file name and output names the URL without it, as git
 *   shows remote URLs.
 * Pure string work: nothing here touches the network or the disk
 * (tests/unit/test_url.c).
 */
#ifndef JHEAP_URL_H
#define JHEAP_URL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

/* The longest URL jheap fetches (an argument, or one it builds). */
#define URL_MAX 4096

/* The seconds a fetch of a page that does not collect over time may take. */
#define URL_PLAIN_TIMEOUT 120.0

struct url_target {
	char url[URL_MAX];          /* the URL fetched, user information kept */
	char symbol_url[URL_MAX];   /* the server's /pprof/symbol, the same */
	char shown[URL_MAX];        /* url and symbol_url without user
	                               information (url_redact): for messages */
	char symbol_shown[URL_MAX];
	char host[256];             /* host name without user information,
	                               port or brackets */
	char suffix[256];           /* for saved file names: ".pprof.heap" for
	                               a page other than /pprof/profile, "" */
	bool collects;              /* /pprof/profile: the server collects
	                               for collect_seconds before answering */
	double collect_seconds;
	double time_limit;          /* seconds the whole fetch may take */
};

/* True when ARG has the form of a URL jheap fetches: http:// or https://
 * (any case), or HOST:PORT optionally followed by /PATH or ?QUERY.  Says
 * nothing about whether a local file has that name. */
bool url_form(const char *arg);

/* Applies the rules above to ARG (url_form() must be true); SECONDS is
 * --seconds.  Returns 0, or JH_EUSAGE with a message naming ARG (too long,
 * no host, a control character in it). */
int url_target(const char *arg, long seconds, struct url_target *t, char *err, size_t errlen);

/* URL without its user information: "scheme://USER:PASSWORD@HOST/x"
 * becomes "scheme://HOST/x" (git's rule: the user name goes too); any
 * other string is copied as it is.  The user information ends at the
 * authority's last '@'.  BUF is cut to LEN - 1 bytes. */
void url_redact(char *buf, size_t len, const char *url);

/* The file name a fetched profile is saved under, as jeprof names them:
 * PROGRAM's base name (or "profile" when PROGRAM is NULL or empty), WHEN
 * in seconds since the epoch, the host, and T's suffix; characters other
 * than letters, digits, '.', '-' and '_' become '_'.  Returns 0, or -1
 * when BUF is too small. */
int url_save_name(char *buf, size_t len, const char *program, time_t when,
		  const struct url_target *t);

#endif

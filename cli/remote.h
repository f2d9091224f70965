/*
 * remote: profiles from where they live.  A PROFILE argument that names a
 * server (cli/url.h) is fetched (cli/fetch.h), read by the same parser as
 * a file, and saved as jeprof saves it; names for the addresses of files
 * that are not on this machine come from the server's /pprof/symbol.
 * Those names are recorded as a symbolized file's "--- symbol" names are,
 * so the symbolizer uses them for the locations they cover and reads
 * object files only for the rest.  The driver calls these from its load
 * (cli/driver.h), the names before symbolization.
 */
#ifndef JHEAP_REMOTE_H
#define JHEAP_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "analyzer/parse.h"
#include "analyzer/profile.h"

struct remote_options {
	const char *binary;                 /* BINARY: names the saved file; may be NULL */
	long seconds;                       /* --seconds */
	const char *const *lib_prefixes;    /* --lib_prefix, NULL-terminated, may be NULL */
	/* What was done ("saved URL to PATH"); may be NULL. */
	void (*note)(void *ctx, const char *msg);
	/* A degraded result (no names from the server, a profile not saved). */
	void (*warn)(void *ctx, const char *msg);
	/* While a request waits, about every 0.2 s: one line of at most 72
	 * characters ("fetching ...: 3 of 30 s, be patient..."); may be NULL. */
	void (*progress)(void *ctx, const char *what);
	void *ctx;
};

/* True when ARG is to be fetched: it has a URL's form (url_form) and no
 * local file has that name (a local file wins, as in jeprof). */
bool remote_is_url(const char *arg);

/* The first of ARGS[0..nargs), then of BASES[0..nbases), that
 * remote_is_url(), or NULL: the server whose /pprof/symbol gives names,
 * as jeprof takes its first profile's. */
const char *remote_first_url(const char *const *args, size_t nargs, const char *const *bases,
			     size_t nbases);

/* Fetches the profile ARG names into P (freshly initialized) through
 * parse_buffer(), under the URL's name (without user information, as in
 * every message here); then saves it, atomically, in $JHEAP_TMPDIR or
 * ~/jheap as PROGRAM.TIME.HOST[.PAGE], notes where and copies that path
 * into SAVED[0..savedlen) ("" when it could not be saved: a warning
 * says why).  An HTTP error, an HTML page or an empty answer is an error
 * naming the URL and the status.  Returns 0 or a negative code with a
 * message. */
int remote_load(struct profile *p, const char *arg, const struct remote_options *o,
		const struct parse_options *po, char *saved, size_t savedlen, char *err,
		size_t errlen);

/* Before symbolization, when no BINARY was given: the addresses of P that
 * lie in files not on this machine (after --lib_prefix) are sent to the
 * /pprof/symbol page of the server ARG names, and the names it gives are
 * recorded as a symbolized profile's are (profile_presym), demangled.
 * A server without that page, or addresses left without a name, are a
 * warning that says how to get names.  Returns 0, or JH_ENOMEM. */
int remote_symbols(struct profile *p, const char *arg, const struct remote_options *o,
		   char *err, size_t errlen);

/* Reads a /pprof/symbol answer BODY[0..len) ("0xADDR name" lines) into
 * P's presymbols for the addresses among PCS[0..npcs) (sorted); names are
 * demangled, "??" and empty names skipped.  *NAMED gets how many of PCS
 * got a name.  Returns 0 or JH_ENOMEM. */
int remote_read_symbols(struct profile *p, const char *body, size_t len, const uint64_t *pcs,
			size_t npcs, size_t *named);

#endif

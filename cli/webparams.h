/*
 * webparams: a web UI request's query parameters, pprof's names, checked
 * and turned into the settings of a report (struct cli), so that a URL
 * and a command line give the same report:
 *
 *   f  --focus (and the RE of peek, source and disasm)   i  --ignore
 *   h  --exclude (pprof's hide)    s  --retain (pprof's show)
 *   si inuse_space, inuse_objects, alloc_space, alloc_objects, and
 *      churn_space, churn_objects (--churn, --churn_objects)
 *   g  functions, lines, files, addresses
 *   a  --allocator                 t  --thread=N
 *   tf --tagfocus, ti --tagignore ([KEY=]RE on the samples' labels)
 *   d  a dump of the series (0 is the first); b  a second one, the base
 *      of a diff between two dumps
 * and the page's own state, which the server only bounds: sort (flat,
 * cum, name), q (a search), z (the flame graph's zoom), sw (its sandwich
 * function), cmp (the timeline awaits a second dump to compare).
 * Anything else, a bad value, a regular expression PCRE2 refuses, or a
 * value past 4096 bytes is a usage error with a message.  An empty value
 * is the setting's default (no filter, inuse_space, functions, every
 * thread, sort by flat).
 *
 * The URL holds the whole state of a view: a setting it does not name is
 * the default, whatever the command line said.  The command line's view
 * settings are the server's first page instead: webparams_initial() turns
 * them into the query a URL without parameters is sent to (cli/webui.c),
 * so that reload, back and a bookmark show what the URL says and each
 * setting can be cleared (cli/webui.c adds d for --peak with a series).
 */
#ifndef JHEAP_WEBPARAMS_H
#define JHEAP_WEBPARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include "cli/httpd.h"
#include "cli/options.h"

struct web_params {
	const char *f, *i, *h, *s, *a, *t;
	const char *tf, *ti;   /* --tagfocus, --tagignore: NULL keeps the command line's */
	int si;        /* enum pf_value, or -1 */
	int g;         /* enum granularity, or -1 */
	long d, b;     /* dump indices, or -1 */
	bool cum;      /* sort=cum */
};

/* Reads REQ's query into WP (strings point into the request).  Returns 0,
 * or JH_EUSAGE with a message naming the parameter. */
int webparams_parse(const struct httpd_request *req, struct web_params *wp, char *err,
		    size_t errlen);

/* Sets O's report settings from WP: every one a parameter above names,
 * to its default when WP does not give it; O's others stay. */
void webparams_apply(const struct web_params *wp, struct cli *o);

/* The query (without '?', percent-encoded; "" for none) that names C's
 * view settings: --focus, --ignore, --exclude, --retain, the value
 * (--inuse_objects ...), the granularity, --allocator, --thread=N,
 * --tagfocus, --tagignore and --cum (sort=cum), into *OUT (malloc'd).
 * Returns 0, JH_EUSAGE with a message (--thread='*', which is no one
 * view; a value past 4096 bytes) or JH_ENOMEM. */
int webparams_initial(const struct cli *c, char **out, char *err, size_t errlen);

#endif

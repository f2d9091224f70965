/*
 * inlabels: where each input's samples came from, as labels
 * (analyzer/labels.h): --label KEY=VALUE for the PROFILEs and --base
 * profiles that follow it on the command line, and --label-from-path=RE,
 * whose named groups, matched on each input's path as given, become
 * labels ("(?<host>[^/]+)/(?<release>[^/]+)/" on "web3/v24.3/x.heap"
 * gives host=web3 and release=v24.3).  An explicit --label wins over a
 * group of the same name; a group that takes no part in the match, or
 * matches nothing, gives no label.  A path RE does not match labels
 * nothing (no error: a fleet's odd file keeps its samples).
 */
#ifndef JHEAP_INLABELS_H
#define JHEAP_INLABELS_H

#include <stdbool.h>
#include <stddef.h>
#include "analyzer/profile.h"
#include "cli/options.h"

struct pattern;

struct inlabels {
	const struct cli *c;
	struct pattern *re;      /* --label-from-path, or NULL */
};

/* Ready for C's labels: compiles --label-from-path.  Returns 0, or
 * JH_EUSAGE (a bad expression) / JH_ENOMEM with a message. */
int inlabels_init(struct inlabels *il, const struct cli *c, char *err, size_t errlen);
void inlabels_release(struct inlabels *il);

/* Whether any input gets labels. */
static inline bool inlabels_any(const struct inlabels *il)
{
	return il->re || il->c->nlabels;
}

/* Labels P's samples as the input PATH: a --base profile (BASE) at
 * INDEX among c->bases, or the PROFILE at INDEX in c->args.  Returns 0,
 * or a negative JH_ code with a message (a match PCRE2 gave up on). */
int inlabels_apply(struct inlabels *il, bool base, size_t index, const char *path,
		   struct profile *p, char *err, size_t errlen);

#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/errors.h"
#include "symbolize/addr.h"
#include "symbolize/objchoice.h"

/* What is learnt about one file that may stand for a mapping. */
struct candidate {
	const char *obj;
	struct symmodule *mod;   /* NULL: it cannot be opened (err says why) */
	char err[512];
	bool fits;               /* its segments fit the mapping */
	struct callcheck cc;     /* the dump's return addresses in it */
	uint8_t *follows;        /* per return address: 1 when it follows a call */
};

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

static int examine(struct symcache *sc, const struct pf_mapping *m, const char *obj,
		   const uint64_t *rels, size_t nrels, struct candidate *cd)
{
	memset(cd, 0, sizeof(*cd));
	cd->obj = obj;
	cd->mod = symcache_module(sc, obj, cd->err, sizeof(cd->err));
	if (!cd->mod)
		return 0;
	size_t nseg = 0;
	const struct symsegment *segs = symmodule_segments(cd->mod, &nseg);
	bool identity = m->start == 0 && m->offset == 0 && m->limit == UINT64_MAX;
	cd->fits = identity || addr_mapping_fits(segs, nseg, m->offset, m->limit - m->start, m->exec);
	/* without maps the addresses are link-time ones, not file offsets */
	if (identity)
		return 0;
	if (!(cd->follows = malloc(nrels + 1)))
		return JH_ENOMEM;
	callcheck_module(cd->mod, rels, nrels, &cd->cc, cd->follows);
	return 0;
}

static bool candidate_ok(const struct candidate *cd)
{
	return cd->mod && cd->fits && cd->cc.verdict != CALLCHECK_MISMATCH;
}

/* How sure it is that CD is the code that wrote the dump: 3 all of
 * enough return addresses follow calls in it, 2 nothing says either way,
 * 1 some do not, 0 it is not. */
static int rank(const struct candidate *cd)
{
	if (!candidate_ok(cd))
		return 0;
	if (cd->cc.verdict == CALLCHECK_PARTIAL)
		return 1;
	return cd->cc.verdict == CALLCHECK_MATCH && cd->cc.checked >= CALLCHECK_MIN ? 3 : 2;
}

/* Why CD is not (all) the code that wrote the dump, into BUF. */
static void candidate_fault(const struct pf_mapping *m, const struct candidate *cd,
			    char *buf, size_t len)
{
	if (!cd->mod)
		snprintf(buf, len, "%s", cd->err);
	else if (!cd->fits)
		snprintf(buf, len, "its segments do not fit the mapping %llx-%llx at offset %llx",
			 (unsigned long long)m->start, (unsigned long long)m->limit,
			 (unsigned long long)m->offset);
	else
		snprintf(buf, len, "%zu of the %zu return addresses in the dump do not follow a call instruction in it",
			 cd->cc.checked - cd->cc.calls, cd->cc.checked);
}

/* Whether A and B are files with different build ids. */
static bool build_ids_differ(const struct symmodule *a, const struct symmodule *b)
{
	size_t la = 0, lb = 0;
	const unsigned char *ba = symmodule_build_id(a, &la), *bb = symmodule_build_id(b, &lb);
	return ba && bb && (la != lb || memcmp(ba, bb, la));
}

static bool same_file(const char *a, const char *b)
{
	struct stat x, y;
	return !stat(a, &x) && !stat(b, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* Moves candidate CD into OUT as the file chosen. */
static void take(struct objchoice *out, struct candidate *cd)
{
	out->obj = cd->obj;
	out->mod = cd->mod;
	out->cc = cd->cc;
	if (cd->cc.verdict == CALLCHECK_PARTIAL) {
		out->follows = cd->follows;
		cd->follows = NULL;
	}
}

/* The main program when BINARY (BIN) is given: see objchoice.h. */
static int pick_binary(struct symcache *sc, const struct pf_mapping *m, const char *path,
		       struct candidate *bin, const uint64_t *rels, size_t nrels,
		       struct objchoice *out)
{
	struct candidate *own = calloc(1, sizeof(*own));
	if (!own)
		return JH_ENOMEM;
	const char *binary = bin->obj;
	char why[600], why_own[600];
	bool have_own = strcmp(path, binary) && !access(path, R_OK) && !same_file(path, binary);
	if (have_own && examine(sc, m, path, rels, nrels, own)) {
		free(own);
		return JH_ENOMEM;
	}
	bool bin_ok = candidate_ok(bin), own_ok = have_own && candidate_ok(own);
	candidate_fault(m, bin, why, sizeof(why));
	/* code changed in part loses to the whole */
	if (bin_ok && own_ok && rank(bin) < rank(own))
		bin_ok = false;
	if (bin_ok && have_own && own->mod && build_ids_differ(bin->mod, own->mod) &&
	    !(rank(bin) > rank(own) && (rank(bin) == 3 || rank(own) == 0))) {
		/* The build id decides, unless the dump's own program has
		 * changed since and BINARY's code is more the one that ran:
		 * all of it, or some where the program in place has none (a
		 * copy kept of the program, then rebuilt in place). */
		bin_ok = false;
		snprintf(why, sizeof(why), "its build id differs from that of '%s', the program named in the dump",
			 path);
	}
	if (bin_ok) {
		take(out, bin);
	} else if (own_ok) {
		snprintf(out->warning, sizeof(out->warning),
			 "'%s' is not the program that wrote the dump: %s; names are taken from '%s', the program named in the dump",
			 binary, why, path);
		out->mismatch = true;
		take(out, own);
	} else {
		if (have_own) {
			candidate_fault(m, own, why_own, sizeof(why_own));
			snprintf(out->warning, sizeof(out->warning),
				 "'%s' is not the program that wrote the dump: %s; nor is '%s', the program named in the dump: %s; its frames are shown as %s+0xOFFSET",
				 binary, why, path, why_own, base_name(path));
		} else {
			snprintf(out->warning, sizeof(out->warning),
				 "'%s' is not the program that wrote the dump: %s; its frames are shown as %s+0xOFFSET",
				 binary, why, base_name(path));
		}
		out->mismatch = true;
		out->cc = bin->cc;
	}
	free(own->follows);
	free(own);
	return 0;
}

int objchoice_pick(struct symcache *sc, const struct pf_mapping *m, const char *path,
		   const char *obj, bool given, const uint64_t *rels, size_t n,
		   struct objchoice *out)
{
	memset(out, 0, sizeof(*out));
	struct candidate cd;
	int rc = examine(sc, m, obj, rels, n, &cd);
	if (rc)
		goto out;
	if (!cd.mod) {
		out->failed = true;
		snprintf(out->warning, sizeof(out->warning), "%s; its frames are shown as %s+0xOFFSET",
			 cd.err, base_name(path));
	} else if (given) {
		rc = pick_binary(sc, m, path, &cd, rels, n, out);
	} else if (candidate_ok(&cd)) {
		take(out, &cd);
	} else {
		char why[600];
		candidate_fault(m, &cd, why, sizeof(why));
		snprintf(out->warning, sizeof(out->warning),
			 "'%s' has changed since the dump was written: %s; its frames are shown as %s+0xOFFSET",
			 obj, why, base_name(path));
		out->mismatch = true;
		out->cc = cd.cc;
	}
	if (!rc && out->obj && out->follows) {
		snprintf(out->partial, sizeof(out->partial),
			 "'%s' may have changed since the dump was written: %zu of the %zu return addresses in the dump do not follow a call instruction in it; the frames at those addresses are shown as %s+0xOFFSET",
			 out->obj, out->cc.checked - out->cc.calls, out->cc.checked, base_name(path));
		out->mismatch = true;
	}
out:
	free(cd.follows);
	return rc;
}

void objchoice_release(struct objchoice *c)
{
	free(c->follows);
	c->follows = NULL;
}

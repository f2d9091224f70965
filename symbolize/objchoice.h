/*
 * objchoice: which object file stands for a mapping of the dump, and
 * whether it is the code that wrote the dump.
 *
 * A file is refused when its segments do not fit the mapping or when
 * most of the dump's return addresses in it follow no call instruction
 * (callcheck.h); then its frames are named module+offset rather than
 * after code that did not run.  For the main program a BINARY given on
 * the command line is also refused when its build id differs from that
 * of the program the dump names, still on disk; the dump's own program
 * is used instead when it passes, and BINARY wins only when the dump's
 * program has changed since and BINARY's code is the one that ran.  Code
 * changed in part (some return addresses follow no call, not most) is
 * used, but not for those addresses.
 */
#ifndef JHEAP_OBJCHOICE_H
#define JHEAP_OBJCHOICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "analyzer/profile.h"
#include "symbolize/callcheck.h"
#include "symbolize/symcache.h"

struct objchoice {
	const char *obj;          /* the file to take names from (OBJ or PATH
				     as passed), NULL: none */
	struct symmodule *mod;    /* its module in the symcache */
	struct callcheck cc;      /* the return addresses in the file chosen,
				     or in OBJ when none is */
	uint8_t *follows;         /* per return address: 1 when it follows a
				     call in the file chosen (malloc'd), NULL
				     when all are taken as they are */
	bool failed;              /* OBJ cannot be opened (warning says why) */
	bool mismatch;            /* some file is not the code that wrote the
				     dump (warning says which and why): some
				     names are missing or come from another
				     file */
	char warning[2048];       /* what to warn, "" for nothing */
	char partial[1024];       /* and then about code changed in part */
};

/* Chooses the file for mapping M of the dump, whose path there is PATH:
 * OBJ, the file found for it (BINARY for the main program when GIVEN,
 * else PATH or a --lib_prefix copy of it), or when GIVEN and OBJ is not
 * the code that ran, PATH itself.  RELS[0..n) are the mapping's return
 * addresses as file offsets (the dump's addresses of frames that follow
 * a call), in any order.  Modules are opened in SC.  Returns 0 or
 * JH_ENOMEM; release *OUT with objchoice_release(). */
int objchoice_pick(struct symcache *sc, const struct pf_mapping *m, const char *path,
		   const char *obj, bool given, const uint64_t *rels, size_t n,
		   struct objchoice *out);

/* Frees what C holds. */
void objchoice_release(struct objchoice *c);

#endif

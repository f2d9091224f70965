/*
 * symbolize: the one file that joins the profile model and the libdw
 * backend.  It decides which object file each mapping stands for (BINARY,
 * "(deleted)", --lib_prefix), converts addresses once, asks the backend for
 * every unique pc and writes functions and lines into the model.
 *
 * Three passes.  The first, serial, decides each mapping's object file and
 * checks it (objchoice.h: its segments against the mapping, the dump's
 * return addresses against its call instructions, a BINARY's build id
 * against the program the dump names).  The second looks up the sorted
 * unique addresses: in two threads when there are thousands of them, each
 * with its own libdw handles (a symcache is not thread-safe), a large
 * object's addresses cut into two contiguous halves so that the threads
 * index different compilation units.  The third, serial, writes the frames
 * into the model in a fixed order, so the output does not depend on the
 * threads.  The caller then folds locations by symbol
 * (profile_fold_by_symbol in analyzer/profile.h).
 *
 * When a dump is large enough to be parsed in two threads, the driver has
 * the binary and its persistent cache file opened on the core the parse
 * leaves idle while it waits for its second half and merges the two
 * (symbolize_preload_start, from parse_options.core_idle), so the
 * symbolization that follows finds them ready.
 */
#ifndef JHEAP_SYMBOLIZE_H
#define JHEAP_SYMBOLIZE_H

#include <stddef.h>
#include "analyzer/profile.h"
#include "symbolize/callcheck.h"
#include "symbolize/perfmap.h"
#include "symbolize/symcache.h"
#include "symbolize/diskcache.h"

struct symbolize_options {
	const char *binary;                 /* BINARY from the command line, or NULL */
	const char *const *lib_prefixes;    /* NULL-terminated, may be NULL */
	bool no_symbolize;                  /* name every frame module+offset only */
	bool ranges;                        /* also record vaddr and function ranges (--disasm) */
	const struct perfmap *perfmap;      /* names of JIT code in anonymous
	                                       memory (symbolize/perfmap.h), or NULL */
	struct symcache_options symcache_opts; /* for the caches of worker threads */
	struct diskcache *cache;            /* the persistent cache, NULL: none */
	void (*warn)(void *ctx, const char *msg);
	/* Diagnostics about the persistent cache (JHEAP_DEBUG=cache); may be NULL. */
	void (*note)(void *ctx, const char *msg);
	void *ctx;
	/* Called now and then with addresses done and in all; may be NULL. */
	void (*progress)(void *ctx, size_t modules, size_t done, size_t total);
};

struct symbolize_stats {
	size_t pcs, pcs_dwarf, pcs_symtab, pcs_unknown, pcs_presym;
	size_t modules, modules_failed;
	size_t main_pcs, main_resolved;
	bool binary_mismatch;               /* an object (BINARY, or a file the dump
	                                       names) is not the code that wrote
	                                       the dump: some names are missing */
	struct callcheck main_calls;        /* the return addresses in the main
	                                       program's object */
	bool main_stripped;                 /* no address of the main program
	                                       resolves and its object is
	                                       stripped (symmodule_stripped) */
	bool resource_failed;               /* files not opened: EMFILE, ENOMEM */
	size_t pcs_jit;                     /* named from the perf map */
	size_t sigframes;                   /* stack entries looked up as they are:
	                                       signal trampolines and the pcs they
	                                       interrupted (symbolize/sigframe.h) */
};

/* Fills lines and functions for every location of P.  Problems with single
 * modules are warnings (their frames are named "lib.so+0x1a2b"); the stats
 * tell the caller how complete the result is.  Returns 0 or JH_ENOMEM. */
int symbolize_profile(struct profile *p, struct symcache *sc,
		      const struct symbolize_options *o, struct symbolize_stats *st,
		      char *err, size_t errlen);

/* Opens BINARY in SC and reads its persistent cache from DC (may be NULL)
 * on a thread of its own, for a caller with a core to spare (the parse's
 * merge); symbolize_profile() then finds both done, with the same
 * answers.  SC and DC must not be used until symbolize_preload_finish(),
 * which waits for the thread.  Returns NULL (nothing started, nothing
 * lost) when the thread cannot be made. */
struct symbolize_preload;
struct symbolize_preload *symbolize_preload_start(struct symcache *sc, struct diskcache *dc,
						  const char *binary);
/* Waits for the preload and frees it; NULL is a no-op. */
void symbolize_preload_finish(struct symbolize_preload *pl);

#endif

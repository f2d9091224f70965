/*
 * profile: the model every stage shares, shaped like pprof's profile.proto.
 *
 * Tables of mappings, locations (one per unique raw address and leaf-ness,
 * each holding its frames innermost first), functions (deduplicated),
 * samples (location ids leaf first, and four values: in-use objects and
 * bytes, allocated objects and bytes, already unsampled), per-thread sample
 * values and an interned string table.  Ids are array indices.  The parser
 * fills mappings, locations and samples; only the symbolizer writes lines
 * and functions; outputs read.
 *
 * Return addresses: a dump's frames are return addresses, except where a
 * format says otherwise, and the parser decides it once per format.  A
 * location's leaf flag says its lookup pc is the address itself rather
 * than the address minus one (inside the call instruction); only the
 * first frame of a heap_v2 stack has it (a pc inside jemalloc), no frame
 * of a gperftools stack, and every location of a pprof input, whose
 * addresses are pcs already.  addr_pc() below is the one conversion;
 * symbolize/addr.h has the spaces that follow it.
 *
 * Each input file is parsed into a model of its own and merged into the
 * total (profile_merge; --base profiles with a negative sign).  After
 * symbolization, locations with the same frames are folded together
 * (profile_fold_by_symbol), which is what makes --base and the sum of
 * profiles of different processes agree.
 */
#ifndef JHEAP_PROFILE_H
#define JHEAP_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/idmap.h"
#include "analyzer/labels.h"
#include "analyzer/strtab.h"

/* The four values of every sample, in the order of a heap_v2 counts tuple,
 * then the values derived from them, which no sample stores: what was
 * allocated and freed again (allocated minus in use; --churn). */
enum pf_value {
	PF_INUSE_OBJECTS = 0,
	PF_INUSE_SPACE = 1,
	PF_ALLOC_OBJECTS = 2,
	PF_ALLOC_SPACE = 3,
	PF_NVALUES = 4,          /* the values stored */
	PF_CHURN_OBJECTS = 4,
	PF_CHURN_SPACE = 5,
	PF_NALL_VALUES = 6       /* stored and derived */
};

/* Value V of the stored values X[PF_NVALUES] (a sample's v or base, a
 * thread's share, a total): X[V], or the derived value computed from
 * them.  Every reader of a value that may be derived goes through it. */
static inline double pf_value_of(const double *x, int v)
{
	return v < PF_NVALUES ? x[v] : x[v - 2] - x[v - 4];
}

/* Whether V is a count of objects (else of bytes). */
static inline bool pf_value_is_objects(int v)
{
	return !(v & 1);
}

enum pf_map_kind {
	PF_MAP_FILE = 0,   /* backed by a file path */
	PF_MAP_ANON,       /* no path at all */
	PF_MAP_VDSO,       /* [vdso] */
	PF_MAP_SPECIAL,    /* [heap], [stack], [vvar], [vsyscall], [anon:...] ... */
};

struct pf_mapping {
	uint64_t start, limit;   /* [start, limit) runtime addresses */
	uint64_t offset;         /* file offset of start */
	uint32_t path;           /* string id: path as in the maps, " (deleted)" removed */
	uint32_t object;         /* string id: file to symbolize (after BINARY,
	                            --lib_prefix, ...); 0 until the symbolizer sets it */
	uint32_t build_id;       /* string id of the hex build id, 0 unknown */
	uint8_t kind;            /* enum pf_map_kind */
	bool exec, deleted, is_main;
	bool has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

/* One frame of a location, as in profile.proto's Line. */
struct pf_line {
	uint32_t function;
	uint32_t file;           /* string id of the source file of this line (the
	                            call site for outer frames); 0 unknown */
	int32_t line;
	int32_t column;
	bool inlined;            /* inlined into the next line of the location */
};

enum pf_sym_state {
	PF_SYM_NOTYET = 0,
	PF_SYM_DWARF,            /* file:line known */
	PF_SYM_SYMTAB,           /* ELF symbol only */
	PF_SYM_PRESYM,           /* from a symbolized profile's --- symbol section */
	PF_SYM_UNKNOWN,          /* named module+offset or raw address */
	PF_SYM_PROFILE,          /* named by the profile file itself (a pprof
	                            location's lines): its file names are the
	                            profile's word, not an object file's */
	PF_SYM_ELSEWHERE,        /* its frames are known from another profile of
	                            the same program (analyzer/merge.h:
	                            symmerge_known); the symbolizer passes over it */
};

struct pf_location {
	uint64_t addr;           /* raw address as in the dump */
	uint32_t mapping;        /* mapping id or UINT32_MAX when none covers it */
	bool leaf;               /* frame 0 of its stack: the lookup pc is addr, not addr-1
	                            (every location of a pprof input: its addresses
	                            are lookup pcs already; a signal trampoline and
	                            the pc it interrupted: profile_exact_pcs) */
	uint8_t sym;             /* enum pf_sym_state */
	uint32_t line0, nlines;  /* lines[line0 .. line0+nlines), innermost first */
	uint64_t vaddr;          /* link-time address of the lookup pc in its object
	                            (0 unknown); set with --disasm */
	uint64_t func_lo, func_hi; /* link-time range of its function's symbol
	                            (0 unknown); set with --disasm */
};

/* The lookup pc of a location's raw address ADDR: the address itself for
 * a leaf (LEAF: a pc already), else ADDR - 1, inside the call instruction
 * of a return address.  The symbolizer looks up this pc; pprof's
 * Location.address and jeprof's symbol section show it. */
static inline uint64_t addr_pc(uint64_t addr, bool leaf)
{
	return leaf || addr == 0 ? addr : addr - 1;
}

struct pf_function {
	uint32_t name;           /* demangled full name */
	uint32_t system_name;    /* mangled name, 0 if none */
	uint32_t filename;
	int64_t start_line;
};

struct pf_sample {
	uint32_t stack0, depth;  /* stacks[stack0 .. stack0+depth) location ids, leaf first */
	double v[PF_NVALUES];    /* unsampled values (after minus base with --base) */
	double base[PF_NVALUES]; /* the --base profiles' share, positive: before = base,
	                            after = v + base */
	uint32_t labels;         /* where it came from: a set of p->labels, 0 none
	                            (--label, --label-from-path); part of the
	                            sample's identity, as in pprof */
};

struct pf_thread {
	int64_t uid;
	uint32_t name;           /* string id, 0 when unnamed */
	double v[PF_NVALUES];    /* header summary from the dump (informational) */
};

struct pf_thread_value {
	uint32_t sample, thread;
	double v[PF_NVALUES];
};

enum pf_format {
	PF_FMT_NONE = 0,
	PF_FMT_HEAP_V2,          /* jemalloc heap_v2/N */
	PF_FMT_GPERF,            /* gperftools "heap profile:" */
	PF_FMT_PPROF,            /* pprof profile.proto (analyzer/pprof.h) */
};

struct profile {
	struct strtab strs;

	struct pf_mapping *maps;       size_t nmaps, cap_maps;
	struct pf_location *locs;      size_t nlocs, cap_locs;
	struct pf_line *lines;         size_t nlines, cap_lines;
	struct pf_function *funcs;     size_t nfuncs, cap_funcs;
	struct pf_sample *samples;     size_t nsamples, cap_samples;
	uint32_t *stacks;              size_t nstacks, cap_stacks;
	struct pf_thread *threads;     size_t nthreads, cap_threads;
	struct pf_thread_value *tvals; size_t ntvals, cap_tvals;

	/* From a symbolized input: address -> names joined with "--", outer first. */
	struct pf_presym { uint64_t addr; uint32_t names; } *presyms;
	size_t npresyms, cap_presyms;
	uint32_t presym_binary;        /* string id of its "binary=" line */

	struct labeltab labels;        /* the samples' label sets (analyzer/labels.h) */

	enum pf_format format;
	uint64_t period;               /* sampling period from the header (1 = every allocation) */
	bool has_alloc;                /* some accumulated counts are nonzero */
	bool has_maps;                 /* a MAPPED_LIBRARIES section was present */
	uint32_t main_mapping;         /* mapping id of the main executable, or UINT32_MAX */
	double header_total[PF_NVALUES]; /* the dump's own t* summary, informational */

	struct idmap loc_index, sample_index, func_index, map_index, thread_index, presym_index;
};

int profile_init(struct profile *p);
void profile_release(struct profile *p);

/* Id of the location for (ADDR, LEAF, MAPPING), adding it when new.  The
 * parser passes UINT32_MAX for the mapping; profile_resolve_mappings() sets
 * it later. */
int64_t profile_location(struct profile *p, uint64_t addr, bool leaf, uint32_t mapping);

/* Id of the sample whose stack is LOCS[0..n), adding it with zero values
 * when new. */
int64_t profile_sample(struct profile *p, const uint32_t *locs, size_t n);
/* profile_sample() for a caller that has the stack's hash already
 * (profile_stack_hash(LOCS, N), as HASH). */
int64_t profile_sample_hashed(struct profile *p, const uint32_t *locs, size_t n, uint64_t hash);
/* The same for the sample with label set LABELS (0: none). */
int64_t profile_sample_labeled(struct profile *p, const uint32_t *locs, size_t n,
			       uint32_t labels);

/* For a caller that adds many records it has looked up beforehand (the
 * parser's second half): lookups without adding, and additions without
 * indexing, which profile_location() and profile_sample() catch up on
 * when next called.  A find sees only indexed records, so every find must
 * come before the appends of records it could match.  Finds and prefetches
 * only read P: threads may share it while nothing adds. */

/* Id of the indexed location for (ADDR, LEAF, MAPPING), or UINT32_MAX. */
uint32_t profile_location_find(const struct profile *p, uint64_t addr, bool leaf,
			       uint32_t mapping);
/* Adds a location the caller knows is absent; returns its id or a
 * negative code. */
int64_t profile_location_append(struct profile *p, uint64_t addr, bool leaf, uint32_t mapping);
/* The hash of a stack that profile_sample_find() takes. */
uint64_t profile_stack_hash(const uint32_t *locs, size_t n);
/* Id of the indexed sample without labels whose stack is LOCS[0..n)
 * (HASH its profile_stack_hash()), or UINT32_MAX. */
uint32_t profile_sample_find(const struct profile *p, const uint32_t *locs, size_t n,
			     uint64_t hash);
/* Starts loading what profile_sample_find() reads first for HASH. */
void profile_sample_prefetch(const struct profile *p, uint64_t hash);
/* Adds a sample with zero values that the caller knows is absent; returns
 * its id or a negative code. */
int64_t profile_sample_append(struct profile *p, const uint32_t *locs, size_t n);
/* Makes room for NLOCS more locations, NSAMPLES more samples, NSTACKS
 * more stack entries and NTVALS more thread values.  Returns 0 or
 * JH_ENOMEM. */
int profile_reserve(struct profile *p, size_t nlocs, size_t nsamples, size_t nstacks,
		    size_t ntvals);
/* Makes room in the sample index for NSAMPLES samples in all, for a caller
 * about to add that many through profile_sample().  Returns 0 or
 * JH_ENOMEM. */
int profile_reserve_sample_index(struct profile *p, size_t nsamples);

/* Gives every sample of P the labels PAIRS[0..n) (string ids of P; a
 * key given twice keeps its last value), joined with any it has: where
 * the whole input came from (--label, --label-from-path).  Returns 0 or
 * a negative JH_ code. */
int profile_set_labels(struct profile *p, const struct pf_label *pairs, size_t n);

/* Id of the thread with UID, added when new. */
int64_t profile_thread(struct profile *p, int64_t uid);

/* Adds V to thread THREAD's share of SAMPLE. */
int profile_thread_add(struct profile *p, uint32_t sample, uint32_t thread,
		       const double v[PF_NVALUES]);

/* Id of the mapping equal to M (start, limit, offset, path), added when new. */
int64_t profile_mapping(struct profile *p, const struct pf_mapping *m);

/* Id of the function (name, system_name, filename, start_line), added when new. */
int64_t profile_function(struct profile *p, uint32_t name, uint32_t system_name,
			 uint32_t filename, int64_t start_line);

/* Appends a line; returns its index or a negative code. */
int64_t profile_add_line(struct profile *p, const struct pf_line *l);

/* Records a presymbolized name for ADDR. */
int profile_presym(struct profile *p, uint64_t addr, uint32_t names);
/* The names string id for ADDR, or 0. */
uint32_t profile_presym_find(const struct profile *p, uint64_t addr);

/* The kind of mapping whose path (as the maps show it) is PATH[0..len):
 * the one decision, for the maps lines of a dump, pprof's Mapping table
 * and --symbols' input. */
enum pf_map_kind profile_map_kind(const char *path, size_t len);

/* Mapping id containing ADDR (executable mappings preferred), or UINT32_MAX. */
uint32_t profile_find_mapping(const struct profile *p, uint64_t addr);

/* Adds mapping M, an object loaded at its link-time addresses (jeprof's
 * --add_lib), and points at it every location whose address M holds and
 * that no executable mapping of the profile covers.  The main executable
 * stays what it was.  Returns how many locations moved, or JH_ENOMEM. */
int64_t profile_cover_unmapped(struct profile *p, const struct pf_mapping *m);

/* Signal frames, as gdb and libunwind read them: a stack entry whose
 * location L has SIGFRAME[L] set (L < N: a return address into the
 * signal trampoline, which the kernel made the handler's return address)
 * and the entry after it (the pc the signal interrupted, which is no
 * return address) are looked up at their addresses, not minus one: each
 * is replaced by the location of the same address and mapping with the
 * leaf flag, added when new.  Stacks are rewritten in place, and the
 * sample index rebuilt.  Returns how many entries changed, or JH_ENOMEM. */
int64_t profile_exact_pcs(struct profile *p, const uint8_t *sigframe, size_t n);

/* Points every location at the mapping that contains it and picks the main
 * executable's mapping.  Called by the parser once the maps are known.
 * Returns 0 or JH_ENOMEM (the location index could not be rebuilt). */
int profile_resolve_mappings(struct profile *p);

/* Where location L's code is, the same in every process: *SPACE the
 * file (its path's string id, shifted, with the leaf flag) and *OFF the
 * offset in it, or for an address outside any file the address itself.
 * Locations with the same place hold the same code. */
void profile_code_place(const struct profile *p, const struct pf_location *l, uint32_t *space,
			uint64_t *off);

/* After symbolization: locations with the same frames (function, file,
 * line, inline chain) become one, and samples whose stacks are then equal
 * are summed, with their base and per-thread values.  This is what lets two
 * processes of one binary (different ASLR layouts) sum and cancel.
 * With BY_ADDRESS (--addresses), locations fold only when they also hold
 * the same code address (the same offset in the same file), so that each
 * code address stays one row.  When REMAP is not NULL, *REMAP receives a malloc'd array from old sample
 * ids to new ones (the caller frees it), or NULL when nothing changed.
 * Returns 0 or JH_ENOMEM. */
int profile_fold_by_symbol(struct profile *p, bool by_address, uint32_t **remap);

/* Sum of value V over all samples. */
double profile_total(const struct profile *p, enum pf_value v);

/* Whether the magnitudes of every value of P (v[] and base[] of all
 * samples, per-thread values) add up to at most MAX, so that any sum a
 * report prints fits in 64 bits; otherwise -1 with a message. */
int profile_check_magnitude(const struct profile *p, double max, char *err, size_t errlen);

#endif

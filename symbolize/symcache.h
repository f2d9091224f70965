/*
 * symcache: the libdw symbolization backend.
 *
 * It knows object files and addresses, nothing about profiles: callers ask
 * "which frames does link-time address V of file F hold?" and get the
 * inline chain, innermost first.  Everything is cached for the life of the
 * symcache: one open handle per object file (opened lazily, failures
 * remembered), one interval index per DWARF compilation unit (built on
 * first touch), the answer for each address (misses included) and the
 * strings it hands out.  Where DWARF names nothing, the ELF symbol tables
 * are the fallback (elfsym.h), and then the call-frame entries (fdetab.h).
 */
#ifndef JHEAP_SYMCACHE_H
#define JHEAP_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "symbolize/cumap.h"

struct symcache;
struct symmodule;

struct symcache_options {
	/* Extra folders searched for separate debug files, tried before the
	 * standard ones (build-id under each dir's .build-id/xx/yyyy.debug, and
	 * DIR/<path of the object>, DIR/<path>.debug, DIR/<debuglink name>).
	 * NULL-terminated; may be NULL. Borrowed for the symcache's life. */
	const char *const *debuginfo_dirs;
};

/* One frame. All strings belong to the symcache and live until
 * symcache_free(); any of them may be NULL when unknown. */
struct symframe {
	const char *name;     /* demangled full name, e.g. "ns::Holder<int>::add(int)";
	                         DIE name when nothing better; NULL when unknown */
	const char *linkage;  /* mangled (system) name, NULL when there is none */
	const char *file;     /* source file of the pc inside this frame: for the
	                         innermost frame the line-table row of the pc, for
	                         outer frames the DW_AT_call_file of the inlined
	                         callee below it */
	int line;             /* 0 when unknown */
	int column;           /* 0 when unknown */
	const char *decl_file;/* file where the function is declared (DW_AT_decl_file) */
	int decl_line;        /* DW_AT_decl_line of the function, 0 if unknown */
	int inlined;          /* 1 if this frame is an inlined copy inside the next one */
};

enum symstatus {
	SYM_NONE = 0,    /* nothing covers this address (no symbol, no DWARF) */
	SYM_SYMTAB = 1,  /* only an ELF symbol (.symtab/.dynsym) whose [value, value+size)
	                    covers the pc; one frame, no file/line */
	SYM_DWARF = 2,   /* DWARF subprogram found; frames carry file:line when the
	                    line table has them */
};

struct symresult {
	enum symstatus status;
	unsigned nframes;               /* 0 when status == SYM_NONE */
	const struct symframe *frames;  /* innermost first; frames[nframes-1] is the
	                                   real (non-inlined) function. Owned by the
	                                   symcache, valid until symcache_free(). */
};

/* A PT_LOAD program header of the main ELF file (not of the debug file). */
struct symsegment {
	uint64_t offset, filesz, vaddr, memsz;
	uint32_t flags;  /* PF_X | PF_W | PF_R */
};

/* The options' --debuginfo-dir folders made absolute (relative ones
 * against the current directory, trailing '/' removed), NULL-terminated;
 * NULL when there are none.  Owned by the cache. */
const char *const *symcache_debuginfo_dirs(const struct symcache *sc);

/* New empty cache. Returns NULL only when out of memory. */
struct symcache *symcache_new(const struct symcache_options *opts);
/* Frees every module and string. symcache_free(NULL) is a no-op. */
void symcache_free(struct symcache *sc);

/* The module for the object file at PATH, opened on first request and cached
 * (also when opening failed: the same error is returned again without
 * touching the disk). On failure returns NULL and writes a message such as
 * "cannot open '/x/lib.so': No such file or directory" or
 * "'/x/y' is not an ELF file" into err. The module belongs to the cache. */
struct symmodule *symcache_module(struct symcache *sc, const char *path,
				  char *err, size_t errlen);

/* The module for PATH if symcache_module() has opened it, else NULL
 * (nothing is opened). */
struct symmodule *symcache_find_module(struct symcache *sc, const char *path);

/* A message about a debug file of the module that was left out because it
 * is not a regular file (a FIFO, a device: never opened), or NULL.  Known
 * once the module's DWARF has been looked for.  Owned by the cache. */
const char *symmodule_skipped(const struct symmodule *m);

/* Whether some file could not be opened for lack of file descriptors or
 * memory (EMFILE, ENFILE, ENOMEM): the names may then be incomplete. */
bool symcache_resource_failed(const struct symcache *sc);

/* Program headers of the module's ELF file: the PT_LOAD entries in file
 * order. *n receives their count. Owned by the module. */
const struct symsegment *symmodule_segments(const struct symmodule *m, size_t *n);

/* ELF type: 2 = ET_EXEC, 3 = ET_DYN, as in e_type. */
int symmodule_elf_type(const struct symmodule *m);

/* ELF machine (e_machine: 62 = x86-64, 183 = AArch64). */
int symmodule_machine(const struct symmodule *m);

/* The bytes of the module's ELF file as read from disk (*size of them),
 * or NULL.  Owned by the module. */
const uint8_t *symmodule_image(struct symmodule *m, size_t *size);

/* GNU build id bytes of the module's file, or NULL with *len = 0. */
const unsigned char *symmodule_build_id(const struct symmodule *m, size_t *len);

/* Path of the file the DWARF was read from (the object itself or its separate
 * debug file), or NULL when the module has no DWARF at all.  Finds the
 * DWARF if no lookup has done it yet. */
const char *symmodule_debug_path(struct symmodule *m);

/* The file name in the object's .gnu_debuglink section, or NULL. Owned by
 * the module. */
const char *symmodule_debuglink(struct symmodule *m);

/* Frames for link-time address VADDR (already the lookup pc: callers have
 * applied the -1 for return addresses). Never fails: an unknown address is
 * SYM_NONE. The result stays valid until symcache_free(). Calling it twice
 * with the same address is cheap. */
void symmodule_lookup(struct symmodule *m, uint64_t vaddr, struct symresult *out);

/* The link-time range [*lo, *hi) of the ELF symbol (function) that covers
 * VADDR, for disassembly; 0, or -1 when no symbol covers it. */
int symmodule_symbol_range(struct symmodule *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi);

/* The link-time range [*lo, *hi) of the call-frame entry (FDE of the
 * file's .eh_frame or .debug_frame, not of a separate debug file) that
 * holds VADDR: the function the compiler emitted there, named or not.
 * 0, or -1 when no entry holds it. */
int symmodule_fde_range(struct symmodule *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi);

/* Whether the module has neither a full symbol table (.symtab, or
 * MiniDebugInfo) nor DWARF, in itself or in a debug file found for it:
 * only its exported symbols can be named.  Looks for the DWARF if no
 * lookup has done it yet. */
bool symmodule_stripped(struct symmodule *m);

/* Units known from an earlier run: FN is called once, with ARG, when the
 * module first reads its unit map (before its first DWARF lookup), to give
 * units their top-level functions and line-table sequences with
 * cumap_set_unit(), so that a few new addresses do not each index a
 * whole unit or decode its whole line table.  FN must be safe to
 * call from several threads when several caches share ARG. */
void symmodule_set_units_source(struct symmodule *m,
				void (*fn)(void *arg, struct cumap *map), void *arg);

/* A unit map known from an earlier run: when the module loads its DWARF
 * (or first needs its unit map), FN is asked for one (cumap_new_known
 * on DW and VALID), with ARG and the path of the file the DWARF is read
 * from; NULL has the map read from the DWARF.  FN must give only a map
 * of that very file, and none of a DWARF with split units: the module
 * then reads no unit header to check the .dwo files.  The same rules as
 * symmodule_set_units_source, which is then given the map either way. */
void symmodule_set_map_source(struct symmodule *m,
			      struct cumap *(*fn)(void *arg, Dwarf *dw, const char *debug_path,
						  const struct cuindex_range *valid,
						  size_t nvalid),
			      void *arg);

/* The module's unit map, NULL until its first DWARF lookup (or when the
 * module has no DWARF); for the persistent cache to describe it. */
const struct cumap *symmodule_map(const struct symmodule *m);

/* Calls FN for each unit this module indexed in full (see
 * cumap_each_full), for the persistent cache. */
int symmodule_each_unit(struct symmodule *m,
			int (*fn)(void *arg, uint64_t cuoff, const struct cumap_unitinfo *u),
			void *arg);

/* Demangle a C++ (Itanium) or Rust (legacy or v0) symbol. Returns a new
 * malloc'd string the caller frees, or NULL when NAME is not mangled. */
char *symcache_demangle(const char *name);

#endif

/*
 * diskcache: the persistent symbol cache.
 *
 * One file per object file under $XDG_CACHE_HOME/jheap (else
 * ~/.cache/jheap), named after the object's GNU build id and a hash of its
 * path (realpath(), so that every name of one file finds it), and valid
 * only while that file keeps its size, modification time and inode (so a
 * binary without a build id is keyed by those).  A file holds the answers
 * symcache gave for the link-time addresses looked up so far: the inline
 * chain of each address, misses included.  The next analysis of any dump of
 * the same binary takes those answers from the file and reads no DWARF for
 * them (libdw never opens the DWARF of an object whose addresses are all
 * in its file); only new addresses go to libdw, and their answers are then
 * appended to the file as a part of its own (or the file rewritten whole
 * with old and new answers: see diskcache.c).
 *
 * For the benchmark's program an append writes 67 KB instead of 3 MB,
 * about 3 ms less per run.  The file is rewritten whole, which also
 * compacts it, after DC_MAX_PARTS (16) parts, when its parts reach half
 * the size of its body, when a part is damaged (the parts before it are
 * still used), or when another run has changed the file since it was read
 * (dcfile.h has the layout).
 *
 * It also keeps, for each DWARF unit indexed so far, where the unit's
 * top-level functions and line-table sequences are, so that a new address
 * indexes one function and decodes one sequence rather than its whole
 * unit, and the DWARF's unit map (which unit holds which addresses), so
 * that a new address reads no unit headers or aranges to find its
 * unit.  The answers are the same as from the whole unit
 * (tests/unit/test_symcache.c compares every code address of the fixtures
 * both ways).  The unit map is kept only for a DWARF without split units,
 * and used only for the very debug file it was made from (same device and
 * inode): cumap.h.
 *
 * Trust: a cache file is read only when it is a regular file owned by the
 * user, inside a folder owned by the user and closed to others (0700),
 * reached without following a symbolic link; it is checked whole (magic,
 * format version, checksum, every count, offset and string) and against
 * the object before a single answer is used.  Anything wrong and the file
 * is ignored, as if absent, and replaced on the next write.  Whole files
 * are written to a temporary name with mode 0600 and renamed into place,
 * so a reader never sees half a file, and two jheap runs at once leave one
 * whole file.  A part is appended under an flock, only to the very file the
 * run read (same inode and size), and carries its own offset and checksum:
 * a reader that meets a part being written, or one cut short, uses the
 * file up to it.
 *
 * The answers must be the ones symcache would give now: a cache made with
 * other debug info is stale.  The file records the debug file it was made
 * from (path, size, modification time) and is ignored when that changed,
 * or, when there was none, when one of the usual places for it now holds
 * a file (libc6-dbg installed since, a --debuginfo-dir given).
 *
 * The report is the same with the cache or without it (--no-cache skips
 * it; tests/t0250-cache.sh compares every output format warm and cold),
 * and JHEAP_DEBUG=cache says what it did for each object.  On a dump
 * large enough to be parsed in two threads, the binary's file is read on
 * the core the parse leaves idle (symbolize_preload_start).
 */
#ifndef JHEAP_DISKCACHE_H
#define JHEAP_DISKCACHE_H

#include <stddef.h>
#include <stdint.h>
#include "symbolize/symcache.h"

struct diskcache;
struct dcmodule;

/* Limits on a cache file: larger or longer ones are not read, and a
 * module that would exceed them starts a new file with this run's
 * answers only. */
#define DISKCACHE_MAX_FILE (512u << 20)
#define DISKCACHE_MAX_ENTRIES (1u << 22)
#define DISKCACHE_MAX_CHAIN 256
/* Cache files not used for this many days are removed by the next run
 * that writes one. */
#define DISKCACHE_MAX_AGE 30

/* Opens the cache folder, creating it (mode 0700) when missing.  DIR is
 * the folder to use, or NULL for $XDG_CACHE_HOME/jheap, else
 * $HOME/.cache/jheap.  DEBUGINFO_DIRS are the --debuginfo-dir folders as
 * absolute paths, as symcache_debuginfo_dirs() gives them (NULL-terminated,
 * may be NULL; borrowed for the cache's life).  Returns NULL with a message
 * in err when the folder cannot be used safely. */
struct diskcache *diskcache_new(const char *dir, const char *const *debuginfo_dirs,
				 char *err, size_t errlen);
/* Frees the cache and every module. NULL is a no-op. */
void diskcache_free(struct diskcache *dc);

/* The cached answers for the object file OBJ, read into memory as MOD
 * (its build id, ELF file and debug link) allows.  Returns NULL only when
 * out of memory; an absent, stale or damaged file gives an empty module,
 * and diskcache_state() says which. */
struct dcmodule *diskcache_module(struct diskcache *dc, struct symmodule *mod,
				  const char *obj);

/* The answer for link-time address VADDR: 1 and *out filled when cached,
 * else 0.  Only reads: safe from several threads at once.  The frames stay
 * valid until diskcache_free(). */
int dcmodule_lookup(const struct dcmodule *m, uint64_t vaddr, struct symresult *out);

/* Records an answer looked up live, to be written by dcmodule_save().  The
 * frames are not copied: they must stay valid until then. */
int dcmodule_add(struct dcmodule *m, uint64_t vaddr, const struct symresult *r);

/* Gives the units the file knows to MAP (a cumap of the module's
 * DWARF): symmodule_set_units_source() takes it, with the module as ARG.
 * Only reads: safe from several threads at once. */
void dcmodule_install_units(void *arg, struct cumap *map);

/* A unit map of DW made from the file's description of it, or NULL when
 * the file has none or was made from another debug file than DEBUG_PATH
 * (symmodule_set_map_source() takes it, with the module as ARG).  Only
 * reads: safe from several threads at once. */
struct cumap *dcmodule_new_map(void *arg, Dwarf *dw, const char *debug_path,
			       const struct cuindex_range *valid, size_t nvalid);

/* Records MAP's description (cumap_units, cumap_ranges) to be
 * written by dcmodule_save(), unless the module has one already or MAP
 * cannot be described.  Returns 0 or JH_ENOMEM. */
int dcmodule_add_map(struct dcmodule *m, const struct cumap *map);

/* Records a unit indexed in full in this run (symmodule_each_unit()
 * takes it, with the module as ARG), to be written by dcmodule_save();
 * the ranges and sequences are copied.  Returns 0 or JH_ENOMEM. */
int dcmodule_add_unit(void *arg, uint64_t cuoff, const struct cumap_unitinfo *u);

/* Writes the module's answers when answers were added: appended to the
 * file read as one part, or else the old ones and the new ones as a whole
 * new file, atomically.  MOD gives the debug file the new answers came
 * from.  Returns 0, or -1 with a message in err. */
int dcmodule_save(struct diskcache *dc, struct dcmodule *m, struct symmodule *mod,
		  char *err, size_t errlen);

/* What happened to the module's file, for diagnostics: e.g.
 * "loaded 19629 answers from /c/jheap/ab12....sym", "no cache file yet",
 * "ignored /c/jheap/x.sym: bad checksum". */
const char *dcmodule_state(const struct dcmodule *m);

#endif

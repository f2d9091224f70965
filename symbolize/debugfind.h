/*
 * debugfind: the separate debug file of an object (and a dwz "alt" file),
 * found without ever opening a FIFO or a device.
 *
 * libdwfl's standard search (dwfl_standard_find_debuginfo) opens each
 * candidate with a plain open(): a .gnu_debuglink naming a FIFO blocks
 * it forever.  This search tries the same candidates in the same order,
 * each through safefile_open(), and validates them as libdwfl does:
 *
 *   1. by build id, DIR/.build-id/xx/rest.debug for each absolute folder
 *      of the path (the --debuginfo-dir folders, then /usr/lib/debug);
 *   2. by the .gnu_debuglink name (the object's base name + ".debug"
 *      without one) in the object's folder, its .debug subfolder and
 *      under each absolute folder followed by the object's folder (then
 *      with its leading components dropped one at a time); the same
 *      again for the object's canonical path when it differs;
 *   3. DIR/<path of the object> and DIR/<path>.debug for each
 *      --debuginfo-dir folder;
 *   4. debuginfod (the servers of DEBUGINFOD_URLS), by build id, within
 *      a time budget for the whole run (symbolize/debuginfod.h).
 *
 * A candidate is taken when its build id is the one wanted (the object's,
 * or for the alt file the one in the .gnu_debugaltlink section), else,
 * for an object without a build id, when its CRC is the debuglink's.
 */
#ifndef JHEAP_DEBUGFIND_H
#define JHEAP_DEBUGFIND_H

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>

struct debugfind_opts {
	/* absolute --debuginfo-dir folders, NULL-terminated; may be NULL */
	const char *const *dirs;
	/* Called for each candidate that is there but not a regular file
	 * (never opened), with a message naming it; may be NULL. */
	void (*skipped)(void *arg, const char *msg);
	void *arg;
	/* Set when a candidate could not be opened for lack of file
	 * descriptors or memory: the result may be incomplete. */
	bool *resource_failed;
	/* Set when the file returned is the dwz alt file; may be NULL. */
	bool *alt_found;
};

/* A find_debuginfo callback's work for module MOD: FILE_NAME is the file
 * whose debug file is wanted (the object, or, for the alt file, the file
 * holding the DWARF), LINK and CRC its .gnu_debuglink (LINK may be NULL)
 * or the .gnu_debugaltlink name (CRC 0).  Returns an open descriptor
 * (close-on-exec) with *FOUND set to a malloc'd copy of its path, or -1. */
int debugfind(const struct debugfind_opts *o, Dwfl_Module *mod, const char *file_name,
	      const char *link, unsigned crc, char **found);

/* Whether libdw, reading the DWARF DW of the file DEBUG_PATH, could open
 * a file that is not regular by itself: the dwz alt file, when ALT_FOUND
 * is false (libdwfl found none and libdw then looks on its own, at the
 * .gnu_debugaltlink name and under /usr/lib/debug/.build-id).  The
 * candidates are checked, none is opened.  Returns 1 with a message in
 * err naming the first such candidate, else 0. */
int debugfind_alt_unsafe(Dwarf *dw, const char *debug_path, bool alt_found, char *err,
			 size_t errlen);

/* The same for the .dwo file of each split unit of DW (at its
 * DW_AT_dwo_name, alone and under its DW_AT_comp_dir).  Reads every unit
 * header: a DWARF known to have no split unit need not be asked.  With
 * debugfind_alt_unsafe, 0 says the DWARF is safe to read. */
int debugfind_split_unsafe(Dwarf *dw, const char *debug_path, char *err, size_t errlen);

#endif

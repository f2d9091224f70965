/*
 * addlib: --add_lib=FILE, jeprof's "additional library": an object whose
 * code was loaded at its link-time addresses (not relocated), so the
 * addresses of the profile that no executable mapping covers and that lie
 * in FILE's executable segments are looked up in FILE as they are.  This
 * file reads FILE's program headers (libelf) and adds its mappings to
 * the model; the option itself is the driver's (cli/load.c).
 */
#ifndef JHEAP_ADDLIB_H
#define JHEAP_ADDLIB_H

#include <stddef.h>
#include "analyzer/profile.h"

/* Adds a mapping of P for each executable PT_LOAD segment of the ELF file
 * PATH (start p_vaddr, file offset p_offset) and points the uncovered
 * locations it holds at it (profile_cover_unmapped).  *MOVED gets how many
 * locations it took.  Returns 0, or a negative code with a message naming
 * PATH (cannot open it, not an ELF file, no executable segment). */
int addlib_apply(struct profile *p, const char *path, size_t *moved, char *err, size_t errlen);

#endif

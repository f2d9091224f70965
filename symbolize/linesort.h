/*
 * linesort: the rows of a unit's line program (linetab.c) put in the
 * order elfutils 0.188's dwarf_getsrclines gives them: by address, an end
 * of sequence before other rows at its address, otherwise program order
 * (libdw's tie-break on each row's sequence number keeps it).
 */
#ifndef JHEAP_LINESORT_H
#define JHEAP_LINESORT_H

#include <stddef.h>
#include "symbolize/linetab.h"

/* Sorts the N rows of *ROWS (malloc'd, in program order) into libdw's
 * order, stably; *ROWS may be replaced by another malloc'd array (the old
 * one freed).  Returns 0, or -1 out of memory (*ROWS unchanged). */
int linesort(struct linetab_row **rows, size_t n);

#endif

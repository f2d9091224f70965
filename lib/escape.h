/*
 * escape: text from a profile or an object file made safe to show.
 *
 * Names, file names and source lines come from files jheap does not
 * trust.  A newline in a name would forge a row of a line-based report
 * (text, folded stacks, callgrind) or a line of an error message; an
 * escape sequence would reach the user's terminal.  Such bytes are shown
 * as C escapes: \n, \r, \t, \e and \xNN for the other C0 controls, DEL,
 * bytes that do not form valid UTF-8, and the C1 controls (U+0080 to
 * U+009F, which some terminals obey).  Everything else, UTF-8 included,
 * is kept as it is.
 */
#ifndef JHEAP_ESCAPE_H
#define JHEAP_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Whether S[0..n) has a byte that escape_*() would change. */
bool escape_needed(const char *s, size_t n);

/* S[0..n) escaped into DST (CAP bytes, NUL-terminated, cut at a whole
 * escape when it does not fit).  Returns DST. */
char *escape_into(char *dst, size_t cap, const char *s, size_t n);

/* S escaped, written to OUT; KEEP_TABS leaves tabs as they are (source
 * lines). */
void escape_fputs(const char *s, bool keep_tabs, FILE *out);

#endif

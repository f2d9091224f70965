/*
 * lineedit: reading the shell's command lines.  On a terminal it uses
 * libedit (Debian's libedit2, BSD-licensed): Emacs-style editing (or what
 * ~/.editrc sets), a history kept in a file between runs, and Tab
 * completion from a callback.  Elsewhere it reads plain lines.  libedit
 * is loaded (dlopen) by the first editor made: a run without the shell
 * does not load it, and a terminal without it gets plain lines.
 */
#ifndef JHEAP_LINEEDIT_H
#define JHEAP_LINEEDIT_H

#include <stdbool.h>
#include <stddef.h>

/* What a completion offers: whole words that may replace the word being
 * completed.  A word may end in ' ' or '=' (added when it is the only
 * one); lists show the words without that last ' '. */
struct lineedit_words {
	char **v;
	size_t n, cap;
};

/* Adds a copy of WORD (LEN bytes); returns 0 or JH_ENOMEM. */
int lineedit_words_add(struct lineedit_words *w, const char *word, size_t len);

/* The completion callback: LINE holds the CURSOR bytes before the cursor;
 * it returns the offset where the word being completed starts and adds
 * the candidates for that word to OUT. */
typedef size_t (*lineedit_complete_fn)(void *ctx, const char *line, size_t cursor,
				       struct lineedit_words *out);

struct lineedit;

/* A reader of lines from standard input.  With EDIT (standard input and
 * output are terminals) libedit edits them with PROMPT, loads and keeps
 * the history in HISTORY_PATH (NULL: none; its folder is made, mode 0700)
 * and completes with COMPLETE (may be NULL).  Without EDIT, or when
 * libedit cannot be loaded (lineedit_plain_why says why), lines are read
 * as they come and PROMPT is written to standard error when standard input
 * is a terminal.  Returns NULL when out of memory. */
struct lineedit *lineedit_new(bool edit, const char *prompt, const char *history_path,
			      lineedit_complete_fn complete, void *ctx);

/* The next line without its newline (the caller frees it), or NULL at the
 * end of input (Ctrl-D on an empty line).  Ctrl-C on a terminal abandons
 * the line being typed and starts a new one (with libedit or without).  An
 * edited non-blank line goes into the history, which is saved at once. */
char *lineedit_read(struct lineedit *le);

/* Why the history could not be loaded or saved, or NULL; for a warning. */
const char *lineedit_history_error(const struct lineedit *le);

/* Why lines are read plain although editing was asked for (libedit
 * cannot be loaded: the message names it and its Debian package), or
 * NULL; for a warning. */
const char *lineedit_plain_why(const struct lineedit *le);

void lineedit_free(struct lineedit *le);

#endif

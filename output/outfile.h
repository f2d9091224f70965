/*
 * outfile: -o FILE written whole or not at all.
 *
 * The report goes to a temporary file in FILE's folder (".FILE.XXXXXX",
 * mode 0600 while it is written, then FILE's own mode, or 0666 less the
 * umask for a new file), which is renamed over FILE only when the whole
 * report was written: a run that fails (a full disk, graphviz missing,
 * a data error) leaves the previous FILE as it was and no partial file.
 * A FILE that is not a regular file (/dev/null, a FIFO, a terminal) is
 * written directly, and so is one in a folder jheap may not write to.
 * A symbolic link is followed: its target is replaced.
 */
#ifndef JHEAP_OUTFILE_H
#define JHEAP_OUTFILE_H

#include <stdio.h>

struct outfile {
	FILE *f;          /* where to write the report */
	char *path;       /* the file to make (FILE, or its link's target) */
	char *tmp;        /* the temporary file, NULL when writing directly */
};

/* Opens PATH for a report.  Returns 0, or a negative JH_ code with a
 * message in err. */
int outfile_open(struct outfile *o, const char *path, char *err, size_t errlen);

/* Finishes the report: flushes, checks for write errors, closes and
 * renames it into place.  Returns 0, or a negative JH_ code with a
 * message (the temporary file is then removed). */
int outfile_commit(struct outfile *o, char *err, size_t errlen);

/* Gives the report up: closes and removes the temporary file. */
void outfile_abort(struct outfile *o);

#endif

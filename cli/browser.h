/*
 * browser: opens a file in the user's web browser, for --web, --weblist
 * and the shell's web, weblist and flamegraph commands.
 */
#ifndef JHEAP_BROWSER_H
#define JHEAP_BROWSER_H

#include <stddef.h>

/* Opens PATH with the first command of $BROWSER that can be run (a
 * ':'-separated list of commands; each is split on spaces, "%s" stands for
 * the file, else the file is the last argument, "%%" is a '%'), else with
 * xdg-open.  The command runs on its own, detached (jheap does not wait
 * for the browser to close), never through a shell.  Returns 0, or
 * JH_EIO with a message when no command could be started. */
int browser_open(const char *path, char *err, size_t errlen);

/* Creates a new file for a report to show, mode 0600, named
 * $TMPDIR/jheap-XXXXXX.SUFFIX (TMPDIR else /tmp), into PATH (LEN bytes).
 * Returns its descriptor, or -1 with a message. */
int browser_temp_file(const char *suffix, char *path, size_t len, char *err, size_t errlen);

#endif

/*
 * dpkgowner: the Debian package that installed a file, and the line that
 * makes its debug symbols installable.
 *
 * Read from dpkg's own database (/var/lib/dpkg/info/PKG[:ARCH].list, one
 * installed path a line), never through dpkg or a shell.  Each list is
 * opened without following links, checked to be a regular file of at most
 * DPKGOWNER_MAX_LIST bytes and read whole; a path matches a line exactly,
 * or with /usr added or dropped in front (merged /usr: dpkg may list
 * /lib/x86_64-linux-gnu/libc.so.6 for /usr/lib/x86_64-linux-gnu/libc.so.6).
 */
#ifndef JHEAP_DPKGOWNER_H
#define JHEAP_DPKGOWNER_H

#include <stddef.h>

#define DPKGOWNER_MAX_LIST ((size_t)64 << 20)

/* The package (without ":ARCH") that lists PATH, into PKG[0..len); DB is
 * dpkg's info folder (NULL: /var/lib/dpkg/info, or $JHEAP_DPKG_INFO for
 * tests).  Returns 1 when found, 0 when not (or no dpkg database). */
int dpkgowner_find(const char *db, const char *path, char *pkg, size_t len);

/* The apt source line of Debian's debug archive for this system's
 * release (VERSION_CODENAME of /etc/os-release, else "RELEASE"), into
 * BUF: "deb http://deb.debian.org/debian-debug/ bookworm-debug main". */
void dpkgowner_debug_source(char *buf, size_t len);

#endif

/*
 * attachdir: where a process that jheap attached to writes its dump, so
 * that the process (perhaps another user's, perhaps hostile) cannot make
 * jheap (perhaps root) read or overwrite anything else.
 *
 * The dumps of process PID go to the folder jheap-PID in the current
 * folder (as jheap record's), made with mode 0700 and used only when it
 * is jheap's user's own folder closed to others (checked on the opened
 * folder, O_DIRECTORY|O_NOFOLLOW, not on its path).  The process writes
 * into a fresh subfolder with an unpredictable name inside it, which is
 * the process's user's only while the dump is written; then jheap takes
 * it back (fchown, fchmod 0700), so no name in it can change any more,
 * opens the file with O_NOFOLLOW|O_NONBLOCK and checks what it opened:
 * a regular file of the process's user with one link.  Only then is it
 * moved into jheap-PID as NAME.PID.SEQ.aSEQ.heap (mode 0600; root's when
 * jheap runs as root), never over an existing file, and the subfolder
 * removed.
 *
 * When the process runs as another user (jheap is root), jheap-PID is
 * made 0711 so that the process can reach its subfolder; when that user
 * cannot reach the current folder at all (a home folder closed to
 * others), a fresh folder /tmp/jheap-PID-XXXXXX is used instead.
 */
#ifndef JHEAP_ATTACHDIR_H
#define JHEAP_ATTACHDIR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct attachdir {
	pid_t pid;
	uid_t uid;                /* the process's user (file system uid) */
	gid_t gid;
	bool other;               /* not jheap's user */
	bool made;                /* the folder was made for this dump */
	int dirfd, subfd;
	char dir[PATH_MAX];       /* absolute */
	char sub[32];
	char target[PATH_MAX + 64];   /* the file name handed to prof.dump */
	char note[PATH_MAX + 2048];    /* said once: the folder changed */
};

/* Makes the folders for a dump of process PID; D->target is then the
 * file name the process must write.  Returns 0, or a negative JH_ code
 * with a message (a folder that is not private, another user's process
 * when jheap is not root). */
int attachdir_prepare(struct attachdir *d, pid_t pid, char *err, size_t errlen);

/* Takes the file back after the process wrote it and moves it into the
 * dump folder under its final name, NAME (the program's, escaped to
 * letters, digits and ._-+) .PID.SEQ.aSEQ.heap; PATH gets its absolute
 * path.  Returns 0 or a message. */
int attachdir_finish(struct attachdir *d, const char *name, char *path, size_t pathlen, char *err,
		     size_t errlen);

/* Removes the subfolder (and what the process left in it), and the
 * folder when it was made for this dump and holds none, and closes them;
 * after attachdir_finish or instead of it. */
void attachdir_release(struct attachdir *d);

#endif

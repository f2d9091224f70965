/*
 * privdir: folders that cross a user boundary, opened then checked.
 *
 * A dump folder is named to jemalloc by its path (prof_prefix), and a
 * program writes there by that path long after jheap looked at it; a
 * control socket lives in a folder that another process made.  What
 * jheap checks must be what is used, so a folder is opened first and its
 * owner and mode read from the descriptor (fstat), never from the path
 * (stat, then open, lets another user swap the folder in between).  And
 * a path that is used again later must lead to the same folder then: no
 * folder on the way may be one that another user can change (rename our
 * folder away and put theirs, or a link, in its place).
 *
 * The rule for the folders on the way (OpenSSH's for its files, with
 * /tmp's exception): each is owned by root or by the user, and no one
 * else may write in it, unless it is sticky (as /tmp and /var/tmp are:
 * there others may add names but not rename or remove ours).
 */
#ifndef JHEAP_PRIVDIR_H
#define JHEAP_PRIVDIR_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Opens the folder PATH (absolute) by walking it from "/", one component
 * at a time, following no link; every folder above it must pass the rule
 * above for user UID.  Returns a descriptor of the folder itself (read
 * only, close-on-exec; the caller closes it) with its status in *ST, or a
 * negative JH_ code with a message that names the component at fault:
 * JH_EIO when a component cannot be opened (a link, not a folder, gone),
 * JH_EUSAGE when a folder on the way is another user's or open to
 * others.  The folder itself is not judged: its rule is the caller's. */
int privdir_walk(const char *path, uid_t uid, struct stat *st, char *err, size_t errlen);

/* The path of the folder open on descriptor FD (from /proc/self/fd) into
 * OUT; 0, or -1 when it cannot be told. */
int privdir_fd_path(int fd, char *out, size_t len);

/* "mode 0755, owner 1000 (alice)" for messages. */
void privdir_describe(const struct stat *st, char *out, size_t len);

#endif

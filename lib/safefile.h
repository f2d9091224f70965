/*
 * safefile: opening a file whose name came from untrusted data.
 *
 * A profile names files (its maps, a pprof profile's source files) and so
 * does an object file (its .gnu_debuglink, its split-DWARF units).  Such a
 * name may point at a FIFO (open() blocks until a writer comes), a device
 * (/dev/zero never ends; opening a tape or a watchdog has side effects),
 * or a huge file.  These functions only ever open regular files: the path
 * is checked with stat() first (a special file is never opened), then
 * opened with O_NONBLOCK and checked again with fstat() on what was
 * opened, so a file swapped in between cannot block either.  Descriptors
 * are close-on-exec.
 */
#ifndef JHEAP_SAFEFILE_H
#define JHEAP_SAFEFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Opens PATH for reading when it is a regular file of at most MAX_SIZE
 * bytes (0: any size).  Returns the descriptor, or a negative JH_ code
 * with a message naming PATH in err: JH_EIO when it cannot be opened
 * (errno is kept, so a caller can tell EMFILE from ENOENT), JH_EFORMAT
 * when it is not a regular file (errno EINVAL), JH_ELIMIT when it is too
 * large (errno EFBIG). */
int safefile_open(const char *path, uint64_t max_size, char *err, size_t errlen);

/* Whether PATH names something that is there but is not a regular file
 * (a FIFO, a device, a socket, a folder): 1, else 0 (a regular file, or
 * nothing at all).  For the candidates a library would open itself. */
int safefile_is_special(const char *path);

/* Reads the whole regular file PATH (at most MAX_SIZE bytes, 0: any) into
 * a malloc'd, NUL-terminated buffer *BUF of *LEN bytes (the caller frees
 * it).  Returns 0, or a code and message as safefile_open(). */
int safefile_read(const char *path, uint64_t max_size, char **buf, size_t *len,
		  char *err, size_t errlen);

/* Reads at most LEN-1 bytes of the regular file PATH into BUF and ends
 * them with a NUL: for the small files of /proc, whose size says 0.
 * Returns the bytes read, or -1 (errno set) when PATH cannot be opened
 * or is not a regular file. */
ssize_t safefile_read_small(const char *path, char *buf, size_t len);

#endif

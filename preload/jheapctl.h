/*
 * jheapctl.h: the parts of jheap's control library (libjheapctl.so).
 *
 * jheapctl.c listens on the process's control socket and answers requests;
 * prof.c carries them out through jemalloc's mallctl; dumpfile.c makes
 * jemalloc's dump files.  Nothing here is exported from the library but
 * creat and creat64 (dumpfile.c): the program's own symbols stay
 * untouched.
 *
 * A reply is written into a caller's buffer: its first line is "ok ..." or
 * "error ...", any further lines are "name: value", and it ends with an
 * empty line (the protocol is described in jheapctl.c).
 */
#ifndef JHEAPCTL_H
#define JHEAPCTL_H

#include <stdbool.h>
#include <stddef.h>

#define JHEAPCTL_HIDDEN __attribute__((visibility("hidden")))

/* A growing reply in a fixed buffer; text past its end is dropped. */
struct reply {
	char *buf;
	size_t len, cap;
};

/* Appends printf-style text to R, cut at its capacity (always
 * NUL-terminated). */
JHEAPCTL_HIDDEN void reply_add(struct reply *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The commands, each writing its whole reply into R. */
JHEAPCTL_HIDDEN void prof_cmd_status(struct reply *r);
JHEAPCTL_HIDDEN void prof_cmd_dump(struct reply *r);
JHEAPCTL_HIDDEN void prof_cmd_active(struct reply *r, bool on);
/* prof.reset; LG >= 0 also sets the sample rate to 2^LG bytes. */
JHEAPCTL_HIDDEN void prof_cmd_reset(struct reply *r, long lg);

/* A periodic dump (JHEAP_CTL_EVERY): 0 when written, -1 when not (the
 * reason in R). */
JHEAPCTL_HIDDEN int prof_periodic_dump(struct reply *r);

/* Turns sampling off for the calling thread while the library starts its
 * own (pthread_create allocates the new thread's TLS table with malloc),
 * so that the library appears in no profile.  Only with a plain jemalloc
 * that the dynamic linker sees, the one that serves malloc: returns 0 with
 * the previous setting in *WAS for prof_quiet_end, or -1 when there is
 * nothing to turn off. */
JHEAPCTL_HIDDEN int prof_quiet_begin(bool *was);
JHEAPCTL_HIDDEN void prof_quiet_end(bool was);

/* Whether heap profiles can be had from this process: 0, or -1 with one
 * line in R saying why not (no jemalloc; one built without profiling;
 * prof:true not read from its MALLOC_CONF at start).  Looks mallctl up
 * (in the program first, as every command does) and initializes
 * jemalloc if nothing has yet; leaves the calling thread's sampling as
 * it was. */
JHEAPCTL_HIDDEN int prof_check_start(struct reply *r);

/* Forget the dump counts: the process is a new child of fork(). */
JHEAPCTL_HIDDEN void prof_after_fork(void);

/* The folder of the control socket (sockdir.c), made when missing: 0
 * with its path in DIR, or -1 with WHY ("DIR is not a private folder of
 * user ...", "cannot create ..."). */
JHEAPCTL_HIDDEN int sockdir_find(char *dir, size_t len, char *why, size_t whylen);

/* Reads JHEAP_CTL_DUMP_MODE (dumpfile.c): the mode dumps are made with. */
JHEAPCTL_HIDDEN void dumpfile_init(void);
/* From now on every dump of this process goes to /dev/null. */
JHEAPCTL_HIDDEN void dumpfile_discard(void);

/* The process family under jheap record (family.c), decided once in the
 * library's constructor: true when this process is recorded (the
 * recorded process, a child of its fork, or with --children any program
 * they start), false when it is a program a recorded process started
 * with exec, which jheap record does not follow: then its sampling is
 * off for good, its dumps go nowhere, it opens no socket and the
 * caller's own LD_PRELOAD and MALLOC_CONF are back in its environment.
 * Outside jheap record (no JHEAP_CTL_CHECK): true, and nothing
 * changed. */
JHEAPCTL_HIDDEN bool family_init(void);
/* In a child of fork (its handler): the caller's variables back, unless
 * --children. */
JHEAPCTL_HIDDEN void family_after_fork(void);

/* Sets the dump prefix to DIR/NAME (prof.prefix, jemalloc 5.3 and
 * later), DIR the folder of the prefix the process started with: 0, or -1
 * when this jemalloc cannot (the prefix then stays). */
JHEAPCTL_HIDDEN int prof_rename(const char *name);
/* Turns sampling off for the whole process, for good. */
JHEAPCTL_HIDDEN void prof_off_for_good(void);

/* Why the last dump file was refused ("" when it was not): a link, a
 * file of another user, ... (dumpfile.c). */
JHEAPCTL_HIDDEN const char *dumpfile_refused(void);
JHEAPCTL_HIDDEN void dumpfile_forget(void);
/* The path of the last dump made ("" before the first). */
JHEAPCTL_HIDDEN const char *dumpfile_last(void);

/* A dump now, as prof.dump writes it (PREFIX.PID.SEQ.mN.heap), for a
 * peak dump: 0 with its path in PATH, or -1 with the error reply in R. */
JHEAPCTL_HIDDEN int prof_dump_path(struct reply *r, char *path, size_t len);

/* The bytes the program has allocated (jemalloc's stats.allocated, after
 * an "epoch" refresh): 0, or -1 when jemalloc gives no such figure. */
JHEAPCTL_HIDDEN int prof_allocated(size_t *bytes);

/* Peak dumps (peaks.c): JHEAP_CTL_PEAKS and JHEAP_CTL_PEAKS_KEEP read at
 * start; when the control thread is to look next (now_ms() time), -1
 * when off; a look, at NOW; "peaks on|off"; the status lines; a new
 * child of fork() keeps none of its parent's. */
JHEAPCTL_HIDDEN void peaks_init(void);
JHEAPCTL_HIDDEN long peaks_next_ms(void);
JHEAPCTL_HIDDEN void peaks_tick(long now);
JHEAPCTL_HIDDEN void peaks_cmd(struct reply *r, bool on, long now);
JHEAPCTL_HIDDEN void peaks_status(struct reply *r);
JHEAPCTL_HIDDEN void peaks_after_fork(void);

/* jemalloc's leak summary (leakmsg.c): its messages pass through the
 * library, which copies the prof_leak summary into PREFIX.PID.leak. */
JHEAPCTL_HIDDEN void leakmsg_init(void);

/* The interval of periodic dumps in milliseconds, 0 when none. */
JHEAPCTL_HIDDEN extern long jheapctl_every_ms;

#endif

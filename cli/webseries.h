/*
 * webseries: the dumps of one program that the web UI's timeline shows,
 * in order: the PROFILE arguments when they are two or more dumps of one
 * process (jemalloc's names PREFIX.PID.SEQ.KIND.heap, one PREFIX.PID), a
 * dump folder given as the one PROFILE, or, with --pid=PID, the folder
 * where process PID (under jheap record, or with libjheapctl.so) writes
 * its dumps, watched for new ones.
 *
 * A folder is read through a descriptor: with --pid it must be the
 * user's own and writable by no one else, or sticky (as /tmp is); a file
 * is taken only when it is a regular file (never a link) of the user,
 * and, while watching, once its size has stayed the same for one look
 * (jemalloc writes a dump in place).  What the time-series analysis
 * (issue 27: peaks, --timeline) adds reads the same list.
 */
#ifndef JHEAP_WEBSERIES_H
#define JHEAP_WEBSERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct webseries_dump {
	char *path;
	long long seq;        /* jemalloc's sequence number, or the index */
	double mtime;         /* seconds since the epoch */
	long long size;       /* while watching: the size seen last */
};

struct webseries {
	struct webseries_dump *dumps;
	size_t n, cap;
	const char **paths;   /* dumps[].path, NULL-terminated, for driver_load */
	pid_t pid;            /* --pid, else 0 */
	int dirfd;            /* the folder watched or read, or -1 */
	char dir[4096];
	char stem[512];       /* "NAME.PID." of the files watched, or "" */
	struct webseries_dump *pending; /* seen once, size not yet stable */
	size_t npending, cap_pending;
};

/* Whether ARGS (N profiles, no --base) make a series; fills S when so.
 * Returns 1 (a series), 0 (not one: sum them as the command line does)
 * or a negative code with a message (a folder that cannot be read, or
 * holds no dump). */
int webseries_from_args(struct webseries *s, const char *const *args, size_t n, char *err,
			size_t errlen);

/* --pid=PID: asks the process where its dumps go, opens that folder and
 * takes the dumps of PID already there; when there is none, asks for one.
 * Returns 0 or a negative code with a message. */
int webseries_watch(struct webseries *s, pid_t pid, char *err, size_t errlen);

/* Looks for new complete dumps in the watched folder; returns how many
 * were added (in sequence order), 0, or a negative code. */
int webseries_poll(struct webseries *s, char *err, size_t errlen);

/* "dump now": asks process s->pid for a dump (jheap dump PID).  Returns 0
 * with its path in PATH, or a negative code with the message. */
int webseries_dump_now(struct webseries *s, char *path, size_t len, char *err, size_t errlen);

void webseries_release(struct webseries *s);

#endif

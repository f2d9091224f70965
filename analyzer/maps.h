/*
 * maps: the lines of /proc/PID/maps text, as jemalloc copies it into a
 * dump's MAPPED_LIBRARIES section, and the variables of pprof's legacy
 * memory maps.  The text parser (analyzer/parse.c) and the driver's
 * --symbols read maps lines with it; profile_map_kind()
 * (analyzer/profile.h) tells what a path names.
 */
#ifndef JHEAP_MAPS_H
#define JHEAP_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct maps_line {
	uint64_t start, end, offset;
	bool exec;            /* 'x' in the permissions */
	bool deleted;         /* path ended in " (deleted)" (removed from path) */
	const char *path;     /* points into the line; not NUL-terminated */
	size_t pathlen;       /* 0 for an anonymous mapping */
};

/* The variables of a memory map: "name=value" lines, whose "$name" the
 * maps lines after them stand for value (pprof's legacy profiles:
 * "source=/home" then "00400000-00fcb000: $source/server"; jeprof's
 * "build=" and "$build").  They point into the text they were read from. */
#define MAPS_MAX_VARS 16
#define MAPS_MAX_LINE 8192    /* bytes of a line once expanded */
struct maps_vars {
	struct maps_var { const char *name, *value; size_t nlen, vlen; } v[MAPS_MAX_VARS];
	int n;
};

/* Whether LINE (LEN bytes) is "name=value" (a name of letters, digits and
 * '_': no maps line is, their first field is "start-end"); records it in
 * VARS, its value as written (an overflow is ignored: its $name then
 * stays as it is, and the path names no file). */
bool maps_var(struct maps_vars *vars, const char *line, size_t len);

/* LINE with each "$name" of VARS replaced (the first defined that matches
 * at a place, as pprof does) into BUF (MAPS_MAX_LINE bytes); returns its
 * length, or SIZE_MAX when it would not fit. */
size_t maps_expand(const struct maps_vars *vars, const char *line, size_t len, char *buf);

/* Parses LINE[0..len).  Accepts the Linux form
 * "start-end perms offset dev inode [path]" (paths may contain spaces) and
 * the cooked "start-end: path" form.  Returns 0, or JH_EFORMAT with a
 * description of what was expected in err. */
int maps_parse_line(const char *line, size_t len, struct maps_line *out,
		    char *err, size_t errlen);

#endif

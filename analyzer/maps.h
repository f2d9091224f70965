/*
 * maps: reading one line of /proc/PID/maps text, as jemalloc copies it into
 * a dump's MAPPED_LIBRARIES section.  Part of the model's folder: the text
 * parser (analyzer/parse.c) and the driver's --symbols read maps lines with
 * it, and profile_map_kind() (analyzer/profile.h) tells what a path names.
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

/* Parses LINE[0..len).  Accepts the Linux form
 * "start-end perms offset dev inode [path]" (paths may contain spaces) and
 * the cooked "start-end: path" form.  Returns 0, or JH_EFORMAT with a
 * description of what was expected in err. */
int maps_parse_line(const char *line, size_t len, struct maps_line *out,
		    char *err, size_t errlen);

#endif

/*
 * webassets: the web UI's files (the .html, .js and .css files of web/), built into
 * the binary by scripts/embed.sh (a Makefile rule), so the UI needs no
 * network and no file beside jheap.
 */
#ifndef JHEAP_WEBASSETS_H
#define JHEAP_WEBASSETS_H

#include <stddef.h>

struct web_asset {
	const char *name;              /* the file's base name */
	const unsigned char *data;
	size_t len;
};

/* Every file, then an entry whose name is NULL. */
extern const struct web_asset web_assets[];

#endif

/*
 * symcache_demangle: C++ (Itanium) and Rust (legacy and v0) names through
 * libiberty, the demangler binutils uses, so names read like addr2line -C.
 */
#include "symbolize/symcache.h"

#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

/* Longer names are left mangled: libiberty's recursion limit guards depth,
 * this guards time on hostile input. */
#define DEMANGLE_MAX_LEN (256 * 1024)

char *symcache_demangle(const char *name)
{
	char buf[512], *copy = NULL, *res;
	size_t len;

	if (!name)
		return NULL;
	/* Itanium and legacy Rust start with _Z, Rust v0 with _R; anything
	 * else is a plain name (and libiberty's other styles must not get a
	 * chance to misread a C name). */
	if (!(name[0] == '_' && (name[1] == 'Z' || name[1] == 'R'))
	    && strncmp(name, "_GLOBAL_", 8) != 0)
		return NULL;
	/* A symbol version ("_ZdlPv@@GLIBCXX_3.4") is not part of the name. */
	len = strcspn(name, "@");
	if (len > DEMANGLE_MAX_LEN)
		return NULL;
	if (name[len]) {
		if (len < sizeof buf) {
			memcpy(buf, name, len);
			buf[len] = '\0';
			name = buf;
		} else {
			if (!(copy = strndup(name, len)))
				return NULL;
			name = copy;
		}
	}
	res = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	free(copy);
	return res;
}

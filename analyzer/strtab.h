/*
 * strtab: interned strings with dense ids, as in profile.proto's
 * string_table.  Id 0 is always the empty string.  The bytes live in large
 * blocks freed all at once by strtab_release(), so a string pointer stays
 * valid as long as the table.
 */
#ifndef JHEAP_STRTAB_H
#define JHEAP_STRTAB_H

#include <stddef.h>
#include <stdint.h>
#include "lib/idmap.h"

struct strtab_block;

struct strtab {
	struct strtab_ent { const char *s; uint32_t n; } *ents;  /* id -> string */
	size_t len, cap;
	struct idmap index;
	struct strtab_block *blocks;
};

int strtab_init(struct strtab *t);
void strtab_release(struct strtab *t);

/* Id of the string S[0..N) (need not be NUL-terminated), adding it when new.
 * Returns the id or a negative JH_ code. */
int64_t strtab_intern_n(struct strtab *t, const char *s, size_t n);
int64_t strtab_intern(struct strtab *t, const char *s);

/* Looks up without adding; UINT32_MAX when absent. */
uint32_t strtab_find(const struct strtab *t, const char *s);

static inline const char *strtab_get(const struct strtab *t, uint32_t id)
{
	return id < t->len ? t->ents[id].s : "";
}

#endif

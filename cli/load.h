/*
 * load: what the driver's two files share beyond driver.h, private to
 * them: cli/load.c (the load stage: driver_load() and its kin) and
 * cli/driver.c (the write stage: driver_write() and its kin).  Nothing
 * else includes it.
 */
#ifndef JHEAP_LOAD_H
#define JHEAP_LOAD_H

#include "cli/driver.h"

/* Callbacks of the stages below whose CTX is the driver's console
 * (struct console *): console_note() and console_warn(). */
void driver_note_line(void *ctx, const char *msg);
void driver_warn_line(void *ctx, const char *msg);

/* The program's name as reports show it: BINARY as typed, else the main
 * executable from the dump of P, else a symbolized profile's "binary=";
 * P's own strings. */
const char *driver_program_name(const struct profile *p, const char *binary);

/* The names reports give the profiles loaded (IN's shown_paths) freed. */
void driver_free_shown(struct driver_inputs *in);

#endif

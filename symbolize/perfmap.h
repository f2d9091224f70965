/*
 * perfmap: names of JIT-compiled code from a perf map file.
 *
 * Runtimes that compile code at run time into anonymous executable
 * memory (node --perf-basic-prof, Java's perf-map-agent, LuaJIT, .NET's
 * DOTNET_PerfMapEnabled, Python 3.12's -X perf) write
 * /tmp/perf-PID.map for profilers: one line per piece of code,
 * "START SIZE NAME", START and SIZE in hex (with or without 0x).  A
 * dump's frames in anonymous memory are named from it.
 *
 * The file is untrusted (it lies in /tmp, and any process can write
 * one): it is opened without following a link and without blocking,
 * read only when it is a regular file of at most PERFMAP_MAX_BYTES, and
 * only when its owner is the expected one (the dump's owner) unless the
 * user named it; lines are bounded (PERFMAP_MAX_LINE) and malformed ones
 * skipped.  Names are kept as text: every output escapes them.
 */
#ifndef JHEAP_PERFMAP_H
#define JHEAP_PERFMAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PERFMAP_MAX_BYTES ((size_t)256 << 20)
#define PERFMAP_MAX_LINE 65536

struct perfmap;

/* Reads PATH into *OUT.  OWNER: the uid the file must belong to, or
 * (uid_t)-1 for any (a file the user named).  Returns 0, or a negative
 * JH_ code with a message naming PATH (not found: JH_EIO and errno
 * ENOENT kept). */
int perfmap_open(const char *path, uid_t owner, struct perfmap **out, char *err, size_t errlen);

/* The perf map of the process that wrote the dump DUMP: DUMP.perf.map
 * beside it (a copy kept with the dump), else /tmp/perf-PID.map with
 * PID from the dump's name (jemalloc's PREFIX.PID.SEQ.x.heap: the first
 * part of the base name, after the first, made only of digits), each
 * only when it belongs to the dump's owner.  *OUT is NULL when there is
 * none; WHY gets a message when one exists but is not read.  Returns 0
 * or JH_ENOMEM. */
int perfmap_for_dump(const char *dump, struct perfmap **out, char *why, size_t whylen);

/* The name of the code that holds ADDR, or NULL.  Where entries overlap
 * (code freed and compiled again at the same place), the one written
 * last wins. */
const char *perfmap_lookup(const struct perfmap *m, uint64_t addr);

/* Entries read. */
size_t perfmap_count(const struct perfmap *m);

void perfmap_free(struct perfmap *m);

#endif

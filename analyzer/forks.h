/*
 * forks: which of the profiles summed in one report come from one
 * process image, so that the report can say what the sum counts twice.
 *
 * A pre-forking server (nginx's master and workers, PostgreSQL's
 * postmaster and backends, Apache, Redis's background saves) allocates its
 * configuration, caches and pools before fork; every child then holds the
 * same allocations, and each child's dump lists them with the same stacks.
 * A sum of the parent's and the children's dumps counts that memory once
 * per process, though the pages are shared until written.
 *
 * The rule: two profiles are of one process image when their main
 * program has the same path and is mapped at the same address, and every
 * shared library both map is mapped at the same address in both (and
 * they share at least one).  Linux randomizes where exec() puts the
 * program (when it is position-independent) and each library, afresh for
 * every exec (randomize_va_space, on by default); fork() copies the
 * layout.  So the same layout means fork: a parent and its children, two
 * children of one parent, or one process dumped twice (then the pid in
 * jemalloc's file name, NAME.PID.SEQ.KIND.heap, is the same).  A process
 * that exec'd after fork has a layout of its own.  The layout is what
 * the dumps themselves say, so the rule holds for dumps of processes long
 * gone and from other machines, where the pids in the names could have
 * been reused.  With randomization off (setarch -R, a debugger's
 * default) independent runs share one layout too; a program at
 * 0x555555554000, where the kernel puts a position-independent program
 * then, is therefore never taken as a relative.
 */
#ifndef JHEAP_FORKS_H
#define JHEAP_FORKS_H

#include <stddef.h>
#include <stdint.h>
#include "analyzer/profile.h"

struct forks_map {
	char *path;
	uint64_t start;
};

struct forks_entry {
	char *name;              /* the profile as the report names it */
	long pid;                /* from a jemalloc dump's name, else -1 */
	struct forks_map main;   /* path NULL: no main program known */
	struct forks_map *libs;  /* the other executable file mappings */
	size_t nlibs;
	size_t group;            /* forks_group(): its group's first entry */
};

struct forks {
	struct forks_entry *e;
	size_t n, cap;
};

void forks_init(struct forks *f);
void forks_release(struct forks *f);

/* Records the layout of P, read from the file NAME (its base name gives
 * the pid of a jemalloc dump).  Returns 0 or JH_ENOMEM. */
int forks_add(struct forks *f, const struct profile *p, const char *name);

/* The pid in a jemalloc dump's file name ("x/nginx.4242.0.m0.heap",
 * "jeprof.4242.3.f.heap.gz"), or -1. */
long forks_pid_of(const char *name);

/* Whether entries I and J are of one process image (the rule above). */
bool forks_related(const struct forks *f, size_t i, size_t j);

/* Groups the entries: after it, forks_group_of() gives each entry's
 * group (the index of its first member). */
void forks_group(struct forks *f);
size_t forks_group_of(const struct forks *f, size_t i);

#endif

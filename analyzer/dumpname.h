/*
 * dumpname: what a heap dump's file name says about it.
 *
 * jemalloc names its dumps PREFIX.PID.SEQ.KIND.heap (spec/jeprof-format.md
 * 1.1): SEQ one counter shared by every kind, KIND "f" (the dump at exit,
 * prof_final), "iN" (every 2^lg_prof_interval bytes allocated), "mN"
 * (asked for: prof.dump, jheap dump, jheap record --every), "uN" (a new
 * high-water mark of mapped memory, prof_gdump); jheap's control library
 * adds "pN" (a new peak of allocated bytes, jheap record --peaks).  A build
 * with prof_pid_namespace puts the namespace before the pid: it is then
 * part of PREFIX here, which changes nothing that is compared.
 *
 * Any other name ("slow.3.heap", "before-0007.prof") gives only a
 * sequence: its last run of digits, when it has one.  A ".gz" after the
 * name is looked through.
 */
#ifndef JHEAP_DUMPNAME_H
#define JHEAP_DUMPNAME_H

#include <stdbool.h>
#include <stddef.h>

struct dumpname {
	const char *base;     /* the file name without its folders (points into the path) */
	size_t prefix_len;    /* jemalloc's name: PREFIX is base[0, prefix_len) */
	long long pid;        /* -1 when the name has none */
	long long seq;        /* -1 when the name has none */
	char kind;            /* 'f', 'i', 'm', 'u', 'p', or 0 unknown */
	long long kseq;       /* the number after the kind letter; -1 none */
	bool jemalloc;        /* the name has jemalloc's whole shape */
};

/* Reads PATH's file name into DN (which points into PATH). */
void dumpname_parse(const char *path, struct dumpname *dn);

/* How reports call a dump of KIND: "interval", "manual", "at exit",
 * "high-water (prof_gdump)", "peak", or "" for an unknown kind. */
const char *dumpname_kind_word(char kind);

/* Whether a dump of KIND is one of a regular series (an interval or a
 * manual dump, or a name that does not say): the points --growth fits.
 * The dump at exit, peak and high-water dumps are of another kind: taken
 * when something happened, not at a steady pace. */
bool dumpname_regular(char kind);

/* Whether A and B are named as dumps of the same process: both
 * jemalloc's names with the same PREFIX and PID.  Names that do not have
 * jemalloc's shape say nothing (true). */
bool dumpname_same_process(const struct dumpname *a, const struct dumpname *b);

#endif

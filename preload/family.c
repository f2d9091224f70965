/*
 * family.c: which processes of a program recorded by jheap record are
 * recorded, and what their dumps are called.
 *
 * jheap record (cli/record.c) starts the program with LD_PRELOAD and
 * MALLOC_CONF set, and every process it starts inherits them: a perl
 * script's 44 children, a compiler driver's cc1plus and as, a server's
 * helper scripts would all be profiled, each writing dumps into the
 * folder, though only the program was asked for.  jheap record names its
 * process in JHEAP_CTL_CHECK (its pid) and keeps the caller's own values:
 * JHEAP_CTL_OLD_<VAR> is "=VALUE" when VAR was set, absent when it was
 * not, for LD_PRELOAD, MALLOC_CONF, JE_MALLOC_CONF and _RJEM_MALLOC_CONF.
 *
 * What is recorded:
 *   - The recorded process (pid JHEAP_CTL_CHECK), in every image it
 *     becomes: a script's shell or `env` may exec the program in the same
 *     process, and that one is the one asked for.
 *   - Its children by fork alone (nginx's workers, PostgreSQL's backends)
 *     are the same program and stay recorded.  Unless --children
 *     (JHEAP_CTL_CHILDREN), the library puts the caller's variables back
 *     in each such child as it starts (a fork handler), so that a program
 *     it then starts with exec loads neither jemalloc nor the library.
 *   - A program started otherwise (posix_spawn and vfork run no fork
 *     handler; glibc's system() uses them) loads both, finds its pid is
 *     not the recorded one and, unless --children, is not recorded: it
 *     puts the caller's variables back for its own children, turns
 *     sampling off for good, writes its dumps to /dev/null (dumpfile.c)
 *     and opens no socket.  It still allocates with jemalloc: a library
 *     cannot be unloaded from the process that loaded it.
 *   - Every recorded image under jheap record names its dumps after its
 *     own program (program_invocation_short_name, as jheap record names
 *     the first: cc1plus.PID.SEQ.KIND.heap, not g++.PID...) in the folder
 *     it was given, through jemalloc's prof.prefix (5.3 and later; an
 *     older jemalloc keeps the name it started with).
 *
 * The variables are put back by building a new environ array, not with
 * setenv: a fork handler runs in a child whose other threads are gone,
 * and one of them may have held the environment's lock.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload/jheapctl.h"

extern char *program_invocation_short_name;
extern char **environ;

static const char *const restored[] = { "LD_PRELOAD", "MALLOC_CONF", "JE_MALLOC_CONF",
					"_RJEM_MALLOC_CONF" };
#define NRESTORED (sizeof(restored) / sizeof(restored[0]))

/* Whether the environment entry E is VAR=... */
static bool is_var(const char *e, const char *var)
{
	size_t n = strlen(var);
	return !strncmp(e, var, n) && e[n] == '=';
}

/* The value of VAR in environ, without getenv (see above), or NULL. */
static const char *value_of(const char *var)
{
	for (char **e = environ; e && *e; e++)
		if (is_var(*e, var))
			return *e + strlen(var) + 1;
	return NULL;
}

/* Puts the caller's variables back and takes jheap record's away, in a
 * new environ array (the old one and its strings are left as they are:
 * a program may hold pointers into them). */
static void restore_environment(void)
{
	size_t n = 0;
	for (char **e = environ; e && *e; e++)
		n++;
	char **fresh = malloc((n + NRESTORED + 1) * sizeof(*fresh));
	if (!fresh)
		return;
	size_t k = 0;
	for (char **e = environ; e && *e; e++) {
		bool drop = !strncmp(*e, "JHEAP_CTL_", 10);
		for (size_t i = 0; i < NRESTORED && !drop; i++)
			drop = is_var(*e, restored[i]);
		if (!drop)
			fresh[k++] = *e;
	}
	for (size_t i = 0; i < NRESTORED; i++) {
		char name[64];
		snprintf(name, sizeof(name), "JHEAP_CTL_OLD_%s", restored[i]);
		const char *old = value_of(name);
		char *entry = NULL;
		if (old && old[0] == '=' && asprintf(&entry, "%s=%s", restored[i], old + 1) > 0)
			fresh[k++] = entry;
	}
	fresh[k] = NULL;
	environ = fresh;
}

/* The program's name as a dump's file name holds it (as jheap record
 * writes it: other bytes become '_'). */
static void dump_name(char *out, size_t len)
{
	const char *n = program_invocation_short_name;
	size_t i = 0;
	for (; n && n[i] && i + 1 < len; i++)
		out[i] = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-", n[i]) ?
			 n[i] : '_';
	out[i] = '\0';
}

/* Under jheap record, and not with --children: the caller's variables
 * go back in every child of fork. */
static bool strip_children;

bool family_init(void)
{
	const char *check = value_of("JHEAP_CTL_CHECK");
	if (!check || !*check)
		return true;   /* loaded by hand: every process is the user's choice */
	bool children = value_of("JHEAP_CTL_CHILDREN") != NULL;
	if (strtol(check, NULL, 10) != (long)getpid() && !children) {
		prof_off_for_good();
		dumpfile_discard();
		restore_environment();
		return false;
	}
	char name[256];
	dump_name(name, sizeof(name));
	if (name[0])
		prof_rename(name);
	strip_children = !children;
	return true;
}

void family_after_fork(void)
{
	if (strip_children) {
		strip_children = false;
		restore_environment();
	}
}

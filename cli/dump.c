/*
 * dump.c: `jheap dump PID [REPORT OPTIONS]` and `jheap ctl PID COMMAND`,
 * the commands that talk to a running program's control library
 * (cli/control.c does the talking) or, without one, attach to it
 * (cli/attachctl.c).
 *
 * `jheap dump PID` prints the new dump's path.  With any further argument
 * the dump is analyzed at once by the ordinary analysis: the command line
 * is handed back to main as "jheap ARGUMENTS -- DUMP".
 *
 * The answer is the process's, and the process may be another user's
 * (jheap run as root): the path it names is used only after
 * control_open_dump() has opened and checked it (one of its dumps, a
 * regular file of its user, no link), comes after "--" so no option
 * parser sees it (nor the URL reader: it is an absolute path), and is
 * read through the checked descriptor when someone else could swap the
 * file.  Every line of an answer is escaped before it is printed.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/attachctl.h"
#include "cli/control.h"
#include "cli/subcmd.h"
#include "lib/errors.h"
#include "lib/escape.h"

enum { EXIT_OK = 0, EXIT_DATA = 1, EXIT_USAGE = 2 };
enum { D_TIMEOUT, D_HELP };

/* The options of jheap dump and jheap ctl.  Keep in step with their
 * sections of man/jheap.1 (tests/t0010). */
static const struct subopt dump_options[] = {
	{ "timeout", 0, D_TIMEOUT, "SECONDS", "give up when the process has not answered in time (60)" },
	{ "help", 'h', D_HELP, NULL, "print this help and exit" },
};
#define NDUMP (sizeof(dump_options) / sizeof(dump_options[0]))

static void dump_help(FILE *out)
{
	fputs("Usage: jheap dump [OPTIONS] PID [REPORT OPTIONS] [BINARY]\n"
	      "Ask process PID for a heap dump now and print the dump's path.  The process\n"
	      "runs jheap's control library: it was started with 'jheap record', or with\n"
	      "LD_PRELOAD naming libjheapctl.so and MALLOC_CONF=prof:true.  Without it, jheap\n"
	      "attaches with ptrace and calls its jemalloc's mallctl on one thread (the\n"
	      "program was started with MALLOC_CONF=prof:true; the dump goes to ./jheap-PID/).\n"
	      "With any other argument (--text, --base=FILE --flamegraph -o FILE, ...) the\n"
	      "dump is analyzed at once, as 'jheap ARGUMENTS DUMP' would; its path then goes\n"
	      "to standard error.\n\n", out);
	subopt_help(out, dump_options, NDUMP);
	fputs("\nExit status: 0 success, 1 no dump (no such process, no answer, an error\n"
	      "in the process) or a data error of the report, 2 usage error.\n", out);
}

static void ctl_help(FILE *out)
{
	fputs("Usage: jheap ctl [OPTIONS] PID COMMAND\n"
	      "Control heap profiling in a running process, through jheap's control library\n"
	      "or, without it, by attaching with ptrace (see 'jheap dump --help').  Commands:\n"
	      "  on            sample allocations from now on (prof.active)\n"
	      "  off           stop sampling; dumps still show what was sampled before\n"
	      "  reset         forget every sample so far: later dumps show what is new\n"
	      "  sample SIZE   one sample per SIZE bytes on average (1 samples every\n"
	      "                allocation; a power of two); this also resets\n"
	      "  status        jemalloc, profiling state, sample rate, where dumps go\n"
	      "  dump          the same as 'jheap dump PID'\n"
	      "  peaks on|off  a dump at each new peak of the heap, 10% above the last\n"
	      "                (jheap record --peaks=RATIO sets another ratio), or none\n\n", out);
	subopt_help(out, dump_options, NDUMP);
	fputs("\nExit status: 0 success, 1 the process did not do it, 2 usage error.\n", out);
}

/* Parses the shared options out of ARGV (from index 1); the other
 * arguments go to REST in order.  Returns -1 to go on, else an exit status. */
static int parse(int argc, char **argv, const char *word, double *timeout,
		 char **rest, int *nrest, void (*help)(FILE *))
{
	char err[256];
	bool want_help = false;
	*timeout = 60;
	*nrest = 0;
	bool only_args = false;
	for (int i = 1; i < argc; i++) {
		const struct subopt *o;
		const char *val;
		int m = only_args ? 0 : subopt_match(dump_options, NDUMP, argc, argv, &i, &o, &val,
						      err, sizeof(err));
		if (m < 0) {
			fprintf(stderr, "jheap %s: %s\n", word, err);
			return EXIT_USAGE;
		}
		if (!m) {
			only_args |= !strcmp(argv[i], "--");
			rest[(*nrest)++] = argv[i];
			continue;
		}
		if (o->id == D_HELP) {
			want_help = true;
			continue;
		}
		char *end;
		*timeout = strtod(val, &end);
		if (*end || end == val || !(*timeout > 0 && *timeout <= 1e6)) {
			fprintf(stderr, "jheap %s: --timeout expects a number of seconds, not '%s'\n", word, val);
			return EXIT_USAGE;
		}
	}
	if (want_help) {
		help(stdout);
		return EXIT_OK;
	}
	return -1;
}

/* The PID argument, or a usage message (that also says how to analyze a
 * file named like the subcommand). */
static int need_pid(const char *word, int nrest, char **rest, pid_t *pid)
{
	if (nrest && !control_parse_pid(rest[0], pid))
		return 0;
	if (nrest)
		fprintf(stderr, "jheap %s: '%s' is not a process id; the process id comes first: jheap %s PID%s\n",
			word, rest[0], word, !strcmp(word, "dump") ? " [REPORT OPTIONS]" : " COMMAND");
	else
		fprintf(stderr, "jheap %s: which process? jheap %s PID%s\n", word, word,
			!strcmp(word, "dump") ? " [REPORT OPTIONS]" : " COMMAND");
	if (!access(word, F_OK))
		fprintf(stderr, "jheap: to analyze the file '%s', write ./%s (a subcommand's word comes first)\n",
			word, word);
	return EXIT_USAGE;
}

/* Prints the process's text TEXT to OUT, each line escaped (lib/escape.h):
 * a process's answer never reaches the terminal raw. */
static void print_escaped(const char *text, FILE *out)
{
	char line[16384];
	for (const char *p = text;;) {
		size_t n = strcspn(p, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)n, p);
		escape_fputs(line, false, out);
		fputc('\n', out);
		if (!p[n])
			break;
		p += n + 1;
	}
}

/* Asks PID for a dump and checks the answer: PATH gets what to read the
 * dump by, SHOWN its path as the process named it (see
 * control_open_dump()).  0, or an exit status after a message. */
static int take_dump(pid_t pid, double timeout, char *path, size_t pathlen, char *shown, size_t shownlen)
{
	char err[2048], note[1024];
	int rc = attachctl_request(pid, "dump", timeout, shown, shownlen, note, sizeof(note), err, sizeof(err));
	if (note[0])
		fprintf(stderr, "jheap: %s\n", note);
	/* a dump jheap attached for is in its own checked folder already */
	if (!rc && note[0] && snprintf(path, pathlen, "%s", shown) >= (int)pathlen)
		rc = jh_err(err, sizeof(err), JH_ELIMIT, "the dump's path is too long");
	else if (!rc && !note[0])
		rc = control_open_dump(pid, shown, path, pathlen, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "jheap: %s\n", err);
		return EXIT_DATA;
	}
	return EXIT_OK;
}

int dump_main(int argc, char **argv, int *new_argc, char ***new_argv)
{
	/* static: the new command line lives until the program exits */
	static char **analysis;
	static char path[PATH_MAX + 64];
	char shown[PATH_MAX + 64];
	char **rest = malloc((size_t)(argc + 3) * sizeof(*rest));
	int nrest, rc;
	double timeout;
	pid_t pid;
	if (!rest) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	if ((rc = parse(argc, argv, "dump", &timeout, rest, &nrest, dump_help)) >= 0 ||
	    (rc = need_pid("dump", nrest, rest, &pid)) ||
	    (rc = take_dump(pid, timeout, path, sizeof(path), shown, sizeof(shown)))) {
		free(rest);
		return rc;
	}
	if (nrest == 1) {
		print_escaped(shown, stdout);
		free(rest);
		return EXIT_OK;
	}
	/* jheap REPORT-OPTIONS... -- DUMP: the path is never an option */
	bool quiet = false, dashes = false;
	rest[0] = (*new_argv)[0];
	for (int i = 1; i < nrest; i++) {
		quiet |= !dashes && (!strcmp(rest[i], "-q") || !strcmp(rest[i], "--quiet"));
		dashes |= !strcmp(rest[i], "--");
	}
	if (!dashes)
		rest[nrest++] = "--";
	rest[nrest++] = path;
	rest[nrest] = NULL;
	if (!quiet) {
		fprintf(stderr, "jheap: process %d dumped its heap to ", (int)pid);
		print_escaped(shown, stderr);
	}
	free(analysis);
	analysis = rest;
	*new_argc = nrest;
	*new_argv = analysis;
	return -1;
}

int ctl_main(int argc, char **argv)
{
	char *rest[argc + 1];
	int nrest, rc;
	double timeout;
	pid_t pid;
	char err[1024], reply[16384], cmd[64];
	if ((rc = parse(argc, argv, "ctl", &timeout, rest, &nrest, ctl_help)) >= 0 ||
	    (rc = need_pid("ctl", nrest, rest, &pid)))
		return rc;
	const char *c = nrest > 1 ? rest[1] : "";
	unsigned long long size;
	if (nrest == 3 && !strcmp(c, "sample") && !subopt_size(rest[2], &size)) {
		int lg = subopt_lg(size);
		if (lg > 62) {
			fprintf(stderr, "jheap ctl: sample size '%s' is too large\n", rest[2]);
			return EXIT_USAGE;
		}
		snprintf(cmd, sizeof(cmd), "sample %d", lg);
	} else if (nrest == 3 && !strcmp(c, "peaks") && (!strcmp(rest[2], "on") || !strcmp(rest[2], "off"))) {
		snprintf(cmd, sizeof(cmd), "peaks %s", rest[2]);
	} else if (nrest == 2 && (!strcmp(c, "on") || !strcmp(c, "off") || !strcmp(c, "reset") ||
				  !strcmp(c, "status") || !strcmp(c, "dump"))) {
		snprintf(cmd, sizeof(cmd), "%s", c);
	} else {
		if (nrest == 3 && !strcmp(c, "sample"))
			fprintf(stderr, "jheap ctl: sample expects a size in bytes (1, 4096, 512K, 1M), not '%s'\n",
				rest[2]);
		else if (!strcmp(c, "peaks"))
			fprintf(stderr, "jheap ctl: peaks takes on or off\n");
		else
			fprintf(stderr, "jheap ctl: %s%s%s; the commands are on, off, reset, sample SIZE, status, dump and peaks on|off\n",
				*c ? "unknown command '" : "which command?", c, *c ? "'" : "");
		return EXIT_USAGE;
	}
	if (!strcmp(cmd, "dump")) {
		char path[PATH_MAX + 64];
		if ((rc = take_dump(pid, timeout, path, sizeof(path), reply, sizeof(reply))))
			return rc;
	} else {
		char note[1024];
		rc = attachctl_request(pid, cmd, timeout, reply, sizeof(reply), note, sizeof(note), err, sizeof(err));
		if (note[0])
			fprintf(stderr, "jheap: %s\n", note);
		if (rc) {
			fprintf(stderr, "jheap: %s\n", err);
			return EXIT_DATA;
		}
	}
	print_escaped(reply, stdout);
	return EXIT_OK;
}

/*
 * record.c: `jheap record [OPTIONS] [--] PROGRAM [ARGS...]`: runs a program
 * with jemalloc's heap profiler ready and jheap's control library
 * (preload/jheapctl.c) listening in it.
 *
 * jheap sets the environment and then replaces itself with the program
 * (execvp): the program keeps jheap's process id, so `$!`, the pid jheap
 * prints and `jheap dump PID` all name it, and signals and the exit status
 * are the program's own, with nothing in between.  The environment is
 * the caller's plus:
 *   LD_PRELOAD   Debian's libjemalloc.so.2, unless the program is linked
 *                with a jemalloc already, and libjheapctl.so
 *   MALLOC_CONF  prof:true and jheap's settings, after the caller's own
 *                MALLOC_CONF (jemalloc lets the later setting win); the
 *                same in JE_MALLOC_CONF or _RJEM_MALLOC_CONF for a program
 *                whose jemalloc has that prefix
 *   JHEAP_CTL_EVERY  seconds between periodic dumps (--every)
 *   JHEAP_CTL_PEAKS, JHEAP_CTL_PEAKS_KEEP  a dump at each new peak (--peaks,
 *                as a fraction: 0.1 for 10%), how many kept (--peaks-keep)
 *   JHEAP_CTL_CHECK  the program's pid: in that process (not in those it
 *                starts) the control library says at once when no
 *                profile can be had (no jemalloc, or one built without
 *                profiling, or one that did not read prof:true)
 *   JHEAP_CTL_DUMP_MODE  the mode of the dumps (--dump-mode, 0600)
 * Programs it starts inherit all of it, so they are profiled too, each
 * with its own socket and dumps named by its own pid.
 *
 * The dump folder.  jemalloc opens each dump by its path, with creat(),
 * long after jheap started the program: whoever can change the folder
 * then can make the program write where they like (a link named like
 * the next dump) or read the dumps (the program's whole memory map).  So
 * the folder is made private (0700) when missing, then opened (never
 * through a link) and checked on the descriptor: it must be the user's
 * own and closed to everybody else, and every folder above it one that
 * only root and the user may change (cli/privdir.h), else record refuses,
 * naming it, and writes nothing.  An existing folder passes only on the
 * same terms: a `jheap-PID` that someone else made first in a shared
 * folder is refused.  A daemon that drops root writes its dumps as its
 * own user: --dump-group=GROUP lets that group in (mode 0770), nobody
 * else.  The control library also makes every dump itself (it stands in
 * for jemalloc's creat(): preload/dumpfile.c), with the --dump-mode
 * mode (0600), never through a link nor into a file another user owns.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/privdir.h"
#include "cli/subcmd.h"

enum { EXIT_OK = 0, EXIT_DATA = 1, EXIT_USAGE = 2 };

enum {
	R_DIR, R_SAMPLE, R_EVERY, R_EVERY_BYTES, R_INACTIVE, R_ACCUM, R_NO_FINAL,
	R_JEMALLOC, R_MALLOC_CONF, R_DUMP_MODE, R_DUMP_GROUP, R_QUIET, R_HELP, R_PEAKS, R_PEAKS_KEEP,
	R_CHILDREN,
};

/* The options of jheap record.  Keep in step with its section of
 * man/jheap.1 (tests/t0010). */
static const struct subopt record_options[] = {
	{ "dir", 'd', R_DIR, "DIR", "write the dumps to DIR (default ./jheap-PID): a folder of yours closed to others, made (0700) when missing" },
	{ "sample", 0, R_SAMPLE, "SIZE", "one sample per SIZE bytes allocated on average (512K; 1: every allocation, which can make a program tens of times slower and its memory several times larger)" },
	{ "every", 0, R_EVERY, "TIME", "also dump every TIME (90, 500ms, 60s, 5m, 1h)" },
	{ "every-bytes", 0, R_EVERY_BYTES, "SIZE", "also dump every SIZE bytes allocated (jemalloc's lg_prof_interval)" },
	{ "peaks", 0, R_PEAKS, "[RATIO]", "also dump at each new peak of the heap, RATIO (10%) above the last peak dump, at most one a second" },
	{ "peaks-keep", 0, R_PEAKS_KEEP, "N", "keep at most N peak dumps (20; 1 to 64): the highest, and the others spread out" },
	{ "inactive", 0, R_INACTIVE, NULL, "start with sampling off; 'jheap ctl PID on' turns it on" },
	{ "accum", 0, R_ACCUM, NULL, "also keep the counts of freed allocations (prof_accum)" },
	{ "no-final", 0, R_NO_FINAL, NULL, "no dump when the program exits" },
	{ "jemalloc", 0, R_JEMALLOC, "PATH", "the libjemalloc.so to preload (default Debian's libjemalloc.so.2)" },
	{ "malloc-conf", 0, R_MALLOC_CONF, "CONF", "more jemalloc settings, added last (lg_prof_sample:0,...)" },
	{ "dump-mode", 0, R_DUMP_MODE, "MODE", "the dumps' mode, in octal (0600)" },
	{ "dump-group", 0, R_DUMP_GROUP, "GROUP", "let GROUP write in the dump folder (mode 0770): for a daemon that drops root" },
	{ "children", 0, R_CHILDREN, NULL, "also record the programs it starts with exec (by default only PROGRAM and its forks are)" },
	{ "quiet", 'q', R_QUIET, NULL, "say nothing before the program starts" },
	{ "help", 'h', R_HELP, NULL, "print this help and exit" },
};
#define NRECORD (sizeof(record_options) / sizeof(record_options[0]))

struct record {
	const char *dir, *jemalloc, *extra, *group_name, *mode_arg;
	int lg_sample, lg_interval;   /* lg_interval -1: none */
	double every;                 /* seconds, 0: none */
	double peaks;                 /* --peaks: the ratio as a fraction, 0: none */
	long peaks_keep;              /* 0: the library's default */
	unsigned dump_mode;
	gid_t group;                  /* with group_name */
	bool inactive, accum, no_final, quiet, help, children;
};

static void record_help(FILE *out)
{
	fputs("Usage: jheap record [OPTIONS] [--] PROGRAM [ARGS...]\n"
	      "Run PROGRAM with jemalloc's heap profiler ready and jheap's control library\n"
	      "in it: 'jheap dump PID' takes a dump at any time, 'jheap ctl PID on|off|reset'\n"
	      "steers the profiler.  Debian's libjemalloc.so.2 is preloaded unless PROGRAM\n"
	      "is linked with a jemalloc.  jheap becomes PROGRAM (same process id, signals\n"
	      "and exit status); it prints where the dumps go first.\n\n", out);
	subopt_help(out, record_options, NRECORD);
	fputs("\nExit status: PROGRAM's; 127 when it is not found, 126 when it cannot be run,\n"
	      "1 when profiling cannot be set up, 2 usage error.\n", out);
}

/* "90", "500ms", "60s", "5m", "1h" (also "min") to seconds; -1 when not. */
static double parse_time(const char *s)
{
	char *end;
	if ((*s < '0' || *s > '9') && *s != '.')
		return -1;
	double v = strtod(s, &end);
	if (!strcmp(end, "ms"))
		v /= 1000;
	else if (!strcmp(end, "m") || !strcmp(end, "min"))
		v *= 60;
	else if (!strcmp(end, "h"))
		v *= 3600;
	else if (*end && strcmp(end, "s"))
		return -1;
	return v >= 0.001 && v <= 1e7 ? v : -1;
}

static int apply(struct record *r, const struct subopt *o, const char *val)
{
	unsigned long long size;
	switch (o->id) {
	case R_DIR: r->dir = val; return 0;
	case R_SAMPLE:
	case R_EVERY_BYTES:
		if (subopt_size(val, &size) || subopt_lg(size) > 62) {
			fprintf(stderr, "jheap record: --%s expects a size in bytes (1, 4096, 512K, 1G), not '%s'\n",
				o->name, val);
			return EXIT_USAGE;
		}
		*(o->id == R_SAMPLE ? &r->lg_sample : &r->lg_interval) = subopt_lg(size);
		return 0;
	case R_PEAKS: {
		/* "10%", "0.1" (a fraction), nothing: 10% */
		char *end = NULL;
		double v = val ? strtod(val, &end) : 0.1;
		if (val && end && !strcmp(end, "%"))
			v /= 100;
		else if (val && (end == val || (end && *end)))
			v = -1;
		if (!(v >= 0.001 && v <= 100)) {
			fprintf(stderr, "jheap record: --peaks expects a ratio (10%%, 0.1, 50%%; 0.1%% to 10000%%), not '%s'\n", val);
			return EXIT_USAGE;
		}
		r->peaks = v;
		return 0;
	}
	case R_PEAKS_KEEP: {
		char *end;
		long n = strtol(val, &end, 10);
		if (*end || end == val || n < 1 || n > 64) {
			fprintf(stderr, "jheap record: --peaks-keep expects a number of dumps from 1 to 64, not '%s'\n", val);
			return EXIT_USAGE;
		}
		r->peaks_keep = n;
		return 0;
	}
	case R_EVERY:
		if ((r->every = parse_time(val)) < 0) {
			fprintf(stderr, "jheap record: --every expects a time (90, 500ms, 60s, 5m, 1h), not '%s'\n", val);
			return EXIT_USAGE;
		}
		return 0;
	case R_INACTIVE: r->inactive = true; return 0;
	case R_ACCUM: r->accum = true; return 0;
	case R_NO_FINAL: r->no_final = true; return 0;
	case R_DUMP_MODE: r->mode_arg = val; return 0;
	case R_DUMP_GROUP: r->group_name = val; return 0;
	case R_JEMALLOC: r->jemalloc = val; return 0;
	case R_MALLOC_CONF: r->extra = val; return 0;
	case R_QUIET: r->quiet = true; return 0;
	case R_CHILDREN: r->children = true; return 0;
	case R_HELP: r->help = true; return 0;
	}
	return 0;
}

/* --dump-mode and --dump-group, checked once --help is known not to be
 * asked for; 0 or a usage status after a message. */
static int check_dump_options(struct record *r)
{
	if (r->mode_arg) {
		char *end;
		const char *val = r->mode_arg;
		unsigned long m = strtoul(val, &end, 8);
		if (*end || end == val || *val == '-' || (m & ~0666UL) || (m & 0600) != 0600) {
			fprintf(stderr, "jheap record: --dump-mode expects a mode in octal with at most the read and write bits, the owner's both (0600, 0640, 0644), not '%s'\n",
				val);
			return EXIT_USAGE;
		}
		r->dump_mode = (unsigned)m;
	}
	if (r->group_name) {
		struct group *g = getgrnam(r->group_name);
		char *end;
		unsigned long id = strtoul(r->group_name, &end, 10);
		if (!g && (*end || end == r->group_name || !(g = getgrgid((gid_t)id)))) {
			fprintf(stderr, "jheap record: --dump-group: no group '%s'\n", r->group_name);
			return EXIT_USAGE;
		}
		r->group = g->gr_gid;
	}
	return 0;
}

/* PROGRAM as execvp finds it: a name with a slash as is, else the first
 * executable regular file of that name along $PATH. */
static bool find_program(const char *name, char *out, size_t len)
{
	struct stat st;
	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return !stat(out, &st);
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; p++) {
		const char *e = strchrnul(p, ':');
		int n = snprintf(out, len, "%.*s%s%s", (int)(e - p), p, e > p ? "/" : "", name);
		if (n > 0 && (size_t)n < len && !stat(out, &st) && S_ISREG(st.st_mode) &&
		    !access(out, X_OK))
			return true;
		if (!*e)
			return false;
		p = e;
	}
}

/* What the program's ELF file says about jemalloc and the dynamic loader. */
struct prog_info {
	bool elf;             /* an ELF file (else a script: nothing known) */
	bool dynamic;         /* has a PT_INTERP: LD_PRELOAD applies */
	bool jemalloc;        /* links a jemalloc (DT_NEEDED or a definition) */
	const char *prefix;   /* "je_" or "_rjem_" when that build is linked */
};

static void inspect(const char *path, struct prog_info *pi)
{
	static const char *const names[] = { "mallctl", "je_mallctl", "_rjem_mallctl" };
	memset(pi, 0, sizeof(*pi));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t nph = 0;
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &nph))
		goto out;
	pi->elf = true;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
			pi->dynamic = true;
	}
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)) || !sh.sh_entsize)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		if (sh.sh_type == SHT_DYNAMIC) {
			for (size_t i = 0; i < n; i++) {
				GElf_Dyn dyn;
				const char *s;
				if (gelf_getdyn(d, (int)i, &dyn) && dyn.d_tag == DT_NEEDED &&
				    (s = elf_strptr(e, sh.sh_link, dyn.d_un.d_val)) && strstr(s, "libjemalloc"))
					pi->jemalloc = true;
			}
		} else if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
			for (size_t i = 0; i < n; i++) {
				GElf_Sym sym;
				const char *s;
				if (!gelf_getsym(d, (int)i, &sym) || !(s = elf_strptr(e, sh.sh_link, sym.st_name)))
					continue;
				for (int k = 0; k < 3; k++) {
					if (strcmp(s, names[k]))
						continue;
					if (k)
						pi->prefix = k == 1 ? "je_" : "_rjem_";
					if (sym.st_shndx != SHN_UNDEF)
						pi->jemalloc = true;
				}
			}
		}
	}
out:
	elf_end(e);
	close(fd);
}

/* Debian's libjemalloc.so.2 (or another usual place). */
static const char *default_jemalloc(void)
{
	static const char *const cands[] = {
		"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
		"/usr/lib/i386-linux-gnu/libjemalloc.so.2", "/usr/lib/arm-linux-gnueabihf/libjemalloc.so.2",
		"/usr/lib/powerpc64le-linux-gnu/libjemalloc.so.2", "/usr/lib/s390x-linux-gnu/libjemalloc.so.2",
		"/usr/lib/riscv64-linux-gnu/libjemalloc.so.2", "/usr/lib64/libjemalloc.so.2",
		"/usr/lib/libjemalloc.so.2", "/usr/local/lib/libjemalloc.so.2",
	};
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (!access(cands[i], R_OK))
			return cands[i];
	return NULL;
}

/* libjheapctl.so beside jheap (the build tree) or in ../lib/jheap (an
 * installed jheap, as make install puts it). */
static bool find_ctl_library(char *out, size_t len)
{
	char exe[PATH_MAX], cand[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return false;
	exe[n] = '\0';
	char *dir = dirname(exe);
	const char *rel[] = { "libjheapctl.so", "../lib/jheap/libjheapctl.so" };
	for (int i = 0; i < 2; i++) {
		snprintf(cand, sizeof(cand), "%s/%s", dir, rel[i]);
		if (realpath(cand, out) && strlen(out) < len && !access(out, R_OK))
			return true;
	}
	return false;
}

/* The folders above DIR that are missing (mkdir -p), mode 0755: a
 * daemon's user must be able to pass them. */
static void make_parents(const char *dir)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return;
	char *last = strrchr(buf, '/');
	for (char *p = buf + 1; last && p < last; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		mkdir(buf, 0755);
		*p = '/';
	}
}

/* The dump folder (see the header comment): made when missing, then
 * opened and checked.  DIR gets its absolute path; *MADE says it was made
 * here.  Returns 0, or an exit status after a message. */
static int dump_folder(const struct record *r, pid_t pid, char *dir, size_t len, bool *made)
{
	char def[32], err[PATH_MAX + 512], what[160];
	snprintf(def, sizeof(def), "jheap-%d", (int)pid);
	const char *want = r->dir ? r->dir : def;
	uid_t uid = geteuid();
	*made = false;
	if (r->dir)
		make_parents(want);
	if (!mkdir(want, 0700))
		*made = true;
	else if (errno != EEXIST) {
		fprintf(stderr, "jheap record: cannot create the folder '%s': %s\n", want, strerror(errno));
		return EXIT_DATA;
	}
	int fd = open(want, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st, wst;
	if (fd < 0 || fstat(fd, &st)) {
		int e = errno;
		if (e == ELOOP || (!lstat(want, &st) && S_ISLNK(st.st_mode)))
			fprintf(stderr, "jheap record: '%s' is a symbolic link: dumps are written to a folder of yours, never through a link; nothing written\n",
				want);
		else
			fprintf(stderr, "jheap record: cannot open the folder '%s': %s\n", want, strerror(e));
		if (fd >= 0)
			close(fd);
		return EXIT_DATA;
	}
	int rc = EXIT_OK;
	if (*made && ((r->group_name && fchown(fd, (uid_t)-1, r->group)) ||
		      fchmod(fd, r->group_name ? 0770 : 0700) || fstat(fd, &st))) {
		fprintf(stderr, "jheap record: cannot give the folder '%s' to group %s: %s\n", want,
			r->group_name, strerror(errno));
		rc = EXIT_DATA;
		goto out;
	}
	bool group_ok = r->group_name && st.st_gid == r->group;
	if (st.st_uid != uid || (st.st_mode & 007) || ((st.st_mode & 070) && !group_ok) ||
	    (r->group_name && !group_ok)) {
		privdir_describe(&st, what, sizeof(what));
		fprintf(stderr, "jheap record: the folder '%s' is not %s (%s): %s; nothing written: remove it, or name another folder with --dir\n",
			want, r->group_name ? "yours and its group's alone" : "a private folder of yours", what,
			st.st_uid != uid ? "another user made it, and could read the dumps or put links in their place" :
			(r->group_name && !group_ok) ? "its group is not the one --dump-group names" :
			"others could read the dumps or put links in their place");
		rc = EXIT_DATA;
		goto out;
	}
	if (privdir_fd_path(fd, dir, len) && !realpath(want, dir)) {
		fprintf(stderr, "jheap record: cannot tell where the folder '%s' is: %s\n", want, strerror(errno));
		rc = EXIT_DATA;
		goto out;
	}
	int wfd = privdir_walk(dir, uid, &wst, err, sizeof(err));
	if (wfd < 0) {
		fprintf(stderr, "jheap record: %s; not writing dumps in '%s'\n", err, dir);
		rc = EXIT_DATA;
		goto out;
	}
	close(wfd);
	if (wst.st_dev != st.st_dev || wst.st_ino != st.st_ino) {
		fprintf(stderr, "jheap record: the folder '%s' was moved or replaced while jheap checked it; nothing written\n", dir);
		rc = EXIT_DATA;
	}
out:
	close(fd);
	if (rc && *made)
		rmdir(want);
	return rc;
}

static void human_size(char *out, size_t len, unsigned long long v)
{
	const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	int u = 0;
	while (v >= 1024 && !(v & 1023) && u < 6) {
		v >>= 10;
		u++;
	}
	snprintf(out, len, "%llu %s", v, unit[u]);
}

/* Adds NAME=VALUE to the environment; false when out of memory. */
static bool set(const char *name, const char *value)
{
	return !setenv(name, value, 1);
}

/* The caller's own values of the variables record changes, for the
 * control library to put back in the processes it does not follow
 * (preload/family.c): JHEAP_CTL_OLD_VAR is "=VALUE", or absent when VAR
 * was not set.  False when out of memory. */
static bool keep_callers(void)
{
	static const char *const vars[] = { "LD_PRELOAD", "MALLOC_CONF", "JE_MALLOC_CONF",
					    "_RJEM_MALLOC_CONF" };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		char name[64], *val = NULL;
		const char *old = getenv(vars[i]);
		snprintf(name, sizeof(name), "JHEAP_CTL_OLD_%s", vars[i]);
		if (!old) {
			unsetenv(name);
			continue;
		}
		bool ok = asprintf(&val, "=%s", old) > 0 && set(name, val);
		free(val);
		if (!ok)
			return false;
	}
	return true;
}

int record_main(int argc, char **argv)
{
	struct record r = { .lg_sample = 19, .lg_interval = -1, .dump_mode = 0600 };
	int i = 1;
	for (; i < argc; i++) {
		const char *a = argv[i], *val;
		const struct subopt *o;
		char err[256];
		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;
		int m = subopt_match(record_options, NRECORD, argc, argv, &i, &o, &val, err, sizeof(err));
		if (m < 0 || !m) {
			if (!m)
				fprintf(stderr, "jheap record: unknown option '%s' (the program's own options go after its name)\n", a);
			else
				fprintf(stderr, "jheap record: %s\n", err);
			fprintf(stderr, "Try 'jheap record --help' for more information.\n");
			return EXIT_USAGE;
		}
		if (apply(&r, o, val))
			return EXIT_USAGE;
	}
	if (r.help) {
		record_help(stdout);
		return EXIT_OK;
	}
	if (check_dump_options(&r))
		return EXIT_USAGE;
	if (i >= argc) {
		fprintf(stderr, "jheap record: which program? jheap record [OPTIONS] [--] PROGRAM [ARGS...]\n");
		if (!access("record", F_OK))
			fprintf(stderr, "jheap: to analyze the file 'record', write ./record (a subcommand's word comes first)\n");
		return EXIT_USAGE;
	}
	char **args = argv + i;
	const char *name = args[0];
	char prog[PATH_MAX], ctl[PATH_MAX], dir[PATH_MAX], buf[64];
	if (!find_program(name, prog, sizeof(prog))) {
		fprintf(stderr, "jheap record: cannot run '%s': %s\n", name,
			strchr(name, '/') ? strerror(errno) : "not found in PATH");
		return 127;
	}
	struct prog_info pi;
	inspect(prog, &pi);
	if (pi.elf && !pi.dynamic) {
		fprintf(stderr, "jheap record: '%s' is statically linked: the dynamic loader cannot load jheap's control library into it (LD_PRELOAD)\n",
			prog);
		return EXIT_DATA;
	}
	struct stat st;
	if (!stat(prog, &st) && (st.st_mode & (S_ISUID | S_ISGID)) && !r.quiet)
		fprintf(stderr, "jheap record: warning: '%s' is set-user-ID or set-group-ID: the dynamic loader may ignore LD_PRELOAD for it\n",
			prog);
	const char *jemalloc = NULL;
	if (!pi.jemalloc) {
		jemalloc = r.jemalloc ? r.jemalloc : default_jemalloc();
		if (!jemalloc || access(jemalloc, R_OK)) {
			fprintf(stderr, "jheap record: %s%s%s: install Debian's libjemalloc2, or name one with --jemalloc=PATH\n",
				jemalloc ? "cannot read '" : "no libjemalloc.so.2 found", jemalloc ? jemalloc : "",
				jemalloc ? "'" : "");
			return EXIT_DATA;
		}
	}
	if (!find_ctl_library(ctl, sizeof(ctl))) {
		fprintf(stderr, "jheap record: jheap's control library libjheapctl.so is not beside jheap nor in ../lib/jheap (make install puts it there)\n");
		return EXIT_DATA;
	}
	if (strpbrk(ctl, " :") || (jemalloc && strpbrk(jemalloc, " :"))) {
		fprintf(stderr, "jheap record: LD_PRELOAD cannot name '%s': the path holds a space or a colon\n",
			strpbrk(ctl, " :") ? ctl : jemalloc);
		return EXIT_DATA;
	}
	/* the dumps' folder, as an absolute path: the program may change its
	 * current folder (daemons do) before jemalloc opens a dump */
	pid_t pid = getpid();
	bool made;
	int frc = dump_folder(&r, pid, dir, sizeof(dir), &made);
	if (frc)
		return frc;
	if (strchr(dir, ',')) {
		fprintf(stderr, "jheap record: the folder '%s' has a comma, which MALLOC_CONF cannot hold\n", dir);
		if (made)
			rmdir(dir);
		return EXIT_USAGE;
	}
	/* dumps are DIR/NAME.PID.SEQ.KIND.heap, NAME the program's base name */
	char base[NAME_MAX + 1];
	const char *slash = strrchr(name, '/');
	snprintf(base, sizeof(base), "%s", slash ? slash + 1 : name);
	for (char *p = base; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+-", *p))
			*p = '_';
	const char *old_conf = getenv("MALLOC_CONF");
	char *conf = NULL, *preload = NULL;
	const char *old_preload = getenv("LD_PRELOAD");
	char interval[48] = "";
	if (r.lg_interval >= 0)
		snprintf(interval, sizeof(interval), ",lg_prof_interval:%d", r.lg_interval);
	bool ok = asprintf(&conf, "%s%sprof:true,prof_active:%s,lg_prof_sample:%d,prof_prefix:%s/%s,prof_final:%s%s%s%s%s",
			   old_conf && *old_conf ? old_conf : "", old_conf && *old_conf ? "," : "",
			   r.inactive ? "false" : "true", r.lg_sample, dir, base,
			   r.no_final ? "false" : "true", r.accum ? ",prof_accum:true" : "", interval,
			   r.extra ? "," : "", r.extra ? r.extra : "") > 0 &&
		  asprintf(&preload, "%s%s%s%s%s", jemalloc ? jemalloc : "", jemalloc ? ":" : "", ctl,
			   old_preload && *old_preload ? ":" : "", old_preload ? old_preload : "") > 0;
	char every[32], self[24], mode[16], peaks[32], keep[24];
	snprintf(peaks, sizeof(peaks), "%.6g", r.peaks);
	snprintf(keep, sizeof(keep), "%ld", r.peaks_keep);
	snprintf(every, sizeof(every), "%.3f", r.every);
	snprintf(mode, sizeof(mode), "%04o", r.dump_mode);
	snprintf(self, sizeof(self), "%d", (int)pid);
	ok = ok && keep_callers() &&
	     (r.children ? set("JHEAP_CTL_CHILDREN", "1") : !unsetenv("JHEAP_CTL_CHILDREN"));
	ok = ok && set("MALLOC_CONF", conf) && set("LD_PRELOAD", preload) && set("JHEAP_CTL_CHECK", self) &&
	     set("JHEAP_CTL_DUMP_MODE", mode) &&
	     (!pi.prefix || set(!strcmp(pi.prefix, "je_") ? "JE_MALLOC_CONF" : "_RJEM_MALLOC_CONF", conf)) &&
	     (r.every > 0 ? set("JHEAP_CTL_EVERY", every) : !unsetenv("JHEAP_CTL_EVERY")) &&
	     (r.peaks > 0 ? set("JHEAP_CTL_PEAKS", peaks) : !unsetenv("JHEAP_CTL_PEAKS")) &&
	     (r.peaks_keep ? set("JHEAP_CTL_PEAKS_KEEP", keep) : !unsetenv("JHEAP_CTL_PEAKS_KEEP"));
	if (!ok) {
		fprintf(stderr, "jheap: out of memory\n");
		return EXIT_DATA;
	}
	if (!r.quiet) {
		char rate[96] = "every allocation recorded";
		if (r.lg_sample) {
			human_size(buf, sizeof(buf), 1ULL << r.lg_sample);
			snprintf(rate, sizeof(rate), "one sample per %s", buf);
		}
		char off[64] = "";
		if (r.inactive)
			snprintf(off, sizeof(off), "; sampling off until 'jheap ctl %d on'", (int)pid);
		char with[PATH_MAX + 64];
		if (jemalloc)
			snprintf(with, sizeof(with), "%s preloaded", r.jemalloc ? r.jemalloc : "Debian's jemalloc");
		else if (pi.prefix)
			snprintf(with, sizeof(with), "its own jemalloc (%smallctl; settings in %s)", pi.prefix,
				 strcmp(pi.prefix, "je_") ? "_RJEM_MALLOC_CONF" : "JE_MALLOC_CONF");
		else
			snprintf(with, sizeof(with), "its own jemalloc");
		fprintf(stderr, "jheap: recording process %d (%s) with %s; %s%s\n", (int)pid, base,
			with, rate, off);
		if (!r.lg_sample)
			fprintf(stderr, "jheap: note: --sample=1 takes the stack of every allocation: a program that allocates often runs many times slower (a sqlite3 job of 0.5 s took 7 s, one of 9 s over 300 s) and jemalloc keeps a record of every distinct stack; --sample=4K costs little and misses only rare small allocations\n");
		char when[160] = "";
		if (r.every > 0)
			snprintf(when, sizeof(when), "every %g s, ", r.every);
		if (r.peaks > 0)
			snprintf(when + strlen(when), sizeof(when) - strlen(when), "at new peaks (+%g%%), ",
				 r.peaks * 100);
		if (r.lg_interval >= 0) {
			human_size(buf, sizeof(buf), 1ULL << r.lg_interval);
			snprintf(when + strlen(when), sizeof(when) - strlen(when), "every %s allocated, ", buf);
		}
		fprintf(stderr, "jheap: dumps go to %s/ (%s.%d.*.heap): %s%son 'jheap dump %d'\n", dir, base,
			(int)pid, when, r.no_final ? "" : "at exit, ", (int)pid);
	}
	fflush(stdout);
	fflush(stderr);
	execvp(name, args);
	int e = errno;
	fprintf(stderr, "jheap record: cannot run '%s': %s\n", prog, strerror(e));
	if (made)
		rmdir(dir);
	free(conf);
	free(preload);
	return e == ENOENT ? 127 : 126;
}

/*
 * symfixtures: what the symbolizer's unit tests share (test_symcache.c,
 * test_cuindex.c): the object files tests/unit/build-fixtures.sh
 * compiles at test time, found or built, and small ELF helpers to check
 * answers against.
 *
 *   TEST [FIXTURE_DIR]   the tests run on the fixtures in FIXTURE_DIR or
 *                        $JHEAP_FIXTURES, else in a temporary dir.  Run
 *                        from the repository root, missing or stale
 *                        fixtures are built there first; the tests that
 *                        need them are skipped when there are none.
 */
#ifndef JHEAP_SYMFIXTURES_H
#define JHEAP_SYMFIXTURES_H

#include <elf.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char fx[1024];

static inline const char *str(const char *s)
{
	return s ? s : "(null)";
}

static inline const char *fxpath(const char *name)
{
	static char buf[8][4096];
	static int i;
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof buf[i], "%s/%s", fx, name);
	return buf[i];
}

static inline int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

/* Symbol NAME's value and size from .symtab (or .dynsym) of PATH. */
static inline int find_sym(const char *path, const char *name, uint64_t *val, uint64_t *size)
{
	int fd = open(path, O_RDONLY), found = 0;
	if (fd < 0)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	for (int pass = 0; elf && pass < 2 && !found; pass++) {
		Elf_Scn *scn = NULL;
		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh)
			    || sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
				continue;
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; d && i < n; i++) {
				GElf_Sym s;
				const char *nm;
				if (gelf_getsym(d, (int)i, &s) && s.st_value
				    && (nm = elf_strptr(elf, sh.sh_link, s.st_name))
				    && strcmp(nm, name) == 0) {
					*val = s.st_value;
					*size = s.st_size;
					found = 1;
					break;
				}
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static inline int find_section(const char *path, const char *name, uint64_t *addr, uint64_t *size)
{
	int fd = open(path, O_RDONLY), found = 0;
	if (fd < 0)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0)
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *nm;
			if (gelf_getshdr(scn, &sh) && (nm = elf_strptr(elf, shstrndx, sh.sh_name))
			    && strcmp(nm, name) == 0) {
				*addr = sh.sh_addr;
				*size = sh.sh_size;
				found = 1;
				break;
			}
		}
	elf_end(elf);
	close(fd);
	return found;
}

/* Line number of the line of fixture source SRC holding "MARK:<mark>". */
static inline int mark_line(const char *src, const char *mark)
{
	char line[1024], want[128];
	int n = 0, found = 0;
	FILE *f = fopen(fxpath(src), "r");
	snprintf(want, sizeof want, "MARK:%s", mark);
	while (f && fgets(line, sizeof line, f)) {
		n++;
		char *p = strstr(line, want);
		if (p && !(p[strlen(want)] >= 'a' && p[strlen(want)] <= 'z')
		    && p[strlen(want)] != '_') {
			found = n;
			break;
		}
	}
	if (f)
		fclose(f);
	return found;
}

static inline int ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);
	return s && a >= b && strcmp(s + a - b, suffix) == 0;
}

static inline int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(p);
}

static inline int build_fixtures(const char *dir)
{
	const char *script = "tests/unit/build-fixtures.sh";
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 1);
		execlp("sh", "sh", script, dir, (char *)NULL);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Whether DIR needs (re)building: no stamp, or a fixture source newer. */
static inline int fixtures_stale(const char *dir)
{
	static const char *const srcs[] = {
		"tests/unit/build-fixtures.sh", "testdata/unit/fix_c.c",
		"testdata/unit/fix_cxx.cc", "testdata/unit/fix_lib.c",
		"testdata/unit/fix_many.c",
	};
	char stamp[1100];
	struct stat st, ss;

	snprintf(stamp, sizeof stamp, "%s/.built", dir);
	if (stat(stamp, &st) != 0)
		return 1;
	for (size_t i = 0; i < sizeof srcs / sizeof srcs[0]; i++)
		if (stat(srcs[i], &ss) == 0 && ss.st_mtime > st.st_mtime)
			return 1;
	return 0;
}

/* The fixtures' folder into fx (argv[1], $JHEAP_FIXTURES or a new
 * temporary folder, in TMP: *MADE then says to remove it with
 * fixtures_done), built when missing or stale; fx[0] is 0 when there are
 * none. */
static inline void fixtures_find(int argc, char **argv, char *tmp, int *made)
{
	*made = 0;
	elf_version(EV_CURRENT);
	if (argc > 1)
		snprintf(fx, sizeof fx, "%s", argv[1]);
	else if (getenv("JHEAP_FIXTURES"))
		snprintf(fx, sizeof fx, "%s", getenv("JHEAP_FIXTURES"));
	else if (mkdtemp(tmp)) {
		*made = 1;
		snprintf(fx, sizeof fx, "%s", tmp);
	}
	/* A named dir is built (or rebuilt after a source change) when the
	 * script is at hand, i.e. when run from the repository root. */
	if (fx[0] && exists("tests/unit/build-fixtures.sh") && fixtures_stale(fx)
	    && build_fixtures(fx) != 0)
		fprintf(stderr, "building fixtures into %s failed\n", fx);
	if (fx[0] && !exists(fxpath("c_O0")))
		fx[0] = '\0';
}

/* Removes the temporary folder fixtures_find() made. */
static inline void fixtures_done(const char *tmp, int made)
{
	if (made)
		nftw(tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#define FIXTURES_SKIP_LINE "SKIP: no fixtures (run tests/unit/build-fixtures.sh DIR; pass DIR)\n"

#endif

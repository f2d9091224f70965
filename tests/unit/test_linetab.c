/*
 * Unit tests for symbolize/linetab.c: the decoder against libdw.
 *
 *   test_linetab [FIXTURE_DIR] [BINARY...]
 *
 * On every unit of the fixtures (tests/unit/build-fixtures.sh, in
 * FIXTURE_DIR or $JHEAP_FIXTURES) and of every BINARY (and of those in
 * $JHEAP_LINETAB_BINARIES, colon-separated; by default the benchmark
 * program next to the fixtures, $(BUILD)/bench/prog/benchprog, when it has
 * been built), the rows linetab reads must be dwarf_getsrclines' rows, in
 * the same order with the same address, end flag, line, column and file
 * name, and its file table must be dwarf_getsrcfiles'; cuindex must answer
 * every row's address the same either way; and the fixtures (and the
 * benchmark program) must not need the libdw fallback, split units aside,
 * which must take it.
 *
 * Then the line programs of real units are damaged (the unit's length or
 * the section cut short, single bytes flipped, and random bytes set over
 * $JHEAP_LINETAB_RANDOM rounds): linetab must decline each or read it as
 * libdw reads it, and never read past the unit (the table is moved to the
 * end of its buffer, so that ASan sees such a read).  Two more cases come
 * from edited copies of fixtures: a DWARF 4 unit without DW_AT_comp_dir,
 * and two units sharing one line table with different comp_dirs.
 */
#include "symbolize/cumap.h"
#include "symbolize/linetab.h"
#include "tests/unit/unit.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

static char fx[1024];

static const char *fxpath(const char *name)
{
	static char buf[4][4096];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof buf[i], "%s/%s", fx, name);
	return buf[i];
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0;
}

static const char *str(const char *s)
{
	return s ? s : "(null)";
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static const char *comp_dir_of(Dwarf_Die *cudie)
{
	Dwarf_Attribute a;
	return dwarf_formstring(dwarf_attr(cudie, DW_AT_comp_dir, &a));
}

struct stats {
	size_t units, own, declined, rows, files;
	const char *why;        /* the first reason to decline */
};

/* linetab against dwarf_getsrclines and dwarf_getsrcfiles on one unit.
 * Returns 1 when linetab read it, 0 when it declined. */
static int compare_unit(Dwarf_Die *cudie, const char *what, struct stats *st)
{
	struct linetab lt;
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	size_t n, nf, bad = 0;

	if (linetab_read(&lt, cudie, comp_dir_of(cudie)) != 0) {
		CHECK(lt.why != NULL && lt.rows == NULL && lt.files == NULL);
		if (st && !st->why)
			st->why = lt.why;
		return 0;
	}
	/* what linetab accepts, libdw must accept */
	if (dwarf_getsrclines(cudie, &lines, &n) != 0
	    || dwarf_getsrcfiles(cudie, &files, &nf) != 0) {
		fprintf(stderr, "%s: linetab read a table libdw refuses: %s\n", what,
			dwarf_errmsg(-1));
		CHECK(0);
		linetab_release(&lt);
		return 1;
	}
	CHECK_INT(lt.nrows, n);
	CHECK_INT(lt.nfiles, nf);
	for (size_t i = 0; i < n && i < lt.nrows; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr = 0;
		bool end = false;
		int line = 0, col = 0;
		dwarf_lineaddr(l, &addr);
		dwarf_lineendsequence(l, &end);
		dwarf_lineno(l, &line);
		dwarf_linecol(l, &col);
		const char *f = dwarf_linesrc(l, NULL, NULL);
		const struct linetab_row *r = &lt.rows[i];
		const char *g = r->file < lt.nfiles ? lt.files[r->file] : NULL;
		if (r->file >= lt.nfiles && r->file != LINETAB_NOFILE)
			bad++;
		if (r->addr != addr || r->end != end || r->line != line || r->column != col
		    || !same(f, g)) {
			if (bad++ < 5)
				fprintf(stderr, "%s: row %zu: libdw %#llx%s %s:%d:%d, "
					"linetab %#llx%s %s:%d:%d\n", what, i,
					(unsigned long long)addr, end ? " end" : "", str(f),
					line, col, (unsigned long long)r->addr,
					r->end ? " end" : "", str(g), r->line, r->column);
		}
	}
	for (size_t i = 0; i < nf && i < lt.nfiles; i++) {
		const char *f = dwarf_filesrc(files, i, NULL, NULL);
		if (!same(f, lt.files[i]) && bad++ < 5)
			fprintf(stderr, "%s: file %zu: libdw %s, linetab %s\n", what, i, str(f),
				str(lt.files[i]));
	}
	CHECK_INT(bad, 0);
	if (st) {
		st->rows += lt.nrows;
		st->files += lt.nfiles;
	}
	linetab_release(&lt);
	CHECK(lt.rows == NULL && lt.files == NULL && lt.nrows == 0);
	return 1;
}

/* The executable PT_LOAD ranges of ELF, as symcache gives cuindex. */
static size_t exec_ranges(Elf *elf, struct cuindex_range *v, size_t max)
{
	size_t nph, n = 0;

	if (elf_getphdrnum(elf, &nph) != 0)
		return 0;
	for (size_t i = 0; i < nph && n < max; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			v[n++] = (struct cuindex_range){ ph.p_vaddr, ph.p_vaddr + ph.p_memsz };
	}
	return n;
}

/* PATH's DWARF and its executable ranges into VALID (at most 16), or
 * NULL (nothing left open); the caller ends it with close_dwarf(). */
static Dwarf *open_dwarf(const char *path, int *fd, struct cuindex_range *valid,
			 size_t *nvalid)
{
	*fd = open(path, O_RDONLY);
	Dwarf *dw = *fd >= 0 ? dwarf_begin(*fd, DWARF_C_READ) : NULL;

	if (!dw) {
		if (*fd >= 0)
			close(*fd);
		return NULL;
	}
	*nvalid = exec_ranges(dwarf_getelf(dw), valid, 16);
	return dw;
}

static void close_dwarf(Dwarf *dw, int fd)
{
	dwarf_end(dw);
	close(fd);
}

static void compare_line(const char *what, uint64_t pc, struct cuindex *own,
			 struct cuindex *ref, size_t *bad)
{
	struct cuindex_line a = { 0 }, b = { 0 };
	int ra = cuindex_line(own, pc, &a), rb = cuindex_line(ref, pc, &b);

	if (ra != rb || (ra == 0 && (!same(a.file, b.file) || a.line != b.line
				     || a.column != b.column))) {
		if ((*bad)++ < 5)
			fprintf(stderr, "%s: pc %#llx: libdw %d %s:%d:%d, linetab %d %s:%d:%d\n",
				what, (unsigned long long)pc, rb, str(b.file), b.line, b.column,
				ra, str(a.file), a.line, a.column);
	}
}

/* cuindex_line and cuindex_file with linetab against the same through
 * libdw, at every row's address and its neighbours. */
static void compare_cuindex(Dwarf_Die *cudie, const char *what,
			    const struct cuindex_range *valid, size_t nvalid, int want_own)
{
	Dwarf_Lines *lines;
	size_t n = 0, bad = 0;

	cuindex_set_libdw_lines(1);
	struct cuindex *ref = cuindex_new(cudie, valid, nvalid);
	cuindex_set_libdw_lines(0);
	struct cuindex *own = cuindex_new(cudie, valid, nvalid);
	CHECK(ref && own);
	if (!ref || !own)
		goto out;
	CHECK_INT(cuindex_lines_own(ref), 0);
	CHECK_INT(cuindex_lines_own(own), want_own);
	if (dwarf_getsrclines(cudie, &lines, &n) != 0)
		n = 0;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Addr a = 0;
		dwarf_lineaddr(dwarf_onesrcline(lines, i), &a);
		compare_line(what, a - 1, own, ref, &bad);
		compare_line(what, a, own, ref, &bad);
		compare_line(what, a + 1, own, ref, &bad);
	}
	Dwarf_Files *files;
	size_t nf = 0;
	if (dwarf_getsrcfiles(cudie, &files, &nf) != 0)
		nf = 0;
	for (size_t i = 0; i < nf + 2; i++)
		if (!same(cuindex_file(own, i), cuindex_file(ref, i)) && bad++ < 5)
			fprintf(stderr, "%s: cuindex_file %zu: libdw %s, linetab %s\n", what, i,
				str(cuindex_file(ref, i)), str(cuindex_file(own, i)));
	CHECK_INT(bad, 0);
out:
	cuindex_free(own);
	cuindex_free(ref);
}

/* ---- line tables read by sequence ---- */

struct seqstats {
	size_t units, with_seqs, seqs, pcs, bad;
};

/* The index of CUDIE with its lines read by sequence (as a later run does
 * from the persistent cache) against the whole table read at once: the
 * same answer at every row's address and its neighbours, at each end of
 * every sequence, and the same file names; every sequence decodes as
 * described (the index never falls back to the whole table). */
static void compare_seqs(Dwarf_Die *cudie, const char *what, const struct cuindex_range *valid,
			 size_t nvalid, struct seqstats *st)
{
	struct cuindex *full = cuindex_new(cudie, valid, nvalid);
	size_t n = full ? cuindex_seqs(full, NULL, 0) : 0, bad = 0;
	struct cuindex_seq *seqs = n ? malloc(n * sizeof *seqs) : NULL;
	struct cuindex *lazy = NULL;
	Dwarf_Lines *lines;
	size_t nl = 0;

	st->units++;
	if (!n || !seqs)
		goto out;
	cuindex_seqs(full, seqs, n);
	st->with_seqs++;
	st->seqs += n;
	lazy = cuindex_new_seqs(cudie, valid, nvalid, seqs, n);
	CHECK(lazy != NULL);
	if (!lazy)
		goto out;
	CHECK_INT(cuindex_lines_lazy(lazy), 1);
	if (dwarf_getsrclines(cudie, &lines, &nl) != 0)
		nl = 0;
	for (size_t i = 0; i < nl; i++) {
		Dwarf_Addr a = 0;
		dwarf_lineaddr(dwarf_onesrcline(lines, i), &a);
		for (int d = -1; d <= 1; d++)
			compare_line(what, a + (uint64_t)d, lazy, full, &bad);
		st->pcs += 3;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t at[] = { seqs[i].lo - 1, seqs[i].lo, seqs[i].hi - 1, seqs[i].hi,
				  seqs[i].hi + 1, seqs[i].hi + 16 };
		for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
			compare_line(what, at[k], lazy, full, &bad);
		st->pcs += sizeof at / sizeof at[0];
	}
	for (size_t i = 0; i < 4096; i++) {
		const char *a = cuindex_file(lazy, i), *b = cuindex_file(full, i);
		if (!a && !b)
			break;
		if (!same(a, b) && bad++ < 5)
			fprintf(stderr, "%s: cuindex_file %zu: whole %s, by sequence %s\n", what, i,
				str(b), str(a));
	}
	CHECK_INT(cuindex_lines_lazy(lazy), 1);
	CHECK_INT(bad, 0);
	st->bad += bad;
out:
	free(seqs);
	cuindex_free(lazy);
	cuindex_free(full);
}

/* compare_seqs on every compile unit of PATH.  Returns how many units
 * could be read by sequence. */
static size_t check_seqs(const char *path, int quiet)
{
	struct seqstats st = { 0 };
	struct cuindex_range valid[16];
	size_t nvalid;
	int fd;
	Dwarf *dw = open_dwarf(path, &fd, valid, &nvalid);

	if (!dw)
		return 0;
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie, subdie;
	while (dwarf_get_units(dw, cu, &next, &version, &type, &cudie, &subdie) == 0) {
		cu = next;
		if (type == DW_UT_compile || type == DW_UT_partial)
			compare_seqs(&cudie, path, valid, nvalid, &st);
	}
	if (!quiet)
		printf("%s: %zu units, %zu read by sequence (%zu sequences), %zu pcs compared\n",
		       path, st.units, st.with_seqs, st.seqs, st.pcs);
	close_dwarf(dw, fd);
	return st.with_seqs;
}

static size_t debug_files_units;
static size_t debug_files_n;

static int seqs_debug_file(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_F && S_ISREG(sb->st_mode) && strstr(path, ".debug")) {
		debug_files_units += check_seqs(path, 1);
		debug_files_n++;
	}
	return 0;
}

/* The fixtures, the installed debug files and the benchmark program
 * (when built): most of gcc's units can be read by sequence, and every
 * one that can gives the answers of its whole table. */
TEST(test_seqs)
{
	static const char *const files[] = {
		"c_O0", "c_O0_dw4", "c_nopie", "cxx_gcc", "cxx_gcc4", "cxx_clang",
		"cxx_clang4", "lib.so", "c_many", "c_two", "dl/cxx_link.debug",
	};
	size_t units = 0;
	char bench[1100];

	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		if (exists(fxpath(files[i])))
			units += check_seqs(fxpath(files[i]), 0);
	CHECK(units >= 7);
	if (exists("/usr/lib/debug/.build-id")) {
		nftw("/usr/lib/debug/.build-id", seqs_debug_file, 16, FTW_PHYS);
		printf("/usr/lib/debug: %zu files, %zu units read by sequence\n", debug_files_n,
		       debug_files_units);
	}
	snprintf(bench, sizeof bench, "%s/../bench/prog/benchprog", fx);
	if (exists(bench))
		CHECK(check_seqs(bench, 0) > 0);
}

/* Every unit of PATH.  MUST_OWN: linetab may not decline any (split units
 * aside, which it must decline).  WITH_INDEX: compare through cuindex too. */
static void check_binary(const char *path, int must_own, int with_index)
{
	struct stats st = { 0 };
	size_t split = 0, nvalid;
	struct cuindex_range valid[16];
	int fd;
	Dwarf *dw = open_dwarf(path, &fd, valid, &nvalid);

	CHECK(dw != NULL);
	if (!dw) {
		fprintf(stderr, "%s: %s\n", path, dwarf_errmsg(-1));
		return;
	}
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie, subdie;
	while (dwarf_get_units(dw, cu, &next, &version, &type, &cudie, &subdie) == 0) {
		cu = next;
		if (type == DW_UT_skeleton) {
			/* libdw gives a split unit its skeleton's lines */
			struct linetab lt;
			if (dwarf_tag(&subdie) == DW_TAG_compile_unit) {
				CHECK(linetab_read(&lt, &subdie, comp_dir_of(&subdie)) != 0);
				if (with_index)
					compare_cuindex(&subdie, path, valid, nvalid, 0);
				split++;
			}
			continue;
		}
		if (type != DW_UT_compile && type != DW_UT_partial)
			continue;
		st.units++;
		int own = compare_unit(&cudie, path, &st);
		if (own)
			st.own++;
		else
			st.declined++;
		if (with_index)
			compare_cuindex(&cudie, path, valid, nvalid, own);
	}
	printf("%s: %zu units, %zu read (%zu rows, %zu files), %zu declined%s%s%s, "
	       "%zu split\n", path, st.units, st.own, st.rows, st.files, st.declined,
	       st.why ? " (" : "", st.why ? st.why : "", st.why ? ")" : "", split);
	if (must_own) {
		CHECK(st.units > 0 || split > 0);
		CHECK_INT(st.declined, 0);
	}
	close_dwarf(dw, fd);
}

TEST(test_fixtures)
{
	static const char *const files[] = {
		"c_O0", "c_O0_dw4", "c_nopie", "cxx_gcc", "cxx_gcc4", "cxx_clang",
		"cxx_clang4", "lib.so", "c_many", "c_two", "dl/cxx_link.debug", "cxx_split",
		"cxx_clang_split",
	};
	size_t done = 0;

	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		if (!exists(fxpath(files[i])))
			continue;
		check_binary(fxpath(files[i]), 1, 1);
		done++;
	}
	CHECK(done >= 7);
}

static int nargs;
static char **args;

/* Binaries named on the command line or in $JHEAP_LINETAB_BINARIES, and the
 * benchmark program when it has been built: rows and files only (the
 * index comparison walks every DIE twice). */
TEST(test_binaries)
{
	char bench[1100], list[4096];
	const char *env = getenv("JHEAP_LINETAB_BINARIES");
	size_t done = 0;

	for (int i = 0; i < nargs; i++, done++)
		check_binary(args[i], 0, 0);
	snprintf(list, sizeof list, "%s", env ? env : "");
	for (char *save = NULL, *p = strtok_r(list, ":", &save); p;
	     p = strtok_r(NULL, ":", &save), done++)
		check_binary(p, 0, 0);
	snprintf(bench, sizeof bench, "%s/../bench/prog/benchprog", fx);
	if (!done && fx[0] && exists(bench))
		check_binary(bench, 1, 0);
	else if (!done)
		printf("SKIP test_binaries: no %s (make bench builds it)\n", bench);
}

/* ---- damaged line programs ---- */

struct image {
	unsigned char *buf;
	size_t size;
	size_t line_off, line_size;   /* .debug_line in the file */
	size_t line_shdr;             /* where its section header is */
	size_t unit_off, unit_len;    /* the first unit's table, in .debug_line */
};

static int load_image(const char *path, struct image *im)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	memset(im, 0, sizeof *im);
	if (fd < 0 || fstat(fd, &st) != 0 || !(im->buf = malloc(st.st_size))
	    || read(fd, im->buf, st.st_size) != st.st_size) {
		if (fd >= 0)
			close(fd);
		free(im->buf);
		im->buf = NULL;
		return -1;
	}
	close(fd);
	im->size = st.st_size;
	Elf *elf = elf_memory((char *)im->buf, im->size);
	GElf_Ehdr eh;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int ok = 0;
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64
	    || elf_getshdrstrndx(elf, &shstrndx) != 0)
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name))
		    && strcmp(name, ".debug_line") == 0 && sh.sh_type == SHT_PROGBITS
		    && !(sh.sh_flags & SHF_COMPRESSED)) {
			im->line_off = sh.sh_offset;
			im->line_size = sh.sh_size;
			im->line_shdr = eh.e_shoff + elf_ndxscn(scn) * eh.e_shentsize;
		}
	}
	/* the first compile unit's table */
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie, subdie;
	Dwarf_Attribute a;
	Dwarf_Word off;
	while (dw && !ok && dwarf_get_units(dw, cu, &next, &version, &type, &cudie, &subdie) == 0) {
		cu = next;
		if (type != DW_UT_compile || !dwarf_attr(&cudie, DW_AT_stmt_list, &a)
		    || dwarf_formudata(&a, &off) != 0 || off + 4 > im->line_size)
			continue;
		uint32_t len;
		memcpy(&len, im->buf + im->line_off + off, 4);
		if (len < 0xfffffff0 && off + 4 + len <= im->line_size) {
			im->unit_off = off;
			im->unit_len = 4 + len;
			ok = 1;
		}
	}
	dwarf_end(dw);
out:
	elf_end(elf);
	if (!ok) {
		free(im->buf);
		im->buf = NULL;
	}
	return ok ? 0 : -1;
}

struct damage {
	size_t tried, opened, read, declined;
};

/* A copy of IM whose first unit's table, cut to CUT bytes, is moved to
 * the very end of the buffer and ends the section: a read past it is a
 * read past the allocation, which ASan reports.  *UNIT is where it is. */
static unsigned char *moved_image(const struct image *im, size_t cut, size_t *size,
				  unsigned char **unit)
{
	unsigned char *b = malloc(im->size + cut);
	uint64_t off = im->size - im->unit_off, sz = im->unit_off + cut;

	if (!b)
		return NULL;
	memcpy(b, im->buf, im->size);
	memcpy(b + im->size, im->buf + im->line_off + im->unit_off, cut);
	memcpy(b + im->line_shdr + offsetof(Elf64_Shdr, sh_offset), &off, 8);
	memcpy(b + im->line_shdr + offsetof(Elf64_Shdr, sh_size), &sz, 8);
	*size = im->size + cut;
	*unit = b + im->size;
	return b;
}

/* Reads the first compile unit of BUF (from moved_image, changed by the
 * caller), then frees BUF. */
static void try_image(unsigned char *buf, size_t size, const char *what, struct damage *d)
{
	Elf *elf = elf_memory((char *)buf, size);
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie, subdie;

	d->tried++;
	while (dw && dwarf_get_units(dw, cu, &next, &version, &type, &cudie, &subdie) == 0) {
		cu = next;
		if (type != DW_UT_compile)
			continue;
		d->opened++;
		/* declined or read as libdw reads it (which bounds it) */
		if (compare_unit(&cudie, what, NULL))
			d->read++;
		else
			d->declined++;
		break;
	}
	dwarf_end(dw);
	elf_end(elf);
	free(buf);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void damage_fixture(const char *name)
{
	struct image im;
	struct damage d = { 0 };
	char what[256];

	if (!exists(fxpath(name)))
		return;
	CHECK(load_image(fxpath(name), &im) == 0);
	if (!im.buf)
		return;
	unsigned char *buf, *unit;
	size_t size, len = im.unit_len;
	/* the whole header and, in a long program, a spread of its bytes */
	size_t step = len > 3000 ? len / 1500 : 1;

	/* the unit's length cut to every size below its own */
	for (size_t cut = 0; cut < len; cut += cut < 200 ? 1 : step) {
		if (!(buf = moved_image(&im, len, &size, &unit)))
			break;
		uint32_t l = (uint32_t)(cut >= 4 ? cut - 4 : 0);
		memcpy(unit, &l, 4);
		snprintf(what, sizeof what, "%s cut to %zu", name, cut);
		try_image(buf, size, what, &d);
	}
	/* the section (and the buffer) ending inside the unit */
	for (size_t cut = 0; cut < len; cut += cut < 200 ? 1 : step) {
		if (!(buf = moved_image(&im, cut, &size, &unit)))
			break;
		snprintf(what, sizeof what, "%s section cut at %zu", name, cut);
		try_image(buf, size, what, &d);
	}
	/* single bytes changed */
	static const unsigned char flips[] = { 0x01, 0x80, 0xff, 0x40 };
	for (size_t i = 0; i < len; i += i < 400 ? 1 : step)
		for (size_t k = 0; k < sizeof flips; k++) {
			if (!(buf = moved_image(&im, len, &size, &unit)))
				break;
			unit[i] ^= flips[k];
			snprintf(what, sizeof what, "%s byte %zu ^ %#x", name, i, flips[k]);
			try_image(buf, size, what, &d);
		}
	/* a few bytes at random places set to random values: a fixed seed,
	 * $JHEAP_LINETAB_RANDOM rounds (default 400) */
	const char *env = getenv("JHEAP_LINETAB_RANDOM");
	unsigned long rounds = env ? strtoul(env, NULL, 10) : 400;
	uint64_t seed = 0x9e3779b97f4a7c15ULL ^ len;
	for (unsigned long k = 0; k < rounds; k++) {
		if (!(buf = moved_image(&im, len, &size, &unit)))
			break;
		unsigned nb = 1 + (unsigned)(xorshift(&seed) % 4);
		for (unsigned b = 0; b < nb; b++)
			unit[xorshift(&seed) % len] = (unsigned char)xorshift(&seed);
		snprintf(what, sizeof what, "%s random round %lu", name, k);
		try_image(buf, size, what, &d);
	}
	printf("%s: %zu damaged tables: %zu read as libdw reads them, %zu declined\n", name,
	       d.tried, d.read, d.declined);
	CHECK(d.opened == d.tried);
	CHECK(d.read > 0 && d.declined > 0);
	free(im.buf);
}

TEST(test_damaged)
{
	static const char *const files[] = {
		"c_O0", "c_O0_dw4", "cxx_gcc", "cxx_gcc4", "cxx_clang", "cxx_clang4",
	};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		damage_fixture(files[i]);
}

static uint64_t uleb(const unsigned char **p, const unsigned char *end)
{
	uint64_t v = 0;
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	return v;
}

/* Offset from P of the DW_AT_comp_dir code in the abbreviation of tag
 * DW_TAG_compile_unit in the abbreviation table at P, or 0. */
static size_t comp_dir_abbrev(const unsigned char *p, const unsigned char *end)
{
	const unsigned char *start = p;

	while (p < end && uleb(&p, end) != 0) {
		uint64_t tag = uleb(&p, end);
		p++;    /* children */
		for (;;) {
			const unsigned char *here = p;
			uint64_t at = uleb(&p, end), form = uleb(&p, end);
			if ((at == 0 && form == 0) || p >= end)
				break;
			if (form == DW_FORM_implicit_const)
				uleb(&p, end);
			if (tag == DW_TAG_compile_unit && at == DW_AT_comp_dir)
				return (size_t)(here - start);
		}
	}
	return 0;
}

/* A DWARF 4 unit without DW_AT_comp_dir: libdw leaves the names of
 * directory 0 relative, and so must linetab.  The attribute is renamed in
 * a copy of the unit's abbreviation. */
static void no_comp_dir(const char *name)
{
	struct image im;
	Dwarf *dw = NULL;
	Elf *elf = NULL;
	size_t done = 0;

	if (!exists(fxpath(name)) || load_image(fxpath(name), &im) != 0)
		return;
	elf = elf_memory((char *)im.buf, im.size);
	dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	/* where the CU DIE's abbreviation names DW_AT_comp_dir */
	size_t shstrndx, abbrev_off = 0;
	Elf_Scn *scn = NULL;
	elf_getshdrstrndx(elf, &shstrndx);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, shstrndx, sh.sh_name))
		    && strcmp(n, ".debug_abbrev") == 0)
			abbrev_off = sh.sh_offset;
	}
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie, subdie;
	Dwarf_Off aoff = 0;
	size_t at = 0;
	while (dw && abbrev_off && dwarf_get_units(dw, cu, &next, &version, &type, &cudie,
						   &subdie) == 0) {
		cu = next;
		if (type != DW_UT_compile || !comp_dir_of(&cudie)
		    || !dwarf_cu_die(cu, &cudie, NULL, &aoff, NULL, NULL, NULL, NULL))
			continue;
		at = comp_dir_abbrev(im.buf + abbrev_off + aoff, im.buf + im.size);
		if (at)
			at += abbrev_off + aoff;
		break;
	}
	dwarf_end(dw);
	elf_end(elf);
	CHECK(at != 0);
	if (at) {
		im.buf[at] = DW_AT_description;
		elf = elf_memory((char *)im.buf, im.size);
		dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
		cu = NULL;
		while (dw && dwarf_get_units(dw, cu, &next, &version, &type, &cudie,
					     &subdie) == 0) {
			cu = next;
			if (type != DW_UT_compile)
				continue;
			CHECK(comp_dir_of(&cudie) == NULL);
			CHECK(compare_unit(&cudie, name, NULL) == 1);
			done++;
			break;
		}
		dwarf_end(dw);
		elf_end(elf);
	}
	CHECK_INT(done, 1);
	free(im.buf);
}

TEST(test_no_comp_dir)
{
	no_comp_dir("c_O0_dw4");
	no_comp_dir("cxx_gcc4");
}

/* A pc in the code of unit CUDIE, or 0. */
static uint64_t unit_pc(Dwarf_Die *cudie)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(cudie, off, &base, &lo, &hi)) > 0)
		if (lo > 0 && lo < hi)
			return lo;
	return 0;
}

/* The two units of c_two made to share one line table, as dwz's partial
 * units share their CU's.  libdw builds DWARF 2-4 file names once per
 * table, with the comp_dir of the unit it was asked for first; so when
 * the units' comp_dirs differ (DIFFER: the second unit's is pointed at its
 * producer string) the map builds the second unit's names with the first
 * one's comp_dir too: linetab reads both, and the file names are those
 * libdw gives when asked in the same order. */
/* Whether unit N (0 or 1) of the image has, in CI, the file names libdw
 * gives it when unit 0's table was asked for first. */
static int same_files_in_order(const struct image *im, size_t n, struct cuindex *ci)
{
	Elf *elf = elf_memory((char *)im->buf, im->size);
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie, subdie, cus[2];
	size_t k = 0, nf = 0, bad = 0;
	Dwarf_Lines *lines;
	Dwarf_Files *files;
	while (dw && k < 2 && dwarf_get_units(dw, cu, &next, &version, &type, &cudie, &subdie) == 0) {
		cu = next;
		if (type == DW_UT_compile)
			cus[k++] = cudie;
	}
	int ok = k == 2 && dwarf_getsrclines(&cus[0], &lines, &nf) == 0
		 && dwarf_getsrcfiles(&cus[n], &files, &nf) == 0 && nf > 1;
	for (size_t i = 0; ok && i < nf; i++) {
		const char *want = dwarf_filesrc(files, i, NULL, NULL);
		const char *got = cuindex_file(ci, i);
		if (!want || !got || strcmp(want, got)) {
			fprintf(stderr, "  unit %zu file %zu: libdw '%s', cuindex '%s'\n", n, i,
				want ? want : "(null)", got ? got : "(null)");
			bad++;
		}
	}
	if (dw)
		dwarf_end(dw);
	if (elf)
		elf_end(elf);
	return ok && bad == 0;
}

static void shared_table(int differ)
{
	struct image im;
	Dwarf_Die cus[2];
	size_t n = 0;

	if (!exists(fxpath("c_two")) || load_image(fxpath("c_two"), &im) != 0) {
		CHECK(!exists(fxpath("c_two")));
		return;
	}
	Elf *elf = elf_memory((char *)im.buf, im.size);
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie, subdie;
	while (dw && n < 2 && dwarf_get_units(dw, cu, &next, &version, &type, &cudie,
					      &subdie) == 0) {
		cu = next;
		if (type == DW_UT_compile)
			cus[n++] = cudie;
	}
	CHECK_INT(n, 2);
	Dwarf_Attribute s0, s1, c1, p1;
	int ok = n == 2 && dwarf_attr(&cus[0], DW_AT_stmt_list, &s0)
		&& dwarf_attr(&cus[1], DW_AT_stmt_list, &s1)
		&& dwarf_attr(&cus[1], DW_AT_comp_dir, &c1)
		&& dwarf_attr(&cus[1], DW_AT_producer, &p1)
		&& dwarf_whatform(&s0) == DW_FORM_sec_offset
		&& dwarf_whatform(&s1) == DW_FORM_sec_offset
		&& dwarf_whatform(&c1) == DW_FORM_strp && dwarf_whatform(&p1) == DW_FORM_strp
		/* libelf reads the image in place */
		&& s1.valp > im.buf && s1.valp + 4 <= im.buf + im.size
		&& c1.valp > im.buf && c1.valp + 4 <= im.buf + im.size;
	CHECK(ok);
	if (ok) {
		memcpy(s1.valp, s0.valp, 4);
		if (differ)
			memcpy(c1.valp, p1.valp, 4);
	}
	dwarf_end(dw);
	elf_end(elf);
	if (!ok) {
		free(im.buf);
		return;
	}
	elf = elf_memory((char *)im.buf, im.size);
	dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	struct cumap *map = dw ? cumap_new(dw, NULL, 0) : NULL;
	CHECK(map != NULL);
	cu = NULL;
	n = 0;
	while (map && dwarf_get_units(dw, cu, &next, &version, &type, &cudie, &subdie) == 0) {
		cu = next;
		if (type != DW_UT_compile)
			continue;
		struct cuindex *out[4];
		uint64_t pc = unit_pc(&cudie);
		size_t k, nc = pc ? cumap_find(map, pc, out, 4) : 0;
		for (k = 0; k < nc; k++)
			if (dwarf_dieoffset(cuindex_cudie(out[k])) == dwarf_dieoffset(&cudie))
				break;
		CHECK(k < nc);
		if (k < nc) {
			CHECK_INT(cuindex_lines_own(out[k]), 1);
			CHECK_INT(same_files_in_order(&im, n, out[k]), 1);
		}
		/* and linetab, asked alone, gives libdw's answers where the
		 * comp_dirs agree */
		if (!differ)
			CHECK_INT(compare_unit(&cudie, "c_two shared", NULL), 1);
		n++;
	}
	CHECK_INT(n, 2);
	cumap_free(map);
	dwarf_end(dw);
	elf_end(elf);
	free(im.buf);
}

TEST(test_shared_table)
{
	shared_table(0);
	shared_table(1);
}

int main(int argc, char **argv)
{
	struct stat st;

	elf_version(EV_CURRENT);
	nargs = argc - 1;
	args = argv + 1;
	if (nargs > 0 && stat(args[0], &st) == 0 && S_ISDIR(st.st_mode)) {
		snprintf(fx, sizeof fx, "%s", args[0]);
		nargs--;
		args++;
	}
	if (!fx[0] && getenv("JHEAP_FIXTURES"))
		snprintf(fx, sizeof fx, "%s", getenv("JHEAP_FIXTURES"));
	if (fx[0] && !exists(fxpath("c_O0")))
		fx[0] = '\0';
	if (!fx[0]) {
		printf("SKIP: no fixtures (run tests/unit/build-fixtures.sh DIR; pass DIR)\n");
	} else {
		RUN(test_fixtures);
		RUN(test_damaged);
		RUN(test_no_comp_dir);
		RUN(test_shared_table);
		RUN(test_seqs);
	}
	RUN(test_binaries);
	return UNIT_END();
}

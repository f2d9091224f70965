/*
 * symcache: object files opened through libdwfl, addresses answered from
 * per-unit interval indexes (cuindex.c), every answer cached.
 *
 * Address spaces: callers speak link-time vaddrs.  Each file is reported to
 * libdwfl at base 0 with add_p_vaddr, so the module bias is 0 and module
 * addresses equal vaddrs for ET_EXEC and ET_DYN alike (passing
 * add_p_vaddr=false would bias a DSO whose first PT_LOAD is not at 0); the
 * bias is still read back and applied, so nothing depends on that.  DWARF
 * addresses may carry their own bias (a prelinked separate debug file):
 * dwarf pc = vaddr + bias - dwbias.
 *
 * Names: the demangled DW_AT_linkage_name, else DW_AT_name, else the ELF
 * symbol; the outermost frame of a C++ function that has no linkage name
 * takes the demangled symbol covering the pc.
 *
 * Cross-checked frame by frame (names, files, lines, columns) against
 * llvm-symbolizer-14 --inlining and eu-addr2line -f -i -C on gcc and clang
 * -O2 builds (DWARF 4, 5, split) and on glibc with libc6-dbg.  Deliberate
 * differences: (1) the outermost frame of a C function keeps its DWARF name
 * where those tools print the symbol-table alias at that address (glibc:
 * "_IO_fflush", not "__GI__IO_fflush"); (2) likewise for C asm labels in
 * inlined frames (above); (3) gcc's hot/cold split parts are named after
 * their function, without llvm-symbolizer's " (.cold)" tag; (4) libiberty
 * spells some names differently from LLVM's demangler ("{lambda(int)#1}",
 * "[clone .constprop.0]") and demangles some LLVM 14 leaves mangled.
 *
 * Not thread-safe: one symcache per thread.
 */
#include "symbolize/elfsym.h"
#include "symbolize/fdetab.h"
#include "symbolize/symcache.h"
#include "symbolize/cuindex.h"
#include "symbolize/debugfind.h"
#include "lib/safefile.h"
#include "lib/errors.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* uthash must never exit(): a failed insert just leaves the entry out (the
 * answer is then computed again next time, which is only slower). */
static int symcache_hash_oom;
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) ((void)(obj), symcache_hash_oom = 1)
#include <uthash.h>

#define ARENA_CHUNK (64 * 1024)
#define MAX_NAME_LEN (1u << 20)      /* longer strings from a file are cut */
#define MAX_CU_CANDIDATES 8          /* overlapping units tried per pc */

/* ---- arena: every string, result and module record of the cache ---- */

struct chunk {
	struct chunk *next;
	size_t used, cap;
	max_align_t data[];
};

static void *symcache_arena_alloc(struct chunk **head, size_t n)
{
	const size_t align = sizeof(max_align_t);

	if (n > SIZE_MAX / 2)
		return NULL;
	n = (n + align - 1) & ~(align - 1);
	struct chunk *c = *head;
	if (!c || c->cap - c->used < n) {
		size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
		c = malloc(sizeof *c + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		/* A big block gets its own chunk behind the current one so the
		 * current chunk's free space is not lost. */
		if (*head && n > ARENA_CHUNK / 4) {
			c->next = (*head)->next;
			(*head)->next = c;
		} else {
			c->next = *head;
			*head = c;
		}
	}
	void *p = (char *)c->data + c->used;
	c->used += n;
	return p;
}

/* ---- the cache ---- */

struct istr {
	UT_hash_handle hh;
	const char *dem;   /* demangled form, NULL when not mangled */
	int dem_done;
	char s[];
};

struct pcent {
	UT_hash_handle hh;
	uint64_t pc;
	struct symresult res;
};


/* What a scope's DIE says about its function, derived once per scope. */
struct scopeinfo {
	const char *name, *linkage, *decl_file;
	int decl_line;
};

struct symmodule {
	UT_hash_handle hh;
	struct symcache *sc;
	const char *path;
	const char *err;          /* set: opening failed with this message */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	int elf_type;
	int machine;              /* e_machine */
	bool has_symtab;          /* .symtab or .gnu_debugdata in the file itself */
	struct fdetab fdes;       /* its functions by call-frame entry, read on first need */
	struct symsegment *segs;
	size_t nsegs;
	unsigned char *build_id;
	size_t build_id_len;
	Dwarf *dw;
	Dwarf_Addr dwbias;
	const char *debug_path;
	int dw_state;             /* 0: DWARF not looked for yet, 1: done */
	int map_state;            /* 0 not read, 1 read, -1 failed */
	struct cumap *map;
	void (*units_fn)(void *arg, struct cumap *map);
	void *units_arg;
	struct cumap *(*map_fn)(void *arg, Dwarf *dw, const char *debug_path,
				const struct cuindex_range *valid, size_t nvalid);
	void *map_arg;
	bool map_asked;           /* map_fn asked already, when the DWARF was loaded */
	struct cuindex_range *valid;
	size_t nvalid;
	struct elfsyms syms;      /* the ELF symbol table, read on first need */
	struct pcent *pcs;
	const char *skipped;      /* a debug file left out: not a regular file */
	bool alt_found;           /* the search found the dwz alt file */
};

struct symcache {
	struct chunk *arena;
	struct istr *strings;
	struct symmodule *modules;
	char *debuginfo_path;     /* libdwfl search path, NULL for its default */
	char **user_dirs;         /* absolute copies of the options' dirs */
	size_t nuser_dirs;
	Dwfl_Callbacks callbacks;
	bool resource_failed;     /* a file could not be opened: EMFILE, ENOMEM */
};

static void *symcache_alloc(struct symcache *sc, size_t n)
{
	void *p = symcache_arena_alloc(&sc->arena, n);
	if (p)
		memset(p, 0, n);
	return p;
}

static struct istr *symcache_intern_ent(struct symcache *sc, const char *s, size_t len)
{
	struct istr *e;

	if (len > MAX_NAME_LEN)
		len = MAX_NAME_LEN;
	HASH_FIND(hh, sc->strings, s, len, e);
	if (e)
		return e;
	e = symcache_arena_alloc(&sc->arena, sizeof *e + len + 1);
	if (!e)
		return NULL;
	memset(e, 0, sizeof *e);
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	HASH_ADD_KEYPTR(hh, sc->strings, e->s, len, e);
	return e;
}

/* One shared copy of S, owned by the cache; NULL for NULL or out of memory. */
static const char *symcache_intern(struct symcache *sc, const char *s)
{
	if (!s)
		return NULL;
	struct istr *e = symcache_intern_ent(sc, s, strlen(s));
	return e ? e->s : NULL;
}

/* The demangled form of LINKAGE (interned), computed once per name. */
static const char *symcache_demangled(struct symcache *sc, const char *linkage)
{
	struct istr *e = symcache_intern_ent(sc, linkage, strlen(linkage));

	if (!e)
		return NULL;
	if (!e->dem_done) {
		char *d = symcache_demangle(e->s);
		e->dem = d ? symcache_intern(sc, d) : NULL;
		e->dem_done = 1;
		free(d);
	}
	return e->dem;
}

/* ---- separate debug files ---- */

/* A candidate debug file that is not a regular file: the first such
 * message is kept for the module, for symmodule_skipped(). */
static void symcache_skipped(void *arg, const char *msg)
{
	struct symmodule *m = arg;
	if (!m->skipped)
		m->skipped = symcache_intern(m->sc, msg);
}

/* libdwfl's find_debuginfo callback: debugfind()'s search, which opens
 * only regular files (libdwfl's own would block on a FIFO). */
static int symcache_find_debuginfo(Dwfl_Module *mod, void **userdata,
				   const char *modname, GElf_Addr base,
				   const char *file_name, const char *debuglink_file,
				   GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	struct symmodule *m = userdata ? *userdata : NULL;
	(void)modname, (void)base;
	if (!m)
		return -1;
	struct debugfind_opts o = {
		.dirs = (const char *const *)m->sc->user_dirs, .skipped = symcache_skipped,
		.arg = m, .resource_failed = &m->sc->resource_failed,
	};
	int fd = debugfind(&o, mod, file_name, debuglink_file, debuglink_crc,
			   debuginfo_file_name);
	if (fd >= 0 && m->dw_state == 1)
		m->alt_found = true;
	errno = 0;
	return fd;
}

static int symcache_set_dirs(struct symcache *sc, const char *const *dirs)
{
	size_t n = 0, len = sizeof ":.debug:/usr/lib/debug";
	char cwd[4096];

	while (dirs && dirs[n])
		n++;
	if (n == 0)
		return 0;
	sc->user_dirs = calloc(n + 1, sizeof *sc->user_dirs);
	if (!sc->user_dirs)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *d = dirs[i];
		char *abs;
		/* libdwfl reads a relative dir as relative to the object's
		 * folder; the user meant the current directory. */
		if (d[0] != '/') {
			if (!getcwd(cwd, sizeof cwd))
				continue;
			if (asprintf(&abs, "%s/%s", cwd, d) < 0)
				return -1;
		} else if (!(abs = strdup(d))) {
			return -1;
		}
		size_t al = strlen(abs);
		while (al > 1 && abs[al - 1] == '/')
			abs[--al] = '\0';
		sc->user_dirs[sc->nuser_dirs++] = abs;
		len += al + 1;
	}
	sc->debuginfo_path = malloc(len);
	if (!sc->debuginfo_path)
		return -1;
	char *p = sc->debuginfo_path;
	for (size_t i = 0; i < sc->nuser_dirs; i++) {
		/* ':' separates path elements; such a dir is only tried by
		 * the DIR/<path> fallback. */
		if (strchr(sc->user_dirs[i], ':'))
			continue;
		p += sprintf(p, "%s:", sc->user_dirs[i]);
	}
	strcpy(p, ":.debug:/usr/lib/debug");
	return 0;
}

const char *const *symcache_debuginfo_dirs(const struct symcache *sc)
{
	return sc ? (const char *const *)sc->user_dirs : NULL;
}

struct symcache *symcache_new(const struct symcache_options *opts)
{
	struct symcache *sc = calloc(1, sizeof *sc);

	if (!sc)
		return NULL;
	if (symcache_set_dirs(sc, opts ? opts->debuginfo_dirs : NULL)) {
		symcache_free(sc);
		return NULL;
	}
	sc->callbacks.find_elf = dwfl_build_id_find_elf;
	sc->callbacks.find_debuginfo = symcache_find_debuginfo;
	sc->callbacks.section_address = dwfl_offline_section_address;
	sc->callbacks.debuginfo_path = sc->debuginfo_path ? &sc->debuginfo_path : NULL;
	elf_version(EV_CURRENT);
	return sc;
}

static void symcache_module_release(struct symmodule *m)
{
	cumap_free(m->map);
	elfsyms_release(&m->syms);
	fdetab_release(&m->fdes);
	HASH_CLEAR(hh, m->pcs);
	if (m->dwfl)
		dwfl_end(m->dwfl);
}

void symcache_free(struct symcache *sc)
{
	struct symmodule *m, *tmp;

	if (!sc)
		return;
	HASH_ITER(hh, sc->modules, m, tmp) {
		HASH_DEL(sc->modules, m);
		symcache_module_release(m);
	}
	HASH_CLEAR(hh, sc->strings);
	while (sc->arena) {
		struct chunk *next = sc->arena->next;
		free(sc->arena);
		sc->arena = next;
	}
	for (size_t i = 0; i < sc->nuser_dirs; i++)
		free(sc->user_dirs[i]);
	free(sc->user_dirs);
	free(sc->debuginfo_path);
	free(sc);
}

/* ---- opening a module ---- */

static int symcache_read_headers(struct symmodule *m, char *err, size_t errlen)
{
	Elf *elf = dwfl_module_getelf(m->mod, &m->bias);
	GElf_Ehdr ehdr;
	size_t phnum;

	if (!elf || !gelf_getehdr(elf, &ehdr) || elf_getphdrnum(elf, &phnum) != 0)
		return jh_err(err, errlen, JH_EIO, "cannot read ELF headers of '%s': %s",
				     m->path, dwfl_errmsg(-1));
	m->elf_type = ehdr.e_type;
	m->machine = ehdr.e_machine;
	m->segs = symcache_alloc(m->sc, (phnum + 1) * sizeof *m->segs);
	m->valid = symcache_alloc(m->sc, (phnum + 1) * sizeof *m->valid);
	if (!m->segs || !m->valid)
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		struct symsegment *s = &m->segs[m->nsegs++];
		s->offset = ph.p_offset;
		s->filesz = ph.p_filesz;
		s->vaddr = ph.p_vaddr;
		s->memsz = ph.p_memsz;
		s->flags = ph.p_flags;
	}
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) == 0) {
		for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;
			const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
			if (sh.sh_type == SHT_SYMTAB || (name && !strcmp(name, ".gnu_debugdata")))
				m->has_symtab = true;
		}
	}
	const unsigned char *bits;
	GElf_Addr bvaddr;
	int blen = dwfl_module_build_id(m->mod, &bits, &bvaddr);
	if (blen > 0 && (m->build_id = symcache_alloc(m->sc, (size_t)blen))) {
		memcpy(m->build_id, bits, (size_t)blen);
		m->build_id_len = (size_t)blen;
	}
	return 0;
}

static int symcache_open(struct symmodule *m, char *err, size_t errlen)
{
	unsigned char magic[SELFMAG];
	int fd = safefile_open(m->path, 0, err, errlen);

	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
			m->sc->resource_failed = true;
		return fd;
	}
	ssize_t n = pread(fd, magic, sizeof magic, 0);
	if (n < 0) {
		int e = errno;
		close(fd);
		return jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", m->path,
				     strerror(e));
	}
	if (n < (ssize_t)sizeof magic || memcmp(magic, ELFMAG, SELFMAG) != 0) {
		close(fd);
		return jh_err(err, errlen, JH_EIO, "'%s' is not an ELF file", m->path);
	}
	m->dwfl = dwfl_begin(&m->sc->callbacks);
	if (!m->dwfl) {
		close(fd);
		return jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", m->path,
				     dwfl_errmsg(-1));
	}
	const char *base = strrchr(m->path, '/');
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_elf(m->dwfl, base ? base + 1 : m->path, m->path, fd, 0, true);
	if (!m->mod) {
		close(fd);  /* libdwfl takes the fd only on success */
		return jh_err(err, errlen, JH_EIO, "cannot read ELF file '%s': %s",
				     m->path, dwfl_errmsg(-1));
	}
	dwfl_report_end(m->dwfl, NULL, NULL);
	void **ud;
	dwfl_module_info(m->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = m;
	if (symcache_read_headers(m, err, errlen))
		return -1;
	for (size_t i = 0; i < m->nsegs; i++)
		if (m->segs[i].flags & PF_X) {
			struct cuindex_range *r = &m->valid[m->nvalid++];
			r->lo = m->segs[i].vaddr + m->bias;
			r->hi = r->lo + m->segs[i].memsz;
		}
	return 0;
}

/* Finds and opens the DWARF (maybe in a separate file, maybe compressed
 * sections to inflate) on the first lookup that needs it, so that a module
 * whose answers all come from the persistent cache never reads it; units
 * are read later still, on first touch.  A unit map known from an earlier
 * run (map_fn) is made here. */
static void symcache_load_dwarf(struct symmodule *m)
{
	if (m->dw_state)
		return;
	m->dw_state = 1;
	m->dw = dwfl_module_getdwarf(m->mod, &m->dwbias);
	if (!m->dw)
		return;
	const char *mainfile = NULL, *debugfile = NULL;
	dwfl_module_info(m->mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	m->debug_path = symcache_intern(m->sc, debugfile ? debugfile
					: mainfile ? mainfile : m->path);
	for (size_t i = 0; i < m->nvalid; i++) {
		m->valid[i].lo -= m->dwbias;
		m->valid[i].hi -= m->dwbias;
	}
	/* libdw opens a dwz alt file or a split unit's .dwo by itself.  A
	 * map the persistent cache kept is of this very debug file, and it
	 * keeps none of a DWARF with split units (cumap_units): with one,
	 * no unit header need be read to know there is no .dwo to check. */
	const char *path = m->debug_path ? m->debug_path : m->path;
	char msg[PATH_MAX + 100];
	int unsafe = debugfind_alt_unsafe(m->dw, path, m->alt_found, msg, sizeof(msg));
	if (!unsafe && m->map_fn) {
		m->map = m->map_fn(m->map_arg, m->dw, m->debug_path, m->valid, m->nvalid);
		m->map_asked = true;
	}
	if (!unsafe && !m->map)
		unsafe = debugfind_split_unsafe(m->dw, path, msg, sizeof(msg));
	if (unsafe) {
		symcache_skipped(m, msg);
		m->dw = NULL;
		m->debug_path = NULL;
	}
}

struct symmodule *symcache_module(struct symcache *sc, const char *path,
				  char *err, size_t errlen)
{
	struct symmodule *m;

	if (!sc || !path)
		return NULL;
	HASH_FIND_STR(sc->modules, path, m);
	if (!m) {
		char msg[1024];
		m = symcache_alloc(sc, sizeof *m);
		if (!m || !(m->path = symcache_intern(sc, path))) {
			jh_err(err, errlen, JH_ENOMEM, "out of memory");
			return NULL;
		}
		m->sc = sc;
		if (symcache_open(m, msg, sizeof msg)) {
			symcache_module_release(m);
			memset(m, 0, sizeof *m);
			m->sc = sc;
			m->path = symcache_intern(sc, path);
			m->err = symcache_intern(sc, msg);
			if (!m->path || !m->err) {
				jh_err(err, errlen, JH_EIO, "%s", msg);
				return NULL;
			}
		}
		symcache_hash_oom = 0;
		HASH_ADD_KEYPTR(hh, sc->modules, m->path, strlen(m->path), m);
		if (symcache_hash_oom) {
			symcache_module_release(m);
			jh_err(err, errlen, JH_ENOMEM, "out of memory");
			return NULL;
		}
	}
	if (m->err) {
		jh_err(err, errlen, JH_EIO, "%s", m->err);
		return NULL;
	}
	return m;
}

struct symmodule *symcache_find_module(struct symcache *sc, const char *path)
{
	struct symmodule *m = NULL;
	if (sc && path)
		HASH_FIND_STR(sc->modules, path, m);
	return m && !m->err ? m : NULL;
}

void symmodule_set_units_source(struct symmodule *m,
				void (*fn)(void *arg, struct cumap *map), void *arg)
{
	if (!m)
		return;
	m->units_fn = fn;
	m->units_arg = arg;
}

void symmodule_set_map_source(struct symmodule *m,
			      struct cumap *(*fn)(void *arg, Dwarf *dw, const char *debug_path,
						  const struct cuindex_range *valid,
						  size_t nvalid),
			      void *arg)
{
	if (!m)
		return;
	m->map_fn = fn;
	m->map_arg = arg;
}

const struct cumap *symmodule_map(const struct symmodule *m)
{
	return m ? m->map : NULL;
}

int symmodule_each_unit(struct symmodule *m,
			int (*fn)(void *arg, uint64_t cuoff, const struct cumap_unitinfo *u),
			void *arg)
{
	return m && m->map ? cumap_each_full(m->map, fn, arg) : 0;
}

const char *symmodule_skipped(const struct symmodule *m)
{
	return m ? m->skipped : NULL;
}

bool symcache_resource_failed(const struct symcache *sc)
{
	return sc && sc->resource_failed;
}

const struct symsegment *symmodule_segments(const struct symmodule *m, size_t *n)
{
	*n = m ? m->nsegs : 0;
	return m ? m->segs : NULL;
}

int symmodule_elf_type(const struct symmodule *m)
{
	return m ? m->elf_type : 0;
}

int symmodule_machine(const struct symmodule *m)
{
	return m ? m->machine : 0;
}

const uint8_t *symmodule_image(struct symmodule *m, size_t *size)
{
	GElf_Addr bias;
	Elf *elf = m && m->mod ? dwfl_module_getelf(m->mod, &bias) : NULL;
	char *raw = elf ? elf_rawfile(elf, size) : NULL;
	if (!raw)
		*size = 0;
	return (const uint8_t *)raw;
}

const unsigned char *symmodule_build_id(const struct symmodule *m, size_t *len)
{
	*len = m ? m->build_id_len : 0;
	return m && m->build_id_len ? m->build_id : NULL;
}

const char *symmodule_debuglink(struct symmodule *m)
{
	GElf_Addr bias;
	GElf_Word crc;
	Elf *elf = m && m->mod ? dwfl_module_getelf(m->mod, &bias) : NULL;
	return elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;
}

const char *symmodule_debug_path(struct symmodule *m)
{
	if (!m || m->err)
		return NULL;
	symcache_load_dwarf(m);
	return m->debug_path;
}

/* ---- answers ---- */

static int symcache_lang_c(Dwarf_Die *cudie)
{
	switch (dwarf_srclang(cudie)) {
	case DW_LANG_C89:
	case DW_LANG_C:
	case DW_LANG_C99:
	case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:
		return 1;
	default:
		return 0;
	}
}

/* A source file name as the reference tools print it: libdw gives names
 * relative to the compilation directory when the unit recorded them so, and
 * addr2line, eu-addr2line and llvm-symbolizer all put DW_AT_comp_dir in
 * front (even when that doubles a relative comp_dir such as glibc's
 * "./csu"); jheap does the same so its paths match theirs. */
static const char *symcache_srcfile(struct symmodule *m, struct cuindex *ci,
				    const char *name)
{
	const char *dir = cuindex_comp_dir(ci);
	char buf[4096];

	if (!name || name[0] == '/' || !dir || !dir[0])
		return symcache_intern(m->sc, name);
	if ((size_t)snprintf(buf, sizeof buf, "%s/%s", dir, name) >= sizeof buf)
		return symcache_intern(m->sc, name);
	return symcache_intern(m->sc, buf);
}

/* DW_AT_decl_file of DIE (integrated), resolved in the file table of the
 * unit the attribute came from: CI's own when that is the unit CI indexes
 * (in elfutils 0.188 dwarf_getsrcfiles decodes the whole line program),
 * libdw's for another unit (an abstract origin elsewhere, a dwz partial
 * unit).  dwarf_decl_file does the same but asserts (aborts) on split-DWARF
 * units in elfutils 0.188.  The name lives as long as CI. */
static const char *symcache_decl_file(struct cuindex *ci, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Die cudie;
	Dwarf_Files *files;
	size_t nfiles;

	if (!dwarf_attr_integrate(die, DW_AT_decl_file, &a) || dwarf_formudata(&a, &idx) != 0)
		return NULL;
	if (a.cu == cuindex_cudie(ci)->cu)
		return cuindex_file(ci, idx);
	if (!dwarf_cu_die(a.cu, &cudie, NULL, NULL, NULL, NULL, NULL, NULL)
	    || dwarf_getsrcfiles(&cudie, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static const struct scopeinfo *symcache_scopeinfo(struct symmodule *m,
						  struct cuindex *ci, uint32_t id,
						  int lang_c)
{
	void **slot = cuindex_scope_slot(ci, id);
	if (*slot)
		return *slot;

	struct scopeinfo *si = symcache_alloc(m->sc, sizeof *si);
	if (!si)
		return NULL;
	Dwarf_Die *die = cuindex_scope_die(ci, id);
	Dwarf_Attribute a;
	const char *link = NULL, *name = NULL;
	/* dwarf_attr_integrate follows DW_AT_abstract_origin and
	 * DW_AT_specification, where inlined copies and out-of-class method
	 * definitions keep their names. */
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a)
	    || dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		link = dwarf_formstring(&a);
	if (dwarf_attr_integrate(die, DW_AT_name, &a))
		name = dwarf_formstring(&a);
	if (link) {
		/* A linkage name that does not demangle is a C asm label
		 * (glibc's "__GI_toupper" for toupper): the source name reads
		 * better, the label stays in .linkage. */
		si->linkage = symcache_intern(m->sc, link);
		si->name = symcache_demangled(m->sc, link);
		if (!si->name)
			si->name = name ? symcache_intern(m->sc, name) : si->linkage;
	} else if (name) {
		si->name = symcache_intern(m->sc, name);
		/* A C function's symbol is its plain name. */
		if (lang_c)
			si->linkage = si->name;
	}
	si->decl_file = symcache_srcfile(m, ci, symcache_decl_file(ci, die));
	dwarf_decl_line(die, &si->decl_line);
	*slot = si;
	return si;
}

static int symcache_udata(Dwarf_Die *die, int at, Dwarf_Word *v)
{
	Dwarf_Attribute a;
	return dwarf_attr(die, at, &a) && dwarf_formudata(&a, v) == 0 ? 0 : -1;
}

/* Frames for chain[0..n) of CI at DWARF address PC into F. */
static void symcache_dwarf_frames(struct symmodule *m, struct cuindex *ci,
				  const uint32_t *chain, size_t n, uint64_t pc,
				  struct symframe *f)
{
	int lang_c = symcache_lang_c(cuindex_cudie(ci));

	for (size_t i = 0; i < n; i++) {
		const struct scopeinfo *si = symcache_scopeinfo(m, ci, chain[i], lang_c);
		memset(&f[i], 0, sizeof f[i]);
		if (si) {
			f[i].name = si->name;
			f[i].linkage = si->linkage;
			f[i].decl_file = si->decl_file;
			f[i].decl_line = si->decl_line;
		}
		f[i].inlined = i + 1 < n;
		if (i == 0) {
			struct cuindex_line ln;
			if (cuindex_line(ci, pc, &ln) == 0) {
				f[i].file = symcache_srcfile(m, ci, ln.file);
				f[i].line = ln.line;
				f[i].column = ln.column;
			}
		} else {
			/* The call site of the inlined callee below is where this
			 * frame is executing. */
			Dwarf_Die *callee = cuindex_scope_die(ci, chain[i - 1]);
			Dwarf_Word v;
			if (symcache_udata(callee, DW_AT_call_file, &v) == 0)
				f[i].file = symcache_srcfile(m, ci, cuindex_file(ci, v));
			if (symcache_udata(callee, DW_AT_call_line, &v) == 0 && v <= INT32_MAX)
				f[i].line = (int)v;
			if (symcache_udata(callee, DW_AT_call_column, &v) == 0 && v <= INT32_MAX)
				f[i].column = (int)v;
		}
	}
}

static void symcache_symtab_frame(struct symmodule *m, const char *raw, struct symframe *f)
{
	size_t len = strcspn(raw, "@");

	memset(f, 0, sizeof *f);
	f->linkage = symcache_intern(m->sc, raw);
	f->name = symcache_demangled(m->sc, raw);
	if (!f->name) {
		/* The displayed name drops the symbol version ("memcpy@@GLIBC_2.14"). */
		struct istr *e = symcache_intern_ent(m->sc, raw, len);
		f->name = e ? e->s : f->linkage;
	}
}

bool symmodule_stripped(struct symmodule *m)
{
	return m && !m->err && !m->has_symtab && !symmodule_debug_path(m);
}

int symmodule_fde_range(struct symmodule *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	GElf_Addr bias;
	Elf *elf = m && m->mod ? dwfl_module_getelf(m->mod, &bias) : NULL;
	if (!elf || fdetab_find(&m->fdes, elf, vaddr, lo, hi))
		return -1;
	return 0;
}

int symmodule_symbol_range(struct symmodule *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	if (elfsyms_range(&m->syms, m->mod, vaddr + m->bias, lo, hi))
		return -1;
	*lo -= m->bias;
	*hi -= m->bias;
	return 0;
}

static void symcache_resolve(struct symmodule *m, uint64_t vaddr, struct symresult *res)
{
	struct symframe frames[CUINDEX_MAX_CHAIN];
	uint32_t chain[CUINDEX_MAX_CHAIN];
	struct cuindex *line_ci = NULL, *cands[MAX_CU_CANDIDATES];
	size_t n = 0;
	uint64_t a = vaddr + m->bias, pc = a - m->dwbias;

	res->status = SYM_NONE;
	res->nframes = 0;
	res->frames = NULL;
	symcache_load_dwarf(m);
	if (m->dw && m->map_state == 0) {
		if (!m->map && m->map_fn && !m->map_asked)
			m->map = m->map_fn(m->map_arg, m->dw, m->debug_path, m->valid, m->nvalid);
		if (!m->map)
			m->map = cumap_new(m->dw, m->valid, m->nvalid);
		m->map_state = m->map ? 1 : -1;
		if (m->map && m->units_fn)
			m->units_fn(m->units_arg, m->map);
	}
	if (m->map) {
		size_t nc = cumap_find(m->map, pc, cands, MAX_CU_CANDIDATES);
		for (size_t i = 0; i < nc && n == 0; i++) {
			struct cuindex *ci = cands[i];
			if (!line_ci)
				line_ci = ci;
			n = cuindex_lookup(ci, pc, chain, CUINDEX_MAX_CHAIN);
			if (n > 0) {
				symcache_dwarf_frames(m, ci, chain, n, pc, frames);
				res->status = SYM_DWARF;
			}
		}
	}
	const char *raw = NULL;
	if (n == 0 || !frames[n - 1].linkage)
		raw = elfsyms_lookup(&m->syms, m->mod, a);
	if (n == 0 && raw) {
		/* An assembler unit has lines but no functions: the symbol
		 * names it, the line table still places it. */
		symcache_symtab_frame(m, raw, &frames[0]);
		struct cuindex_line ln;
		if (line_ci && cuindex_line(line_ci, pc, &ln) == 0) {
			frames[0].file = symcache_srcfile(m, line_ci, ln.file);
			frames[0].line = ln.line;
			frames[0].column = ln.column;
		}
		res->status = SYM_SYMTAB;
		n = 1;
	} else if (n > 0 && raw) {
		/* gcc writes no linkage name for a C++ function without linkage
		 * (a template over a lambda type); the DIE name then lacks the
		 * scope and parameters, which the mangled symbol has. */
		struct symframe sf, *o = &frames[n - 1];
		symcache_symtab_frame(m, raw, &sf);
		if (!o->name || symcache_demangled(m->sc, raw))
			o->name = sf.name;
		o->linkage = sf.linkage;
	}
	if (n == 0)
		return;
	struct symframe *out = symcache_alloc(m->sc, n * sizeof *out);
	if (!out) {
		res->status = SYM_NONE;
		return;
	}
	memcpy(out, frames, n * sizeof *out);
	res->frames = out;
	res->nframes = (unsigned)n;
}

void symmodule_lookup(struct symmodule *m, uint64_t vaddr, struct symresult *out)
{
	struct pcent *e;

	out->status = SYM_NONE;
	out->nframes = 0;
	out->frames = NULL;
	if (!m || m->err)
		return;
	HASH_FIND(hh, m->pcs, &vaddr, sizeof vaddr, e);
	if (e) {
		*out = e->res;
		return;
	}
	e = symcache_alloc(m->sc, sizeof *e);
	if (!e)
		return;
	e->pc = vaddr;
	symcache_resolve(m, vaddr, &e->res);
	HASH_ADD(hh, m->pcs, pc, sizeof e->pc, e);
	*out = e->res;
}

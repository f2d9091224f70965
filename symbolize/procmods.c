#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>

#include "symbolize/procmods.h"
#include "lib/array.h"
#include "lib/errors.h"

/* One line of /proc/PID/maps. */
struct pmap {
	uint64_t start, end, offset;
	dev_t dev;
	uint64_t inode;
	bool exec;
	char *path;               /* "" when anonymous; " (deleted)" removed */
	bool deleted;
};

/* A range of code, [lo, hi). */
struct range {
	uint64_t lo, hi;
};

struct procmods {
	pid_t pid;
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks;
	Dwfl_Thread_Callbacks thread_callbacks;
	bool attached;            /* dwfl_attach_state done */
	struct pmap *maps;
	size_t nmaps;
	char exe[PATH_MAX];       /* /proc/PID/exe's target, " (deleted)" removed */
	char unread[512];         /* objects that could not be opened, for messages */
	/* the allocator: whole objects, and function ranges of the object
	 * that holds mallctl (sorted, merged) */
	struct range *alloc;
	size_t nalloc;
	struct range *covered;    /* every function of that object (merged) */
	size_t ncovered;
	struct range code;        /* that object's executable span */
	bool whole;               /* the allocator is a whole object */
	char fn_module[PATH_MAX];
	/* the thread being unwound */
	pid_t tid;
	const uint64_t *regs;
	unsigned nregs;
	uint64_t pc;
	procmods_read_fn read;
	void *read_arg;
};

static _Thread_local struct procmods *current;

/* ---- the maps ---- */

static int read_maps(struct procmods *pm, char *err, size_t errlen)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pm->pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return jh_err(err, errlen, JH_EIO, "cannot read %s: %s", path, strerror(errno));
	char *line = NULL;
	size_t cap = 0, alloc = 0;
	ssize_t n;
	int rc = 0;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		unsigned long long s, e, off, ino;
		unsigned maj, min;
		char perms[8];
		int at = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off, &maj, &min, &ino,
			   &at) < 7)
			continue;
		if (pm->nmaps == alloc) {
			size_t na = alloc ? alloc * 2 : 256;
			struct pmap *m = realloc(pm->maps, na * sizeof(*m));
			if (!m) {
				rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
				break;
			}
			pm->maps = m;
			alloc = na;
		}
		struct pmap *m = &pm->maps[pm->nmaps];
		const char *p = at ? line + at : "";
		size_t pl = strlen(p);
		m->deleted = pl > 10 && !strcmp(p + pl - 10, " (deleted)");
		if (m->deleted)
			pl -= 10;
		if (!(m->path = strndup(p, pl))) {
			rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
			break;
		}
		m->start = s;
		m->end = e;
		m->offset = off;
		m->dev = makedev(maj, min);
		m->inode = ino;
		m->exec = perms[2] == 'x';
		pm->nmaps++;
	}
	int e = ferror(f) ? errno : 0;
	free(line);
	fclose(f);
	if (!rc && e)
		rc = jh_err(err, errlen, JH_EIO, "cannot read %s: %s", path, strerror(e));
	if (!rc && !pm->nmaps)
		rc = jh_err(err, errlen, JH_EIO, "%s is empty: the process has exited", path);
	return rc;
}

int procmods_mapping(const struct procmods *pm, uint64_t addr, uint64_t *start, uint64_t *end,
		     const char **path)
{
	for (size_t i = 0; i < pm->nmaps; i++)
		if (addr >= pm->maps[i].start && addr < pm->maps[i].end) {
			*start = pm->maps[i].start;
			*end = pm->maps[i].end;
			*path = pm->maps[i].path;
			return 0;
		}
	return -1;
}

/* ---- opening an object of the process ---- */

/* An O_PATH descriptor of NAME under the process's root, resolved inside
 * that root, or -1. */
static int open_in_root(pid_t pid, const char *name)
{
	char root[64];
	snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
	int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		return -1;
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | O_NOFOLLOW,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, rfd, name, &how, sizeof(how));
	if (fd < 0 && errno == ENOSYS)
		fd = openat(rfd, name[0] == '/' ? name + 1 : name, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	close(rfd);
	return fd;
}

/* Opens for reading the file of maps line M: the O_PATH descriptor is
 * checked (regular, M's device and inode) before anything is read. */
static int open_mapped(struct procmods *pm, const struct pmap *m)
{
	char p[96];
	int fds[3] = { -1, -1, -1 };
	snprintf(p, sizeof(p), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pm->pid, m->start, m->end);
	fds[0] = open(p, O_PATH | O_CLOEXEC);
	if (!strcmp(m->path, pm->exe)) {
		snprintf(p, sizeof(p), "/proc/%d/exe", (int)pm->pid);
		fds[1] = open(p, O_PATH | O_CLOEXEC);
	}
	if (!m->deleted)
		fds[2] = open_in_root(pm->pid, m->path);
	int fd = -1;
	for (int i = 0; i < 3; i++) {
		struct stat st;
		if (fd < 0 && fds[i] >= 0 && !fstat(fds[i], &st) && S_ISREG(st.st_mode) &&
		    st.st_dev == m->dev && st.st_ino == m->inode) {
			snprintf(p, sizeof(p), "/proc/self/fd/%d", fds[i]);
			fd = open(p, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		}
		if (fds[i] >= 0)
			close(fds[i]);
	}
	return fd;
}

static void note_unread(struct procmods *pm, const char *path)
{
	size_t n = strlen(pm->unread);
	if (strstr(pm->unread, path) || n + strlen(path) + 3 >= sizeof(pm->unread))
		return;
	snprintf(pm->unread + n, sizeof(pm->unread) - n, "%s%s", n ? ", " : "", path);
}

/* libdwfl's find_elf: the object through open_mapped(); the vDSO from the
 * process's memory, as libdwfl reads it. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	struct procmods *pm = current;
	if (!pm || !name)
		return -1;
	if (name[0] == '[')
		return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
	Dwarf_Addr lo = 0, hi = 0;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	const struct pmap *best = NULL;
	for (size_t i = 0; i < pm->nmaps; i++) {
		const struct pmap *m = &pm->maps[i];
		if (strcmp(m->path, name) || m->end <= lo || m->start >= hi)
			continue;
		if (!best || m->offset < best->offset)
			best = m;
	}
	int fd = best ? open_mapped(pm, best) : -1;
	if (fd < 0) {
		note_unread(pm, name);
		return -1;
	}
	*file_name = strdup(name);
	return fd;
}

static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	return -1;
}

int procmods_open(pid_t pid, struct procmods **out, char *err, size_t errlen)
{
	struct procmods *pm = calloc(1, sizeof(*pm));
	if (!pm)
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	pm->pid = pid;
	char p[64];
	snprintf(p, sizeof(p), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(p, pm->exe, sizeof(pm->exe) - 1);
	pm->exe[n > 0 ? n : 0] = '\0';
	if (n > 10 && !strcmp(pm->exe + n - 10, " (deleted)"))
		pm->exe[n - 10] = '\0';
	int rc = read_maps(pm, err, errlen);
	if (rc) {
		int e = errno;
		procmods_free(pm);
		errno = e;
		return rc;
	}
	pm->callbacks.find_elf = find_elf;
	pm->callbacks.find_debuginfo = no_debuginfo;
	pm->callbacks.section_address = dwfl_offline_section_address;
	current = pm;
	pm->dwfl = dwfl_begin(&pm->callbacks);
	if (!pm->dwfl) {
		procmods_free(pm);
		return jh_err(err, errlen, JH_ENOMEM, "libdwfl: %s", dwfl_errmsg(-1));
	}
	dwfl_report_begin(pm->dwfl);
	int e = dwfl_linux_proc_report(pm->dwfl, pid);
	dwfl_report_end(pm->dwfl, NULL, NULL);
	if (e) {
		procmods_free(pm);
		errno = e > 0 ? e : EIO;
		return jh_err(err, errlen, JH_EIO, "cannot read the maps of process %d: %s", (int)pid,
			      e > 0 ? strerror(e) : dwfl_errmsg(-1));
	}
	*out = pm;
	return 0;
}

/* ---- finding mallctl ---- */

static const char *const fn_names[] = { "mallctl", "je_mallctl", "_rjem_mallctl" };
static const char *const fn_conf[] = { "MALLOC_CONF", "JE_MALLOC_CONF", "_RJEM_MALLOC_CONF" };

/* jemalloc's public names (an unprefixed build's), and the beginnings of
 * the C++ operators it may define. */
static const char *const public_names[] = {
	"malloc", "free", "calloc", "realloc", "posix_memalign", "aligned_alloc", "memalign",
	"valloc", "pvalloc", "malloc_usable_size", "mallocx", "rallocx", "xallocx", "sallocx",
	"dallocx", "sdallocx", "nallocx", "mallctl", "mallctlnametomib", "mallctlbymib",
	"malloc_stats_print", "__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc",
	"__libc_memalign", "__libc_valloc", "__libc_pvalloc", "__posix_memalign", "free_sized",
	"free_aligned_sized",
};
static const char *const cxx_prefixes[] = { "_Znw", "_Zna", "_Zdl", "_Zda" };

/* jemalloc's source files (5.0 to 5.3), whose local functions are its. */
static const char *const jemalloc_sources[] = {
	"arena.c", "background_thread.c", "base.c", "bin.c", "bin_info.c", "bitmap.c",
	"buf_writer.c", "cache_bin.c", "ckh.c", "counter.c", "ctl.c", "decay.c", "div.c",
	"ecache.c", "edata.c", "edata_cache.c", "ehooks.c", "emap.c", "eset.c", "exp_grow.c",
	"extent.c", "extent_dss.c", "extent_mmap.c", "fxp.c", "hash.c", "hook.c", "hooks.c",
	"hpa.c", "hpa_hooks.c", "hpdata.c", "inspect.c", "jemalloc.c", "jemalloc_cpp.cpp",
	"large.c", "log.c", "malloc_io.c", "mutex.c", "mutex_pool.c", "nstime.c", "pa.c",
	"pa_extra.c", "pac.c", "pages.c", "peak_event.c", "prng.c", "prof.c", "prof_data.c",
	"prof_log.c", "prof_recent.c", "prof_stats.c", "prof_sys.c", "psset.c", "rtree.c",
	"safety_check.c", "san.c", "san_bump.c", "sc.c", "sec.c", "stats.c", "sz.c", "tcache.c",
	"test_hooks.c", "thread_event.c", "ticker.c", "tsd.c", "witness.c", "zone.c",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

static bool allocator_name(const char *s, int which)
{
	if (!strncmp(s, "je_", 3) || !strncmp(s, "_rjem_", 6))
		return true;
	if (which != 0)
		return false;
	for (size_t i = 0; i < N(cxx_prefixes); i++)
		if (!strncmp(s, cxx_prefixes[i], 4))
			return true;
	const char *at = strchr(s, '@');   /* "malloc@@VERSION" */
	char base[64];
	if (at && (size_t)(at - s) < sizeof(base)) {
		memcpy(base, s, (size_t)(at - s));
		base[at - s] = '\0';
		s = base;
	}
	return in_list(s, public_names, N(public_names));
}

static const char *module_name(Dwfl_Module *mod, Dwarf_Addr *lo, Dwarf_Addr *hi)
{
	return dwfl_module_info(mod, NULL, lo, hi, NULL, NULL, NULL, NULL);
}

/* Which of fn_names MOD defines as a function: its index and address. */
static int defines(Dwfl_Module *mod, uint64_t *addr)
{
	int n = dwfl_module_getsymtab(mod), best = -1;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &a, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || (name[0] != 'm' && name[0] != 'j' && name[0] != '_'))
			continue;
		if (shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		for (int k = 0; k < (int)N(fn_names); k++)
			if (!strcmp(name, fn_names[k]) && (best < 0 || k < best)) {
				best = k;
				*addr = a;
			}
	}
	return best;
}

struct search {
	struct procmods *pm;
	Dwfl_Module *found[3];    /* the program, a libjemalloc*, another object */
	int which[3];
	uint64_t addr[3];
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int each_module(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr lo, void *arg)
{
	struct search *s = arg;
	Dwarf_Addr bias;
	uint64_t addr = 0;
	int which = name && name[0] != '[' ? defines(mod, &addr) : -1;
	dwfl_module_eh_cfi(mod, &bias);   /* read now, not while a thread waits */
	if (which < 0)
		return DWARF_CB_OK;
	int slot = !strcmp(name, s->pm->exe) ? 0 : !strncmp(base_name(name), "libjemalloc", 11) ? 1 : 2;
	if (!s->found[slot]) {
		s->found[slot] = mod;
		s->which[slot] = which;
		s->addr[slot] = addr;
	}
	return DWARF_CB_OK;
}

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts and merges R[0..*n). */
static void merge(struct range *r, size_t *n)
{
	if (!*n)
		return;
	jh_qsort(r, *n, sizeof(*r), range_cmp);
	size_t k = 0;
	for (size_t i = 1; i < *n; i++) {
		if (r[i].lo <= r[k].hi) {
			if (r[i].hi > r[k].hi)
				r[k].hi = r[i].hi;
		} else {
			r[++k] = r[i];
		}
	}
	*n = k + 1;
}

static bool in_ranges(const struct range *r, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r[mid].hi <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && r[lo].lo <= pc && pc < r[lo].hi;
}

/* The allocator's functions in MOD (jemalloc linked into a larger object). */
static int allocator_ranges(struct procmods *pm, Dwfl_Module *mod, int which)
{
	int n = dwfl_module_getsymtab(mod);
	if (n < 1)
		n = 1;
	pm->alloc = malloc((size_t)n * sizeof(*pm->alloc));
	pm->covered = malloc((size_t)n * sizeof(*pm->covered));
	if (!pm->alloc || !pm->covered)
		return JH_ENOMEM;
	bool jfile = false;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr a;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &a, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_FILE) {
			jfile = name && in_list(base_name(name), jemalloc_sources, N(jemalloc_sources));
			continue;
		}
		if (!name || shndx == SHN_UNDEF || (type != STT_FUNC && type != STT_GNU_IFUNC) || !sym.st_size)
			continue;
		struct range r = { a, a + sym.st_size };
		pm->covered[pm->ncovered++] = r;
		if (allocator_name(name, which) || (jfile && GELF_ST_BIND(sym.st_info) == STB_LOCAL))
			pm->alloc[pm->nalloc++] = r;
	}
	merge(pm->alloc, &pm->nalloc);
	merge(pm->covered, &pm->ncovered);
	return 0;
}

int procmods_find_mallctl(struct procmods *pm, struct procmods_fn *fn, char *err, size_t errlen)
{
	struct search s = { .pm = pm };
	current = pm;
	dwfl_getmodules(pm->dwfl, each_module, &s, 0);
	int slot = s.found[0] ? 0 : s.found[1] ? 1 : s.found[2] ? 2 : -1;
	if (slot < 0) {
		if (pm->unread[0])
			return jh_err(err, errlen, JH_EFORMAT, "none of mallctl, je_mallctl, _rjem_mallctl is defined in the objects of process %d that jheap could read (not: %s)",
				      (int)pm->pid, pm->unread);
		return jh_err(err, errlen, JH_EFORMAT, "no jemalloc in process %d: none of its objects defines mallctl, je_mallctl or _rjem_mallctl (in .symtab or .dynsym)",
			      (int)pm->pid);
	}
	Dwfl_Module *mod = s.found[slot];
	Dwarf_Addr lo = 0, hi = 0;
	const char *name = module_name(mod, &lo, &hi);
	snprintf(pm->fn_module, sizeof(pm->fn_module), "%s", name ? name : "?");
	pm->code.lo = lo;
	pm->code.hi = hi;
	pm->whole = !strncmp(base_name(pm->fn_module), "libjemalloc", 11);
	if (!pm->whole && allocator_ranges(pm, mod, s.which[slot]))
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	fn->machine = elf && gelf_getehdr(elf, &eh) ? eh.e_machine : 0;
	fn->elfclass = elf ? gelf_getclass(elf) : 0;
	fn->addr = s.addr[slot];
	fn->name = fn_names[s.which[slot]];
	fn->conf = fn_conf[s.which[slot]];
	fn->module = pm->fn_module;
	return 0;
}

bool procmods_is_allocator(const struct procmods *pm, uint64_t pc)
{
	if (pc < pm->code.lo || pc >= pm->code.hi)
		return false;
	if (pm->whole || in_ranges(pm->alloc, pm->nalloc, pc))
		return true;
	/* code of that object that no function symbol covers: it may be
	 * jemalloc's (only its executable mappings) */
	if (in_ranges(pm->covered, pm->ncovered, pc))
		return false;
	for (size_t i = 0; i < pm->nmaps; i++)
		if (pc >= pm->maps[i].start && pc < pm->maps[i].end)
			return pm->maps[i].exec;
	return false;
}

void procmods_describe(struct procmods *pm, uint64_t pc, char *buf, size_t len)
{
	Dwfl_Module *mod = dwfl_addrmodule(pm->dwfl, pc);
	Dwarf_Addr lo = 0;
	const char *m = mod ? module_name(mod, &lo, NULL) : NULL;
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *s = mod ? dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL) : NULL;
	if (s)
		snprintf(buf, len, "%s+0x%" PRIx64 " (in %s)", s, (uint64_t)off, m ? m : "?");
	else if (m)
		snprintf(buf, len, "%s+0x%" PRIx64, base_name(m), pc - lo);
	else
		snprintf(buf, len, "0x%" PRIx64, pc);
}

/* ---- unwinding a stopped thread ---- */

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	struct procmods *pm = arg;
	*thread_argp = pm;
	return tid == pm->tid;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct procmods *pm = arg;
	uint64_t w;
	if (pm->read(pm->read_arg, addr, &w, sizeof(w)) != (ssize_t)sizeof(w))
		return false;
	*result = w;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct procmods *pm = arg;
	Dwarf_Word r[64];
	unsigned n = pm->nregs < 64 ? pm->nregs : 64;
	for (unsigned i = 0; i < n; i++)
		r[i] = pm->regs[i];
	if (!dwfl_thread_state_registers(thread, 0, n, r))
		return false;
	dwfl_thread_state_register_pc(thread, pm->pc);
	return true;
}

static void no_detach(Dwfl *dwfl, void *arg)
{
}

static void no_thread_detach(Dwfl_Thread *thread, void *arg)
{
}

struct walk {
	struct procmods *pm;
	uint64_t where;
	uint64_t sp;              /* the last frame's stack pointer */
	int frames;
	bool found;
};

#define MAX_FRAMES 1024
#define SP_DWARF 7            /* x86-64's rsp */

static int each_frame(Dwfl_Frame *frame, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;
	bool activation = false;
	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	uint64_t at = activation || !w->frames ? pc : pc - 1;
	Dwarf_Word sp;
	if (dwfl_frame_reg(frame, SP_DWARF, &sp) == 0)
		w->sp = sp;
	if (procmods_is_allocator(w->pm, at)) {
		w->found = true;
		w->where = at;
		return DWARF_CB_ABORT;
	}
	return ++w->frames < MAX_FRAMES ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* The conservative rest: words of [SP, end of its mapping) (at most 512
 * KiB) that point into the allocator's code. */
static bool scan_stack(struct procmods *pm, uint64_t sp, uint64_t *where)
{
	uint64_t start, end;
	const char *path;
	if (procmods_mapping(pm, sp, &start, &end, &path))
		return true;   /* a stack pointer outside every mapping: unknown */
	if (end - sp > 512 * 1024)
		end = sp + 512 * 1024;
	static uint64_t buf[8192];
	for (uint64_t a = sp & ~(uint64_t)7; a < end;) {
		size_t len = end - a < sizeof(buf) ? (size_t)(end - a) : sizeof(buf);
		ssize_t got = pm->read(pm->read_arg, a, buf, len);
		if (got <= 0)
			return true;
		for (size_t i = 0; i < (size_t)got / 8; i++)
			if (procmods_is_allocator(pm, buf[i] - 1)) {
				*where = buf[i] - 1;
				return true;
			}
		a += (uint64_t)got & ~(uint64_t)7;
		if ((size_t)got < len)
			break;
	}
	return false;
}

enum procmods_verdict procmods_check_thread(struct procmods *pm, pid_t tid, const uint64_t *regs,
					    unsigned nregs, uint64_t pc, procmods_read_fn read,
					    void *arg, uint64_t *where_pc)
{
	current = pm;
	pm->tid = tid;
	pm->regs = regs;
	pm->nregs = nregs;
	pm->pc = pc;
	pm->read = read;
	pm->read_arg = arg;
	*where_pc = pc;
	if (procmods_is_allocator(pm, pc))
		return PROCMODS_ALLOCATOR;
	if (!pm->attached) {
		pm->thread_callbacks.next_thread = next_thread;
		pm->thread_callbacks.get_thread = get_thread;
		pm->thread_callbacks.memory_read = memory_read;
		pm->thread_callbacks.set_initial_registers = set_initial_registers;
		pm->thread_callbacks.detach = no_detach;
		pm->thread_callbacks.thread_detach = no_thread_detach;
		if (!dwfl_attach_state(pm->dwfl, NULL, pm->pid, &pm->thread_callbacks, pm))
			return scan_stack(pm, regs[SP_DWARF], where_pc) ? PROCMODS_ALLOCATOR : PROCMODS_CLEAN;
		pm->attached = true;
	}
	struct walk w = { .pm = pm, .sp = regs[SP_DWARF] };
	int rc = dwfl_getthread_frames(pm->dwfl, tid, each_frame, &w);
	if (w.found) {
		*where_pc = w.where;
		return PROCMODS_ALLOCATOR;
	}
	if (rc == 0)
		return PROCMODS_CLEAN;
	/* the unwinding stopped short: the rest of the stack, word by word */
	return scan_stack(pm, w.sp, where_pc) ? PROCMODS_ALLOCATOR : PROCMODS_CLEAN;
}

void procmods_free(struct procmods *pm)
{
	if (!pm)
		return;
	if (current == pm)
		current = NULL;
	if (pm->dwfl)
		dwfl_end(pm->dwfl);
	for (size_t i = 0; i < pm->nmaps; i++)
		free(pm->maps[i].path);
	free(pm->maps);
	free(pm->alloc);
	free(pm->covered);
	free(pm);
}

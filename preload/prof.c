/*
 * prof.c: the control library's commands, carried out through jemalloc's
 * mallctl: status, dump now, profiling on and off, reset and sample rate.
 *
 * mallctl is looked up on the first request, not at start, so a program
 * nobody asks about never pays for it.  It goes by three names (plain
 * builds such as Debian's, "je_" for builds with that prefix such as
 * Redis's bundled copy, "_rjem_" for Rust's tikv-jemallocator) and lives in
 * a shared library or, linked statically, in the program itself, where the
 * dynamic linker cannot see it: then the program's own ELF symbol table
 * (read from /proc/self/exe) gives its address.  The program's own
 * jemalloc comes first: a program that links one statically allocates with
 * it, whatever else is preloaded.
 *
 * Everything here runs on the control thread, which turns its own sampling
 * off first, so nothing it does appears in the program's profile, and
 * allocates nothing with malloc (fixed buffers, mmap, getdents64).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload/jheapctl.h"

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

static const char *const mallctl_names[] = { "mallctl", "je_mallctl", "_rjem_mallctl" };
#define NNAMES (sizeof(mallctl_names) / sizeof(mallctl_names[0]))

static mallctl_fn mallctl_p;       /* NULL until found */
static bool looked_up;
static bool quieted;               /* this thread's sampling is off */
static const char *mallctl_name;   /* which of mallctl_names */
static char mallctl_where[PATH_MAX]; /* the object that defines it */

static unsigned long dumps_requested, dumps_periodic;

int prof_quiet_begin(bool *was)
{
	mallctl_fn m = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
	bool off = false;
	size_t sz = sizeof(*was);
	return m && !m("thread.prof.active", was, &sz, &off, sizeof(off)) ? 0 : -1;
}

void prof_quiet_end(bool was)
{
	mallctl_fn m = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
	if (m)
		m("thread.prof.active", NULL, NULL, &was, sizeof(was));
}

void prof_after_fork(void)
{
	dumps_requested = dumps_periodic = 0;
	quieted = false;   /* the child's control thread is a new thread */
}

void reply_add(struct reply *r, const char *fmt, ...)
{
	if (r->len + 1 >= r->cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(r->buf + r->len, r->cap - r->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		r->len += (size_t)n < r->cap - r->len ? (size_t)n : r->cap - r->len - 1;
}

static int first_object(struct dl_phdr_info *info, size_t size, void *data)
{
	*(ElfW(Addr) *)data = info->dlpi_addr;
	return 1;   /* the first object is the program itself */
}

/* The address of the first of mallctl_names that the program's ELF file
 * defines as a function (.symtab, then .dynsym), or NULL; *WHICH is set to
 * its index.  Every offset of the file is checked against its size. */
static void *program_symbol(size_t *which)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	void *map = MAP_FAILED;
	if (!fstat(fd, &st) && st.st_size > (off_t)sizeof(ElfW(Ehdr)))
		map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	size_t size = (size_t)st.st_size;
	const unsigned char *base = map;
	const ElfW(Ehdr) *eh = map;
	void *found = NULL;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_shentsize != sizeof(ElfW(Shdr)) ||
	    eh->e_shoff > size || eh->e_shnum > (size - eh->e_shoff) / sizeof(ElfW(Shdr)))
		goto out;
	const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(base + eh->e_shoff);
	const unsigned types[2] = { SHT_SYMTAB, SHT_DYNSYM };
	for (int t = 0; t < 2 && !found; t++) {
		for (size_t i = 0; i < eh->e_shnum && !found; i++) {
			if (sh[i].sh_type != types[t] || sh[i].sh_link >= eh->e_shnum)
				continue;
			const ElfW(Shdr) *ss = &sh[sh[i].sh_link];
			if (sh[i].sh_offset > size || sh[i].sh_size > size - sh[i].sh_offset ||
			    ss->sh_offset > size || ss->sh_size > size - ss->sh_offset)
				continue;
			const ElfW(Sym) *sym = (const ElfW(Sym) *)(base + sh[i].sh_offset);
			const char *str = (const char *)base + ss->sh_offset;
			size_t nsym = sh[i].sh_size / sizeof(ElfW(Sym));
			for (size_t k = 0; k < nsym && !found; k++) {
				if ((sym[k].st_info & 0xf) != STT_FUNC || sym[k].st_shndx == SHN_UNDEF ||
				    sym[k].st_name >= ss->sh_size)
					continue;
				const char *name = str + sym[k].st_name;
				size_t room = ss->sh_size - sym[k].st_name;
				for (size_t n = 0; n < NNAMES; n++) {
					size_t len = strlen(mallctl_names[n]);
					if (len < room && !memcmp(name, mallctl_names[n], len + 1)) {
						ElfW(Addr) bias = 0;
						dl_iterate_phdr(first_object, &bias);
						found = (void *)(bias + sym[k].st_value);
						*which = n;
						break;
					}
				}
			}
		}
	}
out:
	munmap(map, size);
	return found;
}

static void look_up(void)
{
	size_t which = 0;
	void *p = program_symbol(&which);
	if (p) {
		if (readlink("/proc/self/exe", mallctl_where, sizeof(mallctl_where) - 1) < 0)
			snprintf(mallctl_where, sizeof(mallctl_where), "the program");
	} else {
		for (which = 0; which < NNAMES && !p; which++)
			p = dlsym(RTLD_DEFAULT, mallctl_names[which]);
		which--;
		Dl_info info;
		if (p && dladdr(p, &info) && info.dli_fname)
			snprintf(mallctl_where, sizeof(mallctl_where), "%s", info.dli_fname);
	}
	if (p) {
		mallctl_name = mallctl_names[which];
		mallctl_p = (mallctl_fn)p;
	}
}

/* Finds mallctl once; then turns sampling off for the control thread. */
static mallctl_fn get_mallctl(void)
{
	if (!looked_up) {
		looked_up = true;
		look_up();
	}
	if (mallctl_p && !quieted) {
		bool off = false;
		quieted = true;
		mallctl_p("thread.prof.active", NULL, NULL, &off, sizeof(off));
	}
	return mallctl_p;
}

static bool get_bool(const char *name, bool *v)
{
	size_t sz = sizeof(*v);
	return mallctl_p(name, v, &sz, NULL, 0) == 0;
}

static bool get_size(const char *name, size_t *v)
{
	size_t sz = sizeof(*v);
	return mallctl_p(name, v, &sz, NULL, 0) == 0;
}

/* The environment variable the jemalloc found reads its settings from:
 * jemalloc puts its prefix, in capitals, before MALLOC_CONF. */
static const char *conf_variable(void)
{
	if (mallctl_name == mallctl_names[1])
		return "JE_MALLOC_CONF";
	if (mallctl_name == mallctl_names[2])
		return "_RJEM_MALLOC_CONF";
	return "MALLOC_CONF";
}

/* How to get a jemalloc with profiling: Rust's crates turn it on with a
 * feature. */
static const char *enable_prof_hint(void)
{
	return mallctl_name == mallctl_names[2] ?
		"--enable-prof; in Rust, the \"profiling\" feature of jemalloc-sys or tikv-jemalloc-sys" :
		"--enable-prof";
}

/* Writes one line without "error " or "ok " when there is no mallctl,
 * no profiling compiled in or profiling not enabled at start; returns
 * true when profiling works.  Looks mallctl up but does not quiet the
 * calling thread. */
static bool profiling_works(struct reply *r)
{
	if (!looked_up) {
		looked_up = true;
		look_up();
	}
	if (!mallctl_p) {
		reply_add(r, "no jemalloc in process %d: none of mallctl, je_mallctl, _rjem_mallctl is defined (start it with jheap record, or preload libjemalloc.so.2)\n",
			  (int)getpid());
		return false;
	}
	bool compiled = false, enabled = false;
	if (!get_bool("config.prof", &compiled) || !compiled) {
		reply_add(r, "the jemalloc in process %d (%s in %s) was built without profiling (%s)\n",
			  (int)getpid(), mallctl_name, mallctl_where, enable_prof_hint());
		return false;
	}
	if (!get_bool("opt.prof", &enabled) || !enabled) {
		reply_add(r, "heap profiling is not enabled in process %d: jemalloc reads %s=prof:true only when the program starts\n",
			  (int)getpid(), conf_variable());
		return false;
	}
	return true;
}

/* Writes the "error" line when there is no mallctl or no profiling;
 * returns true when the command can go on. */
static bool need_profiling(struct reply *r)
{
	char why[PATH_MAX + 300];
	struct reply w = { why, 0, sizeof(why) };
	get_mallctl();
	if (profiling_works(&w))
		return true;
	reply_add(r, "error %s", why);
	return false;
}

int prof_check_start(struct reply *r)
{
	return profiling_works(r) ? 0 : -1;
}

/* The prefix prof_rename() set, "" when none. */
static char renamed[PATH_MAX];

int prof_rename(const char *name)
{
	if (!looked_up) {
		looked_up = true;
		look_up();
	}
	const char *prefix = NULL;
	size_t sz = sizeof(prefix);
	bool enabled = false;
	if (!mallctl_p || !get_bool("opt.prof", &enabled) || !enabled ||
	    mallctl_p("opt.prof_prefix", &prefix, &sz, NULL, 0) || !prefix || !*prefix)
		return -1;
	const char *slash = strrchr(prefix, '/');
	char want[PATH_MAX];
	int n = slash ? snprintf(want, sizeof(want), "%.*s/%s", (int)(slash - prefix), prefix, name)
		      : snprintf(want, sizeof(want), "%s", name);
	if (n <= 0 || (size_t)n >= sizeof(want))
		return -1;
	if (!strcmp(want, prefix))
		return 0;
	const char *p = want;
	if (mallctl_p("prof.prefix", NULL, NULL, &p, sizeof(p)))
		return -1;   /* before jemalloc 5.3: the name it started with stays */
	memcpy(renamed, want, (size_t)n + 1);
	return 0;
}

void prof_off_for_good(void)
{
	if (!looked_up) {
		looked_up = true;
		look_up();
	}
	bool off = false;
	if (!mallctl_p)
		return;
	mallctl_p("prof.thread_active_init", NULL, NULL, &off, sizeof(off));
	mallctl_p("prof.active", NULL, NULL, &off, sizeof(off));
	mallctl_p("thread.prof.active", NULL, NULL, &off, sizeof(off));
}

/* The dump prefix as an absolute path (jemalloc opens a relative one from
 * the current folder at the time of the dump), or "" when unset. */
static void dump_prefix(char *out, size_t len)
{
	const char *prefix = renamed[0] ? renamed : NULL;
	size_t sz = sizeof(prefix);
	out[0] = '\0';
	if (!prefix && (mallctl_p("opt.prof_prefix", &prefix, &sz, NULL, 0) || !prefix || !*prefix))
		return;
	char cwd[PATH_MAX];
	int n = prefix[0] != '/' && getcwd(cwd, sizeof(cwd)) ?
		snprintf(out, len, "%s/%s", cwd, prefix) : snprintf(out, len, "%s", prefix);
	if (n < 0 || (size_t)n >= len)
		out[0] = '\0';   /* too long to name: no dump can be found by it */
}

/* The dump jemalloc has just written when asked without a file name:
 * of the files PREFIX.<pid>.<seq>.m<N>.heap, the one modified last (then
 * the highest N), if that was at SINCE or later.  Not simply the highest
 * N: an exec'd image of the same pid starts jemalloc's counters at 0
 * again and overwrites the earlier image's files.  SINCE is read from the
 * coarse clock, which file times come from.  The folder is read with
 * getdents64 into a buffer on the stack (opendir would malloc). */
/* The folder of the dump prefix PREFIX into DIR ("/" for "/x", "." for
 * a bare name); returns the prefix's last component. */
static const char *prefix_dir(const char *prefix, char *dir, size_t len)
{
	const char *slash = strrchr(prefix, '/');
	if (!slash) {
		snprintf(dir, len, ".");
		return prefix;
	}
	snprintf(dir, len, "%.*s", (int)(slash - prefix + (slash == prefix)), prefix);
	return slash + 1;
}

static int find_manual_dump(const char *prefix, const struct timespec *since,
			    char *path, size_t pathlen)
{
	char dir[PATH_MAX], head[NAME_MAX + 32];
	if (!strchr(prefix, '/'))
		return -1;
	const char *base = prefix_dir(prefix, dir, sizeof(dir));
	snprintf(head, sizeof(head), "%s.%d.", base, (int)getpid());
	size_t hl = strlen(head);
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	struct timespec best = *since;
	long long best_n = -1;
	char buf[8192];
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			if (strncmp(d->d_name, head, hl))
				continue;
			/* <seq>.m<N>.heap */
			char *s = d->d_name + hl, *e;
			strtoull(s, &e, 10);
			if (e == s || strncmp(e, ".m", 2))
				continue;
			s = e + 2;
			long long v = strtoll(s, &e, 10);
			struct stat st;
			if (e == s || strcmp(e, ".heap") || fstatat(fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW))
				continue;
			if (st.st_mtim.tv_sec < best.tv_sec ||
			    (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec < best.tv_nsec) ||
			    (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec == best.tv_nsec && v < best_n))
				continue;
			int k = snprintf(path, pathlen, "%s/%s", strcmp(dir, "/") ? dir : "", d->d_name);
			if (k > 0 && (size_t)k < pathlen) {
				best = st.st_mtim;
				best_n = v;
			}
		}
	}
	close(fd);
	return best_n >= 0 ? 0 : -1;
}

/* prof.dump to jemalloc's own file name; PATH gets it. */
static int dump(struct reply *r, char *path, size_t pathlen)
{
	if (!need_profiling(r))
		return -1;
	char prefix[PATH_MAX];
	dump_prefix(prefix, sizeof(prefix));
	if (!prefix[0]) {
		reply_add(r, "error process %d has no dump prefix (prof_prefix is empty), so jemalloc writes no dump\n",
			  (int)getpid());
		return -1;
	}
	struct timespec since;
	clock_gettime(CLOCK_REALTIME_COARSE, &since);
	dumpfile_forget();
	int e = mallctl_p("prof.dump", NULL, NULL, NULL, 0);
	if (e) {
		/* jemalloc says EFAULT whatever went wrong: the usual cause is a
		 * folder the process may not write in, as a daemon that dropped
		 * root to its own user may not */
		char dir[PATH_MAX];
		prefix_dir(prefix, dir, sizeof(dir));
		if (dumpfile_refused()[0])
			reply_add(r, "error jemalloc could not write a dump: %s (a dump is made only as a new file of this process's user, never through a link)\n",
				  dumpfile_refused());
		else if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS))
			reply_add(r, "error it runs as user %u, who may not write in %s (%s), so jemalloc could not write a dump there: make the folder writable for that user, or record with --dir naming one it may write in\n",
				  (unsigned)geteuid(), dir, strerror(errno));
		else
			reply_add(r, "error jemalloc could not write a dump to %s.%d.*.heap (prof.dump: %s)\n",
				  prefix, (int)getpid(), strerror(e));
		return -1;
	}
	if (find_manual_dump(prefix, &since, path, pathlen)) {
		reply_add(r, "error jemalloc wrote a dump but not as %s.%d.<seq>.m<n>.heap (did the program change prof.prefix?)\n",
			  prefix, (int)getpid());
		return -1;
	}
	return 0;
}

void prof_cmd_dump(struct reply *r)
{
	char path[PATH_MAX];
	if (dump(r, path, sizeof(path)))
		return;
	dumps_requested++;
	reply_add(r, "ok %s\n", path);
}

int prof_dump_path(struct reply *r, char *path, size_t len)
{
	return dump(r, path, len);
}

int prof_allocated(size_t *bytes)
{
	if (!get_mallctl())
		return -1;
	uint64_t epoch = 1;
	size_t sz = sizeof(epoch);
	if (mallctl_p("epoch", &epoch, &sz, &epoch, sizeof(epoch)))
		return -1;
	return get_size("stats.allocated", bytes) ? 0 : -1;
}

int prof_periodic_dump(struct reply *r)
{
	char path[PATH_MAX];
	if (dump(r, path, sizeof(path)))
		return -1;
	dumps_periodic++;
	return 0;
}

void prof_cmd_active(struct reply *r, bool on)
{
	if (!need_profiling(r))
		return;
	bool was = false;
	size_t sz = sizeof(was);
	int e = mallctl_p("prof.active", &was, &sz, &on, sizeof(on));
	if (e) {
		reply_add(r, "error prof.active: %s\n", strerror(e));
		return;
	}
	reply_add(r, "ok profiling in process %d is %s (it was %s)\n", (int)getpid(),
		  on ? "active" : "inactive", was ? "active" : "inactive");
}

void prof_cmd_reset(struct reply *r, long lg)
{
	if (!need_profiling(r))
		return;
	size_t v = (size_t)lg;
	int e = mallctl_p("prof.reset", NULL, NULL, lg >= 0 ? &v : NULL, lg >= 0 ? sizeof(v) : 0);
	if (e) {
		reply_add(r, "error prof.reset: %s\n", strerror(e));
		return;
	}
	size_t now = 0;
	get_size("prof.lg_sample", &now);
	if (now)
		reply_add(r, "ok profile of process %d reset; one sample per %zu bytes on average (lg_prof_sample:%zu)\n",
			  (int)getpid(), (size_t)1 << now, now);
	else
		reply_add(r, "ok profile of process %d reset; every allocation is sampled (lg_prof_sample:0)\n",
			  (int)getpid());
}

void prof_cmd_status(struct reply *r)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	reply_add(r, "ok\npid: %d\nprogram: %s\n", (int)getpid(), exe);
	if (!get_mallctl()) {
		reply_add(r, "jemalloc: none (no mallctl, je_mallctl or _rjem_mallctl in the process)\n");
		return;
	}
	const char *version = "?";
	size_t sz = sizeof(version);
	mallctl_p("version", &version, &sz, NULL, 0);
	if (!version)
		version = "?";
	/* a jemalloc built from a copy of its source without its VERSION
	 * file, as Rust's jemalloc-sys builds it, calls itself 0.0.0 */
	reply_add(r, "jemalloc: %s%s (%s in %s)\n", version,
		  strncmp(version, "0.0.0-", 6) ? "" : ", its build recorded no version", mallctl_name,
		  mallctl_where);
	bool compiled = false, enabled = false, active = false, accum = false, final = false;
	get_bool("config.prof", &compiled);
	get_bool("opt.prof", &enabled);
	if (!compiled)
		reply_add(r, "profiling: not compiled in (jemalloc was built without %s)\n", enable_prof_hint());
	else if (!enabled)
		reply_add(r, "profiling: not enabled (start the program with %s=prof:true)\n", conf_variable());
	else
		reply_add(r, "profiling: enabled\n");
	if (!compiled || !enabled)
		return;
	size_t lg = 0;
	ssize_t interval = -1;
	get_bool("prof.active", &active);
	get_bool("opt.prof_accum", &accum);
	get_bool("opt.prof_final", &final);
	get_size("prof.lg_sample", &lg);
	sz = sizeof(interval);
	mallctl_p("opt.lg_prof_interval", &interval, &sz, NULL, 0);
	char prefix[PATH_MAX];
	dump_prefix(prefix, sizeof(prefix));
	reply_add(r, "active: %s\n", active ? "yes" : "no");
	if (lg)
		reply_add(r, "sample: one per %zu bytes on average (lg_prof_sample:%zu)\n", (size_t)1 << lg, lg);
	else
		reply_add(r, "sample: every allocation (lg_prof_sample:0)\n");
	reply_add(r, "accum: %s\n", accum ? "yes (prof_accum: --alloc_space works)" : "no");
	reply_add(r, "dumps: %s%s.%d.<seq>.<kind>.heap\n", prefix[0] ? "" : "none: ",
		  prefix[0] ? prefix : "(prof_prefix is empty)", (int)getpid());
	reply_add(r, "at exit: %s\n", final ? "a dump (prof_final)" : "no dump");
	if (interval >= 0)
		reply_add(r, "interval dumps: every %llu bytes allocated (lg_prof_interval:%zd)\n",
			  1ULL << interval, interval);
	if (jheapctl_every_ms)
		reply_add(r, "periodic dumps: every %.3g s\n", jheapctl_every_ms / 1000.0);
	reply_add(r, "dumps taken: %lu on request, %lu periodic\n", dumps_requested, dumps_periodic);
	peaks_status(r);
}

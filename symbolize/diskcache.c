/*
 * diskcache: the persistent symbol cache (see diskcache.h for the rules):
 * its folder, each module's file name, the checks that a file may be
 * trusted and is not stale, and writing files safely (an flock'd append,
 * or a temporary file renamed into place).  The file format is dcfile.c's.
 */
#include "symbolize/diskcache.h"
#include "symbolize/dcfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "analyzer/strtab.h"
#include "lib/array.h"
#include "lib/chars.h"
#include "lib/errors.h"
#include "lib/hash.h"

struct diskcache {
	int dirfd;
	char *dir;
	const char *const *dbgdirs; /* --debuginfo-dir folders, absolute (borrowed) */
	size_t ndbgdirs;
	struct dcmodule *modules;
	bool pruned;              /* old files removed in this run */
};

/* mkdir -p with mode 0700 for every folder it creates. */
static int dc_mkdirs(const char *path)
{
	char buf[4096];
	size_t n = strlen(path);
	if (n >= sizeof buf) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, path, n + 1);
	for (char *q = buf + 1;; q++) {
		if (*q == '/' || !*q) {
			char c = *q;
			*q = '\0';
			if (mkdir(buf, 0700) && errno != EEXIST)
				return -1;
			if (!c)
				return 0;
			*q = c;
		}
	}
}

struct diskcache *diskcache_new(const char *dir, const char *const *debuginfo_dirs,
				 char *err, size_t errlen)
{
	char base[4096];
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (dir) {
		snprintf(base, sizeof base, "%s", dir);
	} else if (xdg && xdg[0] == '/') {
		/* the XDG Base Directory Specification: a relative value
		 * is ignored */
		snprintf(base, sizeof base, "%s", xdg);
	} else if (home && home[0] == '/') {
		snprintf(base, sizeof base, "%s/.cache", home);
	} else {
		jh_err(err, errlen, JH_EIO, "neither XDG_CACHE_HOME nor HOME is an absolute path");
		return NULL;
	}
	if (dc_mkdirs(base)) {
		jh_err(err, errlen, JH_EIO, "cannot create '%s': %s", base, strerror(errno));
		return NULL;
	}
	int bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0) {
		jh_err(err, errlen, JH_EIO, "cannot open '%s': %s", base, strerror(errno));
		return NULL;
	}
	struct diskcache *dc = calloc(1, sizeof *dc);
	if (!dc || asprintf(&dc->dir, "%s/jheap", base) < 0) {
		if (dc)
			dc->dir = NULL;
		jh_err(err, errlen, JH_ENOMEM, "out of memory");
		goto fail;
	}
	dc->dirfd = -1;
	if (mkdirat(bfd, "jheap", 0700) && errno != EEXIST) {
		jh_err(err, errlen, JH_EIO, "cannot create '%s': %s", dc->dir, strerror(errno));
		goto fail;
	}
	/* O_NOFOLLOW: a symbolic link in place of the folder could lead the
	 * cache anywhere, into a folder another user controls. */
	dc->dirfd = openat(bfd, "jheap", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dc->dirfd < 0) {
		if (errno == ELOOP || errno == ENOTDIR)
			jh_err(err, errlen, JH_EIO, "'%s' is not a folder (a symbolic link?); not using it",
			       dc->dir);
		else
			jh_err(err, errlen, JH_EIO, "cannot open '%s': %s", dc->dir, strerror(errno));
		goto fail;
	}
	struct stat st;
	if (fstat(dc->dirfd, &st)) {
		jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", dc->dir, strerror(errno));
		goto fail;
	}
	if (st.st_uid != geteuid()) {
		jh_err(err, errlen, JH_EIO, "'%s' belongs to another user; not using it", dc->dir);
		goto fail;
	}
	if ((st.st_mode & 077) && fchmod(dc->dirfd, 0700)) {
		jh_err(err, errlen, JH_EIO, "'%s' is open to other users and cannot be closed: %s",
		       dc->dir, strerror(errno));
		goto fail;
	}
	dc->dbgdirs = debuginfo_dirs;
	while (debuginfo_dirs && debuginfo_dirs[dc->ndbgdirs])
		dc->ndbgdirs++;
	close(bfd);
	return dc;
fail:
	close(bfd);
	diskcache_free(dc);
	return NULL;
}

/* Drops what was read from the file (and the units added since), leaving
 * the module as if it had none. */
static void dc_forget_file(struct dcmodule *m)
{
	free(m->buf);
	free(m->strs);
	free(m->frames);
	free(m->ents);
	for (size_t i = 0; i < m->nunits; i++)
		if (m->units[i].owned) {
			free(m->units[i].tops);
			free(m->units[i].seqs);
		}
	free(m->units);
	free(m->tops);
	free(m->seqs);
	free(m->mapunits);
	free(m->mapranges);
	m->mapunits = NULL;
	m->mapranges = NULL;
	m->nmapunits = m->nmapranges = 0;
	m->debug_known = false;
	m->buf = NULL;
	m->strs = NULL;
	m->frames = NULL;
	m->ents = NULL;
	m->units = NULL;
	m->tops = NULL;
	m->seqs = NULL;
	m->nents = m->nunits = m->nloaded = m->capunits = 0;
	m->nold = 0;
	m->old_nframes = m->old_nstrings = m->old_strbytes = 0;
	m->filelen = m->bodylen = 0;
	m->nparts = 0;
	m->map_loaded = false;
	m->partwhy[0] = '\0';
}

static void dc_module_free(struct dcmodule *m)
{
	dc_forget_file(m);
	free(m->obj);
	free(m->key);
	free(m->added);
	free(m);
}

void diskcache_free(struct diskcache *dc)
{
	if (!dc)
		return;
	if (dc->dirfd >= 0)
		close(dc->dirfd);
	for (struct dcmodule *m = dc->modules, *next; m; m = next) {
		next = m->next;
		dc_module_free(m);
	}
	free(dc->dir);
	free(dc);
}

static bool dc_same_time(const struct stat *st, int64_t sec, int64_t nsec)
{
	return st->st_mtim.tv_sec == sec && st->st_mtim.tv_nsec == nsec;
}

static bool dc_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* True when one of the places symcache would look for separate debug info
 * of M holds a file: a cache made without debug info is then stale. */
static bool dc_debuginfo_appeared(const struct diskcache *dc, const struct dcmodule *m,
				  struct symmodule *mod)
{
	char path[8192];
	const char *obj = m->obj;
	const char *slash = strrchr(obj, '/');
	int dirlen = slash ? (int)(slash - obj) : 0;
	const char *link = symmodule_debuglink(mod);
	size_t nd = dc->ndbgdirs + 1;
	for (size_t i = 0; i < nd; i++) {
		const char *d = i < dc->ndbgdirs ? dc->dbgdirs[i] : "/usr/lib/debug";
		if (m->build_id[0] && m->build_id[1]) {
			snprintf(path, sizeof path, "%s/.build-id/%.2s/%s.debug", d, m->build_id,
				 m->build_id + 2);
			if (dc_exists(path))
				return true;
		}
		if (link) {
			snprintf(path, sizeof path, "%s/%.*s/%s", d, dirlen, obj, link);
			if (dc_exists(path))
				return true;
			snprintf(path, sizeof path, "%s/%s", d, link);
			if (i < dc->ndbgdirs && dc_exists(path))
				return true;
		}
		if (i < dc->ndbgdirs) {
			snprintf(path, sizeof path, "%s%s", d, obj);
			if (dc_exists(path))
				return true;
			snprintf(path, sizeof path, "%s%s.debug", d, obj);
			if (dc_exists(path))
				return true;
		}
	}
	if (link) {
		snprintf(path, sizeof path, "%.*s/%s", dirlen, obj, link);
		/* the debug link may name the object itself; that is no news */
		struct stat st;
		if (stat(path, &st) == 0 && !(m->objst_ok && st.st_ino == m->objst.st_ino &&
					      st.st_dev == m->objst.st_dev))
			return true;
		snprintf(path, sizeof path, "%.*s/.debug/%s", dirlen, obj, link);
		if (dc_exists(path))
			return true;
	}
	return false;
}

/* Reads the whole file FNAME of the folder, refusing anything but a regular
 * file of the user's, not reached through a link, and not too large. */
static char *dc_read(struct diskcache *dc, const char *fname, size_t *len, struct stat *stout,
		     char *why, size_t whylen)
{
	int fd = openat(dc->dirfd, fname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT)
			jh_err(why, whylen, JH_EIO, "no cache file yet");
		else
			jh_err(why, whylen, JH_EIO, "cannot open: %s", errno == ELOOP
			       ? "a symbolic link" : strerror(errno));
		return NULL;
	}
	struct stat st;
	char *buf = NULL;
	if (fstat(fd, &st)) {
		jh_err(why, whylen, JH_EIO, "cannot read: %s", strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		jh_err(why, whylen, JH_EIO, "not a regular file");
	} else if (st.st_uid != geteuid()) {
		jh_err(why, whylen, JH_EIO, "belongs to another user");
	} else if ((uint64_t)st.st_size > DISKCACHE_MAX_FILE) {
		jh_err(why, whylen, JH_EIO, "larger than %u MiB", DISKCACHE_MAX_FILE >> 20);
	} else if (!(buf = malloc((size_t)st.st_size + 1))) {
		jh_err(why, whylen, JH_ENOMEM, "out of memory");
	} else {
		size_t got = 0, want = (size_t)st.st_size;
		while (got < want) {
			ssize_t n = pread(fd, buf + got, want - got, (off_t)got);
			if (n <= 0) {
				jh_err(why, whylen, JH_EIO, "cannot read: %s",
				       n < 0 ? strerror(errno) : "shorter than its size");
				free(buf);
				buf = NULL;
				break;
			}
			got += (size_t)n;
		}
		*len = got;
		*stout = st;
	}
	close(fd);
	return buf;
}

/* What diskcache_module() checks a file against. */
struct dc_want {
	struct diskcache *dc;
	struct dcmodule *m;
	struct symmodule *mod;
};

/* dcfile_parse's identity check: the same object file, unchanged, the
 * same debug info. */
static int dc_identity(void *arg, const struct dcfile_identity *id, char *why, size_t whylen)
{
	const struct dc_want *w = arg;
	struct dcmodule *m = w->m;
	if (strcmp(id->build_id, m->build_id))
		return jh_err(why, whylen, JH_EFORMAT, "made for another build id");
	if (strcmp(id->object, m->key))
		return jh_err(why, whylen, JH_EFORMAT, "made for another file");
	if (!m->objst_ok || (uint64_t)m->objst.st_size != id->object_size ||
	    (uint64_t)m->objst.st_ino != id->object_ino ||
	    !dc_same_time(&m->objst, id->object_mtime_sec, id->object_mtime_nsec))
		return jh_err(why, whylen, JH_EFORMAT, "made for another version of the file");
	if (id->debug_path) {
		struct stat st;
		if (stat(id->debug_path, &st) || (uint64_t)st.st_size != id->debug_size ||
		    !dc_same_time(&st, id->debug_mtime_sec, id->debug_mtime_nsec))
			return jh_err(why, whylen, JH_EFORMAT, "its debug file '%s' changed or is gone",
				      id->debug_path);
		m->debug_known = true;
		m->debug_dev = st.st_dev;
		m->debug_ino = st.st_ino;
	} else if (dc_debuginfo_appeared(w->dc, m, w->mod)) {
		return jh_err(why, whylen, JH_EFORMAT, "made without debug info, which is there now");
	} else if (getenv("DEBUGINFOD_URLS") && *getenv("DEBUGINFOD_URLS")) {
		return jh_err(why, whylen, JH_EFORMAT, "made without debug info; debuginfod may have it");
	}
	return 0;
}

struct dcmodule *diskcache_module(struct diskcache *dc, struct symmodule *mod,
				  const char *obj)
{
	/* one module per object, however many mappings it has */
	for (struct dcmodule *o = dc->modules; o; o = o->next)
		if (!strcmp(o->obj, obj))
			return o;
	struct dcmodule *m = calloc(1, sizeof *m);
	if (!m || !(m->obj = strdup(obj))) {
		free(m);
		return NULL;
	}
	/* one file for "./server" run in one folder and "/srv/app/server" in
	 * another (or a link to it) */
	char *real = realpath(obj, NULL);
	m->key = real ? real : strdup(obj);
	if (!m->key) {
		free(m->obj);
		free(m);
		return NULL;
	}
	size_t blen = 0;
	const unsigned char *bid = symmodule_build_id(mod, &blen);
	m->objst_ok = stat(obj, &m->objst) == 0;
	/* named by build id and path: one file per copy of a binary, since
	 * a stripped copy must not get the names its original has */
	if (bid && blen && blen <= 64)
		jh_hex(m->build_id, bid, blen);
	snprintf(m->fname, sizeof m->fname, "%s-%016llx.sym",
		 m->build_id[0] ? m->build_id : "nobuildid",
		 (unsigned long long)jh_mix64(jh_hash_bytes(m->key, strlen(m->key), 0)));
	m->next = dc->modules;
	dc->modules = m;
	char why[400];
	size_t len = 0;
	if (!m->objst_ok) {
		snprintf(m->state, sizeof m->state, "not used: cannot stat '%s'", obj);
		return m;
	}
	struct stat fst;
	m->buf = dc_read(dc, m->fname, &len, &fst, why, sizeof why);
	if (!m->buf) {
		snprintf(m->state, sizeof m->state, "%.400s/%s: %s", dc->dir, m->fname, why);
		return m;
	}
	m->file_dev = fst.st_dev;
	m->file_ino = fst.st_ino;
	struct dc_want want = { dc, m, mod };
	if (dcfile_parse(m, len, dc_identity, &want, why, sizeof why)) {
		snprintf(m->state, sizeof m->state, "ignored %.400s/%s: %s", dc->dir, m->fname, why);
		dc_forget_file(m);
		return m;
	}
	char parts[300] = "";
	if (m->nparts)
		snprintf(parts, sizeof parts, " and %zu appended part%s", m->nparts,
			 m->nparts > 1 ? "s" : "");
	if (m->partwhy[0])
		snprintf(parts + strlen(parts), sizeof parts - strlen(parts),
			 "; the rest ignored (%s), the file to be rewritten", m->partwhy);
	snprintf(m->state, sizeof m->state, "loaded %zu answers and %zu units from %.400s/%s%s%s",
		 m->nents, m->nunits, dc->dir, m->fname,
		 m->nmapunits ? " with the unit map" : "", parts);
	/* a file in use is kept by dc_prune(): its time says when it was
	 * last used, updated at most once a day */
	struct stat st;
	if (!fstatat(dc->dirfd, m->fname, &st, AT_SYMLINK_NOFOLLOW) &&
	    st.st_mtim.tv_sec < time(NULL) - 86400)
		utimensat(dc->dirfd, m->fname, NULL, AT_SYMLINK_NOFOLLOW);
	return m;
}

int dcmodule_lookup(const struct dcmodule *m, uint64_t vaddr, struct symresult *out)
{
	size_t lo = m ? jh_lower_bound_u64(m->ents, m->nents, sizeof *m->ents,
					   offsetof(struct dcent, vaddr), vaddr) : 0;
	if (lo < (m ? m->nents : 0) && m->ents[lo].vaddr == vaddr) {
		*out = m->ents[lo].res;
		return 1;
	}
	return 0;
}

int dcmodule_add(struct dcmodule *m, uint64_t vaddr, const struct symresult *r)
{
	struct dcent e = { vaddr, *r, false };
	if (r->nframes > DISKCACHE_MAX_CHAIN)
		return 0;   /* not cached; looked up again next time */
	return JH_PUSH(m->added, m->nadded, m->capadded, e);
}

struct cumap *dcmodule_new_map(void *arg, Dwarf *dw, const char *debug_path,
			       const struct cuindex_range *valid, size_t nvalid)
{
	const struct dcmodule *m = arg;
	/* the map the file was written with, of the very file it was made
	 * from (whatever its name now) */
	struct stat st;
	if (!m || !m->map_loaded || !m->debug_known || !debug_path || stat(debug_path, &st) ||
	    st.st_dev != m->debug_dev || st.st_ino != m->debug_ino)
		return NULL;
	return cumap_new_known(dw, valid, nvalid, m->mapunits, m->nmapunits,
			       m->mapranges, m->nmapranges);
}

int dcmodule_add_map(struct dcmodule *m, const struct cumap *map)
{
	if (!m || !map || m->nmapunits)
		return 0;
	size_t nu = cumap_units(map, NULL, 0);
	size_t nr = cumap_ranges(map, NULL, 0);
	if (!nu || nu > DISKCACHE_MAX_ENTRIES || nr > DISKCACHE_MAX_ENTRIES)
		return 0;
	m->mapunits = malloc(nu * sizeof *m->mapunits);
	m->mapranges = malloc((nr + 1) * sizeof *m->mapranges);
	if (!m->mapunits || !m->mapranges) {
		free(m->mapunits);
		free(m->mapranges);
		m->mapunits = NULL;
		m->mapranges = NULL;
		return JH_ENOMEM;
	}
	m->nmapunits = cumap_units(map, m->mapunits, nu);
	m->nmapranges = cumap_ranges(map, m->mapranges, nr);
	return 0;
}

void dcmodule_install_units(void *arg, struct cumap *map)
{
	const struct dcmodule *m = arg;
	for (size_t i = 0; m && i < m->nloaded; i++) {
		const struct dcunit *u = &m->units[i];
		struct cumap_unitinfo ui = { u->tops, u->ntops, u->seqs, u->nseqs };
		cumap_set_unit(map, u->cuoff, &ui);
	}
}

int dcmodule_add_unit(void *arg, uint64_t cuoff, const struct cumap_unitinfo *ui)
{
	struct dcmodule *m = arg;
	size_t n = ui->ntops, ns = ui->nseqs;
	/* a unit the file has too is dropped by dcmodule_save(), which keeps
	 * one per offset, the file's first */
	if (!n)
		return 0;
	struct dcunit u = { cuoff, malloc(n * sizeof *u.tops), n,
			    ns ? malloc(ns * sizeof *u.seqs) : NULL, ns, true };
	if (!u.tops || (ns && !u.seqs) || JH_PUSH(m->units, m->nunits, m->capunits, u)) {
		free(u.tops);
		free(u.seqs);
		return JH_ENOMEM;
	}
	memcpy(u.tops, ui->tops, n * sizeof *u.tops);
	if (ns)
		memcpy(u.seqs, ui->seqs, ns * sizeof *u.seqs);
	return 0;
}

static int dc_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Removes cache files unused for DISKCACHE_MAX_AGE days, and temporary
 * files a killed run left behind, so the folder does not grow with every
 * build of every binary ever analyzed.  Only names jheap writes, only the
 * user's own files, never through a link. */
static void dc_prune(struct diskcache *dc)
{
	if (dc->pruned)
		return;
	dc->pruned = true;
	int fd = dup(dc->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	time_t now = time(NULL);
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		bool tmp = !strncmp(e->d_name, ".tmp-", 5);
		bool sym = n > 4 && !strcmp(e->d_name + n - 4, ".sym");
		struct stat st;
		if ((!tmp && !sym) || fstatat(dc->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    st.st_uid != geteuid() || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
			continue;
		if (st.st_mtim.tv_sec < now - (tmp ? 86400 : DISKCACHE_MAX_AGE * 86400))
			unlinkat(dc->dirfd, e->d_name, 0);
	}
	closedir(d);
}

/* The answers and units this run adds to the file, as a part appended to
 * it: 0 when written (or nothing to add), 1 when the file is no longer
 * the one read or would grow too large (then the caller writes it whole),
 * -1 on an error. */
static int dc_append(struct diskcache *dc, struct dcmodule *m, char *err, size_t errlen)
{
	char *buf;
	size_t len;
	int rc = dcfile_part(m, &buf, &len, err, errlen);
	if (rc || !buf)
		return rc;
	/* appended only to the very file read, locked against other runs'
	 * appends; a file replaced or grown since is written whole */
	int fd = openat(dc->dirfd, m->fname, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	rc = 1;
	if (fd < 0 || flock(fd, LOCK_EX) || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_dev != m->file_dev || st.st_ino != m->file_ino ||
	    (uint64_t)st.st_size != m->filelen) {
		rc = 1;
	} else if (dc_write_all(fd, buf, len)) {
		jh_err(err, errlen, JH_EIO, "cannot append to '%s/%s': %s", dc->dir, m->fname,
		       strerror(errno));
		/* a part cut short would only be ignored, but need not stay */
		if (ftruncate(fd, (off_t)m->filelen))
			(void)0;
		rc = -1;
	} else {
		rc = 0;
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

/* Writes the module's file whole: the answers of the file (the first
 * KEEP_OLD of them: all, or none when too many) and this run's, to a
 * temporary file renamed into place. */
static int dc_save_whole(struct diskcache *dc, struct dcmodule *m, struct symmodule *mod,
			 size_t keep_old, char *err, size_t errlen)
{
	const char *dbg = symmodule_debug_path(mod);
	struct stat dst;
	/* the debug file cannot be checked later: do not cache */
	if (dbg && (!*dbg || stat(dbg, &dst)))
		return 0;
	struct dcfile_identity id = {
		.object = m->key, .build_id = m->build_id, .debug_path = dbg,
		.object_size = (uint64_t)m->objst.st_size, .object_ino = (uint64_t)m->objst.st_ino,
		.object_mtime_sec = m->objst.st_mtim.tv_sec,
		.object_mtime_nsec = m->objst.st_mtim.tv_nsec,
	};
	if (dbg) {
		id.debug_size = (uint64_t)dst.st_size;
		id.debug_mtime_sec = dst.st_mtim.tv_sec;
		id.debug_mtime_nsec = dst.st_mtim.tv_nsec;
	}
	struct dcfile_image img;
	char tmp[200];
	int fd = -1, rc = dcfile_whole(m, keep_old, &id, &img, err, errlen);
	tmp[0] = '\0';
	if (rc || !img.npieces)
		goto out;
	rc = -1;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	snprintf(tmp, sizeof tmp, ".tmp-%ld-%lx-%s", (long)getpid(),
		 (unsigned long)(now.tv_nsec ^ (long)(uintptr_t)m), m->fname);
	fd = openat(dc->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		jh_err(err, errlen, JH_EIO, "cannot write '%s/%s': %s", dc->dir, tmp, strerror(errno));
		tmp[0] = '\0';
		goto out;
	}
	bool bad = false;
	for (size_t k = 0; k < img.npieces && !bad; k++)
		bad = dc_write_all(fd, img.piece[k].p, img.piece[k].n);
	if (bad) {
		jh_err(err, errlen, JH_EIO, "cannot write '%s/%s': %s", dc->dir, tmp, strerror(errno));
		goto out;
	}
	if (close(fd)) {
		fd = -1;
		jh_err(err, errlen, JH_EIO, "cannot write '%s/%s': %s", dc->dir, tmp, strerror(errno));
		goto out;
	}
	fd = -1;
	/* rename replaces whatever has the name, a symbolic link included,
	 * never what a link points to */
	if (renameat(dc->dirfd, tmp, dc->dirfd, m->fname)) {
		jh_err(err, errlen, JH_EIO, "cannot rename '%s/%s': %s", dc->dir, tmp, strerror(errno));
		goto out;
	}
	tmp[0] = '\0';
	rc = 0;
	dc_prune(dc);
out:
	if (fd >= 0)
		close(fd);
	if (tmp[0])
		unlinkat(dc->dirfd, tmp, 0);
	dcfile_image_release(&img);
	return rc;
}

int dcmodule_save(struct diskcache *dc, struct dcmodule *m, struct symmodule *mod,
		  char *err, size_t errlen)
{
	if (!m || !mod || !m->nadded || !m->objst_ok || m->written)
		return 0;
	m->written = true;
	/* old answers and new, sorted; one answer per address (two mappings
	 * of one file can ask for the same one) */
	jh_qsort(m->added, m->nadded, sizeof *m->added, dcfile_cmp_ent);
	size_t keep_old = m->nents + m->nadded > DISKCACHE_MAX_ENTRIES ? 0 : m->nents;
	/* appended to the file read when it is whole, keeps every answer,
	 * has room for a part and its unit map, and its parts together stay
	 * smaller than its body; else written whole (which also compacts).
	 * (A file whose parts stopped early is longer than what was used of
	 * it, so dc_append() would refuse it anyway: the test only spares
	 * building the part.) */
	if (m->nold && !m->partwhy[0] && keep_old && m->nparts < DC_MAX_PARTS &&
	    m->map_loaded == (m->nmapunits > 0) && m->filelen - m->bodylen < m->bodylen / 2) {
		int rc = dc_append(dc, m, err, errlen);
		if (rc <= 0)
			return rc;
	}
	return dc_save_whole(dc, m, mod, keep_old, err, errlen);
}

const char *dcmodule_state(const struct dcmodule *m)
{
	return m ? m->state : "";
}

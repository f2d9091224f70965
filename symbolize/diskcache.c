/*
 * diskcache: the persistent symbol cache (see diskcache.h for the rules).
 *
 * File layout, host byte order (the magic holds a byte-order mark, so a
 * file from another kind of machine is just "foreign"):
 *
 *   header      struct dc_header
 *   entries     nentries x struct dc_entry, vaddr strictly increasing
 *   frames      nframes x struct dc_frame, each entry's chain contiguous,
 *               innermost first
 *   units       nunits x struct dc_unit, CU offset strictly increasing: the
 *               units of the DWARF indexed in full so far
 *   tops        ntops x struct cuindex_top, each unit's top-level function
 *               ranges contiguous and sorted (see cuindex.h): a new address
 *               in a known unit indexes only its function
 *   seqs        nseqs x struct cuindex_seq, each unit's line-table
 *               sequences contiguous, sorted and apart: a new address
 *               decodes only the sequence holding it
 *   mapunits    nmapunits x uint64_t, increasing: the DIE offsets of the
 *               units of the DWARF's unit map (cumap_units)
 *   mapranges   nmapranges x struct cumap_range, in the map's search
 *               order: its ranges (cumap_ranges), so that a later
 *               run makes the map without reading unit headers or aranges
 *   strings     nstrings NUL-terminated strings, back to back; string 0
 *               is "" and stands for "none" (NULL) in a frame
 *
 * The checksum covers the body after the header.  Identity fields in the
 * header tie the file to one object: its build id, or (without one) its
 * path, size and modification time; and to the debug file the answers
 * came from.
 *
 * Appended parts may follow the body: a later run that only adds answers
 * writes them, and the units it indexed, as one part at the end of the
 * file rather than rewriting the whole (which for a large binary is most
 * of the cost of a run with few new addresses):
 *
 *   part header struct dc_part_header: its own offset in the file, the
 *               body's checksum, its counts and its own checksum
 *   entries     vaddr strictly increasing within the part, none already
 *               in the file
 *   frames      string ids and frame indexes run on from the parts
 *               before: the file's strings are the body's, then each
 *               part's in order, and likewise its frames
 *   units       top0 and seq0 index the part's own tops and seqs
 *   tops, seqs
 *   strings     nstrings NUL-terminated strings (no leading "")
 *
 * A part whose header or checksum is wrong ends the file there: what
 * comes before it is used, and the next write rewrites the file whole.
 * So does a file with DC_MAX_PARTS parts, or whose parts outgrow its
 * body.  An append takes an flock on the file and appends only when the
 * file is still the one read (same inode, same size); otherwise the run
 * writes a whole new file as before.
 */
#include "symbolize/diskcache.h"

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
#include "analyzer/util.h"

/* Bump whenever the format or any answer symcache gives changes: files of
 * another version are ignored and rewritten. */
#define DC_VERSION 5u
#define DC_MAGIC "JHSYMC\x01\x00"
#define DC_BOM 0x01020304u

struct dc_header {
	char magic[8];
	uint32_t bom;
	uint32_t version;
	uint32_t header_size;
	uint32_t nentries;
	uint32_t nframes;
	uint32_t nstrings;
	uint64_t strbytes;
	uint64_t checksum;
	/* identity: string ids, 0 for none */
	uint32_t object;        /* path of the object when written */
	uint32_t build_id;      /* hex */
	uint32_t debug_path;    /* the file the DWARF came from, 0: no DWARF */
	uint32_t reserved;
	uint64_t object_size, object_ino;
	int64_t object_mtime_sec, object_mtime_nsec;
	uint64_t debug_size;
	int64_t debug_mtime_sec, debug_mtime_nsec;
	uint32_t nunits, ntops;
	uint32_t nseqs, nmapunits;
	uint32_t nmapranges, reserved2;
};

#define DC_PART_MAGIC "JHSYMP\x01\x00"
/* Appended parts, at most: a file with more is rewritten whole. */
#define DC_MAX_PARTS 16

struct dc_part_header {
	char magic[8];
	uint64_t offset;        /* where in the file it starts */
	uint64_t body_checksum; /* the header's checksum: the body it follows */
	uint32_t nentries, nframes;
	uint32_t nstrings, nunits;
	uint32_t ntops, nseqs;
	uint64_t strbytes;
	uint64_t checksum;      /* of the part after this header */
};

struct dc_entry {
	uint64_t vaddr;
	uint32_t frame0;
	uint16_t nframes;
	uint8_t status;
	uint8_t reserved;
};

struct dc_frame {
	uint32_t name, linkage, file, decl_file;
	int32_t line, column, decl_line;
	uint32_t inlined;
};

struct dc_unit {
	uint64_t cuoff;
	uint32_t top0, ntops;
	uint32_t seq0, nseqs;
};

struct dcent {
	uint64_t vaddr;
	struct symresult res;
	bool old;                 /* from the file: its frames are m->frames' */
};

/* A unit's top-level functions (cuindex_tops) and line-table sequences
 * (cuindex_seqs), in memory. */
struct dcunit {
	uint64_t cuoff;
	struct cuindex_top *tops;
	size_t ntops;
	struct cuindex_seq *seqs;
	size_t nseqs;
	bool owned;               /* tops and seqs malloc'd here (this run's) */
};

struct dcmodule {
	struct dcmodule *next;
	char fname[160];          /* file name inside the folder */
	char *obj;                /* the object file, as named */
	char *key;                /* its path made absolute, without links (or
	                             as named when that fails): in the file's
	                             name and its header */
	char build_id[132];       /* hex, "" when none */
	struct stat objst;
	bool objst_ok;
	char *buf;                /* the file as read */
	const char **strs;
	struct symframe *frames;
	struct dcent *ents;       /* from the file, sorted */
	size_t nents;
	struct dcent *added;      /* this run's live answers */
	size_t nadded, capadded;
	struct cuindex_top *tops; /* from the file */
	struct cuindex_seq *seqs; /* from the file */
	/* the unit map's description, from the file or this run's */
	uint64_t *mapunits;
	size_t nmapunits;
	struct cumap_range *mapranges;
	size_t nmapranges;
	/* the file's frame and string blocks as written (the body's, then
	 * each appended part's), which a save that keeps every old answer
	 * copies rather than rebuilds */
	struct dc_block { const char *p; size_t n; } old_frames[DC_MAX_PARTS + 1],
		old_strs[DC_MAX_PARTS + 1];
	size_t nold;              /* blocks in each: 0 when none */
	size_t old_nframes, old_nstrings, old_strbytes;
	/* the file as read, to append to it */
	size_t filelen, bodylen;  /* bytes: the whole file used, its body */
	dev_t file_dev;
	ino_t file_ino;
	uint64_t body_checksum;
	size_t nparts;            /* appended parts read */
	bool map_loaded;          /* the file has the unit map */
	/* why the parts stopped early (a damaged part, too many): the file
	 * is then written whole; "" when they did not */
	char partwhy[200];
	struct dcunit *units;     /* from the file, then this run's, by cuoff */
	size_t nunits, capunits, nloaded;
	bool written;             /* dcmodule_save() has run */
	char state[1024];
};

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
		/* the XDG spec: a relative value is ignored */
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

/* The checksum of N bytes whose running jh_hash_fast() is H. */
static uint64_t dc_checksum_end(uint64_t h, uint64_t n)
{
	return jh_mix64(h ^ n);
}

static uint64_t dc_checksum(const char *p, size_t n)
{
	return dc_checksum_end(jh_hash_fast(p, n, 0), n);
}

/* One part of a file, located: the body (with the unit map) or an
 * appended part. */
struct dc_part {
	const struct dc_entry *ents;
	const struct dc_frame *frames;
	const char *units, *tops, *seqs, *strs;
	uint32_t nentries, nframes, nunits, ntops, nseqs, nstrings;
	uint64_t strbytes;
};

/* The bytes of a part's sections after its header, or UINT64_MAX when the
 * counts are out of bounds. */
static uint64_t dc_part_size(uint64_t nentries, uint64_t nframes, uint64_t nunits,
			     uint64_t ntops, uint64_t nseqs, uint64_t strbytes)
{
	if (nentries > DISKCACHE_MAX_ENTRIES || nframes > DISKCACHE_MAX_ENTRIES * 16ull ||
	    nunits > DISKCACHE_MAX_ENTRIES || ntops > DISKCACHE_MAX_ENTRIES ||
	    nseqs > DISKCACHE_MAX_ENTRIES || strbytes > DISKCACHE_MAX_FILE)
		return UINT64_MAX;
	return nentries * sizeof(struct dc_entry) + nframes * sizeof(struct dc_frame) +
	       nunits * sizeof(struct dc_unit) + ntops * sizeof(struct cuindex_top) +
	       nseqs * sizeof(struct cuindex_seq) + strbytes;
}

/* Locates the sections of a part that starts (after its header) at P. */
static void dc_part_locate(struct dc_part *pt, const char *p)
{
	pt->ents = (const void *)p;
	pt->frames = (const void *)(p + (size_t)pt->nentries * sizeof(struct dc_entry));
	pt->units = (const char *)(pt->frames + pt->nframes);
	pt->tops = pt->units + (size_t)pt->nunits * sizeof(struct dc_unit);
	pt->seqs = pt->tops + (size_t)pt->ntops * sizeof(struct cuindex_top);
	pt->strs = pt->seqs + (size_t)pt->nseqs * sizeof(struct cuindex_seq);
}

/* The appended part at m->buf + off, when whole and of this body: its
 * size in bytes (header included), else 0 with the reason in WHY. */
static size_t dc_read_part(struct dcmodule *m, size_t off, size_t len, uint64_t body_checksum,
			   struct dc_part *pt, char *why, size_t whylen)
{
	struct dc_part_header ph;
	const char *bad = NULL;
	uint64_t n = 0;
	if (len - off < sizeof ph) {
		bad = "shorter than a part header";
	} else {
		memcpy(&ph, m->buf + off, sizeof ph);
		n = dc_part_size(ph.nentries, ph.nframes, ph.nunits, ph.ntops, ph.nseqs,
				 ph.strbytes);
		if (memcmp(ph.magic, DC_PART_MAGIC, sizeof ph.magic) || ph.offset != off ||
		    ph.body_checksum != body_checksum || n > len - off - sizeof ph ||
		    ph.nstrings > ph.strbytes)
			bad = "bad part header";
		else if (dc_checksum(m->buf + off + sizeof ph, (size_t)n) != ph.checksum)
			bad = "bad part checksum";
	}
	if (bad) {
		jh_err(why, whylen, JH_EFORMAT, "%s at byte %zu", bad, off);
		return 0;
	}
	*pt = (struct dc_part){ .nentries = ph.nentries, .nframes = ph.nframes,
				.nunits = ph.nunits, .ntops = ph.ntops, .nseqs = ph.nseqs,
				.nstrings = ph.nstrings, .strbytes = ph.strbytes };
	dc_part_locate(pt, m->buf + off + sizeof ph);
	return sizeof ph + (size_t)n;
}

/* Splits the strings of part PT into m->strs from index *NS on: exactly
 * nstrings, each NUL-terminated. */
static bool dc_split_strings(struct dcmodule *m, const struct dc_part *pt, size_t *ns)
{
	const char *s = pt->strs;
	size_t end = *ns + pt->nstrings;
	if (pt->strbytes && s[pt->strbytes - 1])
		return false;
	for (size_t off = 0; off < pt->strbytes; (*ns)++) {
		if (*ns == end)
			return false;
		m->strs[*ns] = s + off;
		off += strlen(s + off) + 1;
	}
	return *ns == end;
}

static int dc_cmp_unit(const void *a, const void *b);
static int dc_cmp_ent(const void *a, const void *b);

/* The frames, entries and units of parts PT[0..np) into the module's
 * tables, every string id, frame index and range checked against what
 * the parts so far hold; entries and units then sorted, each address and
 * unit once.  m->strs holds every string. */
static int dc_build_tables(struct dcmodule *m, const struct dc_part *pt, size_t np,
			   char *why, size_t whylen)
{
	size_t nf = 0, ne = 0, nu = 0, nt = 0, nq = 0;
	for (size_t k = 0; k < np; k++) {
		nf += pt[k].nframes;
		ne += pt[k].nentries;
		nu += pt[k].nunits;
		nt += pt[k].ntops;
		nq += pt[k].nseqs;
	}
	m->frames = calloc(nf + 1, sizeof *m->frames);
	m->ents = calloc(ne + 1, sizeof *m->ents);
	m->tops = malloc((nt + 1) * sizeof *m->tops);
	m->seqs = malloc((nq + 1) * sizeof *m->seqs);
	m->units = calloc(nu + 1, sizeof *m->units);
	if (!m->frames || !m->ents || !m->tops || !m->seqs || !m->units)
		return jh_err(why, whylen, JH_ENOMEM, "out of memory");
	m->capunits = nu + 1;
	size_t ns = 0, f0 = 0, t0 = 0, q0 = 0;
	for (size_t k = 0; k < np; k++) {
		const struct dc_part *p = &pt[k];
		ns += p->nstrings;
		for (size_t i = 0; i < p->nframes; i++) {
			struct dc_frame f;
			memcpy(&f, &p->frames[i], sizeof f);
			if (f.name >= ns || f.linkage >= ns || f.file >= ns || f.decl_file >= ns ||
			    f.line < 0 || f.column < 0 || f.decl_line < 0 || f.inlined > 1)
				return jh_err(why, whylen, JH_EFORMAT, "bad frame %zu", f0 + i);
			m->frames[f0 + i] = (struct symframe){
				.name = m->strs[f.name], .linkage = m->strs[f.linkage],
				.file = m->strs[f.file], .decl_file = m->strs[f.decl_file],
				.line = f.line, .column = f.column, .decl_line = f.decl_line,
				.inlined = (int)f.inlined,
			};
		}
		f0 += p->nframes;
		size_t e0 = m->nents;
		for (size_t i = 0; i < p->nentries; i++) {
			struct dc_entry e;
			memcpy(&e, &p->ents[i], sizeof e);
			bool none = e.status == SYM_NONE;
			if (e.status > SYM_DWARF || (none != (e.nframes == 0)) ||
			    e.nframes > DISKCACHE_MAX_CHAIN || (uint64_t)e.frame0 + e.nframes > f0 ||
			    (i && e.vaddr <= m->ents[e0 + i - 1].vaddr))
				return jh_err(why, whylen, JH_EFORMAT, "bad entry %zu", e0 + i);
			m->ents[e0 + i] = (struct dcent){
				.vaddr = e.vaddr, .old = true,
				.res = { .status = (enum symstatus)e.status, .nframes = e.nframes,
					 .frames = e.nframes ? &m->frames[e.frame0] : NULL },
			};
		}
		m->nents += p->nentries;
		/* units: sorted, non-empty ranges and sorted sequences apart
		 * from one another */
		if (p->ntops)
			memcpy(m->tops + t0, p->tops, (size_t)p->ntops * sizeof *m->tops);
		if (p->nseqs)
			memcpy(m->seqs + q0, p->seqs, (size_t)p->nseqs * sizeof *m->seqs);
		for (size_t i = 0; i < p->nunits; i++) {
			struct dc_unit u;
			memcpy(&u, p->units + i * sizeof u, sizeof u);
			size_t ui = m->nunits + i;
			if (!u.ntops || (uint64_t)u.top0 + u.ntops > p->ntops ||
			    (uint64_t)u.seq0 + u.nseqs > p->nseqs ||
			    (i && u.cuoff <= m->units[ui - 1].cuoff))
				return jh_err(why, whylen, JH_EFORMAT, "bad unit %zu", ui);
			const struct cuindex_top *t = &m->tops[t0 + u.top0];
			for (size_t j = 0; j < u.ntops; j++)
				if (t[j].lo >= t[j].hi || (j && t[j].lo < t[j - 1].lo))
					return jh_err(why, whylen, JH_EFORMAT, "bad unit %zu", ui);
			const struct cuindex_seq *q = u.nseqs ? &m->seqs[q0 + u.seq0] : NULL;
			if (!cuindex_seqs_ordered(q, u.nseqs))
				return jh_err(why, whylen, JH_EFORMAT, "bad unit %zu", ui);
			m->units[ui] = (struct dcunit){ u.cuoff, (struct cuindex_top *)t, u.ntops,
							(struct cuindex_seq *)q, u.nseqs, false };
		}
		m->nunits += p->nunits;
		t0 += p->ntops;
		q0 += p->nseqs;
	}
	if (np > 1) {
		/* the parts' entries (few) sorted, then merged with the body's */
		size_t nb = pt[0].nentries;
		jh_qsort(m->ents + nb, m->nents - nb, sizeof *m->ents, dc_cmp_ent);
		struct dcent *all = malloc((m->nents + 1) * sizeof *all);
		if (!all)
			return jh_err(why, whylen, JH_ENOMEM, "out of memory");
		for (size_t i = 0, j = nb, n = 0; n < m->nents; n++)
			all[n] = j >= m->nents || (i < nb && m->ents[i].vaddr < m->ents[j].vaddr)
				 ? m->ents[i++] : m->ents[j++];
		free(m->ents);
		m->ents = all;
		jh_qsort(m->units, m->nunits, sizeof *m->units, dc_cmp_unit);
		for (size_t i = 1; i < m->nents; i++)
			if (m->ents[i].vaddr <= m->ents[i - 1].vaddr)
				return jh_err(why, whylen, JH_EFORMAT, "bad entry %zu", i);
		for (size_t i = 1; i < m->nunits; i++)
			if (m->units[i].cuoff <= m->units[i - 1].cuoff)
				return jh_err(why, whylen, JH_EFORMAT, "bad unit %zu", i);
	}
	m->nloaded = m->nunits;
	return 0;
}

/* Checks the file in m->buf[0..len) completely and builds the tables; on
 * any fault in the body returns -1 with the reason, leaving the module
 * empty.  A faulty appended part ends the file there (m->partwhy). */
static int dc_parse(struct diskcache *dc, struct dcmodule *m, struct symmodule *mod,
		    size_t len, char *why, size_t whylen)
{
	struct dc_header h;
	if (len < sizeof h)
		return jh_err(why, whylen, JH_EFORMAT, "shorter than a header");
	memcpy(&h, m->buf, sizeof h);
	if (memcmp(h.magic, DC_MAGIC, sizeof h.magic))
		return jh_err(why, whylen, JH_EFORMAT, "not a jheap symbol cache");
	if (h.bom != DC_BOM)
		return jh_err(why, whylen, JH_EFORMAT, "written on a machine of another byte order");
	if (h.version != DC_VERSION)
		return jh_err(why, whylen, JH_EFORMAT, "format version %u, this jheap writes %u",
			      h.version, DC_VERSION);
	if (h.header_size != sizeof h)
		return jh_err(why, whylen, JH_EFORMAT, "bad header size");
	uint64_t body = dc_part_size(h.nentries, h.nframes, h.nunits, h.ntops, h.nseqs,
				     h.strbytes);
	if (body != UINT64_MAX)
		body += (uint64_t)h.nmapunits * sizeof(uint64_t) +
			(uint64_t)h.nmapranges * sizeof(struct cumap_range);
	if (body == UINT64_MAX || h.nmapunits > DISKCACHE_MAX_ENTRIES ||
	    h.nmapranges > DISKCACHE_MAX_ENTRIES || (!h.nmapunits && h.nmapranges) ||
	    h.nstrings > h.strbytes || body > len - sizeof h)
		return jh_err(why, whylen, JH_EFORMAT, "sizes do not add up to the file's");
	const char *p = m->buf + sizeof h;
	if (dc_checksum(p, (size_t)body) != h.checksum)
		return jh_err(why, whylen, JH_EFORMAT, "bad checksum");
	struct dc_part pt[DC_MAX_PARTS + 1] = { {
		.nentries = h.nentries, .nframes = h.nframes, .nunits = h.nunits,
		.ntops = h.ntops, .nseqs = h.nseqs, .nstrings = h.nstrings, .strbytes = h.strbytes,
	} };
	dc_part_locate(&pt[0], p);
	const char *mapunits = pt[0].strs;
	const char *mapranges = mapunits + (size_t)h.nmapunits * sizeof(uint64_t);
	pt[0].strs = mapranges + (size_t)h.nmapranges * sizeof(struct cumap_range);
	/* the appended parts, up to the first that is not whole */
	size_t np = 1, off = sizeof h + (size_t)body, nstrings = h.nstrings;
	char *pwhy = m->partwhy;
	while (off < len && !pwhy[0]) {
		size_t n = 0;
		if (np > DC_MAX_PARTS)
			snprintf(pwhy, sizeof m->partwhy, "more than %d parts", DC_MAX_PARTS);
		else
			n = dc_read_part(m, off, len, h.checksum, &pt[np], pwhy, sizeof m->partwhy);
		if (n) {
			off += n;
			nstrings += pt[np++].nstrings;
		}
	}
	m->filelen = off;
	m->bodylen = sizeof h + (size_t)body;
	m->body_checksum = h.checksum;
	m->nparts = np - 1;
	/* strings: exactly nstrings per part, each NUL-terminated, the body's
	 * first empty */
	const char *s = pt[0].strs;
	if (!h.nstrings || !h.strbytes || s[0])
		return jh_err(why, whylen, JH_EFORMAT, "bad string table");
	m->strs = calloc(nstrings, sizeof *m->strs);
	if (!m->strs)
		return jh_err(why, whylen, JH_ENOMEM, "out of memory");
	size_t ns = 0;
	for (size_t k = 0; k < np; k++)
		if (!dc_split_strings(m, &pt[k], &ns))
			return jh_err(why, whylen, JH_EFORMAT, "bad string table");
	m->strs[0] = NULL;
	if (h.object >= h.nstrings || h.build_id >= h.nstrings || h.debug_path >= h.nstrings)
		return jh_err(why, whylen, JH_EFORMAT, "bad identity");
	/* identity: the same object file, unchanged, the same debug info */
	const char *bid = h.build_id ? m->strs[h.build_id] : "";
	const char *o = h.object ? m->strs[h.object] : "";
	if (strcmp(bid, m->build_id))
		return jh_err(why, whylen, JH_EFORMAT, "made for another build id");
	if (strcmp(o, m->key))
		return jh_err(why, whylen, JH_EFORMAT, "made for another file");
	if (!m->objst_ok || (uint64_t)m->objst.st_size != h.object_size ||
	    (uint64_t)m->objst.st_ino != h.object_ino ||
	    !dc_same_time(&m->objst, h.object_mtime_sec, h.object_mtime_nsec))
		return jh_err(why, whylen, JH_EFORMAT, "made for another version of the file");
	if (h.debug_path) {
		struct stat st;
		if (stat(m->strs[h.debug_path], &st) || (uint64_t)st.st_size != h.debug_size ||
		    !dc_same_time(&st, h.debug_mtime_sec, h.debug_mtime_nsec))
			return jh_err(why, whylen, JH_EFORMAT, "its debug file '%s' changed or is gone",
				      m->strs[h.debug_path]);
	} else if (dc_debuginfo_appeared(dc, m, mod)) {
		return jh_err(why, whylen, JH_EFORMAT, "made without debug info, which is there now");
	} else if (getenv("DEBUGINFOD_URLS") && *getenv("DEBUGINFOD_URLS")) {
		return jh_err(why, whylen, JH_EFORMAT, "made without debug info; debuginfod may have it");
	}
	if (dc_build_tables(m, pt, np, why, whylen))
		return -1;
	/* the unit map: increasing units, ranges in search order, each of a
	 * known unit */
	if (h.nmapunits) {
		m->mapunits = malloc((size_t)h.nmapunits * sizeof *m->mapunits);
		m->mapranges = malloc(((size_t)h.nmapranges + 1) * sizeof *m->mapranges);
		if (!m->mapunits || !m->mapranges)
			return jh_err(why, whylen, JH_ENOMEM, "out of memory");
		memcpy(m->mapunits, mapunits, (size_t)h.nmapunits * sizeof *m->mapunits);
		if (h.nmapranges)
			memcpy(m->mapranges, mapranges, (size_t)h.nmapranges * sizeof *m->mapranges);
		m->nmapunits = h.nmapunits;
		m->nmapranges = h.nmapranges;
		m->map_loaded = true;
		if (!cumap_desc_ok(m->mapunits, m->nmapunits, m->mapranges, m->nmapranges))
			return jh_err(why, whylen, JH_EFORMAT, "bad unit map");
	}
	for (size_t k = 0; k < np; k++) {
		m->old_frames[k] = (struct dc_block){ (const char *)pt[k].frames,
						      (size_t)pt[k].nframes * sizeof(struct dc_frame) };
		m->old_strs[k] = (struct dc_block){ pt[k].strs, (size_t)pt[k].strbytes };
		m->old_nframes += pt[k].nframes;
		m->old_strbytes += pt[k].strbytes;
	}
	m->nold = np;
	m->old_nstrings = nstrings;
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
	if (dc_parse(dc, m, mod, len, why, sizeof why)) {
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

struct cumap *dcmodule_new_map(void *arg, Dwarf *dw, const struct cuindex_range *valid,
			       size_t nvalid)
{
	const struct dcmodule *m = arg;
	if (!m || !m->nmapunits)
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

static int dc_cmp_unit(const void *a, const void *b)
{
	const struct dcunit *x = a, *y = b;
	return x->cuoff < y->cuoff ? -1 : x->cuoff > y->cuoff;
}

static int dc_cmp_ent(const void *a, const void *b)
{
	const struct dcent *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
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

static int64_t dc_str(struct strtab *t, const char *s)
{
	return s && *s ? strtab_intern(t, s) : 0;
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

/* The frames of answer R (NF of them) into FRAMES from *fi on, their
 * strings interned in T: string ids are SBASE plus T's, 0 for none. */
static int dc_put_frames(struct strtab *t, uint32_t sbase, const struct symresult *r,
			 unsigned nf, struct dc_frame *frames, size_t *fi)
{
	for (unsigned k = 0; k < nf; k++) {
		const struct symframe *f = &r->frames[k];
		int64_t a = dc_str(t, f->name), b = dc_str(t, f->linkage), c = dc_str(t, f->file),
			d = dc_str(t, f->decl_file);
		if (a < 0 || b < 0 || c < 0 || d < 0)
			return JH_ENOMEM;
		frames[(*fi)++] = (struct dc_frame){
			.name = a ? sbase + (uint32_t)a : 0, .linkage = b ? sbase + (uint32_t)b : 0,
			.file = c ? sbase + (uint32_t)c : 0,
			.decl_file = d ? sbase + (uint32_t)d : 0, .line = f->line > 0 ? f->line : 0,
			.column = f->column > 0 ? f->column : 0,
			.decl_line = f->decl_line > 0 ? f->decl_line : 0,
			.inlined = f->inlined ? 1 : 0,
		};
	}
	return 0;
}

/* Units UL[0..nul) as the file holds them: UNITS with indexes into TOPS
 * and SEQS, which get each unit's ranges and sequences in turn. */
static void dc_put_units(const struct dcunit *ul, size_t nul, struct dc_unit *units,
			 struct cuindex_top *tops, struct cuindex_seq *seqs)
{
	for (size_t i = 0, k = 0, q = 0; i < nul; i++) {
		units[i] = (struct dc_unit){ ul[i].cuoff, (uint32_t)k, (uint32_t)ul[i].ntops,
					     (uint32_t)q, (uint32_t)ul[i].nseqs };
		memcpy(tops + k, ul[i].tops, ul[i].ntops * sizeof *tops);
		k += ul[i].ntops;
		if (ul[i].nseqs)
			memcpy(seqs + q, ul[i].seqs, ul[i].nseqs * sizeof *seqs);
		q += ul[i].nseqs;
	}
}

/* T's strings but its "" (id 0), back to back, into a new buffer of *len
 * bytes after PRE bytes of room. */
static char *dc_join_strings(const struct strtab *t, size_t pre, size_t *len)
{
	size_t n = 0;
	for (size_t i = 1; i < t->len; i++)
		n += t->ents[i].n + 1;
	char *b = malloc(pre + n + 1);
	if (!b)
		return NULL;
	n = pre;
	for (size_t i = 1; i < t->len; i++) {
		memcpy(b + n, t->ents[i].s, t->ents[i].n);
		n += t->ents[i].n;
		b[n++] = '\0';
	}
	*len = n - pre;
	return b;
}

/* The answers and units this run adds to the file, as a part appended to
 * it: 0 when written (or nothing to add), 1 when the file is no longer
 * the one read (then the caller writes it whole), -1 on an error. */
static int dc_append(struct diskcache *dc, struct dcmodule *m, char *err, size_t errlen)
{
	size_t n = 0, nframes = 0, nul = 0, ntops = 0, nseqs = 0, fi = 0, sb = 0;
	struct dcent *add = malloc((m->nadded + 1) * sizeof *add);
	struct dcunit *ul = malloc((m->nunits - m->nloaded + 1) * sizeof *ul);
	struct dc_frame *frames = NULL;
	char *buf = NULL;
	struct strtab t;
	bool tinit = false;
	int rc = -1, fd = -1;
	if (!add || !ul)
		goto nomem;
	/* the new answers, one per address, none the file has */
	for (size_t i = 0; i < m->nadded; i++) {
		struct symresult r;
		if ((n && add[n - 1].vaddr == m->added[i].vaddr) ||
		    dcmodule_lookup(m, m->added[i].vaddr, &r))
			continue;
		add[n++] = m->added[i];
		nframes += m->added[i].res.status == SYM_NONE ? 0 : m->added[i].res.nframes;
	}
	/* the new units, one per offset, none the file has */
	jh_qsort(m->units + m->nloaded, m->nunits - m->nloaded, sizeof *m->units, dc_cmp_unit);
	for (size_t j = m->nloaded; j < m->nunits; j++) {
		const struct dcunit *u = &m->units[j];
		size_t at = jh_lower_bound_u64(m->units, m->nloaded, sizeof *m->units,
					       offsetof(struct dcunit, cuoff), u->cuoff);
		if ((nul && ul[nul - 1].cuoff == u->cuoff) ||
		    (at < m->nloaded && m->units[at].cuoff == u->cuoff))
			continue;
		ul[nul++] = *u;
		ntops += u->ntops;
		nseqs += u->nseqs;
	}
	if (!n && !nul) {
		rc = 0;
		goto out;
	}
	if (strtab_init(&t))
		goto nomem;
	tinit = true;
	frames = malloc((nframes + 1) * sizeof *frames);
	if (!frames)
		goto nomem;
	struct dc_part_header ph = {
		.offset = m->filelen, .body_checksum = m->body_checksum,
		.nentries = (uint32_t)n, .nunits = (uint32_t)nul,
		.ntops = (uint32_t)ntops, .nseqs = (uint32_t)nseqs,
	};
	memcpy(ph.magic, DC_PART_MAGIC, sizeof ph.magic);
	/* frames first: the part's layout needs their count */
	for (size_t i = 0; i < n; i++) {
		const struct symresult *r = &add[i].res;
		if (dc_put_frames(&t, (uint32_t)m->old_nstrings - 1, r,
				  r->status == SYM_NONE ? 0 : r->nframes, frames, &fi))
			goto nomem;
	}
	size_t strs_at = sizeof ph + (size_t)dc_part_size(n, fi, nul, ntops, nseqs, 0);
	if (!(buf = dc_join_strings(&t, strs_at, &sb)))
		goto nomem;
	ph.nframes = (uint32_t)fi;
	ph.nstrings = (uint32_t)(t.len - 1);
	ph.strbytes = sb;
	struct dc_part pt = { .nentries = ph.nentries, .nframes = ph.nframes,
			      .nunits = ph.nunits, .ntops = ph.ntops, .nseqs = ph.nseqs };
	dc_part_locate(&pt, buf + sizeof ph);
	for (size_t i = 0, f0 = 0; i < n; i++) {
		const struct symresult *r = &add[i].res;
		unsigned nf = r->status == SYM_NONE ? 0 : r->nframes;
		struct dc_entry e = { .vaddr = add[i].vaddr,
				      .frame0 = (uint32_t)(m->old_nframes + f0),
				      .nframes = (uint16_t)nf,
				      .status = nf ? (uint8_t)r->status : SYM_NONE };
		memcpy((char *)pt.ents + i * sizeof e, &e, sizeof e);
		f0 += nf;
	}
	if (fi)
		memcpy((void *)pt.frames, frames, fi * sizeof *frames);
	dc_put_units(ul, nul, (void *)pt.units, (void *)pt.tops, (void *)pt.seqs);
	ph.checksum = dc_checksum(buf + sizeof ph, strs_at + sb - sizeof ph);
	memcpy(buf, &ph, sizeof ph);
	if (m->old_nstrings + ph.nstrings > UINT32_MAX || m->filelen + strs_at + sb > DISKCACHE_MAX_FILE) {
		rc = 1;
		goto out;
	}
	/* appended only to the very file read, locked against other runs'
	 * appends; a file replaced or grown since is written whole */
	fd = openat(dc->dirfd, m->fname, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	if (fd < 0 || flock(fd, LOCK_EX) || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_dev != m->file_dev || st.st_ino != m->file_ino ||
	    (uint64_t)st.st_size != m->filelen) {
		rc = 1;
		goto out;
	}
	if (dc_write_all(fd, buf, strs_at + sb)) {
		jh_err(err, errlen, JH_EIO, "cannot append to '%s/%s': %s", dc->dir, m->fname,
		       strerror(errno));
		/* a part cut short would only be ignored, but need not stay */
		if (ftruncate(fd, (off_t)m->filelen))
			(void)0;
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	jh_err(err, errlen, JH_ENOMEM, "out of memory");
out:
	if (fd >= 0)
		close(fd);
	if (tinit)
		strtab_release(&t);
	free(add);
	free(ul);
	free(frames);
	free(buf);
	return rc;
}

/* Writes the module's file whole: the answers of the file (the first
 * KEEP_OLD of them: all, or none when too many) and this run's. */
static int dc_save_whole(struct diskcache *dc, struct dcmodule *m, struct symmodule *mod,
			 size_t keep_old, char *err, size_t errlen)
{
	size_t cap = keep_old + m->nadded, n = 0, nframes = 0;
	struct dcent *all = malloc((cap + 1) * sizeof *all);
	struct strtab t;
	bool tinit = false;
	struct dc_entry *ents = NULL;
	struct dc_frame *frames = NULL;
	struct dc_unit *units = NULL;
	struct cuindex_top *tops = NULL;
	struct cuindex_seq *seqs = NULL;
	struct dcunit *ul = NULL;
	size_t nul = 0, ntops = 0, nseqs = 0;
	char *strs = NULL, tmp[200];
	int fd = -1, rc = -1;
	tmp[0] = '\0';
	if (!all) {
		jh_err(err, errlen, JH_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0, j = 0; i < keep_old || j < m->nadded;) {
		const struct dcent *e;
		if (j >= m->nadded || (i < keep_old && m->ents[i].vaddr <= m->added[j].vaddr))
			e = &m->ents[i++];
		else
			e = &m->added[j++];
		if (n && all[n - 1].vaddr == e->vaddr)
			continue;
		all[n++] = *e;
		nframes += e->res.nframes;
	}
	/* Every old answer kept: the file's frames and strings are copied as
	 * they are (the body's, then each appended part's: their ids run on
	 * already) and only the new answers' are added after them (string ids
	 * of the new part start after the old ones; a string may then be
	 * there twice, which readers do not mind). */
	bool append = keep_old && m->nold && m->old_nstrings;
	size_t fbase = append ? m->old_nframes : 0;
	uint32_t sbase = append ? (uint32_t)m->old_nstrings - 1 : 0;
	/* units: the file's and this run's, one per offset */
	jh_qsort(m->units + m->nloaded, m->nunits - m->nloaded, sizeof *m->units, dc_cmp_unit);
	ul = malloc((m->nunits + 1) * sizeof *ul);
	if (!ul) {
		jh_err(err, errlen, JH_ENOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0, j = m->nloaded; i < m->nloaded || j < m->nunits;) {
		const struct dcunit *u;
		if (j >= m->nunits || (i < m->nloaded && m->units[i].cuoff <= m->units[j].cuoff))
			u = &m->units[i++];
		else
			u = &m->units[j++];
		if (nul && ul[nul - 1].cuoff == u->cuoff)
			continue;
		if (nul + 1 > DISKCACHE_MAX_ENTRIES || ntops + u->ntops > DISKCACHE_MAX_ENTRIES ||
		    nseqs + u->nseqs > DISKCACHE_MAX_ENTRIES)
			break;
		ul[nul++] = *u;
		ntops += u->ntops;
		nseqs += u->nseqs;
	}
	units = calloc(nul + 1, sizeof *units);
	tops = malloc((ntops + 1) * sizeof *tops);
	seqs = malloc((nseqs + 1) * sizeof *seqs);
	if (!units || !tops || !seqs) {
		jh_err(err, errlen, JH_ENOMEM, "out of memory");
		goto out;
	}
	dc_put_units(ul, nul, units, tops, seqs);
	if (strtab_init(&t)) {
		jh_err(err, errlen, JH_ENOMEM, "out of memory");
		goto out;
	}
	tinit = true;
	ents = calloc(n + 1, sizeof *ents);
	frames = calloc(nframes + 1, sizeof *frames);
	if (!ents || !frames) {
		jh_err(err, errlen, JH_ENOMEM, "out of memory");
		goto out;
	}
	struct dc_header h = { .bom = DC_BOM, .version = DC_VERSION, .header_size = sizeof h };
	memcpy(h.magic, DC_MAGIC, sizeof h.magic);
	size_t fi = 0;
	for (size_t i = 0; i < n; i++) {
		const struct symresult *r = &all[i].res;
		unsigned nf = r->status == SYM_NONE ? 0 : r->nframes;
		ents[i] = (struct dc_entry){ .vaddr = all[i].vaddr, .frame0 = (uint32_t)(fbase + fi),
					     .nframes = (uint16_t)nf,
					     .status = nf ? (uint8_t)r->status : SYM_NONE };
		if (append && all[i].old) {
			ents[i].frame0 = nf ? (uint32_t)(r->frames - m->frames) : 0;
			continue;
		}
		if (dc_put_frames(&t, sbase, r, nf, frames, &fi)) {
			jh_err(err, errlen, JH_ENOMEM, "out of memory");
			goto out;
		}
	}
	const char *dbg = symmodule_debug_path(mod);
	struct stat dst;
	int64_t ids[3] = {
		dc_str(&t, m->key), dc_str(&t, m->build_id),
		dbg && !stat(dbg, &dst) ? dc_str(&t, dbg) : 0,
	};
	if (ids[0] < 0 || ids[1] < 0 || ids[2] < 0) {
		jh_err(err, errlen, JH_ENOMEM, "out of memory");
		goto out;
	}
	if (dbg && !ids[2]) {
		/* the debug file cannot be checked later: do not cache */
		rc = 0;
		goto out;
	}
	h.object = ids[0] ? sbase + (uint32_t)ids[0] : 0;
	h.build_id = ids[1] ? sbase + (uint32_t)ids[1] : 0;
	h.debug_path = ids[2] ? sbase + (uint32_t)ids[2] : 0;
	h.object_size = (uint64_t)m->objst.st_size;
	h.object_ino = (uint64_t)m->objst.st_ino;
	h.object_mtime_sec = m->objst.st_mtim.tv_sec;
	h.object_mtime_nsec = m->objst.st_mtim.tv_nsec;
	if (h.debug_path) {
		h.debug_size = (uint64_t)dst.st_size;
		h.debug_mtime_sec = dst.st_mtim.tv_sec;
		h.debug_mtime_nsec = dst.st_mtim.tv_nsec;
	}
	/* strings: the old blocks whole (the body's "" first) or else a "",
	 * then the new ones but their "" */
	size_t pre = append ? m->old_strbytes : 1, sb = 0;
	strs = dc_join_strings(&t, pre, &sb);
	if (!strs) {
		jh_err(err, errlen, JH_ENOMEM, "out of memory");
		goto out;
	}
	strs[0] = '\0';
	for (size_t k = 0, at = 0; append && k < m->nold; k++) {
		memcpy(strs + at, m->old_strs[k].p, m->old_strs[k].n);
		at += m->old_strs[k].n;
	}
	sb += pre;
	size_t oldf = fbase * sizeof *frames;
	h.nentries = (uint32_t)n;
	h.nframes = (uint32_t)(fbase + fi);
	h.nstrings = (uint32_t)(sbase + t.len);
	h.strbytes = sb;
	h.nunits = (uint32_t)nul;
	h.ntops = (uint32_t)ntops;
	h.nseqs = (uint32_t)nseqs;
	h.nmapunits = (uint32_t)m->nmapunits;
	h.nmapranges = (uint32_t)m->nmapranges;
	size_t mub = m->nmapunits * sizeof *m->mapunits, mrb = m->nmapranges * sizeof *m->mapranges;
	size_t body = n * sizeof *ents + oldf + fi * sizeof *frames + nul * sizeof *units +
		      ntops * sizeof *tops + nseqs * sizeof *seqs + mub + mrb + sb;
	/* chained in pieces: each but the strings a multiple of 8 bytes */
	uint64_t sum = jh_hash_fast(ents, n * sizeof *ents, 0);
	for (size_t k = 0; append && k < m->nold; k++)
		sum = jh_hash_fast(m->old_frames[k].p, m->old_frames[k].n, sum);
	sum = jh_hash_fast(frames, fi * sizeof *frames, sum);
	sum = jh_hash_fast(units, nul * sizeof *units, sum);
	sum = jh_hash_fast(tops, ntops * sizeof *tops, sum);
	sum = jh_hash_fast(seqs, nseqs * sizeof *seqs, sum);
	sum = jh_hash_fast(m->mapunits, mub, sum);
	sum = jh_hash_fast(m->mapranges, mrb, sum);
	sum = jh_hash_fast(strs, sb, sum);
	h.checksum = dc_checksum_end(sum, body);
	if (sizeof h + body > DISKCACHE_MAX_FILE) {
		rc = 0;   /* too large to be read back: not worth writing */
		goto out;
	}
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
	bool bad = dc_write_all(fd, &h, sizeof h) || dc_write_all(fd, ents, n * sizeof *ents);
	for (size_t k = 0; append && k < m->nold && !bad; k++)
		bad = dc_write_all(fd, m->old_frames[k].p, m->old_frames[k].n);
	if (bad || dc_write_all(fd, frames, fi * sizeof *frames) ||
	    dc_write_all(fd, units, nul * sizeof *units) ||
	    dc_write_all(fd, tops, ntops * sizeof *tops) ||
	    dc_write_all(fd, seqs, nseqs * sizeof *seqs) || dc_write_all(fd, m->mapunits, mub) ||
	    dc_write_all(fd, m->mapranges, mrb) || dc_write_all(fd, strs, sb)) {
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
	if (tinit)
		strtab_release(&t);
	free(all);
	free(ents);
	free(frames);
	free(units);
	free(tops);
	free(seqs);
	free(ul);
	free(strs);
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
	jh_qsort(m->added, m->nadded, sizeof *m->added, dc_cmp_ent);
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

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/safefile.h"
#include "lib/chars.h"
#include "lib/errors.h"
#include "symbolize/debugfind.h"
#include "symbolize/debuginfod.h"

#define SYSTEM_DEBUG_DIR "/usr/lib/debug"

/* One search: what is wanted and how a candidate is judged. */
struct search {
	const struct debugfind_opts *o;
	const unsigned char *build_id;   /* wanted, or NULL */
	size_t build_id_len;
	unsigned crc;                    /* wanted when check_crc */
	bool check_crc;
	bool alt;                        /* the dwz alt file */
	struct stat main_st;             /* the object itself is never its debug file */
	bool main_known;
};

static void note_resource(const struct search *s)
{
	if ((errno == EMFILE || errno == ENFILE || errno == ENOMEM) && s->o->resource_failed)
		*s->o->resource_failed = true;
}

/* The build id of the ELF file open at FD equals the wanted one. */
static bool same_build_id(int fd, const unsigned char *want, size_t len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool ok = false;
	if (!elf)
		return false;
	const void *have;
	ssize_t n = elf_kind(elf) == ELF_K_ELF ? dwelf_elf_gnu_build_id(elf, &have) : -1;
	ok = n > 0 && (size_t)n == len && !memcmp(have, want, len);
	elf_end(elf);
	return ok;
}

/* The CRC-32 of the whole file open at FD equals CRC (a debuglink's). */
static bool same_crc(int fd, unsigned crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0, Z_NULL, 0);
	off_t off = 0;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		if (!n)
			break;
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	return (unsigned)c == crc;
}

/* The candidate PATH: an open descriptor when it is a regular file, not
 * the object itself, and the one wanted; else -1. */
static int try_path(const struct search *s, const char *path, char **found)
{
	if (safefile_is_special(path)) {
		if (s->o->skipped) {
			char msg[PATH_MAX + 100];
			snprintf(msg, sizeof(msg), "'%s' is not a regular file: not read as debug information",
				 path);
			s->o->skipped(s->o->arg, msg);
		}
		return -1;
	}
	int fd = safefile_open(path, 0, NULL, 0);
	if (fd < 0) {
		note_resource(s);
		return -1;
	}
	struct stat st;
	bool ok = !fstat(fd, &st) &&
		  !(s->main_known && st.st_dev == s->main_st.st_dev && st.st_ino == s->main_st.st_ino);
	if (ok && s->build_id)
		ok = same_build_id(fd, s->build_id, s->build_id_len);
	else if (ok && s->check_crc)
		ok = same_crc(fd, s->crc);
	if (!ok) {
		close(fd);
		return -1;
	}
	if (!(*found = strdup(path))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* try_path() on the parts joined with '/' (NULL parts left out). */
static int try_join(const struct search *s, const char *a, const char *b, const char *c,
		    char **found)
{
	char path[PATH_MAX];
	int n = snprintf(path, sizeof(path), "%s%s%s%s%s", a ? a : "", a && (b || c) ? "/" : "",
			 b ? b : "", b && c ? "/" : "", c ? c : "");
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	return try_path(s, path, found);
}

/* The folders searched: the user's, then the object's own folder (""),
 * its .debug subfolder, then the system's. */
static const char *const *folder_list(const struct debugfind_opts *o, const char **buf, size_t cap)
{
	size_t n = 0;
	for (const char *const *d = o->dirs; d && *d && n + 4 < cap; d++)
		buf[n++] = *d;
	buf[n++] = "";
	buf[n++] = ".debug";
	buf[n++] = SYSTEM_DEBUG_DIR;
	buf[n] = NULL;
	return buf;
}

/* Step 1: DIR/.build-id/xx/rest.debug for each absolute folder. */
static int by_build_id(const struct search *s, const char *const *dirs, char **found)
{
	if (!s->build_id || s->build_id_len < 2 || s->build_id_len > 64)
		return -1;
	char hex[130], name[140];
	jh_hex(hex, s->build_id, s->build_id_len);
	snprintf(name, sizeof(name), "%.2s/%s.debug", hex, hex + 2);
	for (const char *const *d = dirs; *d; d++) {
		if ((*d)[0] != '/')
			continue;
		int fd = try_join(s, *d, ".build-id", name, found);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* Step 2 for FILE_NAME: LINK (made up from its base name when NULL) in
 * each folder, and for the alt file the .dwz subfolders. */
static int in_path(const struct search *s, const char *const *dirs, const char *file_name,
		   const char *link, char **found)
{
	const char *base = base_name(file_name);
	char dirname[PATH_MAX], made[PATH_MAX];
	bool made_up = !link;
	if (made_up) {
		if (s->alt || snprintf(made, sizeof(made), "%s.debug", base) >= (int)sizeof(made))
			return -1;
		link = made;
	}
	const char *fdir = NULL;
	if (base != file_name) {
		size_t n = (size_t)(base - 1 - file_name);
		if (n >= sizeof(dirname))
			return -1;
		memcpy(dirname, file_name, n);
		dirname[n] = '\0';
		fdir = dirname;
	}
	for (const char *const *d = dirs; *d; d++) {
		const char *p = *d;
		int fd = -1;
		if (!*p) {
			/* the object's own folder */
			fd = try_join(s, fdir, NULL, link, found);
			if (fd < 0 && s->alt)
				fd = try_join(s, fdir, ".dwz", base_name(link), found);
		} else if (p[0] != '/') {
			/* a subfolder of the object's folder */
			fd = try_join(s, fdir, p, link, found);
			if (fd < 0 && made_up)
				fd = try_join(s, fdir, p, base, found);
		} else if (s->alt) {
			fd = try_join(s, p, NULL, base_name(link), found);
			if (fd < 0)
				fd = try_join(s, p, ".dwz", base_name(link), found);
		} else if (fdir && fdir[0] == '/') {
			/* the object's folder under P, then with its leading
			 * folders dropped one at a time, down to P itself */
			for (const char *sub = fdir; fd < 0;) {
				sub = strchr(sub, '/');
				if (sub)
					sub++;
				if (sub && !*sub)
					break;
				fd = try_join(s, p, sub, link, found);
				if (fd < 0 && made_up)
					fd = try_join(s, p, sub, base, found);
				if (!sub)
					break;
			}
		}
		if (fd >= 0)
			return fd;
	}
	return -1;
}

/* Step 3: DIR/<path> and DIR/<path>.debug for each user folder. */
static int by_user_path(const struct search *s, const char *path, char **found)
{
	for (const char *const *d = s->o->dirs; d && *d && path[0] == '/'; d++) {
		char cand[PATH_MAX];
		for (int suffix = 0; suffix < 2; suffix++) {
			if (snprintf(cand, sizeof(cand), "%s%s%s", *d, path, suffix ? ".debug" : "") >=
			    (int)sizeof(cand))
				continue;
			int fd = try_path(s, cand, found);
			if (fd >= 0)
				return fd;
		}
	}
	return -1;
}

/* The .gnu_debugaltlink of the ELF file at PATH: 1 with its name (a
 * malloc'd copy in *NAME) and build id (malloc'd, *LEN bytes), else 0. */
static int read_altlink(const char *path, char **name, unsigned char **bid, size_t *len)
{
	int fd = safefile_open(path, 0, NULL, 0);
	if (fd < 0)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t shstrndx;
	int found = 0;
	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getshdrstrndx(elf, &shstrndx)) {
		for (Elf_Scn *scn = NULL; !found && (scn = elf_nextscn(elf, scn));) {
			GElf_Shdr sh;
			const char *sname;
			if (!gelf_getshdr(scn, &sh) || !(sname = elf_strptr(elf, shstrndx, sh.sh_name)) ||
			    strcmp(sname, ".gnu_debugaltlink"))
				continue;
			Elf_Data *d = elf_getdata(scn, NULL);
			const char *b = d && d->d_buf ? d->d_buf : NULL;
			const char *nul = b ? memchr(b, '\0', d->d_size) : NULL;
			if (!nul)
				break;
			size_t n = d->d_size - (size_t)(nul + 1 - b);
			*name = strdup(b);
			*bid = malloc(n ? n : 1);
			if (*name && *bid) {
				memcpy(*bid, nul + 1, n);
				*len = n;
				found = 1;
			} else {
				free(*name);
				free(*bid);
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

int debugfind(const struct debugfind_opts *o, Dwfl_Module *mod, const char *file_name,
	      const char *link, unsigned crc, char **found)
{
	struct search s = { .o = o };
	const char *dirs_buf[64];
	const char *const *dirs = folder_list(o, dirs_buf, sizeof(dirs_buf) / sizeof(*dirs_buf));
	char *altname = NULL;
	unsigned char *altbid = NULL;
	size_t altlen = 0;
	int fd = -1;
	*found = NULL;
	if (!file_name)
		return -1;
	s.main_known = !stat(file_name, &s.main_st);
	/* Asked for the name in the file's .gnu_debugaltlink: the alt file,
	 * which has the build id written there */
	if (link && read_altlink(file_name, &altname, &altbid, &altlen) && !strcmp(altname, link)) {
		s.alt = true;
		s.build_id = altbid;
		s.build_id_len = altlen;
	} else {
		const unsigned char *bits;
		GElf_Addr vaddr;
		int n = dwfl_module_build_id(mod, &bits, &vaddr);
		if (n > 0) {
			s.build_id = bits;
			s.build_id_len = (size_t)n;
		}
		s.crc = crc;
		s.check_crc = link && crc;
	}
	fd = by_build_id(&s, dirs, found);
	if (fd < 0)
		fd = in_path(&s, dirs, file_name, link, found);
	char *canon = fd < 0 ? realpath(file_name, NULL) : NULL;
	if (fd < 0 && canon && strcmp(canon, file_name))
		fd = in_path(&s, dirs, canon, link, found);
	if (fd < 0 && !s.alt) {
		fd = by_user_path(&s, file_name, found);
		if (fd < 0 && canon && strcmp(canon, file_name))
			fd = by_user_path(&s, canon, found);
	}
	free(canon);
	if (fd < 0 && s.build_id)
		fd = debuginfod_find(s.build_id, s.build_id_len, found);
	if (fd >= 0 && s.alt && o->alt_found)
		*o->alt_found = true;
	free(altname);
	free(altbid);
	return fd;
}

/* Whether the file libdw would make of DIR and FILE (absolute FILE alone,
 * then FILE under an absolute DIR, else under the DWARF file's folder
 * DEBUG_DIR with DIR between) is there and not a regular file; then a
 * message in err. */
static int unsafe(const char *debug_dir, const char *dir, const char *file, char *err,
		  size_t errlen)
{
	char path[PATH_MAX];
	int n;
	if (file[0] == '/')
		n = snprintf(path, sizeof(path), "%s", file);
	else if (dir && dir[0] == '/')
		n = snprintf(path, sizeof(path), "%s/%s", dir, file);
	else
		n = snprintf(path, sizeof(path), "%s%s%s%s", debug_dir, dir ? dir : "",
			     dir && *dir ? "/" : "", file);
	if (n < 0 || (size_t)n >= sizeof(path) || !safefile_is_special(path))
		return 0;
	return jh_err(err, errlen, 1, "'%s' is not a regular file: not read as debug information",
		      path);
}

static const char *attr_string(Dwarf_Die *die, int name, int gnu_name)
{
	Dwarf_Attribute a;
	if (dwarf_attr(die, name, &a) || (gnu_name && dwarf_attr(die, gnu_name, &a)))
		return dwarf_formstring(&a);
	return NULL;
}

/* The folder of DEBUG_PATH, with its '/', into DIR; false when too long. */
static bool debug_dir(const char *debug_path, char *dir, size_t len)
{
	const char *slash = strrchr(debug_path, '/');
	size_t n = slash ? (size_t)(slash + 1 - debug_path) : 0;
	if (n >= len)
		return false;
	memcpy(dir, debug_path, n);
	dir[n] = '\0';
	return true;
}

int debugfind_alt_unsafe(Dwarf *dw, const char *debug_path, bool alt_found, char *err,
			 size_t errlen)
{
	char dir[PATH_MAX];
	if (!debug_dir(debug_path, dir, sizeof(dir)))
		return 0;
	const char *altname;
	const void *bid;
	ssize_t blen = alt_found ? 0 : dwelf_dwarf_gnu_debugaltlink(dw, &altname, &bid);
	if (blen > 0) {
		if (blen >= 3 && blen <= 64) {
			char hex[130], name[160];
			jh_hex(hex, bid, (size_t)blen);
			snprintf(name, sizeof(name), ".build-id/%.2s/%s.debug", hex, hex + 2);
			if (unsafe(dir, SYSTEM_DEBUG_DIR, name, err, errlen))
				return 1;
		}
		if (unsafe(dir, NULL, altname, err, errlen))
			return 1;
	}
	return 0;
}

int debugfind_split_unsafe(Dwarf *dw, const char *debug_path, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	if (!debug_dir(debug_path, dir, sizeof(dir)))
		return 0;
	/* only the units' headers and first DIEs are read */
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die cudie;
	while (dwarf_get_units(dw, cu, &next, &version, &type, &cudie, NULL) == 0) {
		cu = next;
		if (type != DW_UT_skeleton)
			continue;
		const char *dwo = attr_string(&cudie, DW_AT_dwo_name, DW_AT_GNU_dwo_name);
		const char *comp = attr_string(&cudie, DW_AT_comp_dir, 0);
		if (dwo && (unsafe(dir, NULL, dwo, err, errlen) ||
			    (comp && unsafe(dir, comp, dwo, err, errlen))))
			return 1;
	}
	return 0;
}

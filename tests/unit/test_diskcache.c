/*
 * Unit tests for symbolize/diskcache.c and dcfile.c: a written cache reads
 * back to the answers symcache gives; every kind of damage to a file, with its
 * checksum made right again so that the checks behind it are reached, is
 * either refused or yields only well-formed answers (run under ASan and
 * valgrind by make check SANITIZE=... and t0610).
 *
 * The object is this test program itself, and for stale entries a fixture
 * without a build id (c_nobid, from tests/unit/build-fixtures.sh in
 * $JHEAP_FIXTURES).  diskcache.c is included, not linked, to reach its
 * modules' insides; the file layout and checksum are dcfile.h's.
 */
#include "symbolize/diskcache.c"
#include "tests/unit/unit.h"

#include <elf.h>
#include <ftw.h>
#include <stddef.h>

static char self[4096], dir[256];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st, (void)flag, (void)f;
	return remove(p);
}

/* A fresh cache folder holding one file for this program, made from the
 * answers to NPCS addresses spread over its code; returns its path. */
static struct symcache *sc;
static struct symmodule *mod;
static uint64_t pcs[64];
static size_t npcs;

static int setup(void)
{
	char err[512];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(dir, sizeof dir, "/tmp/jheap-dctest.%ld", (long)getpid());
	sc = symcache_new(NULL);
	mod = symcache_module(sc, self, err, sizeof err);
	if (!mod) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	size_t nseg;
	const struct symsegment *segs = symmodule_segments(mod, &nseg);
	for (size_t i = 0; i < nseg; i++)
		if (segs[i].flags & PF_X)
			for (uint64_t a = segs[i].vaddr + 16; a < segs[i].vaddr + segs[i].memsz &&
			     npcs < 64; a += segs[i].memsz / 64 + 1)
				pcs[npcs++] = a;
	return npcs ? 0 : -1;
}

static const char *str_or(const char *s)
{
	return s ? s : "(none)";
}

static const char *cache_path(const struct dcmodule *m)
{
	static char p[600];
	snprintf(p, sizeof p, "%s/jheap/%s", dir, m->fname);
	return p;
}

/* Writes the cache of this program from scratch; returns its bytes. */
static char *make_file(size_t *len)
{
	char err[512];
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	struct diskcache *dc = diskcache_new(dir, NULL, err, sizeof err);
	if (!dc)
		return NULL;
	struct dcmodule *m = diskcache_module(dc, mod, self);
	for (size_t i = 0; i < npcs; i++) {
		struct symresult r;
		symmodule_lookup(mod, pcs[i], &r);
		dcmodule_add(m, pcs[i], &r);
	}
	/* and the units those lookups indexed, and the unit map */
	symmodule_each_unit(mod, dcmodule_add_unit, m);
	dcmodule_add_map(m, symmodule_map(mod));
	char *buf = NULL;
	if (!dcmodule_save(dc, m, mod, err, sizeof err)) {
		FILE *f = fopen(cache_path(m), "rb");
		buf = malloc(DISKCACHE_MAX_FILE / 1024);
		*len = f ? fread(buf, 1, DISKCACHE_MAX_FILE / 1024, f) : 0;
		if (f)
			fclose(f);
	}
	diskcache_free(dc);
	return buf;
}

/* Makes the checksums of BUF[0..len) right again: the body's (of the size
 * the header gives, cut at LEN), and each appended part's that fits. */
static void fix_checksum(char *buf, size_t len)
{
	struct dc_header h;
	if (len < sizeof h)
		return;
	memcpy(&h, buf, sizeof h);
	uint64_t body = dcfile_part_size(h.nentries, h.nframes, h.nunits, h.ntops, h.nseqs,
					 h.strbytes);
	if (body != UINT64_MAX)
		body += (uint64_t)h.nmapunits * sizeof(uint64_t) +
			(uint64_t)h.nmapranges * sizeof(struct cumap_range);
	if (body > len - sizeof h)
		body = len - sizeof h;
	h.checksum = dcfile_checksum(buf + sizeof h, (size_t)body);
	memcpy(buf, &h, sizeof h);
	for (size_t off = sizeof h + (size_t)body; len - off >= sizeof(struct dc_part_header);) {
		struct dc_part_header ph;
		memcpy(&ph, buf + off, sizeof ph);
		uint64_t n = dcfile_part_size(ph.nentries, ph.nframes, ph.nunits, ph.ntops, ph.nseqs,
					      ph.strbytes);
		if (n > len - off - sizeof ph)
			break;
		ph.checksum = dcfile_checksum(buf + off + sizeof ph, (size_t)n);
		memcpy(buf + off, &ph, sizeof ph);
		off += sizeof ph + (size_t)n;
	}
}

/* The file's bytes into a new buffer (room for 64 more), *len its size. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(DISKCACHE_MAX_FILE / 1024);
	*len = f && buf ? fread(buf, 1, DISKCACHE_MAX_FILE / 1024 - 64, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

/* One run that looks up the addresses pcs[i] with i % every == rest (the
 * file's answers from the file) and saves; returns the module's number of
 * appended parts as loaded, or -1. */
static long add_run(size_t every, size_t rest)
{
	char err[512];
	struct diskcache *dc = diskcache_new(dir, NULL, err, sizeof err);
	if (!dc)
		return -1;
	struct dcmodule *m = diskcache_module(dc, mod, self);
	long parts = (long)m->nparts;
	for (size_t i = 0; i < npcs; i++) {
		struct symresult r;
		if (i % every != rest || dcmodule_lookup(m, pcs[i], &r))
			continue;
		symmodule_lookup(mod, pcs[i], &r);
		dcmodule_add(m, pcs[i], &r);
	}
	symmodule_each_unit(mod, dcmodule_add_unit, m);
	dcmodule_add_map(m, symmodule_map(mod));
	if (dcmodule_save(dc, m, mod, err, sizeof err))
		parts = -1;
	diskcache_free(dc);
	return parts;
}

/* The path of this program's cache file. */
static const char *the_path(void)
{
	static char path[700];
	char err[512];
	struct diskcache *dc = diskcache_new(dir, NULL, err, sizeof err);
	snprintf(path, sizeof path, "%s", dc ? cache_path(diskcache_module(dc, mod, self)) : "");
	diskcache_free(dc);
	return path;
}

/* A file written by one run and grown by NPARTS more, each adding the
 * next share of the addresses as an appended part; returns its bytes, and
 * the first run's file in *first (*firstlen bytes). */
static char *make_parts_file(size_t nparts, size_t *len, char **first, size_t *firstlen)
{
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	for (size_t r = 0; r <= nparts; r++) {
		if (add_run(nparts + 1, r) != (long)(r ? r - 1 : 0))
			return NULL;
		if (!r)
			*first = slurp(the_path(), firstlen);
	}
	return slurp(the_path(), len);
}

/* Every address the module has answers as symcache does; returns how
 * many of the test's addresses it has. */
static size_t check_answers(const struct dcmodule *m)
{
	size_t found = 0;
	for (size_t i = 0; i < npcs; i++) {
		struct symresult a, b;
		symmodule_lookup(mod, pcs[i], &a);
		if (!dcmodule_lookup(m, pcs[i], &b))
			continue;
		found++;
		CHECK_INT(b.status, a.status);
		CHECK_INT(b.nframes, a.nframes);
		for (unsigned k = 0; k < a.nframes && k < b.nframes; k++) {
			CHECK_STR(str_or(b.frames[k].name), str_or(a.frames[k].name));
			CHECK_STR(str_or(b.frames[k].file), str_or(a.frames[k].file));
			CHECK_STR(str_or(b.frames[k].linkage), str_or(a.frames[k].linkage));
			CHECK_STR(str_or(b.frames[k].decl_file), str_or(a.frames[k].decl_file));
			CHECK_INT(b.frames[k].line, a.frames[k].line);
			CHECK_INT(b.frames[k].column, a.frames[k].column);
			CHECK_INT(b.frames[k].inlined, a.frames[k].inlined);
		}
	}
	return found;
}

/* Puts BUF in place of the cache file and reads it back: the number of
 * answers loaded, -1 when the file was refused.  Every answer loaded is
 * walked, so that ASan or valgrind sees any bad pointer. */
static long load(const char *buf, size_t len, char *why, size_t whylen)
{
	char err[512];
	struct diskcache *dc = diskcache_new(dir, NULL, err, sizeof err);
	if (!dc)
		return -2;
	struct dcmodule *probe = diskcache_module(dc, mod, self);
	FILE *f = fopen(cache_path(probe), "wb");
	fwrite(buf, 1, len, f);
	fclose(f);
	diskcache_free(dc);
	dc = diskcache_new(dir, NULL, err, sizeof err);
	struct dcmodule *m = diskcache_module(dc, mod, self);
	long n = strncmp(m->state, "loaded ", 7) ? -1 : (long)m->nents;
	snprintf(why, whylen, "%s", m->state);
	size_t sum = 0;
	for (size_t i = 0; i < m->nents; i++) {
		const struct symresult *r = &m->ents[i].res;
		for (unsigned k = 0; k < r->nframes; k++) {
			const struct symframe *fr = &r->frames[k];
			sum += (fr->name ? strlen(fr->name) : 0) + (fr->file ? strlen(fr->file) : 0) +
			       (fr->linkage ? strlen(fr->linkage) : 0) +
			       (fr->decl_file ? strlen(fr->decl_file) : 0);
		}
		struct symresult out;
		if (!dcmodule_lookup(m, m->ents[i].vaddr, &out) || out.nframes != r->nframes)
			n = -3;
	}
	for (size_t i = 0; i < m->nunits; i++)
		for (size_t k = 0; k < m->units[i].ntops; k++)
			sum += (size_t)(m->units[i].tops[k].hi - m->units[i].tops[k].lo);
	(void)sum;
	diskcache_free(dc);
	return n;
}

struct unitsum { size_t units, tops, seqs; uint64_t hash; };

/* Order-independent digest of units, their ranges and sequences. */
static int sum_unit(void *arg, uint64_t cuoff, const struct cumap_unitinfo *u)
{
	struct unitsum *s = arg;
	s->units++;
	s->tops += u->ntops;
	s->seqs += u->nseqs;
	s->hash += jh_mix64(jh_hash_fast(u->tops, u->ntops * sizeof *u->tops, cuoff + 1));
	s->hash += jh_mix64(jh_hash_fast(u->seqs, u->nseqs * sizeof *u->seqs, cuoff + 2));
	return 0;
}

TEST(roundtrip)
{
	size_t len = 0;
	char *buf = make_file(&len);
	CHECK(buf != NULL);
	char err[512];
	struct diskcache *dc = diskcache_new(dir, NULL, err, sizeof err);
	CHECK(dc != NULL);
	struct dcmodule *m = diskcache_module(dc, mod, self);
	CHECK_INT(m->nents, npcs);
	/* the units come back as written: each unit's ranges as the index
	 * gives them */
	struct unitsum want = { 0 }, got = { 0 };
	symmodule_each_unit(mod, sum_unit, &want);
	CHECK(want.units > 0);
	for (size_t i = 0; i < m->nunits; i++) {
		struct cumap_unitinfo u = { m->units[i].tops, m->units[i].ntops,
					    m->units[i].seqs, m->units[i].nseqs };
		sum_unit(&got, m->units[i].cuoff, &u);
	}
	CHECK_INT(got.units, want.units);
	CHECK_INT(got.tops, want.tops);
	CHECK_INT(got.seqs, want.seqs);
	CHECK(want.seqs > 0);
	CHECK(got.hash == want.hash);
	/* the unit map's description as the map gives it, and a map made from
	 * it with the same ranges */
	const struct cumap *map = symmodule_map(mod);
	size_t nu = cumap_units(map, NULL, 0), nr = cumap_ranges(map, NULL, 0);
	CHECK(nu > 0 && nr > 0);
	CHECK_INT(m->nmapunits, nu);
	CHECK_INT(m->nmapranges, nr);
	uint64_t *wu = calloc(nu + 1, sizeof *wu);
	struct cumap_range *wr = calloc(nr + 1, sizeof *wr), *kr = calloc(nr + 1, sizeof *kr);
	cumap_units(map, wu, nu);
	cumap_ranges(map, wr, nr);
	CHECK(m->nmapunits == nu && !memcmp(m->mapunits, wu, nu * sizeof *wu));
	CHECK(m->nmapranges == nr && !memcmp(m->mapranges, wr, nr * sizeof *wr));
	const char *dbg = symmodule_debug_path(mod);
	CHECK(dbg != NULL);
	struct cumap *km = dcmodule_new_map(m, cumap_dwarf(map), dbg, NULL, 0);
	CHECK(km != NULL);
	CHECK(km && cumap_ranges(km, kr, nr) == nr && !memcmp(kr, wr, nr * sizeof *wr));
	cumap_free(km);
	/* only for the very debug file it was made from, whatever its name:
	 * a map of another file could have split units nobody checked */
	char other[300], alias[300];
	snprintf(other, sizeof other, "%s/other", dir);
	snprintf(alias, sizeof alias, "%s/alias", dir);
	FILE *f = fopen(other, "w");
	CHECK(f && fclose(f) == 0);
	CHECK(dbg && symlink(dbg, alias) == 0);
	CHECK(dcmodule_new_map(m, cumap_dwarf(map), other, NULL, 0) == NULL);
	CHECK(dcmodule_new_map(m, cumap_dwarf(map), NULL, NULL, 0) == NULL);
	km = dcmodule_new_map(m, cumap_dwarf(map), alias, NULL, 0);
	CHECK(km != NULL);
	cumap_free(km);
	unlink(other);
	unlink(alias);
	free(wu);
	free(wr);
	free(kr);
	size_t dwarf = 0;
	for (size_t i = 0; i < npcs; i++) {
		struct symresult a, b;
		symmodule_lookup(mod, pcs[i], &a);
		CHECK(dcmodule_lookup(m, pcs[i], &b));
		CHECK_INT(b.status, a.status);
		CHECK_INT(b.nframes, a.nframes);
		dwarf += a.status == SYM_DWARF;
		for (unsigned k = 0; k < a.nframes && k < b.nframes; k++) {
			const struct symframe *x = &a.frames[k], *y = &b.frames[k];
			CHECK(!x->name == !y->name && (!x->name || !strcmp(x->name, y->name)));
			CHECK(!x->file == !y->file && (!x->file || !strcmp(x->file, y->file)));
			CHECK(!x->linkage == !y->linkage &&
			      (!x->linkage || !strcmp(x->linkage, y->linkage)));
			CHECK_INT(y->line, x->line);
			CHECK_INT(y->column, x->column);
			CHECK_INT(y->decl_line, x->decl_line);
			CHECK_INT(y->inlined, x->inlined);
		}
	}
	CHECK(dwarf > 0);  /* the test program has DWARF: frames with files */
	struct symresult r;
	CHECK(!dcmodule_lookup(m, 1, &r));
	diskcache_free(dc);
	free(buf);
}

/* Runs that add answers to a file append them as parts (or, rewriting
 * it, keep the file's frame and string blocks): the file must read back
 * whole, old answers and new, as symcache gives them. */
TEST(append)
{
	char err[512];
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	for (int round = 0; round < 3; round++) {
		struct diskcache *dc = diskcache_new(dir, NULL, err, sizeof err);
		CHECK(dc != NULL);
		if (!dc)
			return;
		struct dcmodule *m = diskcache_module(dc, mod, self);
		/* round 0: the even addresses; 1: every third; 2: all */
		CHECK_INT(m->nents, round == 0 ? 0 : round == 1 ? (npcs + 1) / 2
			  : (npcs + 1) / 2 + npcs / 3 - (npcs / 6));
		CHECK(round == 0 || m->old_strs != NULL);
		for (size_t i = 0; i < npcs; i++) {
			if ((round == 0 && i % 2) || (round == 1 && i % 3))
				continue;
			struct symresult r;
			if (dcmodule_lookup(m, pcs[i], &r))
				continue;
			symmodule_lookup(mod, pcs[i], &r);
			dcmodule_add(m, pcs[i], &r);
		}
		CHECK(dcmodule_save(dc, m, mod, err, sizeof err) == 0);
		diskcache_free(dc);
	}
	struct diskcache *dc = diskcache_new(dir, NULL, err, sizeof err);
	struct dcmodule *m = diskcache_module(dc, mod, self);
	CHECK_INT(m->nents, npcs);
	CHECK_INT(check_answers(m), npcs);
	diskcache_free(dc);
}

/* BUF[0..len), damaged as WHAT says, with its checksum made right: it
 * must be refused for REASON. */
static void expect_refused(char *buf, size_t len, const char *what, const char *reason)
{
	char why[1100];
	fix_checksum(buf, len);
	long n = load(buf, len, why, sizeof why);
	if (n != -1 || !strstr(why, reason))
		fprintf(stderr, "case %s: %ld, %s\n", what, n, why);
	CHECK(n == -1);
	CHECK(strstr(why, reason) != NULL);
}

/* Field-by-field damage with a correct checksum: each must be refused. */
TEST(bad_fields)
{
	size_t len = 0;
	char *good = make_file(&len), why[1100];
	char *buf = malloc(len + 64);
	struct dc_header h;
	memcpy(&h, good, sizeof h);
	CHECK(h.nentries == npcs && h.nframes > 0);
	struct { const char *what; size_t off; uint32_t val; const char *reason; } cases[] = {
		{ "version", offsetof(struct dc_header, version), 1, "format version 1" },
		/* a body shorter than the file: the rest is no part, and the
		 * body's sections are out of place */
		{ "units", offsetof(struct dc_header, nunits), 0, "" },
		{ "header size", offsetof(struct dc_header, header_size), 8, "bad header size" },
		{ "entries", offsetof(struct dc_header, nentries), (uint32_t)npcs + 1, "sizes do not add up" },
		{ "strings", offsetof(struct dc_header, nstrings), 1, "bad string table" },
		/* more strings than bytes: refused with the sizes, before any
		 * allocation (a 16 GiB calloc once, found by DC_ITERATIONS=100000
		 * under ASan; lost again when parts came and found by CI's
		 * ASan run, which runs with a cap on one allocation) */
		{ "many strings", offsetof(struct dc_header, nstrings), 0x7fffffffu, "sizes do not add up" },
		{ "object", offsetof(struct dc_header, object), 0, "made for another file" },
		{ "object id", offsetof(struct dc_header, object), 0xffffffffu, "bad identity" },
		{ "size", offsetof(struct dc_header, object_size), 1, "another version of the file" },
		{ "build id", offsetof(struct dc_header, build_id), 0, "" },
		/* the first entry: its frame count, its status, its order */
		{ "chain", sizeof h + offsetof(struct dc_entry, nframes), 0x0000ffffu, "bad entry 0" },
		{ "status", sizeof h + offsetof(struct dc_entry, status), 7, "bad entry 0" },
		{ "order", sizeof h + sizeof(struct dc_entry), 0, "bad entry 1" },
		/* the first frame: a string id, a line */
		{ "name id", sizeof h + npcs * sizeof(struct dc_entry), 0xfffffff0u, "bad frame 0" },
		{ "line", sizeof h + npcs * sizeof(struct dc_entry) + offsetof(struct dc_frame, line),
		  0x80000000u, "bad frame 0" },
		{ "inlined", sizeof h + npcs * sizeof(struct dc_entry) + offsetof(struct dc_frame, inlined),
		  2, "bad frame 0" },
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		memcpy(buf, good, len);
		if (cases[i].off + 4 > len)
			continue;
		if (!strcmp(cases[i].what, "order")) {
			/* entry 1's address equal to entry 0's */
			memcpy(buf + sizeof h + sizeof(struct dc_entry), buf + sizeof h, 8);
		} else if (!strcmp(cases[i].what, "status")) {
			buf[cases[i].off] = (char)cases[i].val;
		} else if (!strcmp(cases[i].what, "chain")) {
			uint16_t v = (uint16_t)cases[i].val;
			memcpy(buf + cases[i].off, &v, 2);
		} else {
			memcpy(buf + cases[i].off, &cases[i].val, 4);
		}
		expect_refused(buf, len, cases[i].what, cases[i].reason);
	}
	/* units: in order, each with ranges inside the table, sorted and
	 * non-empty */
	CHECK(h.nunits >= 1 && h.ntops >= 2);
	size_t uoff = sizeof h + h.nentries * sizeof(struct dc_entry) +
		      h.nframes * sizeof(struct dc_frame);
	size_t toff = uoff + h.nunits * sizeof(struct dc_unit);
	struct dc_unit u0;
	memcpy(&u0, good + uoff, sizeof u0);
	struct { const char *what; size_t off; uint64_t val; int size; } ucases[] = {
		{ "no ranges", uoff + offsetof(struct dc_unit, ntops), 0, 4 },
		{ "past the table", uoff + offsetof(struct dc_unit, top0), h.ntops, 4 },
		{ "empty range", toff + offsetof(struct cuindex_top, hi), 0, 8 },
		{ "unsorted", toff + sizeof(struct cuindex_top) + offsetof(struct cuindex_top, lo), 0, 8 },
		{ "unit order", uoff + sizeof(struct dc_unit), u0.cuoff, 8 },
	};
	for (size_t i = 0; i < sizeof ucases / sizeof ucases[0]; i++) {
		memcpy(buf, good, len);
		if (!strcmp(ucases[i].what, "unit order") && h.nunits < 2)
			continue;
		if (!strcmp(ucases[i].what, "unsorted") && u0.ntops < 2)
			continue;
		if (ucases[i].size == 4) {
			uint32_t v = (uint32_t)ucases[i].val;
			memcpy(buf + ucases[i].off, &v, 4);
		} else {
			memcpy(buf + ucases[i].off, &ucases[i].val, 8);
		}
		expect_refused(buf, len, ucases[i].what, "bad unit");
	}
	/* the unit map: units increasing, ranges in order, of known units */
	size_t moff = toff + h.ntops * sizeof(struct cuindex_top) + h.nseqs * sizeof(struct cuindex_seq);
	size_t roff = moff + h.nmapunits * sizeof(uint64_t);
	CHECK(h.nmapunits >= 2 && h.nmapranges >= 2);
	uint64_t mu0;
	memcpy(&mu0, good + moff, 8);
	struct { const char *what; size_t off; uint64_t val; } mcases[] = {
		{ "unit order", moff + 8, mu0 },
		{ "unknown unit", roff + offsetof(struct cumap_range, cuoff), mu0 + 1 },
		{ "range order", roff + sizeof(struct cumap_range) +
				 offsetof(struct cumap_range, lo), 0 },
		{ "reversed range", roff + offsetof(struct cumap_range, hi), 0 },
	};
	for (size_t i = 0; i < sizeof mcases / sizeof mcases[0]; i++) {
		memcpy(buf, good, len);
		memcpy(buf + mcases[i].off, &mcases[i].val, 8);
		expect_refused(buf, len, mcases[i].what, "bad unit map");
	}
	/* ranges without units */
	memcpy(buf, good, len);
	uint32_t zero = 0;
	memcpy(buf + offsetof(struct dc_header, nmapunits), &zero, 4);
	fix_checksum(buf, len);
	CHECK(load(buf, len, why, sizeof why) == -1 && strstr(why, "sizes do not add up"));
	/* a string table whose last string has lost its NUL */
	memcpy(buf, good, len);
	buf[len - 1] = 'x';
	fix_checksum(buf, len);
	CHECK(load(buf, len, why, sizeof why) == -1 && strstr(why, "bad string table"));
	/* one byte more, with the counts saying so nowhere: a part cut short,
	 * ignored, and the file to be rewritten */
	memcpy(buf, good, len);
	buf[len] = 0;
	fix_checksum(buf, len + 1);
	CHECK(load(buf, len + 1, why, sizeof why) == (long)npcs &&
	      strstr(why, "the rest ignored (shorter than a part header at byte "));
	/* and the file untouched still loads */
	CHECK(load(good, len, why, sizeof why) == (long)npcs);
	free(buf);
	free(good);
}

/* Random damage: bytes set, words set to edge values, truncation; the
 * checksum made right half of the time.  Nothing may crash, every file
 * loaded must be walkable. */
TEST(random_damage)
{
	/* every other file has two appended parts */
	size_t len = 0, plen = 0, firstlen = 0;
	char *good = make_file(&len), why[1100], *first = NULL;
	char *parted = make_parts_file(2, &plen, &first, &firstlen);
	CHECK(good && parted);
	if (!good || !parted)
		return;
	char *buf = malloc(len > plen ? len : plen);
	unsigned seed = 12345;
	long refused = 0, loaded = 0;
	static const uint32_t edges[] = { 0, 1, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0xffffu, 256, 257 };
	/* DC_ITERATIONS=N runs longer (by hand, under ASan) */
	const char *env = getenv("DC_ITERATIONS");
	int iterations = env && atoi(env) > 0 ? atoi(env) : 3000;
	for (int it = 0; it < iterations; it++) {
		size_t n = it % 2 ? plen : len;
		memcpy(buf, it % 2 ? parted : good, n);
		int k = 1 + (int)(rand_r(&seed) % 4);
		for (int j = 0; j < k && n > 0; j++) {
			size_t off = (size_t)rand_r(&seed) % n;
			switch (rand_r(&seed) % 3) {
			case 0: buf[off] = (char)rand_r(&seed); break;
			case 1:
				off &= ~(size_t)3;
				if (off + 4 <= n) {
					uint32_t v = edges[rand_r(&seed) % 8];
					memcpy(buf + off, &v, 4);
				}
				break;
			default: n = off; break;
			}
		}
		if (rand_r(&seed) & 1)
			fix_checksum(buf, n);
		long r = load(buf, n, why, sizeof why);
		CHECK(r >= -1);
		if (r < 0)
			refused++;
		else
			loaded++;
	}
	CHECK(refused > iterations * 2 / 3);
	printf("random damage: %ld files refused, %ld loaded and walked\n", refused, loaded);
	free(buf);
	free(good);
	free(parted);
	free(first);
}

/* The module as loaded from BUF[0..len) put in place of the file, in a
 * new cache (free it with diskcache_free(*dcp)). */
static struct dcmodule *load_module(const char *buf, size_t len, struct diskcache **dcp)
{
	char err[512];
	FILE *f = fopen(the_path(), "wb");
	if (f) {
		fwrite(buf, 1, len, f);
		fclose(f);
	}
	*dcp = diskcache_new(dir, NULL, err, sizeof err);
	return *dcp ? diskcache_module(*dcp, mod, self) : NULL;
}

/* The appended part headers of a file: their offsets into OFFS (at most
 * max), their count returned. */
static size_t part_offsets(const char *buf, size_t len, size_t *offs, size_t max)
{
	struct dc_header h;
	memcpy(&h, buf, sizeof h);
	size_t off = sizeof h + (size_t)dcfile_part_size(h.nentries, h.nframes, h.nunits, h.ntops,
						      h.nseqs, h.strbytes) +
		     h.nmapunits * sizeof(uint64_t) + h.nmapranges * sizeof(struct cumap_range);
	size_t n = 0;
	while (n < max && len - off >= sizeof(struct dc_part_header)) {
		struct dc_part_header ph;
		memcpy(&ph, buf + off, sizeof ph);
		offs[n++] = off;
		off += sizeof ph + (size_t)dcfile_part_size(ph.nentries, ph.nframes, ph.nunits,
							    ph.ntops, ph.nseqs, ph.strbytes);
	}
	return n;
}

TEST(parts)
{
	char *first = NULL, why[1100];
	size_t len = 0, firstlen = 0, offs[4];
	char *buf = make_parts_file(2, &len, &first, &firstlen);
	CHECK(buf != NULL && first != NULL);
	if (!buf || !first)
		return;
	/* appended: the first run's file is still there, unchanged, at the
	 * start, and two parts follow it */
	CHECK(len > firstlen && !memcmp(buf, first, firstlen));
	CHECK_INT(part_offsets(buf, len, offs, 4), 2);
	CHECK_INT(offs[0], firstlen);
	struct diskcache *dc;
	struct dcmodule *m = load_module(buf, len, &dc);
	CHECK_INT(m->nparts, 2);
	CHECK_INT(m->nents, npcs);
	CHECK(strstr(m->state, " and 2 appended parts") != NULL);
	check_answers(m);
	/* the units of every run, each once, as the index gives them */
	struct unitsum want = { 0 }, got = { 0 };
	symmodule_each_unit(mod, sum_unit, &want);
	for (size_t i = 0; i < m->nunits; i++) {
		struct cumap_unitinfo u = { m->units[i].tops, m->units[i].ntops,
					    m->units[i].seqs, m->units[i].nseqs };
		sum_unit(&got, m->units[i].cuoff, &u);
	}
	CHECK_INT(got.units, want.units);
	CHECK(got.hash == want.hash);
	diskcache_free(dc);
	char *bad = malloc(len + 64 * 18);

	/* the last part damaged: the file up to it is used, its answers are
	 * looked up again, and the next save rewrites the file whole */
	memcpy(bad, buf, len);
	bad[len - 2] ^= 0x55;
	m = load_module(bad, len, &dc);
	CHECK_INT(m->nparts, 1);
	CHECK(m->nents < npcs && m->nents > 0);
	CHECK(strstr(m->state, "the rest ignored (bad part checksum at byte ") != NULL);
	CHECK_INT(check_answers(m), m->nents);
	diskcache_free(dc);
	CHECK_INT(add_run(1, 0), 1);
	size_t n2 = 0;
	char *whole = slurp(the_path(), &n2);
	CHECK_INT(part_offsets(whole, n2, offs, 4), 0);
	m = load_module(whole, n2, &dc);
	CHECK_INT(m->nents, npcs);
	CHECK_INT(m->nparts, 0);
	check_answers(m);
	diskcache_free(dc);
	free(whole);

	/* a part header of another place or another body: ignored */
	CHECK_INT(part_offsets(buf, len, offs, 4), 2);
	size_t fields[] = { offsetof(struct dc_part_header, offset),
			    offsetof(struct dc_part_header, body_checksum),
			    offsetof(struct dc_part_header, magic) };
	for (size_t i = 0; i < 3; i++) {
		memcpy(bad, buf, len);
		bad[offs[1] + fields[i]] ^= 1;
		fix_checksum(bad, len);
		m = load_module(bad, len, &dc);
		CHECK_INT(m->nparts, 1);
		CHECK(strstr(m->state, "the rest ignored (bad part header at byte ") != NULL);
		diskcache_free(dc);
	}

	/* a whole part (checksum right) with a bad frame or an address the
	 * file has already: the file is refused */
	struct dc_part_header ph;
	memcpy(&ph, buf + offs[0], sizeof ph);
	CHECK(ph.nentries > 0 && ph.nframes > 0);
	size_t e0 = offs[0] + sizeof ph, f0 = e0 + ph.nentries * sizeof(struct dc_entry);
	uint32_t huge = 0xfffffff0u;
	memcpy(bad, buf, len);
	memcpy(bad + f0 + offsetof(struct dc_frame, name), &huge, 4);
	expect_refused(bad, len, "part frame", "bad frame");
	memcpy(bad, buf, len);
	memcpy(bad + e0, buf + sizeof(struct dc_header), 8);
	expect_refused(bad, len, "part entry", "bad entry");

	/* more parts than DC_MAX_PARTS (empty ones here, after the first
	 * run's file): the rest ignored, and the next save writes whole */
	struct dc_header h;
	memcpy(&h, first, sizeof h);
	memcpy(bad, first, firstlen);
	size_t n = firstlen;
	for (int k = 0; k <= DC_MAX_PARTS; k++) {
		struct dc_part_header e = { .offset = n, .body_checksum = h.checksum,
					    .checksum = dcfile_checksum("", 0) };
		memcpy(e.magic, DC_PART_MAGIC, sizeof e.magic);
		memcpy(bad + n, &e, sizeof e);
		n += sizeof e;
	}
	m = load_module(bad, n, &dc);
	CHECK_INT(m->nparts, DC_MAX_PARTS);
	snprintf(why, sizeof why, "the rest ignored (more than %d parts)", DC_MAX_PARTS);
	CHECK(strstr(m->state, why) != NULL);
	diskcache_free(dc);
	CHECK_INT(add_run(1, 0), DC_MAX_PARTS);
	whole = slurp(the_path(), &n2);
	CHECK_INT(part_offsets(whole, n2, offs, 4), 0);
	free(whole);

	/* parts as large as half the body: the next save writes whole (here
	 * one part of nothing but strings) */
	memcpy(bad, first, firstlen);
	size_t ns = firstlen / 4 + 1;
	char *big = realloc(bad, firstlen + sizeof ph + 2 * ns);
	if (big) {
		bad = big;
		struct dc_part_header e = { .offset = firstlen, .body_checksum = h.checksum,
					    .nstrings = (uint32_t)ns, .strbytes = 2 * ns };
		memcpy(e.magic, DC_PART_MAGIC, sizeof e.magic);
		for (size_t i = 0; i < ns; i++)
			memcpy(bad + firstlen + sizeof e + 2 * i, "x", 2);
		e.checksum = dcfile_checksum(bad + firstlen + sizeof e, 2 * ns);
		memcpy(bad + firstlen, &e, sizeof e);
		m = load_module(bad, firstlen + sizeof e + 2 * ns, &dc);
		CHECK_INT(m->nparts, 1);
		diskcache_free(dc);
		CHECK_INT(add_run(1, 0), 1);
		whole = slurp(the_path(), &n2);
		CHECK_INT(part_offsets(whole, n2, offs, 4), 0);
		m = load_module(whole, n2, &dc);
		CHECK_INT(m->nents, npcs);
		check_answers(m);
		diskcache_free(dc);
		free(whole);
	}

	/* a file that grew after this run read it (another run appended):
	 * this run's answers are not appended after a part it does not know,
	 * but written whole with what it read */
	m = load_module(first, firstlen, &dc);
	size_t had = m->nents, mine = 0;
	CHECK_INT(add_run(3, 1), 0);
	for (size_t i = 0; i < npcs; i++) {
		struct symresult a;
		if (i % 3 != 2 || dcmodule_lookup(m, pcs[i], &a))
			continue;
		symmodule_lookup(mod, pcs[i], &a);
		dcmodule_add(m, pcs[i], &a);
		mine++;
	}
	CHECK(mine > 0);
	CHECK(dcmodule_save(dc, m, mod, why, sizeof why) == 0);
	diskcache_free(dc);
	whole = slurp(the_path(), &n2);
	CHECK_INT(part_offsets(whole, n2, offs, 4), 0);
	m = load_module(whole, n2, &dc);
	CHECK_INT(m->nents, had + mine);
	CHECK_INT(check_answers(m), had + mine);
	diskcache_free(dc);
	free(whole);
	free(bad);
	free(buf);
	free(first);
}

/* An address of PROG (a module of SC) that symcache names NAME; 0 if none. */
static uint64_t find_named(struct symmodule *pm, const char *name)
{
	size_t nseg;
	const struct symsegment *segs = symmodule_segments(pm, &nseg);
	for (size_t i = 0; i < nseg; i++)
		if (segs[i].flags & PF_X)
			for (uint64_t a = segs[i].vaddr; a < segs[i].vaddr + segs[i].memsz; a++) {
				struct symresult r;
				symmodule_lookup(pm, a, &r);
				if (r.nframes && r.frames[0].name && !strcmp(r.frames[0].name, name))
					return a;
			}
	return 0;
}

/* The name symcache gives at PC of a fresh look at PATH, or "". */
static void fresh_name(const char *path, uint64_t pc, char *out, size_t outlen)
{
	char err[512];
	struct symcache *c = symcache_new(NULL);
	struct symmodule *pm = c ? symcache_module(c, path, err, sizeof err) : NULL;
	struct symresult r;
	out[0] = '\0';
	if (pm) {
		symmodule_lookup(pm, pc, &r);
		if (r.nframes && r.frames[0].name)
			snprintf(out, outlen, "%s", r.frames[0].name);
	}
	symcache_free(c);
}

/* A binary without a build id (nor DWARF, whose own file's time would be
 * checked too) is known by its size, inode and modification time.  One
 * rewritten in place (same name, size and inode: a rebuild of the same size
 * copied over it) with a later time, whose function c_leaf is now c_lEaf:
 * the entry made for the old file must not be used. */
TEST(stale_without_build_id)
{
	const char *fx = getenv("JHEAP_FIXTURES");
	char src[600], pdir[300], prog[400], err[512], name[64];
	if (!fx) {
		printf("%s: stale_without_build_id needs JHEAP_FIXTURES (make unit-run sets it)\n",
		       __FILE__);
		CHECK(fx != NULL);
		return;
	}
	snprintf(src, sizeof src, "%s/c_nobid", fx);
	snprintf(pdir, sizeof pdir, "%s.prog", dir);
	snprintf(prog, sizeof prog, "%s/prog", pdir);
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	nftw(pdir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	CHECK(mkdir(pdir, 0700) == 0);
	size_t len = 0;
	char *bin = slurp(src, &len);
	CHECK(len > 0);
	FILE *f = fopen(prog, "wb");
	CHECK(f && fwrite(bin, 1, len, f) == len && fclose(f) == 0);

	/* the old file's answer for c_leaf, cached */
	struct symcache *c = symcache_new(NULL);
	struct symmodule *pm = symcache_module(c, prog, err, sizeof err);
	CHECK(pm != NULL);
	if (!pm)
		return;
	size_t blen = 1;
	CHECK(symmodule_build_id(pm, &blen) == NULL || blen == 0);
	CHECK(symmodule_debug_path(pm) == NULL);  /* only the object's own time counts */
	uint64_t pc = find_named(pm, "c_leaf");
	CHECK(pc != 0);
	struct diskcache *dc = diskcache_new(dir, NULL, err, sizeof err);
	CHECK(dc != NULL);
	struct dcmodule *m = diskcache_module(dc, pm, prog);
	struct symresult r;
	symmodule_lookup(pm, pc, &r);
	dcmodule_add(m, pc, &r);
	CHECK(dcmodule_save(dc, m, pm, err, sizeof err) == 0);
	diskcache_free(dc);
	/* used while the file is the same */
	dc = diskcache_new(dir, NULL, err, sizeof err);
	m = diskcache_module(dc, pm, prog);
	CHECK(!strncmp(m->state, "loaded 1 answers", 16));
	CHECK(dcmodule_lookup(m, pc, &r) && r.nframes && !strcmp(r.frames[0].name, "c_leaf"));
	diskcache_free(dc);
	symcache_free(c);

	/* rewritten in place: same size and inode, every "c_leaf" now
	 * "c_lEaf", a modification time one second later */
	struct stat before, after;
	CHECK(stat(prog, &before) == 0);
	size_t changed = 0;
	for (char *p = bin; (p = memmem(p, len - (size_t)(p - bin), "c_leaf", 6)); p += 6) {
		p[3] = 'E';
		changed++;
	}
	CHECK(changed > 0);
	int fd = open(prog, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, bin, len, 0) == (ssize_t)len);
	struct timespec times[2] = { before.st_atim, before.st_mtim };
	times[1].tv_sec += 1;
	CHECK(fd >= 0 && futimens(fd, times) == 0 && close(fd) == 0);
	CHECK(stat(prog, &after) == 0);
	CHECK(after.st_ino == before.st_ino && after.st_size == before.st_size);
	fresh_name(prog, pc, name, sizeof name);
	CHECK_STR(name, "c_lEaf");

	/* the old entry is not used: the file is refused, or holds nothing
	 * for the address, or the new name */
	c = symcache_new(NULL);
	pm = symcache_module(c, prog, err, sizeof err);
	CHECK(pm != NULL);
	if (pm) {
		dc = diskcache_new(dir, NULL, err, sizeof err);
		m = diskcache_module(dc, pm, prog);
		bool stale = dcmodule_lookup(m, pc, &r) &&
			     !(r.nframes && r.frames[0].name && !strcmp(r.frames[0].name, "c_lEaf"));
		bool refused = strstr(m->state, "made for another version of the file") != NULL;
		if (stale || !refused)
			fprintf(stderr, "stale_without_build_id: %s\n", m->state);
		diskcache_free(dc);
		CHECK(!stale);
		CHECK(refused);
	}
	symcache_free(c);
	free(bin);
	nftw(pdir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	if (setup()) {
		printf("%s: SKIP: cannot read this program\n", __FILE__);
		return 0;
	}
	RUN(roundtrip);
	RUN(append);
	RUN(parts);
	RUN(bad_fields);
	RUN(random_damage);
	RUN(stale_without_build_id);
	nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	symcache_free(sc);
	return UNIT_END();
}

/*
 * dumptool: helpers of `make bench` that read and write jemalloc heap_v2
 * dumps.
 *
 *   dumptool info DUMP
 *       print "stacks FRAMES ADDRS BYTES": the number of stack records, of
 *       frames in them, of distinct addresses, and the file size.
 *
 *   dumptool pcs DUMP BINARY OUT
 *       the distinct code addresses of the dump that lie in BINARY's
 *       mappings, as pcs (address - 1: the dump holds return addresses):
 *         OUT.vaddr  link-time addresses in BINARY, sorted, "0x..." per
 *                    line (input of llvm-symbolizer, addr2line, eu-addr2line)
 *         OUT.symin  the dump's MAPPED_LIBRARIES, then the runtime pcs one
 *                    per line: jeprof's --symbols input (and jheap's)
 *         OUT.heap   a heap_v2 dump with one single-frame stack per pc and
 *                    the same maps, so that `jheap --text` symbolizes each
 *                    pc once (the stand-in for --symbols)
 *
 *   dumptool synth DUMP NSTACKS SEED OUT
 *       write a heap_v2 dump of NSTACKS distinct stacks made of the real
 *       stacks of DUMP followed by recombinations of them (the leaf-side
 *       part of one stack joined to the root-side part of another at the
 *       same depth), with the counts of the first, and DUMP's
 *       MAPPED_LIBRARIES: every address is a real return address of the
 *       same program.
 *
 *   dumptool fleet DUMP NPROC NDUMPS NSTACKS SEED OUTDIR NAME
 *       write NPROC * NDUMPS heap_v2 dumps as a fleet of processes of
 *       DUMP's program would: each process has its own address layout
 *       (the program's mappings moved by one random number of pages, every
 *       other mapping by another, and every address of the stacks with
 *       its mapping), and each of its NDUMPS dumps holds NSTACKS distinct
 *       stacks of DUMP picked at random, with their counts.  The files are
 *       OUTDIR/NAME.hostHHH.pidPPPPP.DD.heap (host = the process's number,
 *       pid = 1000 + 7 * it, DD = the dump's).  The same arguments give
 *       the same bytes.
 *
 * Exit 0 on success, 1 on an error, 2 on a usage error.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/chars.h"

struct stack {
	uint32_t first, n;         /* frames in dump.addrs */
	const char *counts;        /* the count lines, up to the next record */
	size_t counts_len;
};

struct dump {
	const char *text;
	size_t size;
	uint64_t *addrs;
	size_t naddrs, addrs_cap;
	struct stack *stacks;
	size_t nstacks, stacks_cap;
	const char *maps;          /* from "MAPPED_LIBRARIES:" to the end */
	size_t maps_len;
};

static int fail(const char *what, const char *name)
{
	fprintf(stderr, "dumptool: %s '%s': %s\n", what, name, strerror(errno));
	return -1;
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *np;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 1024;
	while (ncap < need)
		ncap *= 2;
	np = realloc(*p, ncap * elem);
	if (!np) {
		fprintf(stderr, "dumptool: out of memory\n");
		return -1;
	}
	*p = np;
	*cap = ncap;
	return 0;
}

static int dump_load(struct dump *d, const char *name)
{
	struct stat st;
	const char *p, *end;
	int fd = open(name, O_RDONLY);

	memset(d, 0, sizeof(*d));
	if (fd < 0 || fstat(fd, &st) < 0)
		return fail("cannot open", name);
	d->size = (size_t)st.st_size;
	d->text = d->size ? mmap(NULL, d->size, PROT_READ, MAP_PRIVATE, fd, 0) : "";
	close(fd);
	if (d->text == MAP_FAILED)
		return fail("cannot map", name);
	p = d->text;
	end = p + d->size;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));

		if (!eol)
			eol = end;
		if (p[0] == '@') {
			struct stack *s;
			const char *q = p + 1;

			if (grow((void **)&d->stacks, &d->stacks_cap, d->nstacks + 1, sizeof(*s)) < 0)
				return -1;
			s = &d->stacks[d->nstacks++];
			s->first = (uint32_t)d->naddrs;
			while (q < eol) {
				uint64_t v = 0;
				int h;

				while (q < eol && *q == ' ')
					q++;
				if (q + 1 < eol && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
					q += 2;
				if (q >= eol)
					break;
				while (q < eol && (h = jh_hexval((unsigned char)*q)) >= 0) {
					v = v << 4 | (uint64_t)h;
					q++;
				}
				while (q < eol && *q != ' ')
					q++;
				if (grow((void **)&d->addrs, &d->addrs_cap, d->naddrs + 1, sizeof(uint64_t)) < 0)
					return -1;
				d->addrs[d->naddrs++] = v;
			}
			s->n = (uint32_t)(d->naddrs - s->first);
			s->counts = eol < end ? eol + 1 : end;
			s->counts_len = 0;
		} else if (p[0] == ' ' && d->nstacks && !d->maps) {
			struct stack *s = &d->stacks[d->nstacks - 1];

			s->counts_len = (size_t)((eol < end ? eol + 1 : end) - s->counts);
		} else if (!strncmp(p, "MAPPED_LIBRARIES:", 17)) {
			d->maps = p;
			d->maps_len = (size_t)(end - p);
			break;
		}
		p = eol + 1;
	}
	if (!d->maps) {
		fprintf(stderr, "dumptool: '%s' has no MAPPED_LIBRARIES\n", name);
		return -1;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorted distinct copy of the dump's addresses. */
static uint64_t *distinct_addrs(const struct dump *d, size_t *n)
{
	uint64_t *v = malloc((d->naddrs ? d->naddrs : 1) * sizeof(*v));
	size_t i, k = 0;

	if (!v) {
		fprintf(stderr, "dumptool: out of memory\n");
		return NULL;
	}
	memcpy(v, d->addrs, d->naddrs * sizeof(*v));
	qsort(v, d->naddrs, sizeof(*v), cmp_u64);
	for (i = 0; i < d->naddrs; i++)
		if (k == 0 || v[k - 1] != v[i])
			v[k++] = v[i];
	*n = k;
	return v;
}

static int cmd_info(const char *name)
{
	struct dump d;
	size_t n;
	uint64_t *v;

	if (dump_load(&d, name) < 0)
		return 1;
	v = distinct_addrs(&d, &n);
	if (!v)
		return 1;
	printf("%zu %zu %zu %zu\n", d.nstacks, d.naddrs, n, d.size);
	free(v);
	return 0;
}

struct seg {
	uint64_t start, end, offset;
};

struct load {
	uint64_t offset, filesz, vaddr;
};

/* PT_LOAD segments of a 64-bit ELF file. */
static int read_loads(const char *bin, struct load *loads, int max)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(bin, O_RDONLY), n = 0, i;

	if (fd < 0)
		return fail("cannot open", bin);
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64) {
		fprintf(stderr, "dumptool: '%s' is not a 64-bit ELF file\n", bin);
		close(fd);
		return -1;
	}
	for (i = 0; i < eh.e_phnum && n < max; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_LOAD) {
			loads[n].offset = ph.p_offset;
			loads[n].filesz = ph.p_filesz;
			loads[n].vaddr = ph.p_vaddr;
			n++;
		}
	}
	close(fd);
	return n;
}

/* The executable mappings of BINARY (same path, or same base name). */
static int binary_segs(const struct dump *d, const char *bin, struct seg *segs, int max)
{
	const char *p = d->maps, *end = d->maps + d->maps_len;
	const char *base = strrchr(bin, '/');
	int n = 0;

	base = base ? base + 1 : bin;
	while (p < end && n < max) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		unsigned long long s, e, off;
		char perms[8], path[4096];
		char line[4200];
		size_t len;

		if (!eol)
			eol = end;
		len = (size_t)(eol - p);
		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = 0;
			path[0] = 0;
			if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &s, &e, perms, &off, path) == 5 &&
			    perms[2] == 'x') {
				const char *pb = strrchr(path, '/');

				pb = pb ? pb + 1 : path;
				if (!strcmp(path, bin) || !strcmp(pb, base)) {
					segs[n].start = s;
					segs[n].end = e;
					segs[n].offset = off;
					n++;
				}
			}
		}
		p = eol + 1;
	}
	return n;
}

static void write_maps(FILE *o, const struct dump *d, int with_title)
{
	const char *m = d->maps;
	size_t len = d->maps_len;

	if (!with_title) {
		const char *nl = memchr(m, '\n', len);

		len -= nl ? (size_t)(nl + 1 - m) : len;
		m = nl ? nl + 1 : m + len;
	}
	fwrite(m, 1, len, o);
	if (len && m[len - 1] != '\n')
		fputc('\n', o);
}

static FILE *create(const char *prefix, const char *suffix)
{
	char name[4096];
	FILE *f;

	snprintf(name, sizeof(name), "%s%s", prefix, suffix);
	f = fopen(name, "w");
	if (!f)
		fail("cannot create", name);
	return f;
}

static int finish(FILE *f)
{
	int bad = ferror(f);

	if (fclose(f) != 0 || bad) {
		fprintf(stderr, "dumptool: write error: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

struct pcpair {
	uint64_t vaddr, rt;
};

static int cmp_pair(const void *a, const void *b)
{
	const struct pcpair *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return x->rt < y->rt ? -1 : x->rt > y->rt;
}

static int cmd_pcs(const char *name, const char *bin, const char *out)
{
	struct dump d;
	struct seg segs[64];
	struct load loads[32];
	struct pcpair *pcs;
	uint64_t *v;
	size_t n, i, k = 0;
	int nsegs, nloads, j, l;
	FILE *fv, *fs, *fh;

	if (dump_load(&d, name) < 0)
		return 1;
	nloads = read_loads(bin, loads, 32);
	if (nloads < 0)
		return 1;
	nsegs = binary_segs(&d, bin, segs, 64);
	if (nsegs == 0) {
		fprintf(stderr, "dumptool: no executable mapping of '%s' in '%s'\n", bin, name);
		return 1;
	}
	v = distinct_addrs(&d, &n);
	pcs = malloc((n ? n : 1) * sizeof(*pcs));
	if (!v || !pcs) {
		fprintf(stderr, "dumptool: out of memory\n");
		return 1;
	}
	for (i = 0; i < n; i++) {
		uint64_t pc = v[i] - 1;

		for (j = 0; j < nsegs; j++) {
			uint64_t off;

			if (pc < segs[j].start || pc >= segs[j].end)
				continue;
			off = pc - segs[j].start + segs[j].offset;
			for (l = 0; l < nloads; l++)
				if (off >= loads[l].offset && off < loads[l].offset + loads[l].filesz) {
					pcs[k].vaddr = off - loads[l].offset + loads[l].vaddr;
					pcs[k].rt = pc;
					k++;
					break;
				}
			break;
		}
	}
	qsort(pcs, k, sizeof(*pcs), cmp_pair);
	fv = create(out, ".vaddr");
	fs = create(out, ".symin");
	fh = create(out, ".heap");
	if (!fv || !fs || !fh)
		return 1;
	write_maps(fs, &d, 0);
	fprintf(fh, "heap_v2/1\n  t*: %zu: %zu [0: 0]\n  t0: %zu: %zu [0: 0]\n", k, k * 16, k, k * 16);
	for (i = 0; i < k; i++) {
		fprintf(fv, "0x%llx\n", (unsigned long long)pcs[i].vaddr);
		fprintf(fs, "0x%llx\n", (unsigned long long)pcs[i].rt);
		fprintf(fh, "@ 0x%llx\n  t*: 1: 16 [0: 0]\n  t0: 1: 16 [0: 0]\n",
			(unsigned long long)pcs[i].rt);
	}
	fputc('\n', fh);
	write_maps(fh, &d, 1);
	if (finish(fv) < 0 || finish(fs) < 0 || finish(fh) < 0)
		return 1;
	printf("%zu\n", k);
	free(pcs);
	free(v);
	return 0;
}

static uint64_t rng;

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t rnd(void)
{
	uint64_t z = (rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Open-addressing set of 64-bit stack hashes (0 marks a free slot). */
struct hset {
	uint64_t *slot;
	size_t mask;
};

static int hset_add(struct hset *h, uint64_t key)
{
	size_t i;

	if (key == 0)
		key = 1;
	for (i = (size_t)key & h->mask;; i = (i + 1) & h->mask) {
		if (h->slot[i] == key)
			return 0;
		if (h->slot[i] == 0) {
			h->slot[i] = key;
			return 1;
		}
	}
}

static uint64_t hash_frames(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	uint64_t x = 0xcbf29ce484222325ULL ^ (na + nb);
	size_t i;

	for (i = 0; i < na; i++)
		x = (x ^ a[i]) * 0x100000001b3ULL, x ^= x >> 29;
	for (i = 0; i < nb; i++)
		x = (x ^ b[i]) * 0x100000001b3ULL, x ^= x >> 29;
	return x * 0x9e3779b97f4a7c15ULL;
}

/* A decimal number at *p (after blanks), within end; advances *p. */
static unsigned long long number(const char **p, const char *end)
{
	unsigned long long v = 0;
	const char *q = *p;

	while (q < end && *q == ' ')
		q++;
	while (q < end && *q >= '0' && *q <= '9')
		v = v * 10 + (unsigned long long)(*q++ - '0');
	*p = q;
	return v;
}

/* Sum the "t*:" values of a stack's count lines.  (No sscanf: the text is
 * a mapped file, not a string.) */
static void add_counts(const struct stack *s, unsigned long long *objs, unsigned long long *bytes)
{
	const char *p = s->counts + 5, *end = s->counts + s->counts_len;

	if (s->counts_len > 5 && !strncmp(s->counts, "  t*:", 5)) {
		*objs += number(&p, end);
		if (p < end && *p == ':')
			p++;
		*bytes += number(&p, end);
	}
}

static int cmd_synth(const char *name, long long want, unsigned long long seed, const char *out)
{
	struct dump d;
	struct hset hs;
	size_t cap = 1, i, made = 0, tries = 0;
	unsigned long long objs = 0, bytes = 0;
	FILE *o;
	char *body = NULL;
	size_t body_len = 0;
	FILE *mem;

	if (dump_load(&d, name) < 0)
		return 1;
	if (d.nstacks < 2 || want < 1) {
		fprintf(stderr, "dumptool: '%s' has too few stacks to recombine\n", name);
		return 1;
	}
	while (cap < (size_t)want * 2)
		cap <<= 1;
	hs.slot = calloc(cap, sizeof(uint64_t));
	hs.mask = cap - 1;
	rng = seed;
	o = fopen(out, "w");
	if (!hs.slot || !o) {
		fprintf(stderr, "dumptool: cannot start '%s'\n", out);
		return 1;
	}
	/* the body goes to a temporary file first: the header holds totals */
	mem = tmpfile();
	if (!mem) {
		fail("cannot create a temporary file for", out);
		return 1;
	}
	for (i = 0; i < d.nstacks && made < (size_t)want; i++) {
		const struct stack *s = &d.stacks[i];
		const uint64_t *f = d.addrs + s->first;
		uint32_t k;

		if (!hset_add(&hs, hash_frames(f, s->n, NULL, 0)))
			continue;
		fputc('@', mem);
		for (k = 0; k < s->n; k++)
			fprintf(mem, " 0x%llx", (unsigned long long)f[k]);
		fputc('\n', mem);
		fwrite(s->counts, 1, s->counts_len, mem);
		add_counts(s, &objs, &bytes);
		made++;
	}
	while (made < (size_t)want) {
		const struct stack *a = &d.stacks[rnd() % d.nstacks];
		const struct stack *b = &d.stacks[rnd() % d.nstacks];
		const uint64_t *fa = d.addrs + a->first, *fb = d.addrs + b->first;
		uint32_t lo = a->n < b->n ? a->n : b->n, cut, k;

		if (++tries > (size_t)want * 50) {
			fprintf(stderr, "dumptool: only %zu distinct stacks could be made\n", made);
			break;
		}
		if (lo < 3)
			continue;
		cut = 1 + (uint32_t)(rnd() % (lo - 1));
		if (!hset_add(&hs, hash_frames(fa, cut, fb + cut, b->n - cut)))
			continue;
		fputc('@', mem);
		for (k = 0; k < cut; k++)
			fprintf(mem, " 0x%llx", (unsigned long long)fa[k]);
		for (k = cut; k < b->n; k++)
			fprintf(mem, " 0x%llx", (unsigned long long)fb[k]);
		fputc('\n', mem);
		fwrite(a->counts, 1, a->counts_len, mem);
		add_counts(a, &objs, &bytes);
		made++;
	}
	fprintf(o, "heap_v2/1\n  t*: %llu: %llu [0: 0]\n  t0: %llu: %llu [0: 0]\n", objs, bytes, objs, bytes);
	rewind(mem);
	body = malloc(1 << 20);
	if (!body) {
		fprintf(stderr, "dumptool: out of memory\n");
		return 1;
	}
	while ((body_len = fread(body, 1, 1 << 20, mem)) > 0)
		fwrite(body, 1, body_len, o);
	fclose(mem);
	fputc('\n', o);
	write_maps(o, &d, 1);
	if (finish(o) < 0)
		return 1;
	printf("%zu\n", made);
	free(body);
	free(hs.slot);
	return 0;
}

/* One line of MAPPED_LIBRARIES: its range, and which of the two layout
 * groups it moves with (1: the program's file, 0: everything else). */
struct mline {
	const char *text;
	size_t len;
	uint64_t start, end;
	int group;
};

/* The maps' lines; the program is the first mapping with a path. */
static int parse_maps(const struct dump *d, struct mline **out, size_t *n)
{
	const char *p = d->maps, *end = d->maps + d->maps_len;
	const char *prog = NULL;
	size_t prog_len = 0, cap = 0;

	*out = NULL;
	*n = 0;
	p = memchr(p, '\n', (size_t)(end - p));   /* the title */
	p = p ? p + 1 : end;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p, *path;
		struct mline m = { p, 0, 0, 0, 0 };
		int h, field;

		if (!eol)
			eol = end;
		m.len = (size_t)(eol - p);
		while (q < eol && (h = jh_hexval((unsigned char)*q)) >= 0)
			m.start = m.start << 4 | (uint64_t)h, q++;
		if (q < eol && *q == '-')
			q++;
		while (q < eol && (h = jh_hexval((unsigned char)*q)) >= 0)
			m.end = m.end << 4 | (uint64_t)h, q++;
		/* the path: after the fifth field */
		for (field = 1, path = q; path < eol && field < 6; field++) {
			while (path < eol && *path == ' ')
				path++;
			while (path < eol && *path != ' ' && field < 5)
				path++;
			if (field == 5)
				break;
		}
		while (path < eol && *path != ' ')
			path++;
		while (path < eol && *path == ' ')
			path++;
		if (path < eol && *path == '/') {
			if (!prog) {
				prog = path;
				prog_len = (size_t)(eol - path);
			}
			m.group = (size_t)(eol - path) == prog_len && !memcmp(path, prog, prog_len);
		}
		if (grow((void **)out, &cap, *n + 1, sizeof(**out)) < 0)
			return -1;
		(*out)[(*n)++] = m;
		p = eol + 1;
	}
	return 0;
}

/* ADDR moved with the mapping that holds it (SHIFT per group). */
static uint64_t moved(const struct mline *m, size_t n, uint64_t addr, const int64_t shift[2])
{
	for (size_t i = 0; i < n; i++)
		if (addr >= m[i].start && addr < m[i].end)
			return addr + (uint64_t)shift[m[i].group];
	return addr;
}

static int cmd_fleet(const char *name, int nproc, int ndumps, long long nstacks,
		     unsigned long long seed, const char *dir, const char *prefix)
{
	struct dump d;
	struct mline *ml;
	size_t nml;
	uint32_t *pick;
	char path[4096];

	if (dump_load(&d, name) < 0 || parse_maps(&d, &ml, &nml) < 0)
		return 1;
	if (nproc < 1 || ndumps < 1 || nstacks < 1 || (size_t)nstacks > d.nstacks) {
		fprintf(stderr, "dumptool: '%s' has %zu stacks, fewer than %lld\n", name, d.nstacks,
			nstacks);
		return 1;
	}
	pick = malloc(d.nstacks * sizeof(*pick));
	if (!pick) {
		fprintf(stderr, "dumptool: out of memory\n");
		return 1;
	}
	for (int p = 0; p < nproc; p++) {
		int64_t shift[2];

		rng = seed * 1000003u + (uint64_t)p;
		/* the program up, the libraries down, by up to 256 MiB */
		shift[1] = (int64_t)(rnd() % 65536) * 4096;
		shift[0] = -(int64_t)(rnd() % 65536) * 4096;
		for (int k = 0; k < ndumps; k++) {
			unsigned long long objs = 0, bytes = 0;
			FILE *o, *mem;
			size_t i;

			snprintf(path, sizeof(path), "%s/%s.host%03d.pid%05d.%02d.heap", dir, prefix, p,
				 1000 + 7 * p, k);
			o = fopen(path, "w");
			mem = tmpfile();
			if (!o || !mem)
				return fail("cannot create", path) < 0 ? 1 : 1;
			for (i = 0; i < d.nstacks; i++)
				pick[i] = (uint32_t)i;
			/* the first NSTACKS of a partial shuffle, in the dump's order */
			for (i = 0; i < (size_t)nstacks; i++) {
				size_t j = i + rnd() % (d.nstacks - i);
				uint32_t t = pick[i];

				pick[i] = pick[j];
				pick[j] = t;
			}
			qsort(pick, (size_t)nstacks, sizeof(*pick), cmp_u32);
			for (i = 0; i < (size_t)nstacks; i++) {
				const struct stack *s = &d.stacks[pick[i]];
				const uint64_t *f = d.addrs + s->first;

				fputc('@', mem);
				for (uint32_t j = 0; j < s->n; j++)
					fprintf(mem, " 0x%llx", (unsigned long long)moved(ml, nml, f[j], shift));
				fputc('\n', mem);
				fwrite(s->counts, 1, s->counts_len, mem);
				add_counts(s, &objs, &bytes);
			}
			fprintf(o, "heap_v2/1\n  t*: %llu: %llu [0: 0]\n  t0: %llu: %llu [0: 0]\n", objs,
				bytes, objs, bytes);
			rewind(mem);
			char buf[65536];
			size_t got;
			while ((got = fread(buf, 1, sizeof(buf), mem)) > 0)
				fwrite(buf, 1, got, o);
			fclose(mem);
			fputs("\nMAPPED_LIBRARIES:\n", o);
			for (i = 0; i < nml; i++) {
				const struct mline *m = &ml[i];
				const char *rest = memchr(m->text, ' ', m->len);

				if (!rest || !m->end) {
					fwrite(m->text, 1, m->len, o);
				} else {
					fprintf(o, "%llx-%llx", (unsigned long long)(m->start + (uint64_t)shift[m->group]),
						(unsigned long long)(m->end + (uint64_t)shift[m->group]));
					fwrite(rest, 1, m->len - (size_t)(rest - m->text), o);
				}
				fputc('\n', o);
			}
			if (finish(o) < 0)
				return 1;
		}
	}
	free(pick);
	free(ml);
	printf("%d\n", nproc * ndumps);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "info"))
		return cmd_info(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "pcs"))
		return cmd_pcs(argv[2], argv[3], argv[4]);
	if (argc == 6 && !strcmp(argv[1], "synth"))
		return cmd_synth(argv[2], atoll(argv[3]), strtoull(argv[4], NULL, 0), argv[5]);
	if (argc == 9 && !strcmp(argv[1], "fleet"))
		return cmd_fleet(argv[2], atoi(argv[3]), atoi(argv[4]), atoll(argv[5]),
				 strtoull(argv[6], NULL, 0), argv[7], argv[8]);
	fprintf(stderr, "usage: dumptool info DUMP\n"
			"       dumptool pcs DUMP BINARY OUTPREFIX\n"
			"       dumptool synth DUMP NSTACKS SEED OUT\n"
			"       dumptool fleet DUMP NPROC NDUMPS NSTACKS SEED OUTDIR NAME\n");
	return 2;
}

/*
 * linetab: a unit's .debug_line program decoded the way elfutils 0.188's
 * dwarf_getsrclines decodes it.  See linetab.h for the contract.
 *
 * Every read is bounded by the unit (in the header: by header_length).
 * Where libdw would reject the table, read it other than the standard
 * does, or keep a value its row fields (24-bit discriminator, 16-bit
 * column, 8-bit isa, int line) cannot hold, we decline instead of
 * guessing, and libdw answers as it always did.
 */
#include "symbolize/linetab.h"
#include "lib/array.h"
#include "lib/varint.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/linesort.h"

/* More rows than this and the unit is libdw's to refuse (cuindex bounds
 * its copy of libdw's rows the same way). */
#define LT_MAX_ROWS (1u << 26)

_Static_assert(sizeof(struct linetab_row) == 16, "a row is 16 bytes");

struct ltsec {
	const uint8_t *p;
	size_t n;
};

/* What reading a unit takes besides its own bytes. */
struct ltctx {
	struct ltsec line, str, line_str;
	bool big;             /* big-endian data */
	unsigned offsz;       /* 4 or 8: 32- or 64-bit DWARF */
	unsigned addrsz;      /* the unit's address size, 4 or 8 */
	const char *comp_dir;
};

struct ltdir {
	const char *s;        /* NULL: DWARF 2-4 directory 0 of a unit without
			       * DW_AT_comp_dir (the name stays relative) */
	size_t len;
};

/* A file entry before its name is built. */
struct ltfile {
	const char *dir;      /* put in front with a '/' unless NULL */
	size_t dirlen;
	const char *name;
	size_t len;
};

static int lt_decline(struct linetab *lt, const char *why)
{
	free(lt->rows);
	free(lt->files);
	free(lt->seqs);
	free(lt->lazy);
	memset(lt, 0, sizeof *lt);
	lt->why = why;
	return -1;
}

/* ---- bounded reads: each returns 0, or -1 when the value runs past END
 * (nothing consumed then) ---- */

static uint64_t lt_get(const uint8_t *p, unsigned n, bool big)
{
	uint64_t v = 0;

	if (big)
		for (unsigned i = 0; i < n; i++)
			v = v << 8 | p[i];
	else
		for (unsigned i = n; i-- > 0;)
			v = v << 8 | p[i];
	return v;
}

static int lt_fixed(const uint8_t **p, const uint8_t *end, unsigned n, bool big,
		    uint64_t *v)
{
	if ((size_t)(end - *p) < n)
		return -1;
	*v = lt_get(*p, n, big);
	*p += n;
	return 0;
}

static int lt_skip(const uint8_t **p, const uint8_t *end, uint64_t n)
{
	if (n > (uint64_t)(end - *p))
		return -1;
	*p += n;
	return 0;
}

/* The NUL-terminated string at OFF in S, or NULL. */
static const char *lt_secstr(const struct ltsec *s, uint64_t off)
{
	if (!s->p || off >= s->n || !memchr(s->p + off, 0, s->n - off))
		return NULL;
	return (const char *)s->p + off;
}

/* One value of FORM from a DWARF 5 directory or file entry at *P.  String
 * forms set *S (NULL when the string cannot be read), constant forms *V
 * (and *ISCONST); the other forms libdw accepts there are skipped.  Returns
 * -1 for a form libdw would not accept or one we do not read the way it
 * does, and for a value running past END. */
static int lt_form(const struct ltctx *x, unsigned form, const uint8_t **p,
		   const uint8_t *end, const char **s, uint64_t *v, bool *isconst)
{
	uint64_t n;
	int64_t sv;
	unsigned size;

	*s = NULL;
	*isconst = false;
	switch (form) {
	case DW_FORM_string: {
		const uint8_t *z = memchr(*p, 0, (size_t)(end - *p));
		if (!z)
			return -1;
		*s = (const char *)*p;
		*p = z + 1;
		return 0;
	}
	case DW_FORM_strp:
	case DW_FORM_line_strp:
		if (lt_fixed(p, end, x->offsz, x->big, &n))
			return -1;
		*s = lt_secstr(form == DW_FORM_strp ? &x->str : &x->line_str, n);
		return 0;
	case DW_FORM_data1:
	case DW_FORM_data2:
	case DW_FORM_data4:
	case DW_FORM_data8:
		size = form == DW_FORM_data1 ? 1 : form == DW_FORM_data2 ? 2
			: form == DW_FORM_data4 ? 4 : 8;
		*isconst = true;
		return lt_fixed(p, end, size, x->big, v);
	case DW_FORM_udata:
		*isconst = true;
		return varint_get(p, end, v);
	case DW_FORM_flag:
	case DW_FORM_strx1:
		return lt_skip(p, end, 1);
	case DW_FORM_strx2:
		return lt_skip(p, end, 2);
	case DW_FORM_strx3:
		return lt_skip(p, end, 3);
	case DW_FORM_strx4:
		return lt_skip(p, end, 4);
	case DW_FORM_sec_offset:
		return lt_skip(p, end, x->offsz);
	case DW_FORM_data16:
		return lt_skip(p, end, 16);
	case DW_FORM_strx:
		return varint_get(p, end, &n);
	case DW_FORM_sdata:
		return varint_get_sleb(p, end, &sv);
	case DW_FORM_block:
		return varint_get(p, end, &n) || lt_skip(p, end, n) ? -1 : 0;
	case DW_FORM_block1:
	case DW_FORM_block2:
	case DW_FORM_block4:
		size = form == DW_FORM_block1 ? 1 : form == DW_FORM_block2 ? 2 : 4;
		return lt_fixed(p, end, size, x->big, &n) || lt_skip(p, end, n) ? -1 : 0;
	default:
		return -1;
	}
}

/* ---- the header's directory and file tables ---- */

/* A DWARF 5 entry format: NFMT (content type, form) pairs into CT and FM. */
static int lt_format(const uint8_t **p, const uint8_t *end, unsigned *nfmt,
		     uint16_t *ct, uint16_t *fm)
{
	uint64_t a, b;

	if (*p >= end)
		return -1;
	*nfmt = *(*p)++;
	for (unsigned i = 0; i < *nfmt; i++) {
		/* libdw keeps both in 16 bits */
		if (varint_get(p, end, &a) || varint_get(p, end, &b) || a > 0xffff || b > 0xffff)
			return -1;
		ct[i] = (uint16_t)a;
		fm[i] = (uint16_t)b;
	}
	return 0;
}

/* The directories of a DWARF 2-4 header: directory 0 is the compilation
 * directory, then the header's strings up to an empty one. */
static int lt_dirs4(const struct ltctx *x, const uint8_t **p, const uint8_t *end,
		    struct ltdir **dirs, size_t *ndirs)
{
	size_t n = 1;
	const uint8_t *q = *p, *z;

	for (; q < end && *q; q = z + 1, n++)
		if (!(z = memchr(q, 0, (size_t)(end - q))))
			return -1;
	if (q >= end)
		return -1;
	*dirs = malloc(n * sizeof **dirs);
	if (!*dirs)
		return -1;
	(*dirs)[0].s = x->comp_dir;
	(*dirs)[0].len = x->comp_dir ? strlen(x->comp_dir) : 0;
	for (size_t i = 1; i < n; i++) {
		(*dirs)[i].s = (const char *)*p;
		(*dirs)[i].len = strlen((const char *)*p);
		*p += (*dirs)[i].len + 1;
	}
	(*p)++;
	*ndirs = n;
	return 0;
}

static int lt_dirs5(const struct ltctx *x, const uint8_t **p, const uint8_t *end,
		    struct ltdir **dirs, size_t *ndirs)
{
	uint16_t ct[256], fm[256];
	unsigned nfmt, path = 256;
	uint64_t n, v;

	if (lt_format(p, end, &nfmt, ct, fm))
		return -1;
	for (unsigned i = 0; i < nfmt; i++)
		if (ct[i] == DW_LNCT_path)
			path = i;
	if (varint_get(p, end, &n) || (nfmt > 0 && path == 256) || (nfmt == 0 && n != 0)
	    || (nfmt && n > (uint64_t)(end - *p) / nfmt))
		return -1;
	*dirs = malloc((n ? n : 1) * sizeof **dirs);
	if (!*dirs)
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		const char *s, *dir = NULL;
		bool isconst;
		for (unsigned m = 0; m < nfmt; m++) {
			if (lt_form(x, fm[m], p, end, &s, &v, &isconst))
				return -1;
			if (m == path)
				dir = s;
		}
		if (!dir)
			return -1;
		(*dirs)[i].s = dir;
		(*dirs)[i].len = strlen(dir);
	}
	*ndirs = n;
	return 0;
}

/* Appends a file entry: NAME in directory DIR (of DIRLEN bytes; NULL for
 * none).  libdw keeps absolute names as they are, whatever the directory. */
static int lt_addfile(struct ltfile **files, size_t *n, size_t *cap, const char *name,
		      const char *dir, size_t dirlen)
{
	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct ltfile *f = realloc(*files, ncap * sizeof *f);
		if (!f)
			return -1;
		*files = f;
		*cap = ncap;
	}
	struct ltfile *f = &(*files)[(*n)++];
	f->name = name;
	f->len = strlen(name);
	f->dir = name[0] == '/' ? NULL : dir;
	f->dirlen = f->dir ? dirlen : 0;
	return 0;
}

/* DWARF 2-4 file entries (after entry 0, which libdw names "???"). */
static int lt_files4(const uint8_t **p, const uint8_t *end, const struct ltdir *dirs,
		     size_t ndirs, struct ltfile **files, size_t *nfiles)
{
	size_t cap = 0;
	uint64_t diridx, v;

	*nfiles = 0;
	if (lt_addfile(files, nfiles, &cap, "???", NULL, 0))
		return -1;
	while (*p < end && **p) {
		const char *name = (const char *)*p;
		const uint8_t *z = memchr(*p, 0, (size_t)(end - *p));
		if (!z)
			return -1;
		*p = z + 1;
		/* directory index, modification time, length */
		if (varint_get(p, end, &diridx) || varint_get(p, end, &v) || varint_get(p, end, &v)
		    || diridx >= ndirs
		    || lt_addfile(files, nfiles, &cap, name, dirs[diridx].s, dirs[diridx].len))
			return -1;
	}
	if (*p >= end)
		return -1;
	(*p)++;
	return 0;
}

/* DWARF 5 file entries: entry 0 is the first of the table. */
static int lt_files5(const struct ltctx *x, const uint8_t **p, const uint8_t *end,
		     const struct ltdir *dirs, size_t ndirs, struct ltfile **files,
		     size_t *nfiles)
{
	uint16_t ct[256], fm[256];
	unsigned nfmt, path = 256, idx = 256;
	uint64_t n, v;
	size_t cap = 0;

	*nfiles = 0;
	if (lt_format(p, end, &nfmt, ct, fm))
		return -1;
	for (unsigned i = 0; i < nfmt; i++) {
		if (ct[i] == DW_LNCT_path)
			path = i;
		else if (ct[i] == DW_LNCT_directory_index)
			idx = i;
	}
	if (varint_get(p, end, &n) || (nfmt > 0 && (path == 256 || idx == 256))
	    || (nfmt == 0 && n != 0) || (nfmt && n > (uint64_t)(end - *p) / nfmt))
		return -1;
	for (uint64_t i = 0; i < n; i++) {
		const char *s, *name = NULL;
		uint64_t diridx = 0;
		bool isconst, have_idx = false;
		for (unsigned m = 0; m < nfmt; m++) {
			if (lt_form(x, fm[m], p, end, &s, &v, &isconst))
				return -1;
			if (m == path) {
				name = s;
			} else if (m == idx && isconst) {
				diridx = v;
				have_idx = true;
			}
		}
		if (!name || !have_idx || diridx >= ndirs
		    || lt_addfile(files, nfiles, &cap, name, dirs[diridx].s, dirs[diridx].len))
			return -1;
	}
	/* libdw's placeholder stays file 0 of an empty table */
	if (n == 0)
		return lt_addfile(files, nfiles, &cap, "???", NULL, 0);
	return 0;
}

/* The names of FILES, built once into LT->files: one block holding the
 * pointers and the joined names.  Names that need no joining point at the
 * section data (or a constant), as libdw's do. */
static int lt_names(struct linetab *lt, const struct ltfile *files, size_t n)
{
	size_t bytes = n * sizeof *lt->files;

	for (size_t i = 0; i < n; i++)
		if (files[i].dir)
			bytes += files[i].dirlen + 1 + files[i].len + 1;
	lt->files = malloc(bytes);
	if (!lt->files)
		return -1;
	char *s = (char *)(lt->files + n);
	for (size_t i = 0; i < n; i++) {
		const struct ltfile *f = &files[i];
		if (!f->dir) {
			lt->files[i] = f->name;
			continue;
		}
		lt->files[i] = s;
		memcpy(s, f->dir, f->dirlen);
		s += f->dirlen;
		*s++ = '/';
		memcpy(s, f->name, f->len + 1);
		s += f->len + 1;
	}
	lt->nfiles = n;
	return 0;
}

/* Reads the directory and file tables between *P and HEND into LT->files. */
static int lt_header_files(struct linetab *lt, const struct ltctx *x, unsigned version,
			   const uint8_t **p, const uint8_t *hend)
{
	struct ltdir *dirs = NULL;
	struct ltfile *files = NULL;
	size_t ndirs = 0, nfiles = 0;
	int rc = -1;

	if (version < 5) {
		if (lt_dirs4(x, p, hend, &dirs, &ndirs) == 0
		    && lt_files4(p, hend, dirs, ndirs, &files, &nfiles) == 0)
			rc = 0;
	} else if (lt_dirs5(x, p, hend, &dirs, &ndirs) == 0
		   && lt_files5(x, p, hend, dirs, ndirs, &files, &nfiles) == 0) {
		rc = 0;
	}
	/* (rows keep file numbers in 15 bits) */
	if (rc == 0 && (nfiles >= LINETAB_NOFILE || lt_names(lt, files, nfiles)))
		rc = -1;
	free(dirs);
	free(files);
	return rc;
}

/* The header fields the line number program runs with. */
struct ltprog {
	unsigned min_len, line_range, opbase;
	int line_base;
	const uint8_t *stdlen;   /* stdlen[op] for 1 <= op < opbase */
};

/* Where rows go while the program runs, and its sequences. */
struct ltrows {
	struct linetab_row *r;
	size_t n, cap;
	bool want_seqs;          /* record seqs (whole program) */
	bool seqs_ok;            /* every sequence so far can be decoded alone */
	struct linetab_seq *seqs;
	size_t nseqs, capseqs;
};

/* What linetab_open keeps for linetab_seq. */
struct ltlazy {
	struct ltctx x;
	struct ltprog s;
	const uint8_t *unit;     /* the unit's first byte: offsets count from it */
	const uint8_t *prog;     /* its program's first opcode */
	const uint8_t *end;      /* one past its last byte */
};

static int lt_grow(struct ltrows *rows)
{
	size_t ncap = rows->cap * 2;
	struct linetab_row *r;

	if (rows->n >= LT_MAX_ROWS || !(r = realloc(rows->r, ncap * sizeof *r)))
		return -1;
	rows->r = r;
	rows->cap = ncap;
	return 0;
}

static inline int lt_row(struct ltrows *rows, size_t nfiles, uint64_t addr, int64_t line,
			 uint32_t file, uint16_t column, bool end)
{
	/* libdw keeps the line in an int and refuses the table otherwise */
	if (line < INT32_MIN || line > INT32_MAX || (rows->n == rows->cap && lt_grow(rows)))
		return -1;
	struct linetab_row *r = &rows->r[rows->n++];
	r->addr = addr;
	r->line = (int32_t)line;
	r->column = column;
	r->file = file < nfiles ? file : LINETAB_NOFILE;
	r->end = end;
	return 0;
}

/* How many operands each standard opcode of DWARF 2-5 takes. */
static const uint8_t lt_operands[DW_LNS_set_isa + 1] = {
	[DW_LNS_advance_pc] = 1, [DW_LNS_advance_line] = 1, [DW_LNS_set_file] = 1,
	[DW_LNS_set_column] = 1, [DW_LNS_fixed_advance_pc] = 1, [DW_LNS_set_isa] = 1,
};

/* Records the sequence that has just ended (its end row the last of
 * ROWS, its first row ROW0, its first opcode OFF bytes into the unit) if
 * it can be decoded alone: OK says its rows never stepped back, LAST is
 * its last row's address before the end row. */
static int lt_seq_done(struct ltrows *rows, size_t row0, bool ok, uint64_t last, uint64_t off)
{
	uint64_t hi = rows->r[rows->n - 1].addr;
	bool has_rows = rows->n - 1 > row0;

	if (!rows->seqs_ok)
		return 0;
	if (!ok || (has_rows && last > hi) || off > UINT32_MAX) {
		rows->seqs_ok = false;
		return 0;
	}
	if (jh_grow(&rows->seqs, &rows->capseqs, rows->nseqs + 1, sizeof *rows->seqs))
		return -1;
	rows->seqs[rows->nseqs++] = (struct linetab_seq){
		rows->r[row0].addr, hi, (uint32_t)off, has_rows && last == hi };
	return 0;
}

/* Runs the program from P to END into ROWS (NFILES names the unit has;
 * UNIT is the unit's first byte).  ONE: stop after the first sequence,
 * and decline one that linetab_seq cannot give (see there).  Returns NULL,
 * or the reason to decline. */
static const char *lt_run(struct ltrows *rows_out, size_t nfiles, const struct ltctx *x,
			  const struct ltprog *h, const uint8_t *unit, const uint8_t *p,
			  const uint8_t *end, bool one)
{
	/* what each special opcode adds to the line and to the address:
	 * a table, not two divisions per row */
	int16_t dline[256];
	uint16_t daddr[256];
	struct ltrows rows = *rows_out;
	uint64_t addr = 0, v;
	int64_t line = 1, sv;
	uint32_t file = 1;
	uint16_t column = 0;
	const char *why = NULL;
	/* the current sequence: its first opcode and row, whether its rows
	 * kept going up, and the last one's address */
	const uint8_t *seq = p;
	size_t row0 = 0;
	bool mono = true, ended = false;
	uint64_t last = 0;

	rows.cap = one ? 64 : (size_t)(end - p) / 4 + 64;

	for (unsigned op = h->opbase; op < 256; op++) {
		dline[op] = (int16_t)(h->line_base + (int)((op - h->opbase) % h->line_range));
		daddr[op] = (uint16_t)(h->min_len * ((op - h->opbase) / h->line_range));
	}
	if (!(rows.r = malloc(rows.cap * sizeof *rows.r)))
		return "out of memory";
#define ROW(isend) do { \
		if (lt_row(&rows, nfiles, addr, line, file, column, isend)) { \
			why = "row libdw cannot hold, or out of memory"; \
			goto out; \
		} \
	} while (0)
#define FAIL(reason) do { why = reason; goto out; } while (0)
	while (p < end) {
		unsigned op = *p++;

		if (op >= h->opbase) {
			line += dline[op];
			addr += daddr[op];
			ROW(false);
			mono &= addr >= last;
			last = addr;
			continue;
		}
		if (op == 0) {
			if (end - p < 2)
				FAIL("truncated extended opcode");
			unsigned len = *p++;
			if ((size_t)(end - p) < len || len == 0)
				FAIL("extended opcode length");
			const uint8_t *next = p + len;
			switch (*p++) {
			case DW_LNE_end_sequence:
				/* libdw does not skip by the length here */
				if (len != 1)
					FAIL("DW_LNE_end_sequence length");
				ROW(true);
				if (one) {
					/* the rows are kept in program order */
					if (!mono || (rows.n > 1 && last > addr))
						FAIL("sequence not in order");
					ended = true;
					goto out;
				}
				if (rows.want_seqs &&
				    lt_seq_done(&rows, row0, mono, last, (uint64_t)(seq - unit)))
					FAIL("out of memory");
				seq = next;
				row0 = rows.n;
				mono = true;
				last = 0;
				addr = 0;
				line = 1;
				file = 1;
				column = 0;
				break;
			case DW_LNE_set_address:
				if (len != 1 + x->addrsz)
					FAIL("DW_LNE_set_address length");
				addr = lt_get(p, x->addrsz, x->big);
				break;
			case DW_LNE_set_discriminator:
				/* libdw checks this length (of DW_LNS_set_file, by
				 * the opcode's number) and keeps 24 bits */
				if (h->stdlen[DW_LNS_set_file] != 1 || varint_get(&p, end, &v)
				    || p != next || v > 0xffffff)
					FAIL("DW_LNE_set_discriminator");
				break;
			case DW_LNE_define_file:
				FAIL("DW_LNE_define_file");
			case DW_LNE_NVIDIA_inlined_call:
			case DW_LNE_NVIDIA_set_function_name:
				FAIL("NVIDIA extended opcode");
			default:
				break;
			}
			p = next;
			continue;
		}
		/* a standard opcode: libdw insists on the standard operand
		 * count for those it knows */
		if (op <= DW_LNS_set_isa && h->stdlen[op] != lt_operands[op])
			FAIL("standard opcode length");
		switch (op) {
		case DW_LNS_copy:
			ROW(false);
			mono &= addr >= last;
			last = addr;
			break;
		case DW_LNS_advance_pc:
			/* libdw advances in 32-bit unsigned arithmetic */
			if (varint_get(&p, end, &v) || v > UINT32_MAX || h->min_len * v > UINT32_MAX)
				FAIL("DW_LNS_advance_pc");
			addr += h->min_len * v;
			break;
		case DW_LNS_advance_line:
			if (varint_get_sleb(&p, end, &sv) || sv < INT32_MIN || sv > INT32_MAX)
				FAIL("DW_LNS_advance_line");
			line += sv;
			break;
		case DW_LNS_set_file:
			if (varint_get(&p, end, &v) || v > UINT32_MAX)
				FAIL("DW_LNS_set_file");
			file = (uint32_t)v;
			break;
		case DW_LNS_set_column:
			if (varint_get(&p, end, &v) || v > UINT16_MAX)
				FAIL("DW_LNS_set_column");
			column = (uint16_t)v;
			break;
		case DW_LNS_negate_stmt:
		case DW_LNS_set_basic_block:
		case DW_LNS_set_prologue_end:
		case DW_LNS_set_epilogue_begin:
			break;
		case DW_LNS_const_add_pc:
			addr += daddr[255];
			break;
		case DW_LNS_fixed_advance_pc:
			if (lt_fixed(&p, end, 2, x->big, &v))
				FAIL("DW_LNS_fixed_advance_pc");
			addr += v;
			break;
		case DW_LNS_set_isa:
			if (varint_get(&p, end, &v) || v > 255)
				FAIL("DW_LNS_set_isa");
			break;
		default:
			/* one the producer knows and we do not: skip its operands */
			for (unsigned n = h->stdlen[op]; n > 0; n--)
				if (varint_get(&p, end, &v))
					FAIL("truncated operand");
			break;
		}
	}
	if (rows.n > LT_MAX_ROWS)
		why = "too many rows";
	/* rows after the last end of sequence: libdw makes the highest row
	 * an end, which a sequence decoded alone would not know */
	if (rows.n > row0)
		rows.seqs_ok = false;
#undef ROW
#undef FAIL
out:
	if (one && !why && !ended)
		why = "no end of sequence";
	*rows_out = rows;
	return why;
}

/* Decodes the unit at P (the section ends at SEND); LAZY: the header
 * only, keeping what linetab_seq needs. */
static int lt_unit(struct linetab *lt, struct ltctx *x, const uint8_t *p,
		   const uint8_t *send, bool lazy)
{
	uint64_t len, version, hlen;
	struct ltprog s = { .min_len = 0 };
	const uint8_t *unit = p;

	if (lt_fixed(&p, send, 4, x->big, &len))
		return lt_decline(lt, "truncated unit length");
	x->offsz = 4;
	if (len == 0xffffffff) {
		if (lt_fixed(&p, send, 8, x->big, &len))
			return lt_decline(lt, "truncated unit length");
		x->offsz = 8;
	} else if (len >= 0xfffffff0) {
		return lt_decline(lt, "reserved unit length");
	}
	if (len > (uint64_t)(send - p))
		return lt_decline(lt, "unit runs past the section");
	const uint8_t *uend = p + len;
	if (lt_fixed(&p, uend, 2, x->big, &version) || version < 2 || version > 5)
		return lt_decline(lt, "version");
	if (version >= 5) {
		/* address size and segment selector size */
		if (uend - p < 2 || p[0] != x->addrsz || p[1] != 0)
			return lt_decline(lt, "address or segment selector size");
		p += 2;
	}
	if (lt_fixed(&p, uend, x->offsz, x->big, &hlen) || hlen > (uint64_t)(uend - p))
		return lt_decline(lt, "header length");
	const uint8_t *hend = p + hlen;
	if (hend - p < (version >= 4 ? 6 : 5))
		return lt_decline(lt, "truncated header");
	s.min_len = *p++;
	/* VLIW op_index arithmetic is not done here */
	if (version >= 4 && *p++ != 1)
		return lt_decline(lt, "maximum_operations_per_instruction");
	/* libdw keeps is_stmt in one bit and refuses a row with more */
	if (*p++ > 1)
		return lt_decline(lt, "default_is_stmt");
	s.line_base = (int8_t)*p++;
	s.line_range = *p++;
	s.opbase = *p++;
	/* a zero line_range makes libdw refuse the first special opcode; an
	 * opcode_base below 10 makes standard opcodes special, and libdw
	 * then reads lengths from past the array */
	if (s.line_range == 0 || s.opbase < 10)
		return lt_decline(lt, "line_range or opcode_base");
	s.stdlen = p - 1;
	if (lt_skip(&p, hend, s.opbase - 1))
		return lt_decline(lt, "truncated standard_opcode_lengths");
	if (lt_header_files(lt, x, (unsigned)version, &p, hend))
		return lt_decline(lt, "directory or file table");
	/* libdw refuses a header whose tables do not end at header_length
	 * (or takes 4 bytes left over as an NVIDIA CUBIN string offset) */
	if (p != hend)
		return lt_decline(lt, "header length does not match its tables");
	if (lazy) {
		if (!(lt->lazy = malloc(sizeof *lt->lazy)))
			return lt_decline(lt, "out of memory");
		*lt->lazy = (struct ltlazy){ *x, s, unit, hend, uend };
		lt->lazy->x.comp_dir = NULL;
		return 0;
	}
	struct ltrows rows = { .want_seqs = true, .seqs_ok = true };
	const char *why = lt_run(&rows, lt->nfiles, x, &s, unit, hend, uend, false);
	lt->rows = rows.r;
	lt->nrows = rows.n;
	if (rows.seqs_ok && rows.nseqs) {
		lt->seqs = rows.seqs;
		lt->nseqs = rows.nseqs;
	} else {
		free(rows.seqs);
	}
	if (why)
		return lt_decline(lt, why);
	if (linesort(&lt->rows, lt->nrows))
		return lt_decline(lt, "out of memory");
	/* libdw marks the highest row an end of sequence whatever it was */
	if (lt->nrows > 0)
		lt->rows[lt->nrows - 1].end = 1;
	return 0;
}

/* The sections libdw read the unit from, if we can read them the same way. */
static int lt_sections(struct ltctx *x, Elf *elf)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return -1;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		struct ltsec *s;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name))
		    || strncmp(name, ".debug_", 7))
			continue;
		if (!strcmp(name + 7, "line"))
			s = &x->line;
		else if (!strcmp(name + 7, "str"))
			s = &x->str;
		else if (!strcmp(name + 7, "line_str"))
			s = &x->line_str;
		else
			continue;
		/* libdw ignores NOBITS sections and a second copy; it
		 * decompresses SHF_COMPRESSED ones in place on opening, so one
		 * still compressed is not what it read */
		if (s->p || sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_COMPRESSED))
			return -1;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size == 0)
			return -1;
		s->p = d->d_buf;
		s->n = d->d_size;
	}
	return x->line.p ? 0 : -1;
}

static int lt_read(struct linetab *lt, Dwarf_Die *cudie, const char *comp_dir, bool lazy)
{
	struct ltctx x = { .comp_dir = comp_dir };
	uint8_t type, addrsz;
	Dwarf_Attribute a;
	Dwarf_Word off;
	GElf_Ehdr eh;

	memset(lt, 0, sizeof *lt);
	if (dwarf_cu_info(cudie->cu, NULL, &type, NULL, NULL, NULL, &addrsz, NULL) != 0)
		return lt_decline(lt, "no unit information");
	/* libdw gives a split unit the lines of its skeleton */
	if (type != DW_UT_compile && type != DW_UT_partial)
		return lt_decline(lt, "not a compile or partial unit");
	if (addrsz != 4 && addrsz != 8)
		return lt_decline(lt, "address size");
	x.addrsz = addrsz;
	/* libdw takes the offset as a section pointer: these forms only */
	if (!dwarf_attr(cudie, DW_AT_stmt_list, &a)
	    || (dwarf_whatform(&a) != DW_FORM_sec_offset && dwarf_whatform(&a) != DW_FORM_data4
		&& dwarf_whatform(&a) != DW_FORM_data8)
	    || dwarf_formudata(&a, &off) != 0)
		return lt_decline(lt, "no usable DW_AT_stmt_list");
	Dwarf *dw = dwarf_cu_getdwarf(cudie->cu);
	Elf *elf = dw ? dwarf_getelf(dw) : NULL;
	/* relocatable objects: libdw applies relocations we would not */
	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_type == ET_REL
	    || (eh.e_ident[EI_DATA] != ELFDATA2LSB && eh.e_ident[EI_DATA] != ELFDATA2MSB))
		return lt_decline(lt, "not an executable or shared object");
	x.big = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	if (lt_sections(&x, elf))
		return lt_decline(lt, "sections missing, compressed or unusual");
	if (off >= x.line.n)
		return lt_decline(lt, "DW_AT_stmt_list past .debug_line");
	return lt_unit(lt, &x, x.line.p + off, x.line.p + x.line.n, lazy);
}

int linetab_read(struct linetab *lt, Dwarf_Die *cudie, const char *comp_dir)
{
	return lt_read(lt, cudie, comp_dir, false);
}

int linetab_open(struct linetab *lt, Dwarf_Die *cudie, const char *comp_dir)
{
	return lt_read(lt, cudie, comp_dir, true);
}

int linetab_seq(const struct linetab *lt, uint64_t off, struct linetab_row **rows, size_t *n)
{
	const struct ltlazy *z = lt->lazy;

	*rows = NULL;
	*n = 0;
	if (!z || off < (uint64_t)(z->prog - z->unit) || off >= (uint64_t)(z->end - z->unit))
		return -1;
	struct ltrows r = { 0 };
	if (lt_run(&r, lt->nfiles, &z->x, &z->s, z->unit, z->unit + off, z->end, true)) {
		free(r.r);
		return -1;
	}
	*rows = r.r;
	*n = r.n;
	return 0;
}

void linetab_release(struct linetab *lt)
{
	free(lt->rows);
	free(lt->files);
	free(lt->seqs);
	free(lt->lazy);
	memset(lt, 0, sizeof *lt);
}

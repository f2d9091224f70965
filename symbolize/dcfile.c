/*
 * dcfile: the symbol cache's file format.  See dcfile.h for the layout.
 */
#include "symbolize/dcfile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/strtab.h"
#include "lib/array.h"
#include "lib/hash.h"

/* The checksum of N bytes whose running jh_hash_fast() is H. */
static uint64_t dc_checksum_end(uint64_t h, uint64_t n)
{
	return jh_mix64(h ^ n);
}

/* Each struct's size, then each field's offset and size. */
#define DC_FIELD(type, f) offsetof(struct type, f), sizeof(((struct type *)0)->f)

uint32_t dcfile_layout(void)
{
	static const size_t shape[] = {
		sizeof(struct dc_header), DC_FIELD(dc_header, magic), DC_FIELD(dc_header, bom),
		DC_FIELD(dc_header, version), DC_FIELD(dc_header, header_size),
		DC_FIELD(dc_header, nentries), DC_FIELD(dc_header, nframes),
		DC_FIELD(dc_header, nstrings), DC_FIELD(dc_header, strbytes),
		DC_FIELD(dc_header, checksum), DC_FIELD(dc_header, object),
		DC_FIELD(dc_header, build_id), DC_FIELD(dc_header, debug_path),
		DC_FIELD(dc_header, layout), DC_FIELD(dc_header, object_size),
		DC_FIELD(dc_header, object_ino), DC_FIELD(dc_header, object_mtime_sec),
		DC_FIELD(dc_header, object_mtime_nsec), DC_FIELD(dc_header, debug_size),
		DC_FIELD(dc_header, debug_mtime_sec), DC_FIELD(dc_header, debug_mtime_nsec),
		DC_FIELD(dc_header, nunits), DC_FIELD(dc_header, ntops), DC_FIELD(dc_header, nseqs),
		DC_FIELD(dc_header, nmapunits), DC_FIELD(dc_header, nmapranges),
		DC_FIELD(dc_header, reserved2),
		sizeof(struct dc_part_header), DC_FIELD(dc_part_header, magic),
		DC_FIELD(dc_part_header, offset), DC_FIELD(dc_part_header, body_checksum),
		DC_FIELD(dc_part_header, nentries), DC_FIELD(dc_part_header, nframes),
		DC_FIELD(dc_part_header, nstrings), DC_FIELD(dc_part_header, nunits),
		DC_FIELD(dc_part_header, ntops), DC_FIELD(dc_part_header, nseqs),
		DC_FIELD(dc_part_header, strbytes), DC_FIELD(dc_part_header, checksum),
		sizeof(struct dc_entry), DC_FIELD(dc_entry, vaddr), DC_FIELD(dc_entry, frame0),
		DC_FIELD(dc_entry, nframes), DC_FIELD(dc_entry, status), DC_FIELD(dc_entry, reserved),
		sizeof(struct dc_frame), DC_FIELD(dc_frame, name), DC_FIELD(dc_frame, linkage),
		DC_FIELD(dc_frame, file), DC_FIELD(dc_frame, decl_file), DC_FIELD(dc_frame, line),
		DC_FIELD(dc_frame, column), DC_FIELD(dc_frame, decl_line),
		DC_FIELD(dc_frame, inlined),
		sizeof(struct dc_unit), DC_FIELD(dc_unit, cuoff), DC_FIELD(dc_unit, top0),
		DC_FIELD(dc_unit, ntops), DC_FIELD(dc_unit, seq0), DC_FIELD(dc_unit, nseqs),
		sizeof(struct cuindex_top), DC_FIELD(cuindex_top, lo), DC_FIELD(cuindex_top, hi),
		DC_FIELD(cuindex_top, die),
		sizeof(struct cuindex_seq), DC_FIELD(cuindex_seq, lo), DC_FIELD(cuindex_seq, hi),
		DC_FIELD(cuindex_seq, off), DC_FIELD(cuindex_seq, trail),
		sizeof(struct cumap_range), DC_FIELD(cumap_range, lo), DC_FIELD(cumap_range, hi),
		DC_FIELD(cumap_range, cuoff),
	};
	/* FNV-1a over the numbers */
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < sizeof shape / sizeof shape[0]; i++)
		for (int b = 0; b < 4; b++) {
			h ^= (uint32_t)(shape[i] >> (8 * b)) & 0xffu;
			h *= 16777619u;
		}
	return h;
}

uint64_t dcfile_checksum(const char *p, size_t n)
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

uint64_t dcfile_part_size(uint64_t nentries, uint64_t nframes, uint64_t nunits,
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
		n = dcfile_part_size(ph.nentries, ph.nframes, ph.nunits, ph.ntops, ph.nseqs,
				 ph.strbytes);
		if (memcmp(ph.magic, DC_PART_MAGIC, sizeof ph.magic) || ph.offset != off ||
		    ph.body_checksum != body_checksum || n > len - off - sizeof ph ||
		    ph.nstrings > ph.strbytes)
			bad = "bad part header";
		else if (dcfile_checksum(m->buf + off + sizeof ph, (size_t)n) != ph.checksum)
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
		jh_qsort(m->ents + nb, m->nents - nb, sizeof *m->ents, dcfile_cmp_ent);
		struct dcent *all = malloc((m->nents + 1) * sizeof *all);
		if (!all)
			return jh_err(why, whylen, JH_ENOMEM, "out of memory");
		for (size_t i = 0, j = nb, n = 0; n < m->nents; n++)
			all[n] = j >= m->nents || (i < nb && m->ents[i].vaddr < m->ents[j].vaddr)
				 ? m->ents[i++] : m->ents[j++];
		free(m->ents);
		m->ents = all;
		jh_qsort(m->units, m->nunits, sizeof *m->units, dcfile_cmp_unit);
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

int dcfile_parse(struct dcmodule *m, size_t len,
		 int (*identity)(void *arg, const struct dcfile_identity *id, char *why,
				 size_t whylen),
		 void *arg, char *why, size_t whylen)
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
	if (h.layout != dcfile_layout())
		return jh_err(why, whylen, JH_EFORMAT,
			      "its records have other layouts (fingerprint %08x, this jheap's %08x)",
			      h.layout, dcfile_layout());
	uint64_t body = dcfile_part_size(h.nentries, h.nframes, h.nunits, h.ntops, h.nseqs,
				     h.strbytes);
	if (body != UINT64_MAX)
		body += (uint64_t)h.nmapunits * sizeof(uint64_t) +
			(uint64_t)h.nmapranges * sizeof(struct cumap_range);
	if (body == UINT64_MAX || h.nmapunits > DISKCACHE_MAX_ENTRIES ||
	    h.nmapranges > DISKCACHE_MAX_ENTRIES || (!h.nmapunits && h.nmapranges) ||
	    h.nstrings > h.strbytes || body > len - sizeof h)
		return jh_err(why, whylen, JH_EFORMAT, "sizes do not add up to the file's");
	const char *p = m->buf + sizeof h;
	if (dcfile_checksum(p, (size_t)body) != h.checksum)
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
	struct dcfile_identity id = {
		.object = h.object ? m->strs[h.object] : "",
		.build_id = h.build_id ? m->strs[h.build_id] : "",
		.debug_path = h.debug_path ? m->strs[h.debug_path] : NULL,
		.object_size = h.object_size, .object_ino = h.object_ino,
		.object_mtime_sec = h.object_mtime_sec, .object_mtime_nsec = h.object_mtime_nsec,
		.debug_size = h.debug_size,
		.debug_mtime_sec = h.debug_mtime_sec, .debug_mtime_nsec = h.debug_mtime_nsec,
	};
	if (identity(arg, &id, why, whylen))
		return -1;
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


int dcfile_cmp_unit(const void *a, const void *b)
{
	const struct dcunit *x = a, *y = b;
	return x->cuoff < y->cuoff ? -1 : x->cuoff > y->cuoff;
}

int dcfile_cmp_ent(const void *a, const void *b)
{
	const struct dcent *x = a, *y = b;
	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

static int64_t dc_str(struct strtab *t, const char *s)
{
	return s && *s ? strtab_intern(t, s) : 0;
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

int dcfile_part(struct dcmodule *m, char **bufp, size_t *len, char *err, size_t errlen)
{
	size_t n = 0, nframes = 0, nul = 0, ntops = 0, nseqs = 0, fi = 0, sb = 0;
	struct dcent *add = malloc((m->nadded + 1) * sizeof *add);
	struct dcunit *ul = malloc((m->nunits - m->nloaded + 1) * sizeof *ul);
	struct dc_frame *frames = NULL;
	char *buf = NULL;
	struct strtab t;
	bool tinit = false;
	int rc = -1;
	*bufp = NULL;
	*len = 0;
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
	jh_qsort(m->units + m->nloaded, m->nunits - m->nloaded, sizeof *m->units, dcfile_cmp_unit);
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
	size_t strs_at = sizeof ph + (size_t)dcfile_part_size(n, fi, nul, ntops, nseqs, 0);
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
	ph.checksum = dcfile_checksum(buf + sizeof ph, strs_at + sb - sizeof ph);
	memcpy(buf, &ph, sizeof ph);
	if (m->old_nstrings + ph.nstrings > UINT32_MAX || m->filelen + strs_at + sb > DISKCACHE_MAX_FILE) {
		rc = 1;
		goto out;
	}
	*bufp = buf;
	*len = strs_at + sb;
	buf = NULL;
	rc = 0;
	goto out;
nomem:
	jh_err(err, errlen, JH_ENOMEM, "out of memory");
out:
	if (tinit)
		strtab_release(&t);
	free(add);
	free(ul);
	free(frames);
	free(buf);
	return rc;
}

/* Adds a piece of N bytes at P to IMG, and P to what it frees when OWNED. */
static void dc_piece(struct dcfile_image *img, const void *p, size_t n, bool owned)
{
	img->piece[img->npieces++] = (struct dc_block){ p, n };
	img->size += n;
	if (owned)
		img->owned[img->nowned++] = (void *)p;
}

int dcfile_whole(struct dcmodule *m, size_t keep_old, const struct dcfile_identity *id,
		 struct dcfile_image *img, char *err, size_t errlen)
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
	char *strs = NULL;
	int rc = -1;
	memset(img, 0, sizeof *img);
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
	jh_qsort(m->units + m->nloaded, m->nunits - m->nloaded, sizeof *m->units, dcfile_cmp_unit);
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
	struct dc_header h = { .bom = DC_BOM, .version = DC_VERSION, .header_size = sizeof h,
			       .layout = dcfile_layout() };
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
	int64_t ids[3] = {
		dc_str(&t, id->object), dc_str(&t, id->build_id), dc_str(&t, id->debug_path),
	};
	if (ids[0] < 0 || ids[1] < 0 || ids[2] < 0) {
		jh_err(err, errlen, JH_ENOMEM, "out of memory");
		goto out;
	}
	h.object = ids[0] ? sbase + (uint32_t)ids[0] : 0;
	h.build_id = ids[1] ? sbase + (uint32_t)ids[1] : 0;
	h.debug_path = ids[2] ? sbase + (uint32_t)ids[2] : 0;
	h.object_size = id->object_size;
	h.object_ino = id->object_ino;
	h.object_mtime_sec = id->object_mtime_sec;
	h.object_mtime_nsec = id->object_mtime_nsec;
	if (h.debug_path) {
		h.debug_size = id->debug_size;
		h.debug_mtime_sec = id->debug_mtime_sec;
		h.debug_mtime_nsec = id->debug_mtime_nsec;
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
	rc = 0;
	if (sizeof h + body > DISKCACHE_MAX_FILE)
		goto out;   /* too large to be read back: not worth writing */
	img->h = h;
	dc_piece(img, &img->h, sizeof h, false);
	dc_piece(img, ents, n * sizeof *ents, true);
	for (size_t k = 0; append && k < m->nold; k++)
		dc_piece(img, m->old_frames[k].p, m->old_frames[k].n, false);
	dc_piece(img, frames, fi * sizeof *frames, true);
	dc_piece(img, units, nul * sizeof *units, true);
	dc_piece(img, tops, ntops * sizeof *tops, true);
	dc_piece(img, seqs, nseqs * sizeof *seqs, true);
	dc_piece(img, m->mapunits, mub, false);
	dc_piece(img, m->mapranges, mrb, false);
	dc_piece(img, strs, sb, true);
	ents = NULL;
	frames = NULL;
	units = NULL;
	tops = NULL;
	seqs = NULL;
	strs = NULL;
out:
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

void dcfile_image_release(struct dcfile_image *img)
{
	for (size_t i = 0; i < img->nowned; i++)
		free(img->owned[i]);
	img->nowned = img->npieces = 0;
}

/*
 * dcfile: the persistent symbol cache's file format (diskcache.h has the
 * rules): what a module (struct dcmodule) holds, checked out of a file's
 * bytes and written back as a whole file or an appended part.  Where the
 * files live, which one is read and whether it may be trusted, the
 * locking and the renaming are diskcache.c's.
 *
 * The records are the in-memory structs, written as they are: the
 * dc_* structs below and three of the index's own, struct cuindex_top,
 * struct cuindex_seq (symbolize/cuindex.h) and struct cumap_range
 * (symbolize/cumap.h).  So a change to one of those structs is a change
 * of this format.  The header carries a fingerprint of all their layouts
 * (dcfile_layout(): each one's size and each field's offset and size),
 * and a file whose fingerprint is not this build's is refused and
 * rewritten like one of another version (tests/unit/test_diskcache.c);
 * DC_VERSION is for changes the fingerprint cannot see (what a field
 * means, the answers symcache gives).
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
#ifndef JHEAP_DCFILE_H
#define JHEAP_DCFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include "symbolize/diskcache.h"

/* Bump whenever the format or any answer symcache gives changes: files of
 * another version are ignored and rewritten.  6: the layout fingerprint. */
#define DC_VERSION 6u
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
	uint32_t layout;        /* dcfile_layout() of the build that wrote it */
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
	bool debug_known;         /* the debug file the file's answers and map
				     were made from is there, unchanged: */
	dev_t debug_dev;          /* its device and inode */
	ino_t debug_ino;
	/* why the parts stopped early (a damaged part, too many): the file
	 * is then written whole; "" when they did not */
	char partwhy[200];
	struct dcunit *units;     /* from the file, then this run's, by cuoff */
	size_t nunits, capunits, nloaded;
	bool written;             /* dcmodule_save() has run */
	char state[1024];
};

/* Who a file was written for: the object (its path, build id in hex, ""
 * for none; its size, inode and modification time) and the debug file
 * its answers came from (NULL: no DWARF). */
struct dcfile_identity {
	const char *object, *build_id, *debug_path;
	uint64_t object_size, object_ino;
	int64_t object_mtime_sec, object_mtime_nsec;
	uint64_t debug_size;
	int64_t debug_mtime_sec, debug_mtime_nsec;
};

/* The fingerprint of the layouts of every struct the file holds as it
 * is in memory (see above): the same for every build of the same
 * structs on the same kind of machine. */
uint32_t dcfile_layout(void);

/* The checksum of the N bytes at P, as the headers hold it. */
uint64_t dcfile_checksum(const char *p, size_t n);

/* The bytes of a part's sections after its header for these counts, or
 * UINT64_MAX when a count is out of bounds. */
uint64_t dcfile_part_size(uint64_t nentries, uint64_t nframes, uint64_t nunits,
			  uint64_t ntops, uint64_t nseqs, uint64_t strbytes);

/* dcent order (by vaddr) and dcunit order (by cuoff), for jh_qsort. */
int dcfile_cmp_ent(const void *a, const void *b);
int dcfile_cmp_unit(const void *a, const void *b);

/* Checks the file in m->buf[0..len) completely and builds the module's
 * tables; IDENTITY(ARG, id, why, whylen) is asked, once the file is known
 * to be well formed, whether it was written for this object and debug
 * file (0: yes; else it says why not).  On any fault in the body returns
 * -1 with the reason in WHY; the caller then drops what was built
 * (dc_forget_file).  A faulty appended part ends the file there
 * (m->partwhy). */
int dcfile_parse(struct dcmodule *m, size_t len,
		 int (*identity)(void *arg, const struct dcfile_identity *id, char *why,
				 size_t whylen),
		 void *arg, char *why, size_t whylen);

/* The answers and units this run added that the file lacks, as the bytes
 * of a part to append to it: 0 with *BUF malloc'd (*LEN bytes; NULL: nothing
 * to add), 1 when the part would make the file too large (write it whole),
 * -1 out of memory (with a message in err). */
int dcfile_part(struct dcmodule *m, char **buf, size_t *len, char *err, size_t errlen);

/* A whole file in pieces, to be written in order: the header, the body's
 * sections, the old blocks copied as they are. */
struct dcfile_image {
	struct dc_block piece[12 + DC_MAX_PARTS];
	size_t npieces;
	size_t size;              /* bytes in all */
	struct dc_header h;
	void *owned[8];           /* what the pieces point into, freed by
				     dcfile_image_release */
	size_t nowned;
};

/* The module as a whole file: the answers of the file (the first KEEP_OLD
 * of them: all, or none when too many) and this run's, the units, the unit
 * map, and ID in the header (its debug file stat()ed by the caller).
 * Returns 0 with the pieces in *IMG (none: not worth writing, larger than
 * a reader accepts), or -1 out of memory (with a message in err); release
 * *IMG with dcfile_image_release() either way. */
int dcfile_whole(struct dcmodule *m, size_t keep_old, const struct dcfile_identity *id,
		 struct dcfile_image *img, char *err, size_t errlen);

void dcfile_image_release(struct dcfile_image *img);

#endif

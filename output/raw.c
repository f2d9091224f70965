/*
 * --raw (--symbolized): jeprof's symbolized profile (spec 4.6), so that a
 * profile symbolized once can be analyzed elsewhere, without the program
 * and its libraries, by jheap and by jeprof ("jeprof --text FILE"):
 *
 *   --- symbol
 *   binary=<program>
 *   0x<pc, 16 hex digits> <outer full name>--<inlined>--<innermost>
 *   ...                                  (one line per pc, sorted by pc)
 *   ---
 *   --- heap
 *   <the PROFILE file, byte for byte>
 *
 * The pcs are the lookup addresses both readers compute from the embedded
 * dump: the address itself for a stack's first frame, the address minus one
 * for callers (jeprof's FixCallerAddresses).  In a gperftools dump, where
 * every frame is a return address, jheap looks the first one up at the
 * address minus one too, and jeprof at the address: both are written.
 * Names are full demangled names; a pc jheap could not name gets the name
 * --text shows for it ("libfoo.so+0x1a2b", "0x...").
 *
 * Frames inside the allocator's own library are written as
 * "malloc(<name>)": jeprof can only recognise allocator frames by the names
 * on its skip list, and its ShortFunctionName reduces this one to "malloc",
 * so jeprof cuts them as jheap does (jheap's --full-names and
 * --keep-allocator-frames show the wrapped name).
 *
 * A profile fetched from a URL is copied from the copy jheap saved of it
 * (the report's profile_paths name it).
 * One profile only, copied verbatim (minus the symbol section of an input
 * that is itself symbolized): several profiles, --base and standard input
 * are refused, since the copy would not be the profile that was analyzed;
 * so are a pprof input (no text dump to embed) and a gzip-compressed dump.
 * Limits of the format: file and line numbers are not kept (jeprof refuses
 * --lines on such files), and jeprof splits a name containing "--" (C++
 * operator--), which jheap reads whole.
 */
#include <errno.h>
#include <sys/stat.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "analyzer/names.h"
#include "analyzer/profile.h"
#include "output/output.h"

struct rawsym {
	uint64_t pc;
	char *names;
};

/* Appends S to the growing string *BUF, line breaks (which would end the
 * symbol line) as '?'. */
static int append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);
	if (jh_grow(buf, cap, *len + n + 1, 1))
		return JH_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		(*buf)[(*len)++] = c == '\n' || c == '\r' ? '?' : (char)c;
	}
	(*buf)[*len] = 0;
	return 0;
}

static bool in_allocator_library(const struct profile *p, const struct pf_location *l)
{
	if (l->mapping == UINT32_MAX)
		return false;
	const struct pf_mapping *m = &p->maps[l->mapping];
	return m->kind == PF_MAP_FILE &&
	       names_is_allocator_object(strtab_get(&p->strs, m->path));
}

/* The symbol line's names for location L: outer first, joined by "--". */
static char *location_names(const struct profile *p, const struct pf_location *l)
{
	char *buf = NULL, tmp[64];
	size_t len = 0, cap = 0;
	bool wrap = in_allocator_library(p, l);
	if (!l->nlines) {
		snprintf(tmp, sizeof(tmp), "0x%016llx", (unsigned long long)l->addr);
		if (append(&buf, &len, &cap, wrap ? "malloc(" : "") ||
		    append(&buf, &len, &cap, tmp) || append(&buf, &len, &cap, wrap ? ")" : ""))
			goto oom;
		return buf;
	}
	for (uint32_t j = l->nlines; j-- > 0;) {
		const char *name = strtab_get(&p->strs, p->funcs[p->lines[l->line0 + j].function].name);
		if (!*name)
			name = "??";
		/* an input that was already written this way keeps its name */
		bool w = wrap && j == l->nlines - 1 &&
			 !(!strncmp(name, "malloc(", 7) && name[strlen(name) - 1] == ')');
		if ((j != l->nlines - 1 && append(&buf, &len, &cap, "--")) ||
		    append(&buf, &len, &cap, w ? "malloc(" : "") ||
		    append(&buf, &len, &cap, name) || append(&buf, &len, &cap, w ? ")" : ""))
			goto oom;
	}
	return buf;
oom:
	free(buf);
	return NULL;
}

static int cmp_syms(const void *x, const void *y)
{
	const struct rawsym *a = x, *b = y;
	if (a->pc != b->pc)
		return a->pc < b->pc ? -1 : 1;
	return strcmp(a->names, b->names);
}

/* Every location's pc and names, sorted by pc, one entry per pc.  In a
 * gperftools dump each stack's first address is also named as it is:
 * jheap looks it up at the call (address - 1), jeprof at the address. */
static int collect(const struct profile *p, struct rawsym **out, size_t *n)
{
	bool gperf = p->format == PF_FMT_GPERF;
	size_t max = p->nlocs + (gperf ? p->nsamples : 0);
	struct rawsym *syms = malloc((max + 1) * sizeof(*syms));
	if (!syms)
		return JH_ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < max; i++) {
		const struct pf_location *l;
		if (i < p->nlocs) {
			l = &p->locs[i];
			syms[k].pc = addr_pc(l->addr, l->leaf);
		} else {
			const struct pf_sample *s = &p->samples[i - p->nlocs];
			if (!s->depth)
				continue;
			l = &p->locs[p->stacks[s->stack0]];
			syms[k].pc = l->addr;
		}
		if (!(syms[k].names = location_names(p, l))) {
			for (size_t j = 0; j < k; j++)
				free(syms[j].names);
			free(syms);
			return JH_ENOMEM;
		}
		k++;
	}
	jh_qsort(syms, k, sizeof(*syms), cmp_syms);
	/* A leaf at X and a caller at X+1 share a pc; both readers keep one
	 * name per pc: the first in byte order. */
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && syms[m - 1].pc == syms[i].pc)
			free(syms[i].names);
		else
			syms[m++] = syms[i];
	}
	*out = syms;
	*n = m;
	return 0;
}

static bool is_section(const char *s, const char *word)
{
	if (strncmp(s, "---", 3))
		return false;
	s += 3;
	while (*s == ' ')
		s++;
	return !strncmp(s, word, strlen(word));
}

/* The start of the dump: leading '%' command lines (kept, they go first),
 * an existing symbol section and "--- heap" marker (dropped: ours replace
 * them), and the first line to copy. */
struct head {
	char *commands;   size_t ncommands, cap_commands;
	char *first;      ssize_t nfirst;   /* -1: the file ends before it */
};

static int read_head(FILE *in, struct head *h)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	bool in_symbols = false, after_symbols = false;
	while ((n = getline(&line, &cap, in)) >= 0) {
		if (in_symbols) {
			if (!strncmp(line, "---", 3)) {
				in_symbols = false;
				after_symbols = true;
				if (is_section(line, "heap") || is_section(line, "growth"))
					after_symbols = false;
			}
			continue;
		}
		if (line[0] == '%') {
			if (jh_grow(&h->commands, &h->cap_commands, h->ncommands + (size_t)n, 1))
				goto oom;
			memcpy(h->commands + h->ncommands, line, (size_t)n);
			h->ncommands += (size_t)n;
			continue;
		}
		if (!after_symbols && is_section(line, "symbol")) {
			in_symbols = true;
			continue;
		}
		if (!line[strspn(line, " \t\r\n")])
			continue;   /* blank lines before the header: jheap skips them */
		after_symbols = false;
		if (is_section(line, "heap") || is_section(line, "growth"))
			continue;
		h->first = line;
		h->nfirst = n;
		return 0;
	}
	free(line);
	h->nfirst = -1;
	return ferror(in) ? JH_EIO : 0;
oom:
	free(line);
	return JH_ENOMEM;
}

int output_raw(FILE *out, const struct report *r, char *err, size_t errlen)
{
	const char *const *paths = r->profile_paths;
	if (r->diff)
		return jh_err(err, errlen, JH_EUSAGE,
			      "--raw writes one profile as it is and cannot include --base; write each profile with --raw and give them to --base later");
	if (!paths || !paths[0])
		return jh_err(err, errlen, JH_EUSAGE, "--raw: no profile");
	if (paths[1])
		return jh_err(err, errlen, JH_EUSAGE,
			      "--raw writes one profile as it is; give one PROFILE (jheap and jeprof sum several symbolized files when given them together)");
	if (!strcmp(paths[0], "-"))
		return jh_err(err, errlen, JH_EUSAGE,
			      "--raw copies the profile file and cannot read standard input twice; give the file's name");
	if (r->p->format == PF_FMT_PPROF)
		return jh_err(err, errlen, JH_EUSAGE,
			      "--raw writes jeprof's symbolized form around a text heap dump, and '%s' is a pprof profile; --proto writes it symbolized",
			      paths[0]);
	FILE *in = fopen(paths[0], "rbe");
	if (!in && strstr(paths[0], "://"))
		/* a fetched profile is read again from its saved copy */
		return jh_err(err, errlen, JH_EIO,
			      "--raw copies the profile from its saved copy, and the profile from '%s' was not saved (see the warning above); set JHEAP_TMPDIR to a folder jheap can write",
			      paths[0]);
	if (!in)
		return jh_err(err, errlen, JH_EIO, "cannot open '%s': %s", paths[0], strerror(errno));
	int c0 = getc(in);
	if (c0 == 0x1f) {
		fclose(in);
		return jh_err(err, errlen, JH_EUSAGE,
			      "--raw copies the dump's text, and '%s' is gzip-compressed; give it uncompressed",
			      paths[0]);
	}
	if (c0 != EOF)
		ungetc(c0, in);
	struct head h = { 0 };
	struct rawsym *syms = NULL;
	size_t nsyms = 0;
	struct stat si, so;
	int rc = 0;
	if (!fstat(fileno(in), &si) && !fstat(fileno(out), &so) &&
	    si.st_dev == so.st_dev && si.st_ino == so.st_ino) {
		rc = jh_err(err, errlen, JH_EUSAGE, "--raw: the output is the profile '%s' itself",
			    paths[0]);
		goto out;
	}
	rc = read_head(in, &h);
	if (rc) {
		rc = jh_err(err, errlen, rc, rc == JH_ENOMEM ? "out of memory" : "cannot read '%s': %s",
			    paths[0], strerror(errno));
		goto out;
	}
	if (h.nfirst < 0) {
		rc = jh_err(err, errlen, JH_EFORMAT, "'%s' holds no profile after its header", paths[0]);
		goto out;
	}
	if ((rc = collect(r->p, &syms, &nsyms))) {
		rc = jh_err(err, errlen, rc, "out of memory");
		goto out;
	}
	if (h.ncommands)
		fwrite(h.commands, 1, h.ncommands, out);
	fputs("--- symbol\nbinary=", out);
	for (const char *s = r->program; *s; s++)
		putc(*s == '\n' || *s == '\r' ? '?' : *s, out);
	putc('\n', out);
	for (size_t i = 0; i < nsyms; i++) {
		/* one line per address: a newline in a name is escaped */
		fprintf(out, "0x%016llx ", (unsigned long long)syms[i].pc);
		escape_fputs(syms[i].names, false, out);
		putc('\n', out);
	}
	fputs("---\n--- heap\n", out);
	fwrite(h.first, 1, (size_t)h.nfirst, out);
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, out);
	if (ferror(in)) {
		rc = jh_err(err, errlen, JH_EIO, "cannot read '%s': %s", paths[0], strerror(errno));
		goto out;
	}
	if (ferror(out))
		rc = jh_err(err, errlen, JH_EIO, "error writing the report");
out:
	fclose(in);
	for (size_t i = 0; i < nsyms; i++)
		free(syms[i].names);
	free(syms);
	free(h.commands);
	free(h.first);
	return rc;
}

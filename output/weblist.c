/*
 * --weblist=RE: --list=RE as a self-contained web page, each source line
 * with the machine code made of it underneath, as jeprof's and pprof's
 * weblist show it.
 *
 *   NAME                                    (one section per --list routine)
 *   FILE
 *   Total: flat cum MB (flat / cumulative)
 *      .    0.2   77:     for (int i = 0; i < 64; i++)
 *    0.1    0.2   78:         hold(make_buf(4000));        (click: opens)
 *                 0.1    0.2       1234:  call 1100 <operator new[]>   w_cpp.cc:70
 *
 * Rules:
 *  - the source lines and their values are --list's (output/list.h);
 *  - the machine code is --disasm's (output/disasm.h: objdump over each
 *    function's symbol range, the values of the pcs each instruction
 *    holds), for the symbols whose function has the routine's short name;
 *  - an instruction goes under the line of the routine's file that it
 *    belongs to: of its source positions (the line-table row, then each
 *    call site it is inlined at, from objdump -l --inlines), the outermost
 *    one in a file of the routine's file name, as pprof picks it; so code
 *    inlined from a header is shown under the call in the function's own
 *    source.  Instructions with no such position, or on a line --list does
 *    not show, are listed after the routine's last line;
 *  - each instruction shows its innermost position (file name:line) at the
 *    right; a line's instructions in address order, with a row of dots
 *    between runs that are not contiguous;
 *  - lines with a value are highlighted; a line with machine code opens
 *    and closes on a click (<details>): no script, no network, the page
 *    reads the same anywhere;
 *  - when objdump cannot give the code (not installed, the functions only
 *    exist inlined in others), the page says why, with the listing alone.
 */
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/escape.h"
#include "output/disasm.h"
#include "output/list.h"
#include "output/output.h"

static void html_escape(FILE *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(s[i], out);
		}
	}
}

/* Text from a profile, an object or a source file: control characters as
 * C escapes (escape.h) but tabs, then HTML-escaped. */
static void html_text(FILE *out, const char *s, size_t n)
{
	if (!escape_needed(s, n)) {
		html_escape(out, s, n);
		return;
	}
	for (size_t i = 0; i < n;) {
		const char *tab = memchr(s + i, '\t', n - i);
		size_t k = tab ? (size_t)(tab - s) - i : n - i;
		char *e = malloc(4 * k + 1);
		if (!e)
			return;
		escape_into(e, 4 * k + 1, s + i, k);
		html_escape(out, e, strlen(e));
		free(e);
		i += k;
		if (tab) {
			fputc('\t', out);
			i++;
		}
	}
}

static void html_str(FILE *out, const char *s)
{
	html_text(out, s, strlen(s));
}

/* An instruction placed in the current routine. */
struct placed {
	uint32_t line;             /* 0: on no line of the routine's file */
	uint32_t routine, insn;    /* in the disasm set */
	bool shown;
};

struct page {
	FILE *out;
	const struct report *r;
	const struct disasm_set *code;
	struct placed *pl;         /* the current routine's instructions, by line, address */
	size_t npl, cap_pl;
	size_t next;               /* the first one not yet past */
	bool open;                 /* a routine's listing is open */
	int rc;
};

static const char *base_name(const char *path, size_t len, size_t *blen)
{
	const char *b = path;
	for (size_t i = 0; i < len; i++)
		if (path[i] == '/')
			b = path + i + 1;
	*blen = len - (size_t)(b - path);
	return b;
}

/* The line of FILE's base name (BASE[0..blen)) an instruction belongs
 * to: its outermost source position in such a file, or 0. */
static uint32_t line_in(const struct disasm_routine *rt, const struct disasm_insn *in,
			const char *base, size_t blen)
{
	for (uint32_t k = in->npos; k-- > 0;) {
		const struct disasm_pos *pos = &rt->pos[in->pos0 + k];
		size_t n;
		const char *b = base_name(pos->file, pos->flen, &n);
		if (n == blen && !memcmp(b, base, n))
			return pos->line;
	}
	return 0;
}

static int cmp_placed(const void *x, const void *y, void *arg)
{
	const struct disasm_set *code = arg;
	const struct placed *a = x, *b = y;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	uint64_t p = code->r[a->routine].ins[a->insn].addr, q = code->r[b->routine].ins[b->insn].addr;
	if (p != q)
		return p < q ? -1 : 1;
	return a->routine < b->routine ? -1 : a->routine > b->routine;
}

/* The instructions of the symbols of function NAME, placed on the lines
 * of FILE. */
static int place(struct page *pg, const char *name, const char *file)
{
	pg->npl = pg->next = 0;
	size_t blen;
	const char *base = base_name(file, strlen(file), &blen);
	for (size_t k = 0; pg->code && k < pg->code->done; k++) {
		const struct disasm_routine *rt = &pg->code->r[k];
		if (strcmp(rt->short_name, name))
			continue;
		for (size_t j = 0; j < rt->nins; j++) {
			if (rt->ins[j].marker)
				continue;
			struct placed p = { line_in(rt, &rt->ins[j], base, blen), (uint32_t)k, (uint32_t)j,
					    false };
			if (JH_PUSH(pg->pl, pg->npl, pg->cap_pl, p))
				return JH_ENOMEM;
		}
	}
	jh_qsort_r(pg->pl, pg->npl, sizeof(*pg->pl), cmp_placed, (void *)pg->code);
	return 0;
}

/* Whether instruction B follows A in RT with nothing but markers between. */
static bool contiguous(const struct disasm_routine *rt, uint32_t a, uint32_t b)
{
	if (b <= a)
		return false;
	for (uint32_t j = a + 1; j < b; j++)
		if (!rt->ins[j].marker)
			return false;
	return true;
}

/* The rows of the instructions PL[0..n), with dots between runs that are
 * not contiguous. */
static void write_code(struct page *pg, struct placed *pl, size_t n)
{
	FILE *out = pg->out;
	char f1[64], f2[64];
	fputs("<div class=\"asm\">", out);
	for (size_t i = 0; i < n; i++) {
		const struct disasm_routine *rt = &pg->code->r[pl[i].routine];
		const struct disasm_insn *in = &rt->ins[pl[i].insn];
		if (i && (pl[i].routine != pl[i - 1].routine ||
			  !contiguous(rt, pl[i - 1].insn, pl[i].insn)))
			fprintf(out, "%30s\xe2\x8b\xae\n", "");   /* U+22EE, vertical ellipsis */
		text_format_value_alt(f1, sizeof(f1), in->flat, pg->r->units);
		text_format_value_alt(f2, sizeof(f2), in->cum, pg->r->units);
		fprintf(out, "<span class=\"%s\">%13s %6s %8llx: ", in->flat != 0 || in->cum != 0 ? "insn hot" : "insn",
			f1, f2, (unsigned long long)in->addr);
		html_str(out, in->text);
		fputs("</span>", out);
		if (in->npos) {
			const struct disasm_pos *pos = &rt->pos[in->pos0];
			size_t blen;
			const char *b = base_name(pos->file, pos->flen, &blen);
			fputs(" <span class=\"pos\">", out);
			html_text(out, b, blen);
			fprintf(out, ":%u</span>", pos->line);
		}
		fputc('\n', out);
		pl[i].shown = true;
	}
	fputs("</div>", out);
}

/* The current routine's instructions on no line shown, after its lines. */
static void close_routine(struct page *pg)
{
	if (!pg->open)
		return;
	size_t n = 0;
	for (size_t i = 0; i < pg->npl; i++)
		if (!pg->pl[i].shown)
			pg->pl[n++] = pg->pl[i];
	if (n) {
		fputs("<details class=\"src other\"><summary>", pg->out);
		fprintf(pg->out, "%13s %d instructions on no line shown above</summary>", "", (int)n);
		write_code(pg, pg->pl, n);
		fputs("</details>\n", pg->out);
	}
	fputs("</div>\n", pg->out);
	pg->npl = 0;
	pg->open = false;
}

static void page_routine(void *ctx, const char *name, const char *file, double flat, double cum)
{
	struct page *pg = ctx;
	char f1[64], f2[64];
	close_routine(pg);
	if (!pg->rc)
		pg->rc = place(pg, name, file);
	fputs("<h2>", pg->out);
	html_str(pg->out, name);
	fputs("</h2>\n<div class=\"file\">", pg->out);
	html_str(pg->out, file);
	text_format_value(f1, sizeof(f1), flat, pg->r->units);
	text_format_value(f2, sizeof(f2), cum, pg->r->units);
	fprintf(pg->out, "</div>\n<div class=\"listing\"><div class=\"total\">%6s %6s Total %s (flat / cumulative)</div>\n",
		f1, f2, text_unit_name(pg->r->units));
	pg->open = true;
}

static void page_missing(void *ctx, const char *why)
{
	struct page *pg = ctx;
	fputs("<div class=\"missing\">    (source not shown: ", pg->out);
	html_str(pg->out, why);
	fputs(")</div>\n", pg->out);
}

static void page_line(void *ctx, int64_t line, double flat, double cum, const char *text,
		      size_t len)
{
	struct page *pg = ctx;
	char f1[64], f2[64];
	/* this line's instructions: those placed on it, after the ones before */
	while (pg->next < pg->npl && pg->pl[pg->next].line < line)
		pg->next++;
	size_t from = pg->next;
	while (pg->next < pg->npl && pg->pl[pg->next].line == line)
		pg->next++;
	bool hot = flat != 0 || cum != 0, code = pg->next > from;
	fprintf(pg->out, code ? "<details class=\"src%s\"><summary>" : "<div class=\"src%s\">",
		hot ? " hot" : "");
	text_format_value_alt(f1, sizeof(f1), flat, pg->r->units);
	text_format_value_alt(f2, sizeof(f2), cum, pg->r->units);
	fprintf(pg->out, "%6s %6s %4lld%s", f1, f2, (long long)line, text ? ": " : "");
	if (text)
		html_text(pg->out, text, len);
	if (code) {
		fputs("</summary>", pg->out);
		write_code(pg, pg->pl + from, pg->next - from);
		fputs("</details>\n", pg->out);
	} else {
		fputs("</div>\n", pg->out);
	}
}

static void page_fence(void *ctx)
{
	(void)ctx;   /* the page marks the routine's lines by their values alone */
}

/* The page, into OUT. */
static int write_page(FILE *out, const struct report *r, const struct disasm_set *code, int drc,
		      const char *derr, char *err, size_t errlen)
{
	struct page pg = { .out = out, .r = r, .code = code };
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>jheap: ", out);
	html_str(out, r->weblist);
	fputs("</title>\n<style>\n"
	      "body { font-family: sans-serif; margin: 1em; }\n"
	      "h2 { font-size: 1.1em; margin: 1.2em 0 0 0; color: #1a4d8f; }\n"
	      ".file { color: #666; margin-bottom: 0.3em; }\n"
	      ".listing { font-family: monospace; font-size: 13px; line-height: 1.3; white-space: pre; }\n"
	      ".src.hot > summary, div.src.hot { background: #fde8e0; font-weight: bold; }\n"
	      "summary { display: block; list-style: none; cursor: pointer; color: #0645ad; }\n"
	      "summary::-webkit-details-marker { display: none; }\n"
	      ".asm { color: #006400; background: #f4f8f4; font-weight: normal; }\n"
	      ".insn.hot { background: #fde8e0; }\n"
	      ".pos { color: #999; }\n"
	      ".note { color: #a00; }\n"
	      "</style></head><body>\n<h1>", out);
	html_str(out, r->program ? r->program : "");
	fprintf(out, " &mdash; %s</h1>\n", output_value_name(r->value));
	fputs("<p>Lines with a value are highlighted; click a blue line for the machine code made of it, with the value of each instruction.</p>\n",
	      out);
	if (drc == JH_EFORMAT) {
		fputs("<p class=\"note\">No machine code: no function matching '", out);
		html_str(out, r->weblist);
		fputs("' has a symbol of its own that holds a value (a function inlined into others is in their code).</p>\n",
		      out);
	} else if (drc) {
		fputs("<p class=\"note\">Machine code not shown: ", out);
		html_str(out, derr);
		fputs("</p>\n", out);
	}
	struct list_sink sink = { &pg, page_routine, page_missing, page_line, page_fence };
	int rc = list_walk(r, "weblist", r->weblist, &sink, err, errlen);
	close_routine(&pg);
	fputs("</body></html>\n", out);
	free(pg.pl);
	if (!rc && pg.rc)
		rc = jh_err(err, errlen, pg.rc, "out of memory");
	return rc;
}

int output_weblist(FILE *out, const struct report *r, char *err, size_t errlen)
{
	struct disasm_set code;
	char derr[1024] = "";
	int drc = disasm_collect(r, "weblist", r->weblist, &code, derr, sizeof(derr));
	/* made in memory: a listing that fails writes nothing */
	char *page = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&page, &len);
	int rc = mem ? write_page(mem, r, &code, drc, derr, err, errlen)
		     : jh_err(err, errlen, JH_ENOMEM, "out of memory");
	if (mem && fclose(mem) && !rc)
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
	disasm_set_release(&code);
	if (!rc && fwrite(page, 1, len, out) != len)
		rc = jh_err(err, errlen, JH_EIO, "error writing the report");
	free(page);
	if (!rc && ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return rc;
}

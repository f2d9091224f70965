/*
 * --weblist=RE: --list=RE as a self-contained web page, for a browser.
 *
 * The page holds --list's text for RE line by line, HTML-escaped, with the
 * lines that carry a value (flat or cum not ".") highlighted, and below it
 * --disasm=RE's text (the machine code with the values per instruction) in
 * a section that opens on a click; when objdump cannot give it, the
 * section says why.  No script, no network: the page reads the same
 * anywhere.  jeprof's weblist and pprof's interleave each source line's
 * instructions with it; jheap keeps the two listings apart.
 */
#include "analyzer/util.h"
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

/* A listing line with a value: its first column is a number, not "." (the
 * ROUTINE and total lines excepted). */
static bool hot(const char *line, size_t n)
{
	size_t i = 0;
	while (i < n && line[i] == ' ')
		i++;
	if (i >= n || line[i] == '.' || !strncmp(line + i, "ROUTINE", 7))
		return false;
	if (memchr(line, ':', n) == NULL)
		return false;   /* "N N Total MB (flat / cumulative)" */
	return (line[i] >= '0' && line[i] <= '9') || line[i] == '-';
}

static void write_lines(FILE *out, const char *text, size_t len)
{
	const char *s = text, *end = text + len;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
		bool h = hot(s, n);
		bool head = n >= 7 && !strncmp(s, "ROUTINE", 7);
		if (h)
			fputs("<span class=\"hot\">", out);
		else if (head)
			fputs("<span class=\"head\">", out);
		html_escape(out, s, n);
		if (h || head)
			fputs("</span>", out);
		fputc('\n', out);
		s += n + 1;
	}
}

/* The text a writer gives for R, into *BUF; returns its code. */
static int capture(int (*writer)(FILE *, const struct report *, char *, size_t),
		   const struct report *r, char **buf, size_t *len, char *err, size_t errlen)
{
	FILE *mem = open_memstream(buf, len);
	if (!mem)
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	int rc = writer(mem, r, err, errlen);
	if (fclose(mem) && !rc)
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
	return rc;
}

int output_weblist(FILE *out, const struct report *r, char *err, size_t errlen)
{
	struct report lr = *r;
	lr.list = r->weblist;
	char *list = NULL, *dis = NULL;
	size_t nlist = 0, ndis = 0;
	int rc = capture(output_list, &lr, &list, &nlist, err, errlen);
	if (rc) {
		free(list);
		return rc;
	}
	struct report dr = *r;
	dr.disasm = r->weblist;
	char derr[1024] = "";
	int drc = capture(output_disasm, &dr, &dis, &ndis, derr, sizeof(derr));

	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n<title>", out);
	fputs("jheap: ", out);
	html_escape(out, r->weblist, strlen(r->weblist));
	fputs("</title>\n<style>\n"
	      "body { font-family: sans-serif; margin: 1em; }\n"
	      "pre { font-family: monospace; font-size: 13px; line-height: 1.3; }\n"
	      ".hot { background: #fde8e0; font-weight: bold; }\n"
	      ".head { color: #1a4d8f; font-weight: bold; }\n"
	      "summary { cursor: pointer; font-weight: bold; }\n"
	      "</style></head><body>\n<h1>", out);
	const char *prog = r->program ? r->program : "";
	html_escape(out, prog, strlen(prog));
	fprintf(out, " &mdash; %s</h1>\n<pre>\n", output_value_name(r->value));
	write_lines(out, list, nlist);
	fputs("</pre>\n<details><summary>Machine code</summary>\n<pre>\n", out);
	if (drc)
		html_escape(out, derr, strlen(derr));
	else
		write_lines(out, dis, ndis);
	fputs("</pre></details>\n</body></html>\n", out);
	free(list);
	free(dis);
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}

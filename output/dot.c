/*
 * --dot: jeprof's call graph in graphviz's language (sub PrintDot in
 * jemalloc's bin/jeprof.in, /usr/bin/jeprof; tests/t0330-dot.sh), and
 * --svg/--pdf/--png: the same text rendered by graphviz's "dot" program.
 *
 * Nodes are the aggregate's keys (flat and cum with recursion counted once);
 * edges come from the unreduced stacks, so a recursive call is a self-edge
 * counted once per repetition, as in jeprof.  Unlike jeprof, edges of equal
 * weight are taken in a fixed order (|weight|, caller key, then callee key,
 * bytewise), names are escaped so that any byte string makes a valid graph,
 * and with --base (negative values) the limits and font sizes use |total|.
 * Pictures differ from --dot only in looks: HTML-like labels, a sans-serif
 * face and lines at least 1 point wide.
 */
#include <errno.h>
#include <math.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/chars.h"
#include "lib/errors.h"
#include "lib/escape.h"
#include "lib/hash.h"
#include "output/child.h"
#include "output/output.h"

enum dot_target { TARGET_DOT, TARGET_SVG, TARGET_PDF, TARGET_PNG };

struct dot_edge {
	uint32_t src, dst;       /* node indices (0-based, in printing order) */
	double w;
};

/* Edges keyed by (src, dst) in an open-addressing table of indices into
 * the edge array; the graph has at most nodecount nodes, so this stays
 * small. */
struct edge_set {
	struct dot_edge *e;
	size_t n, cap;
	uint32_t *slots;         /* edge index + 1, 0 empty */
	size_t nslots;
};

static int edge_set_add(struct edge_set *s, uint32_t src, uint32_t dst, double w)
{
	if ((s->n + 1) * 2 > s->nslots) {
		size_t ns = s->nslots ? s->nslots * 2 : 256;
		uint32_t *slots = calloc(ns, sizeof(*slots));
		if (!slots)
			return JH_ENOMEM;
		for (size_t i = 0; i < s->n; i++) {
			uint64_t h = jh_mix64(((uint64_t)s->e[i].src << 32) | s->e[i].dst);
			size_t j = h & (ns - 1);
			while (slots[j])
				j = (j + 1) & (ns - 1);
			slots[j] = (uint32_t)i + 1;
		}
		free(s->slots);
		s->slots = slots;
		s->nslots = ns;
	}
	uint64_t h = jh_mix64(((uint64_t)src << 32) | dst);
	size_t j = h & (s->nslots - 1);
	while (s->slots[j]) {
		struct dot_edge *e = &s->e[s->slots[j] - 1];
		if (e->src == src && e->dst == dst) {
			e->w += w;
			return 0;
		}
		j = (j + 1) & (s->nslots - 1);
	}
	struct dot_edge ne = { src, dst, w };
	if (JH_PUSH(s->e, s->n, s->cap, ne))
		return JH_ENOMEM;
	s->slots[j] = (uint32_t)s->n;
	return 0;
}

/* Writes S inside a dot "..." string, or with HTML inside an HTML-like
 * label.  In a string '"' and '\\' are escaped (jeprof does neither, so
 * one C++ name could break its whole graph) and '&' becomes "&amp;"
 * because graphviz decodes HTML entities in every label; in HTML '&', '<',
 * '>' and '"' become entities.  Control characters and invalid UTF-8
 * become '?' (graphviz wants UTF-8).  With SPLIT, every run of white space
 * and every "::" becomes a line break, jeprof's way of keeping long names
 * narrow. */
static void dot_escape_as(FILE *out, const char *str, bool split, bool html)
{
	const unsigned char *s = (const unsigned char *)str;
	const char *br = html ? "<br/>" : "\\n";
	size_t n = strlen(str);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (split && (c == ' ' || c == '\t' || c == '\n' || c == '\r' ||
			      c == '\f' || c == '\v')) {
			while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
					 s[i] == '\r' || s[i] == '\f' || s[i] == '\v'))
				i++;
			fputs(br, out);
			continue;
		}
		if (split && c == ':' && i + 1 < n && s[i + 1] == ':') {
			fputs(br, out);
			i += 2;
			continue;
		}
		i++;
		if (html && c == '<') {
			fputs("&lt;", out);
		} else if (html && c == '>') {
			fputs("&gt;", out);
		} else if (html && c == '"') {
			fputs("&quot;", out);
		} else if (!html && (c == '"' || c == '\\')) {
			fputc('\\', out);
			fputc(c, out);
		} else if (c == '&') {
			fputs("&amp;", out);
		} else if (c < 0x20 || c == 0x7f) {
			fputc('?', out);
		} else {
			size_t len = jh_utf8_len(s + i - 1, n - i + 1);
			if (!len) {
				fputc('?', out);
			} else {
				fwrite(s + i - 1, 1, len, out);
				i += len - 1;
			}
		}
	}
}

static void dot_escape(FILE *out, const char *str, bool split)
{
	dot_escape_as(out, str, split, false);
}

static int cmp_nodes(const void *x, const void *y, void *arg)
{
	const struct aggregate *a = arg;
	const struct agg_row *r = &a->rows[*(const uint32_t *)x];
	const struct agg_row *s = &a->rows[*(const uint32_t *)y];
	double vr = fabs(r->cum), vs = fabs(s->cum);
	if (vr != vs)
		return vr > vs ? -1 : 1;
	return strcmp(strtab_get(&a->keys, r->key), strtab_get(&a->keys, s->key));
}

struct edge_sort { const struct aggregate *a; const uint32_t *rows; };

static int cmp_edges(const void *x, const void *y, void *arg)
{
	const struct edge_sort *c = arg;
	const struct dot_edge *e = x, *f = y;
	double we = fabs(e->w), wf = fabs(f->w);
	if (we != wf)
		return we > wf ? -1 : 1;
	if (e->src != f->src)
		return strcmp(strtab_get(&c->a->keys, c->rows[e->src]),
			      strtab_get(&c->a->keys, c->rows[f->src]));
	if (e->dst != f->dst)
		return strcmp(strtab_get(&c->a->keys, c->rows[e->dst]),
			      strtab_get(&c->a->keys, c->rows[f->dst]));
	return 0;
}

struct edge_collector {
	const uint32_t *node_of;
	struct edge_set *es;
};

static int add_stack_edges(void *ctx, uint32_t sample, const uint32_t *keys, size_t n, double v)
{
	const struct edge_collector *c = ctx;
	int rc = 0;
	for (size_t i = 0; i + 1 < n && !rc; i++) {
		uint32_t src = c->node_of[keys[i + 1]], dst = c->node_of[keys[i]];
		if (src && dst)
			rc = edge_set_add(c->es, src - 1, dst - 1, v);
	}
	return rc;
}

/* Sums the weight of every caller -> callee pair of keys in the unreduced
 * stacks where both ends are nodes.  NODE_OF maps a key id to its node
 * index + 1, or 0. */
static int collect_edges(const struct report *r, const uint32_t *node_of, struct edge_set *es)
{
	struct edge_collector c = { node_of, es };
	return aggregate_each_stack(r->a, r->p, r->value, add_stack_edges, &c);
}

struct graph {
	const struct report *r;
	enum dot_target target;
	bool html;               /* HTML-like labels (pictures) */
	double local_total;      /* the flat total: the 100% of the labels */
	double nodelimit, edgelimit;
	const char *units;
	uint32_t *list;          /* nodes first: row ids, then key ids */
	size_t nnodes;
	uint32_t *node_of;       /* key id -> node index + 1, or 0 */
};

/* Picks the nodes: rows by |cum| descending, then key, at most
 * --nodecount, then none at or below the node limit.  Returns 0 or a
 * negative code with a message. */
static int select_nodes(struct graph *g, char *err, size_t errlen)
{
	const struct aggregate *a = g->r->a;
	long nodecount = g->r->nodecount < 0 ? 80 : g->r->nodecount;
	size_t nlist = 0;
	for (size_t i = 1; i < a->nrows; i++)
		if (a->rows[i].cum != 0 || a->rows[i].flat != 0)
			g->list[nlist++] = (uint32_t)i;
	jh_qsort_r(g->list, nlist, sizeof(*g->list), cmp_nodes, (void *)a);
	size_t n = nlist;
	if ((size_t)nodecount < n)
		n = (size_t)nodecount;
	while (n > 0 && fabs(a->rows[g->list[n - 1]].cum) <= g->nodelimit)
		n--;
	g->nnodes = n;
	if (n > 0)
		return 0;
	if (nlist == 0)
		return jh_err(err, errlen, JH_EFORMAT, "No nodes to print: no stack has a value");
	if (nodecount == 0)
		return jh_err(err, errlen, JH_EFORMAT, "No nodes to print (--nodecount=0)");
	char lim[64];
	text_format_value(lim, sizeof(lim), g->nodelimit, g->r->units);
	return jh_err(err, errlen, JH_EFORMAT,
		      "No nodes to print: every node is at or below %s %s (--nodefraction=%g)",
		      lim, g->units, g->r->nodefraction);
}

static const char html_table[] =
	"<<table border=\"0\" cellborder=\"0\" cellspacing=\"0\" cellpadding=\"1\">";

/* The digraph line, defaults and the Legend node. */
static void write_legend(FILE *out, const struct graph *g)
{
	const struct report *r = g->r;
	char total[64], local[64], nl[64], el[64], lines[4][160];
	text_format_value(total, sizeof(total), r->a->total, r->units);
	text_format_value(local, sizeof(local), g->local_total, r->units);
	text_format_value(nl, sizeof(nl), g->nodelimit, r->units);
	text_format_value(el, sizeof(el), g->edgelimit, r->units);
	fputs("digraph \"", out);
	dot_escape(out, r->program ? r->program : "", false);
	fprintf(out, "; %s %s\" {\n", total, g->units);
	if (g->target == TARGET_PDF)
		fputs("size=\"8,11\"\n", out);
	fputs("node [width=0.375,height=0.25];\n", out);
	if (g->html)   /* a sans-serif face reads better in a picture */
		fputs("graph [fontname=\"Helvetica\"];\nnode [fontname=\"Helvetica\"];\n"
		      "edge [fontname=\"Helvetica\"];\n", out);
	snprintf(lines[0], sizeof(lines[0]), "Total %s%s%s%s: %s", g->units,
		 r->thread ? " (" : "", r->thread ? r->thread : "", r->thread ? ")" : "", total);
	snprintf(lines[1], sizeof(lines[1]), "Focusing on: %s", local);
	snprintf(lines[2], sizeof(lines[2]), "Dropped nodes with <= %s abs(%s)", nl, g->units);
	snprintf(lines[3], sizeof(lines[3]), "Dropped edges with <= %s %s", el, g->units);
	fputs("Legend [shape=box,fontsize=24,shape=plaintext,label=", out);
	fputs(g->html ? html_table : "\"", out);
	for (int k = -1; k < 4; k++) {
		const char *line = k < 0 ? r->program : lines[k];
		if (!line || !*line)
			continue;
		fputs(g->html ? "<tr><td align=\"left\">" : "", out);
		dot_escape_as(out, line, false, g->html);
		fputs(g->html ? "</td></tr>" : "\\l", out);
	}
	fputs(g->html ? "</table>>];\n" : "\"];\n", out);
}

/* One node per selected row: name, flat, and cum when it differs; the
 * font grows with flat.  Pictures get HTML-like labels because graphviz's
 * plain labels set lines so close that an '_' runs into the next line. */
static void write_nodes(FILE *out, struct graph *g)
{
	const struct aggregate *a = g->r->a;
	const char *row_start = g->html ? "<tr><td align=\"right\">" : "";
	const char *row_end = g->html ? "</td></tr>" : "\\r";
	char v[64], pct[32];
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct agg_row *row = &a->rows[g->list[i]];
		g->node_of[row->key] = (uint32_t)i + 1;
		/* jeprof keeps 8 unless the total is positive; with --base the
		 * total can be negative or near 0, so use |flat/total|, at most 1 */
		double fs = 8;
		if (g->local_total != 0)
			fs = 8 + 50.0 * sqrt(fmin(fabs(row->flat / g->local_total), 1));
		fprintf(out, "N%zu [label=", i + 1);
		fputs(g->html ? html_table : "\"", out);
		fputs(g->html ? "<tr><td>" : "", out);
		dot_escape_as(out, strtab_get(&a->keys, row->key), true, g->html);
		text_format_value(v, sizeof(v), row->flat, g->r->units);
		text_format_percent(pct, sizeof(pct), row->flat, g->local_total);
		fprintf(out, "%s%s%s (%s)", g->html ? "</td></tr>" : "\\n", row_start, v, pct);
		if (row->flat != row->cum) {
			text_format_value(v, sizeof(v), row->cum, g->r->units);
			text_format_percent(pct, sizeof(pct), row->cum, g->local_total);
			fprintf(out, "%s%sof %s (%s)", row_end, row_start, v, pct);
		}
		fprintf(out, "%s%s,shape=box,fontsize=%.1f];\n", row_end,
			g->html ? "</table>>" : "\"", fs);
	}
	for (size_t i = 0; i < g->nnodes; i++)
		g->list[i] = a->rows[g->list[i]].key;   /* node index -> key id */
}

/* The edges, heaviest first: an edge into a node that has none yet is
 * always kept so that every node stays reachable; others go when they
 * are at or below the edge limit or a degree reached --maxdegree. */
static int write_edges(FILE *out, const struct graph *g)
{
	const struct aggregate *a = g->r->a;
	struct edge_set es = { 0 };
	uint32_t *indeg = calloc(g->nnodes, sizeof(*indeg));
	uint32_t *outdeg = calloc(g->nnodes, sizeof(*outdeg));
	int rc = indeg && outdeg ? collect_edges(g->r, g->node_of, &es) : JH_ENOMEM;
	if (rc)
		goto out;
	struct edge_sort ec = { a, g->list };
	jh_qsort_r(es.e, es.n, sizeof(*es.e), cmp_edges, &ec);
	long md = g->r->maxdegree;
	uint32_t maxdeg = md < 0 ? 0 : md > (long)UINT32_MAX ? UINT32_MAX : (uint32_t)md;
	for (size_t i = 0; i < es.n; i++) {
		const struct dot_edge *e = &es.e[i];
		if (indeg[e->dst] != 0 &&
		    (fabs(e->w) <= g->edgelimit || outdeg[e->src] >= maxdeg || indeg[e->dst] >= maxdeg))
			continue;
		outdeg[e->src]++;
		indeg[e->dst]++;
		double fraction = g->local_total != 0 ? fabs(3 * (e->w / g->local_total)) : 0;
		if (fraction > 1)
			fraction = 1;
		double width = fraction * 2;
		if (width < 1 && g->target != TARGET_DOT)
			width = 1;   /* renderers draw thinner lines poorly */
		double weight = pow(fabs(e->w), 0.7);
		if (weight > 100000)
			weight = 100000;
		char label[64];
		text_format_value(label, sizeof(label), e->w, g->r->units);
		const char *dst_key = strtab_get(&a->keys, g->list[e->dst]);
		/* jeprof's "%f", without its trailing zeros: "2", never
		 * "0.000000" */
		char lw[32];
		int k = snprintf(lw, sizeof(lw), "%f", width);
		while (k > 1 && lw[k - 1] == '0')
			lw[--k] = '\0';
		if (k > 1 && lw[k - 1] == '.')
			lw[--k] = '\0';
		fprintf(out, "N%u -> N%u [label=%s, weight=%d, style=\"setlinewidth(%s)%s\"];\n",
			e->src + 1, e->dst + 1, label, (int)weight, lw,
			strstr(dst_key, "(inline)") ? ",dashed" : "");
	}
out:
	free(indeg);
	free(outdeg);
	free(es.e);
	free(es.slots);
	return rc;
}

/* Writes the graph for R to OUT. */
static int dot_write(FILE *out, const struct report *r, enum dot_target target,
		     char *err, size_t errlen)
{
	const struct aggregate *a = r->a;
	struct graph g = {
		.r = r, .target = target, .html = target != TARGET_DOT,
		.local_total = a->flat_total,
		/* of |total|: with --base a negative total would make jeprof's
		 * limits negative and keep every node */
		.nodelimit = trunc(r->nodefraction * fabs(a->flat_total)),
		.edgelimit = trunc(r->edgefraction * fabs(a->flat_total)),
		.units = text_unit_name(r->units),
		.list = malloc((a->nrows + 1) * sizeof(*g.list)),
		.node_of = calloc(a->nrows + 1, sizeof(*g.node_of)),
	};
	int rc = 0;
	if (!g.list || !g.node_of)
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
	else
		rc = select_nodes(&g, err, errlen);
	if (rc)
		goto out;
	if ((g.nodelimit > 0 || g.edgelimit > 0) && r->note) {
		char nl[64], el[64], line[256];
		text_format_value(nl, sizeof(nl), g.nodelimit, r->units);
		text_format_value(el, sizeof(el), g.edgelimit, r->units);
		snprintf(line, sizeof(line), "Dropping nodes with <= %s %s; edges with <= %s abs(%s)",
			 nl, g.units, el, g.units);
		r->note(r->ctx, line);
	}
	write_legend(out, &g);
	write_nodes(out, &g);
	rc = write_edges(out, &g);
	if (rc) {
		rc = jh_err(err, errlen, rc, "out of memory");
		goto out;
	}
	fputs("}\n", out);
	if (ferror(out))
		rc = jh_err(err, errlen, JH_EIO, "cannot write the graph: %s", strerror(errno));
out:
	free(g.list);
	free(g.node_of);
	return rc;
}

int output_dot(FILE *out, const struct report *r, char *err, size_t errlen)
{
	return dot_write(out, r, TARGET_DOT, err, errlen);
}

/* ---- running graphviz ---------------------------------------------- */

/* Runs "dot -TFORMAT" with IN[0..len) as its standard input and copies its
 * standard output to OUT (output/child.c: a time limit and a size cap);
 * what graphviz says on its standard error when it succeeds goes to R's
 * warn callback, a line at a time. */
static int run_dot(const struct report *r, const char *in, size_t len, const char *format,
		   FILE *out, char *err, size_t errlen)
{
	char targ[32], name[64];
	snprintf(targ, sizeof(targ), "-T%s", format);
	snprintf(name, sizeof(name), "graphviz 'dot %s'", targ);
	const char *argv[] = { "dot", targ, NULL };
	struct child c = { .argv = argv, .in = in, .inlen = len, .out = out };
	int rc = child_run(&c, err, errlen);
	free(c.buf);
	if (rc)
		return rc;
	if (c.exec_errno == ENOENT)
		return jh_err(err, errlen, JH_EIO,
			      "--%s needs graphviz's 'dot' program: install graphviz (apt-get install graphviz)",
			      format);
	if (c.exec_errno)
		return jh_err(err, errlen, JH_EIO, "--%s: cannot run graphviz's 'dot': %s", format,
			      strerror(c.exec_errno));
	if ((rc = child_failure(&c, name, err, errlen)))
		return rc;
	if (c.input_closed)
		return jh_err(err, errlen, JH_EIO, "graphviz 'dot %s' stopped reading its input", targ);
	if (c.nmsg && r->warn) {
		/* dot succeeded but had something to say: pass it on (the
		 * warn callback escapes it) */
		for (char *line = c.msg, *nl; *line; line = nl) {
			nl = strchr(line, '\n');
			nl = nl ? nl + 1 : line + strlen(line);
			char said[sizeof(c.msg) + 16];
			snprintf(said, sizeof(said), "graphviz: %.*s",
				 (int)((size_t)(nl - line) - (nl[-1] == '\n')), line);
			r->warn(r->ctx, said);
		}
	}
	if (fflush(out) || ferror(out))
		return jh_err(err, errlen, JH_EIO, "cannot write the %s: %s", format, strerror(errno));
	return 0;
}

int output_graphviz(FILE *out, const struct report *r, const char *format,
		    char *err, size_t errlen)
{
	enum dot_target target;
	if (!strcmp(format, "svg"))
		target = TARGET_SVG;
	else if (!strcmp(format, "pdf"))
		target = TARGET_PDF;
	else if (!strcmp(format, "png") || !strcmp(format, "gif") || !strcmp(format, "ps"))
		target = TARGET_PNG;   /* jeprof sets a page size for PDF only */
	else
		return jh_err(err, errlen, JH_EUSAGE, "unknown graphviz format '%s'", format);
	int fd = fileno(out);
	if (target != TARGET_SVG && fd >= 0 && isatty(fd))
		return jh_err(err, errlen, JH_EUSAGE,
			      "--%s writes binary data: not writing it to a terminal; use -o FILE or redirect the output",
			      format);
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	int rc = dot_write(mem, r, target, err, errlen);
	if (fclose(mem) && !rc)
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
	if (!rc)
		rc = run_dot(r, buf, len, format, out, err, errlen);
	free(buf);
	return rc;
}

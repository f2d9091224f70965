/*
 * --flamegraph: a self-contained interactive SVG flame graph.
 *
 * The call tree of output/stacks.c drawn root at the bottom ("flame", not
 * icicle), 1200 pixels wide: a frame's width is its cumulative value,
 * children sit left-aligned on their parent in byte order of their names,
 * a parent's own value is the gap on the right.  Frames narrower than
 * 0.1% of the total are left out with everything above them.  Colors are
 * a hash of the name in flamegraph.pl's warm palette; with --base the
 * width is the "after" value and the color the change of the frame's whole
 * subtree (red grew, blue shrank, paler for smaller changes; flamegraph.pl
 * colors by a frame's own change, which leaves the path to a growth white).
 * <title> tooltips give name, value, unit and share.  A small inline script
 * zooms into a clicked frame, resets the zoom, searches names by regular
 * expression (button or Ctrl-F) and shows the matched share; without
 * scripts (an <img> in a README) the picture still renders.
 */
#include <math.h>
#include "lib/array.h"
#include "lib/errors.h"
#include "lib/hash.h"
#include "output/output.h"
#include "output/stacks.h"

#define IMG_W 1200
#define XPAD 10
#define FRAME_H 16
#define TOP 66                 /* title, subtitle and buttons */
#define BOTTOM 30              /* the details line */
#define FONT_W 7.08            /* average glyph width of 12px Verdana (0.59 em) */
#define MIN_SHARE 0.001        /* narrower frames are left out */
#define ROOT_NAME "all"

struct node {
	uint32_t name;             /* id in stacks.names; the root has none */
	uint32_t parent, depth;
	double value, before;      /* cumulative */
	double start;              /* offset of the left edge, in value units */
	int64_t shown;             /* index among drawn frames, or -1 */
	int64_t shown_end;         /* last drawn descendant's index */
};

struct tree {
	struct node *n;
	size_t len, cap;
	size_t maxdepth;
};

/* The stacks come sorted frame by frame, so the tree's nodes are created
 * in depth-first order with children sorted by name, and a node is
 * complete (its value known) once the stacks leave it.  Only the nodes
 * that can be drawn are kept: a complete node narrower than MIN_SHARE of
 * the total (or of no value) is dropped with everything above it, which
 * the stacks just added after it, so a million stacks make a tree of a
 * few thousand nodes.  Its width still moves the siblings after it: a
 * node's start is its parent's plus the widths of the siblings before
 * it, taken when the node is created. */
struct builder {
	struct tree *t;
	uint32_t *path;          /* the nodes of the current stack, root first */
	double *cursor;          /* per path level: where the next child starts */
	size_t plen, cap;
	double min;              /* the narrowest width drawn */
};

static int open_node(struct builder *b, uint32_t name)
{
	struct tree *t = b->t;
	size_t depth = b->plen;
	double start = depth ? b->cursor[depth - 1] : 0;
	struct node nd = { .name = name, .parent = depth ? b->path[depth - 1] : UINT32_MAX,
			   .depth = (uint32_t)depth, .start = start, .shown = -1 };
	size_t c2 = b->cap;
	if (t->len >= UINT32_MAX || JH_PUSH(t->n, t->len, t->cap, nd) ||
	    jh_grow(&b->path, &b->cap, depth + 1, sizeof(*b->path)) ||
	    jh_grow(&b->cursor, &c2, depth + 1, sizeof(*b->cursor)))
		return JH_ENOMEM;
	b->path[depth] = (uint32_t)t->len - 1;
	b->cursor[depth] = start;
	b->plen++;
	return 0;
}

/* The deepest node of the path is complete: its width moves its next
 * sibling, and it goes (with all it holds) unless it can be drawn. */
static void close_node(struct builder *b)
{
	uint32_t id = b->path[--b->plen];
	struct node *nd = &b->t->n[id];
	if (nd->value < 0)
		nd->value = 0;
	if (b->plen)
		b->cursor[b->plen - 1] += nd->value;
	if (b->plen && !(nd->value > 0 && nd->value >= b->min))
		b->t->len = id;
}

static int build_tree(struct tree *t, const struct stacks *st)
{
	/* the root's value adds the stacks' in the order st->total did */
	struct builder b = { .t = t, .min = MIN_SHARE * st->total };
	int rc = open_node(&b, 0);
	for (size_t i = 0; i < st->n && !rc; i++) {
		const struct stack *s = &st->s[i];
		const uint32_t *f = st->frames + s->frame0;
		if (i + 8 < st->n) {
			const uint32_t *later = st->frames + st->s[i + 8].frame0;
			__builtin_prefetch(later);
			__builtin_prefetch(later + 16);
		}
		size_t same = 0;
		while (same + 1 < b.plen && same < s->nframes && t->n[b.path[same + 1]].name == f[same])
			same++;
		while (b.plen > same + 1)
			close_node(&b);
		for (size_t k = same; k < s->nframes && !rc; k++)
			rc = open_node(&b, f[k]);
		for (size_t k = 0; k < b.plen && !rc; k++) {
			t->n[b.path[k]].value += s->value;
			t->n[b.path[k]].before += s->before;
		}
	}
	while (!rc && b.plen)
		close_node(&b);
	free(b.path);
	free(b.cursor);
	if (rc)
		return rc;

	/* what is drawn: every kept node under a drawn parent */
	int64_t shown = 0;
	for (size_t i = 0; i < t->len; i++) {
		struct node *nd = &t->n[i];
		if (!i || t->n[nd->parent].shown >= 0)
			nd->shown = shown++;
		nd->shown_end = nd->shown;
		if (nd->shown >= 0 && nd->depth > t->maxdepth)
			t->maxdepth = nd->depth;
	}
	for (size_t i = t->len; i-- > 1;) {
		struct node *nd = &t->n[i], *p = &t->n[nd->parent];
		if (nd->shown >= 0 && nd->shown_end > p->shown_end)
			p->shown_end = nd->shown_end;
	}
	return 0;
}

/* Writes S with the five XML special characters escaped. */
static void xml_puts(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default: fputc(*s, out);
		}
	}
}

static const char *value_name(enum pf_value v)
{
	switch (v) {
	case PF_INUSE_OBJECTS: return "inuse_objects";
	case PF_INUSE_SPACE: return "inuse_space";
	case PF_ALLOC_OBJECTS: return "alloc_objects";
	case PF_CHURN_OBJECTS: return "churn_objects";
	case PF_CHURN_SPACE: return "churn_space";
	default: return "alloc_space";
	}
}

/* "1024000 B = 1000.0 KiB", "12 objects": V rounded, with a binary-prefixed
 * size when it helps. */
static void fmt_amount(char *buf, size_t len, double v, enum units u, bool sign)
{
	v = text_shown(v, 0);
	const char *plus = sign && v > 0 ? "+" : "";
	if (u == UNITS_OBJECTS) {
		snprintf(buf, len, "%s%.0f objects", plus, v);
		return;
	}
	double a = fabs(v);
	if (a >= 1073741824.0)
		snprintf(buf, len, "%s%.0f B = %s%.2f GiB", plus, v, plus, v / 1073741824.0);
	else if (a >= 1048576.0)
		snprintf(buf, len, "%s%.0f B = %s%.2f MiB", plus, v, plus, v / 1048576.0);
	else if (a >= 1024.0)
		snprintf(buf, len, "%s%.0f B = %s%.1f KiB", plus, v, plus, v / 1024.0);
	else
		snprintf(buf, len, "%s%.0f B", plus, v);
}

/* The report's Total as --text prints it, "Total: 4.8 MB", with the
 * exact bytes after MB: "Total: 4.8 MB (5071872 B)". */
static void fmt_total(char *buf, size_t len, const struct report *r)
{
	char v[64];
	text_format_value(v, sizeof(v), r->a->total, r->units);
	if (r->units == UNITS_MB)
		snprintf(buf, len, "Total: %s %s (%.0f B)", v, text_unit_name(r->units),
			 r->a->total);
	else
		snprintf(buf, len, "Total: %s %s", v, text_unit_name(r->units));
}

/* A frame's tooltip: its name, a newline, its numbers. */
static void write_title(FILE *out, const struct report *r, const struct stacks *st,
			const struct tree *t, const struct node *nd)
{
	double total = t->n[0].value;
	char a[96], b[96], d[96], pct[32];
	xml_puts(out, nd == t->n ? ROOT_NAME : stacks_name(st, nd->name));
	fputc('\n', out);
	snprintf(pct, sizeof(pct), "%.2f%%", total > 0 ? text_shown(100.0 * nd->value / total, 2) : 0.0);
	fmt_amount(a, sizeof(a), nd->value, r->units, false);
	if (!r->diff) {
		if (nd == t->n) {
			fmt_total(b, sizeof(b), r);
			fprintf(out, "%s, %s", b, pct);
		} else
			fprintf(out, "%s, %s", a, pct);
		return;
	}
	fmt_amount(b, sizeof(b), nd->before, r->units, false);
	fmt_amount(d, sizeof(d), nd->value - nd->before, r->units, true);
	fprintf(out, "after %s, before %s, change %s", a, b, d);
	if (nd->before > 0)
		fprintf(out, " (%+.1f%%)", 100.0 * (nd->value - nd->before) / nd->before);
	else if (nd->value > 0)
		fputs(" (new)", out);
	fprintf(out, "; %s of the after total", pct);
}

/* flamegraph.pl's "hot" palette, picked by a hash of the name so that a
 * function has the same color in every graph. */
static void hot_color(char *buf, size_t len, const char *name)
{
	uint64_t h = jh_mix64(jh_hash_bytes(name, strlen(name), 0));
	double v1 = (double)(h & 0xffff) / 65536.0;
	double v2 = (double)((h >> 16) & 0xffff) / 65536.0;
	double v3 = (double)((h >> 32) & 0xffff) / 65536.0;
	snprintf(buf, len, "rgb(%d,%d,%d)", 205 + (int)(50 * v3), (int)(230 * v1),
		 (int)(55 * v2));
}

/* Red for growth, blue for shrinkage, white for none; the more of MAXD
 * the change is, the deeper the color. */
static void diff_color(char *buf, size_t len, double delta, double maxd)
{
	double f = maxd > 0 ? fabs(delta) / maxd : 0;
	if (f > 1)
		f = 1;
	int c = (int)(210 * (1 - f));
	if (delta > 0)
		snprintf(buf, len, "rgb(255,%d,%d)", c, c);
	else if (delta < 0)
		snprintf(buf, len, "rgb(%d,%d,255)", c, c);
	else
		snprintf(buf, len, "rgb(250,250,250)");
}

/* The label that fits in W pixels: all of NAME, a prefix ending in "..",
 * or nothing below three characters.  The script uses the same rule. */
static void write_label(FILE *out, const char *name, double w)
{
	double fit = floor((w - 6) / FONT_W);
	size_t chars = fit > 0 ? (size_t)fit : 0, len = strlen(name);
	if (chars < 3)
		return;
	if (len <= chars) {
		xml_puts(out, name);
		return;
	}
	/* cut on a UTF-8 character boundary */
	size_t cut = chars - 2;
	while (cut > 0 && ((unsigned char)name[cut] & 0xc0) == 0x80)
		cut--;
	char buf[4096];
	if (cut >= sizeof(buf))
		cut = sizeof(buf) - 1;
	memcpy(buf, name, cut);
	buf[cut] = '\0';
	xml_puts(out, buf);
	fputs("..", out);
}

static void write_frames(FILE *out, const struct report *r, const struct stacks *st,
			 const struct tree *t, int height)
{
	double total = t->n[0].value, scale = total > 0 ? (IMG_W - 2 * XPAD) / total : 0;
	double maxd = 0;
	for (size_t i = 1; i < t->len; i++)
		if (t->n[i].shown >= 0 && fabs(t->n[i].value - t->n[i].before) > maxd)
			maxd = fabs(t->n[i].value - t->n[i].before);
	fputs("<g id=\"frames\">\n", out);
	for (size_t i = 0; i < t->len; i++) {
		const struct node *nd = &t->n[i];
		if (nd->shown < 0)
			continue;
		const char *name = i ? stacks_name(st, nd->name) : ROOT_NAME;
		double x = XPAD + nd->start * scale, w = i ? nd->value * scale : IMG_W - 2 * XPAD;
		int y = height - BOTTOM - (int)(nd->depth + 1) * FRAME_H;
		char color[32];
		if (r->diff)
			diff_color(color, sizeof(color), nd->value - nd->before, maxd);
		else
			hot_color(color, sizeof(color), name);
		fprintf(out, "<g fg:s=\"%.15g\" fg:v=\"%.15g\" fg:e=\"%lld\"><title>", nd->start,
			nd->value, (long long)nd->shown_end);
		write_title(out, r, st, t, nd);
		fprintf(out, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" rx=\"2\" ry=\"2\"/><text x=\"%.2f\" y=\"%.1f\">",
			x, y, w, FRAME_H - 1, color, x + 3, y + 11.5);
		write_label(out, name, w);
		fputs("</text></g>\n", out);
	}
	fputs("</g>\n", out);
}

static const char script[] =
	"\"use strict\";\n"
	"(function () {\n"
	"var X = 10, W = 1180, GW = 7.08;\n"
	"var box = document.getElementById(\"frames\"), fr = [], S = [], V = [], E = [], N = [], T = [], F = [];\n"
	"var details = document.getElementById(\"details\"), matched = document.getElementById(\"matched\");\n"
	"var unzoom = document.getElementById(\"unzoom\"), sbtn = document.getElementById(\"search\");\n"
	"var searching = false;\n"
	"var gs = box.getElementsByTagName(\"g\");\n"
	"for (var i = 0; i < gs.length; i++) {\n"
	"  var g = gs[i], t = g.getElementsByTagName(\"title\")[0].textContent;\n"
	"  g.fgIndex = i; fr.push(g);\n"
	"  S.push(parseFloat(g.getAttribute(\"fg:s\"))); V.push(parseFloat(g.getAttribute(\"fg:v\")));\n"
	"  E.push(parseInt(g.getAttribute(\"fg:e\"), 10));\n"
	"  N.push(t.split(\"\\n\")[0]); T.push(t.replace(\"\\n\", \" | \"));\n"
	"  F.push(g.getElementsByTagName(\"rect\")[0].getAttribute(\"fill\"));\n"
	"}\n"
	"function fit(name, w) {\n"
	"  var n = Math.floor((w - 6) / GW);\n"
	"  if (n < 3) return \"\";\n"
	"  return name.length <= n ? name : name.substring(0, n - 2) + \"..\";\n"
	"}\n"
	"function place(i, x, w) {\n"
	"  var g = fr[i], r = g.getElementsByTagName(\"rect\")[0], t = g.getElementsByTagName(\"text\")[0];\n"
	"  r.setAttribute(\"x\", x.toFixed(2)); r.setAttribute(\"width\", w.toFixed(2));\n"
	"  t.setAttribute(\"x\", (x + 3).toFixed(2)); t.textContent = fit(N[i], w);\n"
	"}\n"
	"function zoom(k) {\n"
	"  var s = S[k], v = V[k] > 0 ? V[k] : 1;\n"
	"  for (var i = 0; i < fr.length; i++) {\n"
	"    var g = fr[i];\n"
	"    if (i >= k && i <= E[k]) {\n"
	"      g.style.display = \"\"; g.setAttribute(\"class\", \"\");\n"
	"      place(i, i ? X + (S[i] - s) / v * W : X, i ? V[i] / v * W : W);\n"
	"    } else if (i < k && E[i] >= k) {\n"
	"      g.style.display = \"\"; g.setAttribute(\"class\", \"parent\"); place(i, X, W);\n"
	"    } else {\n"
	"      g.style.display = \"none\";\n"
	"    }\n"
	"  }\n"
	"  unzoom.style.display = k ? \"\" : \"none\";\n"
	"}\n"
	"function search() {\n"
	"  var i;\n"
	"  if (searching) {\n"
	"    for (i = 0; i < fr.length; i++) fr[i].getElementsByTagName(\"rect\")[0].setAttribute(\"fill\", F[i]);\n"
	"    searching = false; sbtn.textContent = \"Search\"; matched.textContent = \" \";\n"
	"    return;\n"
	"  }\n"
	"  var term = window.prompt(\"Highlight the frames whose name matches (regular expression):\", \"\");\n"
	"  if (!term) return;\n"
	"  var re;\n"
	"  try { re = new RegExp(term); } catch (err) { window.alert(\"Invalid regular expression: \" + err.message); return; }\n"
	"  var sum = 0, covered = -1;\n"
	"  for (i = 0; i < fr.length; i++) {\n"
	"    if (!re.test(N[i])) continue;\n"
	"    fr[i].getElementsByTagName(\"rect\")[0].setAttribute(\"fill\", \"rgb(230,0,230)\");\n"
	"    if (i > covered) { sum += V[i]; covered = E[i]; }\n"
	"  }\n"
	"  searching = true; sbtn.textContent = \"Reset Search\";\n"
	"  matched.textContent = \"Matched: \" + (V[0] > 0 ? 100 * sum / V[0] : 0).toFixed(1) + \"%\";\n"
	"}\n"
	"function frameOf(n) {\n"
	"  for (; n && n !== box; n = n.parentNode) if (n.fgIndex !== undefined) return n.fgIndex;\n"
	"  return -1;\n"
	"}\n"
	"box.addEventListener(\"click\", function (e) { var i = frameOf(e.target); if (i >= 0) zoom(i); });\n"
	"box.addEventListener(\"mouseover\", function (e) { var i = frameOf(e.target); if (i >= 0) details.textContent = T[i]; });\n"
	"box.addEventListener(\"mouseout\", function () { details.textContent = \" \"; });\n"
	"unzoom.addEventListener(\"click\", function () { zoom(0); });\n"
	"sbtn.addEventListener(\"click\", search);\n"
	"document.addEventListener(\"keydown\", function (e) {\n"
	"  if ((e.ctrlKey || e.metaKey) && (e.key === \"f\" || e.key === \"F\")) { e.preventDefault(); search(); }\n"
	"});\n"
	"})();\n";

static void write_header(FILE *out, const struct report *r, const struct stacks *st,
			 int height)
{
	char total[96], a[96], b[96], d[96];
	const char *prog = r->program && *r->program ? r->program : "jheap";
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" xmlns=\"http://www.w3.org/2000/svg\" xmlns:fg=\"urn:x-jheap:flamegraph\">\n",
		IMG_W, height, IMG_W, height);
	fputs("<!-- jheap flame graph: click a frame to zoom, Search (or Ctrl-F) to highlight frames by regular expression -->\n"
	      "<defs><linearGradient id=\"background\" x1=\"0\" y1=\"0\" x2=\"0\" y2=\"1\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
	      "</linearGradient></defs>\n"
	      "<style type=\"text/css\"><![CDATA[\n"
	      "text { font-family: Verdana, \"DejaVu Sans\", sans-serif; font-size: 12px; fill: #000; }\n"
	      "#title { font-size: 17px; text-anchor: middle; }\n"
	      "#subtitle { text-anchor: middle; fill: #444; }\n"
	      ".btn { cursor: pointer; fill: #333; }\n"
	      ".btn:hover { fill: #c00; }\n"
	      "#frames g { cursor: pointer; }\n"
	      "#frames g:hover rect { stroke: #000; stroke-width: 0.5; }\n"
	      "#frames text { pointer-events: none; }\n"
	      "#frames .parent { opacity: 0.5; }\n"
	      "]]></style>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"url(#background)\"/>\n",
		IMG_W, height);
	fputs("<text id=\"title\" x=\"600\" y=\"24\">", out);
	xml_puts(out, prog);
	fprintf(out, ": %s%s%s%s</text>\n", value_name(r->value), r->diff ? " change" : "",
		r->thread ? ", thread " : "", r->thread ? r->thread : "");
	fputs("<text id=\"subtitle\" x=\"600\" y=\"44\">", out);
	if (r->diff) {
		fmt_amount(a, sizeof(a), st->total, r->units, false);
		fmt_amount(b, sizeof(b), st->total_before, r->units, false);
		fmt_amount(d, sizeof(d), st->total - st->total_before, r->units, true);
		fprintf(out, "before (--base) %s, after %s, change %s; width: after, red: grew, blue: shrank",
			b, a, d);
	} else {
		fmt_total(total, sizeof(total), r);
		xml_puts(out, total);
	}
	fputs("</text>\n"
	      "<text id=\"unzoom\" class=\"btn\" x=\"10\" y=\"24\" style=\"display:none\">Reset Zoom</text>\n"
	      "<text id=\"search\" class=\"btn\" x=\"1190\" y=\"24\" text-anchor=\"end\">Search</text>\n", out);
	fprintf(out, "<text id=\"details\" x=\"10\" y=\"%d\"> </text>\n"
		"<text id=\"matched\" x=\"1190\" y=\"%d\" text-anchor=\"end\"> </text>\n",
		height - 10, height - 10);
}

int output_flamegraph(FILE *out, const struct report *r, char *err, size_t errlen)
{
	struct stacks st;
	struct tree t = { 0 };
	int rc = stacks_build(&st, r, STACKS_TREE);
	if (!rc)
		rc = build_tree(&t, &st);
	if (rc) {
		stacks_release(&st);
		free(t.n);
		return jh_err(err, errlen, rc, "out of memory");
	}
	int height = TOP + (int)(t.maxdepth + 1) * FRAME_H + BOTTOM;
	write_header(out, r, &st, height);
	write_frames(out, r, &st, &t, height);
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n", script);
	stacks_release(&st);
	free(t.n);
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}

/* One switch for every format (see report.h). */
#include <math.h>
#include "lib/errors.h"
#include "output/json.h"
#include "output/output.h"
#include "output/report.h"

/* jeprof's --text table; with --nodefraction, its limit and its note as
 * for call graphs. */
static int write_text(FILE *out, const struct report *r, char *err, size_t errlen)
{
	if (r->series)
		return output_growth(out, r->series, r, err, errlen);
	struct text_options to = { .units = r->units, .nodecount = r->nodecount,
				   .thread = r->thread, .nodelimit = -1 };
	if (r->nodefraction_set) {
		char v[64], line[128];
		to.nodelimit = trunc(r->nodefraction * fabs(r->a->flat_total));
		text_format_value(v, sizeof(v), to.nodelimit, r->units);
		snprintf(line, sizeof(line), "Dropping nodes with <= %s %s", v, text_unit_name(r->units));
		if (r->note)
			r->note(r->ctx, line);
	}
	text_write(out, r->a, &to);
	return 0;
}

int report_write(FILE *out, enum report_format fmt, const struct report *r, char *err,
		 size_t errlen)
{
	switch (fmt) {
	case REPORT_TEXT: return write_text(out, r, err, errlen);
	case REPORT_COLLAPSED: return output_collapsed(out, r, err, errlen);
	case REPORT_FLAMEGRAPH: return output_flamegraph(out, r, err, errlen);
	case REPORT_DOT: return output_dot(out, r, err, errlen);
	case REPORT_SVG: return output_graphviz(out, r, "svg", err, errlen);
	case REPORT_PDF: return output_graphviz(out, r, "pdf", err, errlen);
	case REPORT_PNG: return output_graphviz(out, r, "png", err, errlen);
	case REPORT_GIF: return output_graphviz(out, r, "gif", err, errlen);
	case REPORT_PS: return output_graphviz(out, r, "ps", err, errlen);
	case REPORT_PROTO: return output_proto(out, r, err, errlen);
	case REPORT_SPEEDSCOPE: return output_speedscope(out, r, err, errlen);
	case REPORT_CALLGRIND: return output_callgrind(out, r, err, errlen);
	case REPORT_RAW: return output_raw(out, r, err, errlen);
	case REPORT_TRACES: return output_traces(out, r, err, errlen);
	case REPORT_TREE: return output_tree(out, r, err, errlen);
	case REPORT_LIST: return output_list(out, r, err, errlen);
	case REPORT_DISASM: return output_disasm(out, r, err, errlen);
	case REPORT_WEBLIST: return output_weblist(out, r, err, errlen);
	case REPORT_JSON_TOP: return output_json_top(out, r, err, errlen);
	case REPORT_JSON_FLAME: return output_json_flame(out, r, err, errlen);
	}
	return jh_err(err, errlen, JH_EUSAGE, "no such report format (%d)", (int)fmt);
}

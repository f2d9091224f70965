/*
 * The Top view's data: the --text table as JSON.
 *
 *   {"value":"inuse_space","unit":"MB","total":2750400,"total_text":"2.6",
 *    "flat_total":...,"diff":false,"rows":[[KEY,FLAT,CUM,
 *    "FLAT","FLAT%","SUM%","CUM","CUM%"],...],"more":0}
 *
 * The formatted columns are --text's own (text_format_value and
 * text_format_percent on the same aggregate, in the same order), so the
 * page shows what the command line prints; FLAT and CUM are the values in
 * bytes or objects, for sorting and tooltips.
 */
#include "lib/errors.h"
#include "output/json.h"
#include "output/text.h"

int output_json_top(FILE *out, const struct report *r, char *err, size_t errlen)
{
	const struct aggregate *a = r->a;
	char total[64];
	text_format_value(total, sizeof(total), a->total, r->units);
	fputs("{\"value\":", out);
	json_str(out, output_value_name(r->value));
	fputs(",\"unit\":", out);
	json_str(out, text_unit_name(r->units));
	fputs(",\"total\":", out);
	json_num(out, a->total);
	fputs(",\"total_text\":", out);
	json_str(out, total);
	fputs(",\"flat_total\":", out);
	json_num(out, a->flat_total);
	fprintf(out, ",\"diff\":%s,\"rows\":[", r->diff ? "true" : "false");
	size_t limit = JSON_TOP_MAX_ROWS;
	if (r->nodecount > 0 && (size_t)r->nodecount < limit)
		limit = (size_t)r->nodecount;
	double running = 0;
	size_t shown = 0;
	for (size_t i = 0; i < a->norder && shown < limit; i++, shown++) {
		const struct agg_row *row = &a->rows[a->order[i]];
		char flat[64], cum[64], fp[32], sp[32], cp[32];
		running += row->flat;
		text_format_value(flat, sizeof(flat), row->flat, r->units);
		text_format_value(cum, sizeof(cum), row->cum, r->units);
		text_format_percent(fp, sizeof(fp), row->flat, a->flat_total);
		text_format_percent(sp, sizeof(sp), running, a->flat_total);
		text_format_percent(cp, sizeof(cp), row->cum, a->flat_total);
		fputs(i ? ",\n[" : "\n[", out);
		json_str(out, strtab_get(&a->keys, row->key));
		fputc(',', out);
		json_num(out, row->flat);
		fputc(',', out);
		json_num(out, row->cum);
		const char *cols[] = { flat, fp, sp, cum, cp };
		for (int k = 0; k < 5; k++) {
			fputc(',', out);
			json_str(out, cols[k]);
		}
		fputc(']', out);
	}
	fprintf(out, "],\"more\":%zu}\n", a->norder - shown);
	if (ferror(out))
		return jh_err(err, errlen, JH_EIO, "error writing the report");
	return 0;
}

/*
 * json: the reports the web UI (cli/webui.c) reads as data, and the JSON
 * string rule they share.
 *
 * Every name, file name and path from a profile is untrusted: a string is
 * written with '"', '\\' and the C0 controls escaped as JSON requires, and
 * '<', '>', '&', U+2028 and U+2029 as \u escapes too, so that the text
 * stays inert even if some reader pasted it into HTML or a script; bytes
 * that are not UTF-8 become U+FFFD.  The front end puts strings into the
 * page as text (textContent), never as markup.
 */
#ifndef JHEAP_JSON_H
#define JHEAP_JSON_H

#include <stdio.h>
#include "output/output.h"

/* Writes S as a JSON string literal, quotes included. */
void json_str(FILE *out, const char *s);
/* Writes V as a JSON number (integers exactly; NaN and infinities as 0). */
void json_num(FILE *out, double v);
/* The same into BUF (JSON_NUM_MAX bytes), NUL-terminated; its length. */
#define JSON_NUM_MAX 32
size_t json_num_buf(char *buf, double v);

/* The --text table as JSON, for the Top view: the total, the unit and one
 * entry per row (key, flat, cum, and --text's formatted columns, so that
 * the page shows --text's figures to the digit).  At most
 * JSON_TOP_MAX_ROWS rows (r->nodecount when smaller); "more" counts the
 * rows left out. */
#define JSON_TOP_MAX_ROWS 5000
int output_json_top(FILE *out, const struct report *r, char *err, size_t errlen);

/* The call tree as JSON, for the flame graph: every node (root first, in
 * depth-first order, children in byte order of their names) with its
 * value and, beside it, the companion value (objects for bytes, bytes for
 * objects) and with --base the base's values.  Nodes whose value is under
 * 1/JSON_FLAME_MERGE of the total are merged, per parent, into one node
 * flagged "merged", so the sums stay the profile's and the page stays
 * small (as pprof drops them). */
#define JSON_FLAME_MERGE 10000
int output_json_flame(FILE *out, const struct report *r, char *err, size_t errlen);

#endif

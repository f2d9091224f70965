/* JSON strings and numbers for the web UI's data (see json.h). */
#include <math.h>
#include <string.h>
#include "lib/chars.h"
#include "output/json.h"

void json_str(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);
	fputc('"', out);
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			fputc('\\', out);
			fputc(c, out);
			i++;
		} else if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&') {
			fprintf(out, "\\u%04x", c);
			i++;
		} else if (c < 0x80) {
			fputc(c, out);
			i++;
		} else {
			size_t len = jh_utf8_len(s + i, n - i);
			if (!len) {
				fputs("\\ufffd", out);
				i++;
			} else if (len == 3 && c == 0xe2 && s[i + 1] == 0x80 &&
				   (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
				fprintf(out, "\\u%04x", s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
				i += 3;
			} else {
				fwrite(s + i, 1, len, out);
				i += len;
			}
		}
	}
	fputc('"', out);
}

void json_num(FILE *out, double v)
{
	if (!isfinite(v))
		v = 0;
	if (v == trunc(v) && fabs(v) < 9e15)
		fprintf(out, "%.0f", v);
	else
		fprintf(out, "%.17g", v);
}

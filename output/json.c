/* JSON strings and numbers for the web UI's data (see json.h). */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "lib/chars.h"
#include "output/json.h"

/* Bytes of a string gathered before a write: a write per byte costs more
 * than the escaping. */
#define STR_CHUNK 512

void json_str(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t n = strlen(str);
	char buf[STR_CHUNK + 16];
	size_t o = 0;
	buf[o++] = '"';
	for (size_t i = 0; i < n;) {
		if (o > STR_CHUNK) {
			fwrite(buf, 1, o, out);
			o = 0;
		}
		unsigned char c = s[i];
		if (c == '"' || c == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)c;
			i++;
		} else if (c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&') {
			o += (size_t)snprintf(buf + o, 8, "\\u%04x", c);
			i++;
		} else if (c < 0x80) {
			buf[o++] = (char)c;
			i++;
		} else {
			size_t len = jh_utf8_len(s + i, n - i);
			if (!len) {
				memcpy(buf + o, "\\ufffd", 6);
				o += 6;
				i++;
			} else if (len == 3 && c == 0xe2 && s[i + 1] == 0x80 &&
				   (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
				o += (size_t)snprintf(buf + o, 8, "\\u%04x", s[i + 2] == 0xa8 ? 0x2028 : 0x2029);
				i += 3;
			} else {
				memcpy(buf + o, s + i, len);   /* a UTF-8 sequence: 4 bytes at most */
				o += len;
				i += len;
			}
		}
	}
	buf[o++] = '"';
	fwrite(buf, 1, o, out);
}

size_t json_num_buf(char *buf, double v)
{
	if (!isfinite(v) || v == 0)
		v = 0;   /* and never -0 */
	if (v == trunc(v) && fabs(v) < 9e15) {
		/* an integer, as "%.0f" writes it, without printf's float path */
		uint64_t u = (uint64_t)fabs(v);
		char digits[24];
		size_t n = 0, len = 0;
		do {
			digits[n++] = (char)('0' + u % 10);
			u /= 10;
		} while (u);
		if (v < 0)
			buf[len++] = '-';
		while (n)
			buf[len++] = digits[--n];
		buf[len] = '\0';
		return len;
	}
	return (size_t)snprintf(buf, JSON_NUM_MAX, "%.17g", v);
}

void json_num(FILE *out, double v)
{
	char buf[JSON_NUM_MAX];
	fwrite(buf, 1, json_num_buf(buf, v), out);
}

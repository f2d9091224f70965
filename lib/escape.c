#include <string.h>

#include "lib/escape.h"
#include "lib/chars.h"

/* The length of the sequence at S (N bytes left) to keep as it is, or 0
 * when its first byte is to be escaped. */
static size_t keep_len(const unsigned char *s, size_t n)
{
	if (s[0] >= 0x20 && s[0] < 0x7f)
		return 1;
	if (s[0] < 0x80)
		return 0;
	size_t k = jh_utf8_len(s, n);
	/* U+0080..U+009F: C2 80..C2 9F */
	if (k == 2 && s[0] == 0xc2 && s[1] < 0xa0)
		return 0;
	return k;
}

/* The escape of the byte C, at most 4 characters and a NUL. */
static void escape_byte(unsigned char c, char out[5])
{
	static const char hex[] = "0123456789abcdef";
	switch (c) {
	case '\n': memcpy(out, "\\n", 3); return;
	case '\r': memcpy(out, "\\r", 3); return;
	case '\t': memcpy(out, "\\t", 3); return;
	case 0x1b: memcpy(out, "\\e", 3); return;
	}
	out[0] = '\\';
	out[1] = 'x';
	out[2] = hex[c >> 4];
	out[3] = hex[c & 15];
	out[4] = '\0';
}

bool escape_needed(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		if (u[i] >= 0x20 && u[i] < 0x7f) {
			i++;
			continue;
		}
		size_t k = keep_len(u + i, n - i);
		if (!k)
			return true;
		i += k;
	}
	return false;
}

char *escape_into(char *dst, size_t cap, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0;
	if (!cap)
		return dst;
	for (size_t i = 0; i < n;) {
		size_t k = keep_len(u + i, n - i);
		char esc[5];
		const char *add = (const char *)u + i;
		size_t addn = k;
		if (!k) {
			escape_byte(u[i], esc);
			add = esc;
			addn = strlen(esc);
			k = 1;
		}
		if (o + addn >= cap)
			break;
		memcpy(dst + o, add, addn);
		o += addn;
		i += k;
	}
	dst[o] = '\0';
	return dst;
}

void escape_fputs(const char *s, bool keep_tabs, FILE *out)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		/* the longest run kept as it is, in one write */
		size_t j = i;
		while (j < n) {
			size_t k = keep_tabs && u[j] == '\t' ? 1 : keep_len(u + j, n - j);
			if (!k)
				break;
			j += k;
		}
		if (j > i)
			fwrite(u + i, 1, j - i, out);
		if (j >= n)
			break;
		char esc[5];
		escape_byte(u[j], esc);
		fputs(esc, out);
		i = j + 1;
	}
}

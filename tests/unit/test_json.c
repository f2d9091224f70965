/* The web UI's JSON strings (output/json.c): every name from a profile is
 * written as data that no HTML or script context reads as markup, and
 * bytes that are not UTF-8 never pass through. */
#include "output/json.h"
#include "unit.h"

static char *str(const char *s)
{
	static char buf[4096];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	json_str(f, s);
	fclose(f);
	return buf;
}

TEST(json_markup_is_escaped)
{
	CHECK_STR(str("<script>a</script>"), "\"\\u003cscript\\u003ea\\u003c/script\\u003e\"");
	CHECK_STR(str("\"><img onerror=x>"), "\"\\\"\\u003e\\u003cimg onerror=x\\u003e\"");
	CHECK_STR(str("]]>&amp;"), "\"]]\\u003e\\u0026amp;\"");
	CHECK_STR(str("a\\b"), "\"a\\\\b\"");
}

TEST(json_controls_and_separators)
{
	CHECK_STR(str("a\nb\tc\x7f"), "\"a\\u000ab\\u0009c\\u007f\"");
	/* U+2028 and U+2029 end a line in older JavaScript */
	CHECK_STR(str("a\xe2\x80\xa8" "b\xe2\x80\xa9"), "\"a\\u2028b\\u2029\"");
	/* other UTF-8 passes, invalid bytes become U+FFFD one by one */
	CHECK_STR(str("\xc3\xa9\xe2\x82\xac"), "\"\xc3\xa9\xe2\x82\xac\"");
	CHECK_STR(str("a\xff\xc3(b"), "\"a\\ufffd\\ufffd(b\"");
	CHECK_STR(str("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");
}

TEST(json_numbers)
{
	char buf[64];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	json_num(f, 2750400);
	fputc(' ', f);
	json_num(f, -0.5);
	fputc(' ', f);
	json_num(f, 1.0 / 0.0);
	fclose(f);
	CHECK_STR(buf, "2750400 -0.5 0");
}

/* A name longer than the chunks json_str() gathers, escapes across
 * their edges, is the same as one written a byte at a time. */
TEST(json_long_strings)
{
	static char in[3000], want[20000];
	size_t o = 0;
	want[o++] = '"';
	for (int i = 0; i < 2999; i++) {
		in[i] = i % 7 == 0 ? '<' : i % 11 == 0 ? '"' : (char)('a' + i % 26);
		o += (size_t)(in[i] == '<' ? sprintf(want + o, "\\u003c") : in[i] == '"' ? sprintf(want + o, "\\\"")
					  : sprintf(want + o, "%c", in[i]));
	}
	want[o++] = '"';
	want[o] = '\0';
	static char buf[20000];
	FILE *f = fmemopen(buf, sizeof(buf), "w");
	json_str(f, in);
	fclose(f);
	CHECK_STR(buf, want);
}

/* Integers exactly as "%.0f" writes them, without printf's float path. */
TEST(json_integers)
{
	const double v[] = { 1, -1, 9, 10, -10, 123456789, 8999999999999999.0, -8999999999999999.0,
			     4294967296.0, -0.0, 1e15 };
	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++) {
		char got[JSON_NUM_MAX], want[64];
		json_num_buf(got, v[i]);
		snprintf(want, sizeof(want), "%.0f", v[i] == 0 ? 0 : v[i]);
		CHECK_STR(got, want);
	}
	char got[JSON_NUM_MAX];
	json_num_buf(got, 9e15);   /* past the exact range: %.17g */
	CHECK_STR(got, "9000000000000000");
	json_num_buf(got, 0.1);
	CHECK_STR(got, "0.10000000000000001");
}

int main(void)
{
	RUN(json_markup_is_escaped);
	RUN(json_controls_and_separators);
	RUN(json_numbers);
	RUN(json_long_strings);
	RUN(json_integers);
	return UNIT_END();
}

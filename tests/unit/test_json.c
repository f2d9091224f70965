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

int main(void)
{
	RUN(json_markup_is_escaped);
	RUN(json_controls_and_separators);
	RUN(json_numbers);
	return UNIT_END();
}

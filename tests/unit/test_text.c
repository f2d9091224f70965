/* text_fixed1() against snprintf("%.1f"): every value it formats must come
 * out byte for byte as printf writes it, ties and signs included, but for
 * one difference: a negative value that rounds to zero is "0.0" (printf
 * writes "-0.0"). */
#include <math.h>
#include <stdint.h>
#include "output/text.h"
#include "unit.h"

static int agree(double x)
{
	char a[64], b[64];
	snprintf(a, sizeof(a), "%.1f", x);
	if (!strcmp(a, "-0.0"))
		strcpy(a, "0.0");
	if (text_fixed1(b, sizeof(b), x) < 0)
		return 1; /* the caller falls back to snprintf */
	if (strcmp(a, b)) {
		printf("  %.17g: printf '%s', text_fixed1 '%s'\n", x, a, b);
		return 0;
	}
	return 1;
}

/* xorshift: the same values on every run */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

TEST(fixed1_cases)
{
	static const double cases[] = {
		0.0, -0.0, 0.04, -0.04, 0.05, -0.05, 0.06, 0.15, 0.25, 0.35, 0.45, 0.75,
		1.25, 2.5, 9.95, 9.96, 99.95, 999.95, 0.95, 1e-300, -1e-300, 12345.65,
		1048575.95, 4503599627370495.5, 9.99999999999999e16, 123456789.25,
	};
	int bad = 0;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
		bad += !agree(cases[i]);
	CHECK_INT(bad, 0);
	char b[64];
	CHECK(text_fixed1(b, sizeof(b), 0.25) == 3 && !strcmp(b, "0.2"));
	CHECK(text_fixed1(b, sizeof(b), -0.04) == 3 && !strcmp(b, "0.0"));
	CHECK(text_fixed1(b, sizeof(b), -0.0) == 3 && !strcmp(b, "0.0"));
	CHECK(text_fixed1(b, sizeof(b), -0.06) == 4 && !strcmp(b, "-0.1"));
	CHECK(text_fixed1(b, sizeof(b), NAN) < 0);
	CHECK(text_fixed1(b, sizeof(b), INFINITY) < 0);
	CHECK(text_fixed1(b, sizeof(b), 1e17) < 0);
	CHECK(text_fixed1(b, 8, 1.0) < 0);
}

TEST(fixed1_random)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	int bad = 0;
	size_t checked = 0;
	for (int i = 0; i < 200000 && bad < 10; i++) {
		uint64_t r = rnd(&s);
		/* any bit pattern, then ties (k/20) and values near them */
		double x;
		memcpy(&x, &r, sizeof(x));
		bad += !agree(x);
		double t = (double)(int64_t)(r >> 20) / 20.0;
		bad += !agree(t);
		bad += !agree(nextafter(t, 0));
		bad += !agree(nextafter(t, 1e300));
		bad += !agree(-t);
		bad += !agree((double)(r >> 11) / 1048576.0);
		checked += 6;
	}
	printf("  %zu values\n", checked);
	CHECK_INT(bad, 0);
}

TEST(percent_and_mb)
{
	char b[64];
	text_format_percent(b, sizeof(b), 1, 8);
	CHECK_STR(b, "12.5%");
	text_format_percent(b, sizeof(b), 1, 0);
	CHECK_STR(b, "n/a");
	text_format_percent(b, sizeof(b), 0, 0);
	CHECK_STR(b, "n/a");
	text_format_value(b, sizeof(b), 1572864, UNITS_MB);
	CHECK_STR(b, "1.5");
	text_format_value(b, sizeof(b), -104857, UNITS_MB);
	CHECK_STR(b, "-0.1");
	/* a small negative difference is a zero, not "-0.0" */
	text_format_value(b, sizeof(b), -1000, UNITS_MB);
	CHECK_STR(b, "0.0");
	text_format_percent(b, sizeof(b), -1, 100000);
	CHECK_STR(b, "0.0%");
	text_format_percent(b, sizeof(b), -0.0, 5);
	CHECK_STR(b, "0.0%");
	CHECK(text_shown(-0.004, 2) == 0 && !signbit(text_shown(-0.004, 2)));
	CHECK(text_shown(-0.4, 0) == 0 && !signbit(text_shown(-0.4, 0)));
	CHECK(text_shown(-0.6, 0) == -0.6);
	CHECK(text_shown(-0.0, 1) == 0 && !signbit(text_shown(-0.0, 1)));
}

int main(void)
{
	RUN(fixed1_cases);
	RUN(fixed1_random);
	RUN(percent_and_mb);
	return UNIT_END();
}

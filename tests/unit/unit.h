/* A tiny unit-test harness: each test_*.c includes this, defines tests with
 * TEST(name) and lists them in main via RUN(name).  The closing line is
 * "N passed, N failed". */
#ifndef JHEAP_UNIT_H
#define JHEAP_UNIT_H
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

static int unit_failed, unit_passed, unit_cur_failed;

#define TEST(name) static void name(void)
#define CHECK(cond) do { if (!(cond)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
	unit_cur_failed = 1; } } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
	if (!a_ || !b_ || strcmp(a_, b_)) { \
	fprintf(stderr, "%s:%d: expected \"%s\", got \"%s\"\n", __FILE__, __LINE__, \
		b_ ? b_ : "(null)", a_ ? a_ : "(null)"); unit_cur_failed = 1; } } while (0)
#define CHECK_INT(a, b) do { long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) { fprintf(stderr, "%s:%d: %s: expected %lld, got %lld\n", \
		__FILE__, __LINE__, #a, b_, a_); unit_cur_failed = 1; } } while (0)
#define RUN(name) do { unit_cur_failed = 0; name(); \
	if (unit_cur_failed) { unit_failed++; fprintf(stderr, "FAIL %s\n", #name); } \
	else unit_passed++; } while (0)
#define UNIT_END() (printf("%s: %d passed, %d failed\n", __FILE__, unit_passed, unit_failed), \
	unit_failed ? 1 : 0)
#endif

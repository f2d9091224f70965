#include <float.h>
#include <stdbool.h>
#include <math.h>
#include <string.h>
#include "lib/escape.h"
#include "output/text.h"

enum units text_units(enum pf_value v, bool show_bytes)
{
	if (pf_value_is_objects(v))
		return UNITS_OBJECTS;
	return show_bytes ? UNITS_BYTES : UNITS_MB;
}

const char *text_unit_name(enum units u)
{
	return u == UNITS_MB ? "MB" : u == UNITS_BYTES ? "B" : "objects";
}

int text_fixed1(char *buf, size_t len, double x)
{
#if LDBL_MANT_DIG >= 64
	if (!isfinite(x) || fabs(x) >= 1e17 || len < 24)
		return -1;
	/* 10|x| needs at most 53 + 3 bits: exact in long double, and so are
	 * its integer and fractional parts */
	long double r = (long double)fabs(x) * 10.0L, n = floorl(r), frac = r - n;
	unsigned long long u = (unsigned long long)n;
	if (frac > 0.5L || (frac == 0.5L && (u & 1)))
		u++;
	bool zero = !u;
	char tmp[32], *e = tmp + sizeof(tmp), *q = e;
	*--q = (char)('0' + u % 10);
	*--q = '.';
	u /= 10;
	do
		*--q = (char)('0' + u % 10);
	while (u /= 10);
	/* printf writes the sign of a negative value that rounds to 0
	 * ("-0.0"); jheap shows a zero as a zero */
	if (signbit(x) && !zero)
		*--q = '-';
	size_t k = (size_t)(e - q);
	memcpy(buf, q, k);
	buf[k] = '\0';
	return (int)k;
#else
	(void)buf;
	(void)len;
	(void)x;
	return -1;
#endif
}

double text_shown(double v, int decimals)
{
	double unit = 0.5;
	for (int i = 0; i < decimals; i++)
		unit /= 10;
	return fabs(v) <= unit ? 0.0 : v;
}

void text_format_value(char *buf, size_t len, double v, enum units u)
{
	if (u == UNITS_MB) {
		if (text_fixed1(buf, len, v / 1048576.0) < 0)
			snprintf(buf, len, "%.1f", text_shown(v / 1048576.0, 1));
		return;
	}
	/* Perl's %d truncates toward zero */
	double t = trunc(v);
	if (t >= 9.2e18 || t <= -9.2e18)
		snprintf(buf, len, "%.0f", t);
	else
		snprintf(buf, len, "%lld", (long long)t);
}

void text_format_value_alt(char *buf, size_t len, double v, enum units u)
{
	if (v == 0)
		snprintf(buf, len, ".");
	else
		text_format_value(buf, len, v, u);
}

void text_format_percent(char *buf, size_t len, double v, double total)
{
	/* a total of zero (a --base that cancels it): jeprof prints nan and
	 * +-inf; no output of jheap prints either */
	if (total == 0) {
		snprintf(buf, len, "%s", "n/a");
		return;
	}
	int k = text_fixed1(buf, len, v * 100.0 / total);
	if (k >= 0 && (size_t)k + 2 <= len) {
		buf[k] = '%';
		buf[k + 1] = '\0';
		return;
	}
	snprintf(buf, len, "%.1f%%", text_shown(v * 100.0 / total, 1));
}

void text_write(FILE *out, const struct aggregate *a, const struct text_options *o)
{
	char total[64];
	/* jeprof omits the line for a zero total; a diff that cancels
	 * deserves to say so. */
	text_format_value(total, sizeof(total), a->total, o->units);
	fputs("Total", out);
	if (o->thread) {
		/* the thread's name is the program's: shown escaped */
		fputs(" (", out);
		escape_fputs(o->thread, false, out);
		fputc(')', out);
	}
	fprintf(out, ": %s %s\n", total, text_unit_name(o->units));
	double running = 0;
	for (size_t i = 0; i < a->norder; i++) {
		if (o->nodecount > 0 && (long)i >= o->nodecount)
			break;
		const struct agg_row *r = &a->rows[a->order[i]];
		char flat[64], cum[64], fp[32], sp[32], cp[32];
		if (o->nodelimit >= 0 && fabs(r->cum) <= o->nodelimit)
			continue;
		running += r->flat;
		text_format_value(flat, sizeof(flat), r->flat, o->units);
		text_format_value(cum, sizeof(cum), r->cum, o->units);
		text_format_percent(fp, sizeof(fp), r->flat, a->flat_total);
		text_format_percent(sp, sizeof(sp), running, a->flat_total);
		text_format_percent(cp, sizeof(cp), r->cum, a->flat_total);
		fprintf(out, "%8s %6s %6s %8s %6s ", flat, fp, sp, cum, cp);
		/* a newline in a name would forge a row */
		escape_fputs(strtab_get(&a->keys, r->key), false, out);
		fputc('\n', out);
	}
}

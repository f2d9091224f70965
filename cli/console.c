/* Messages beside the report (see console.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli/console.h"
#include "lib/escape.h"

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (b->tv_nsec - a->tv_nsec) / 1e9;
}

bool console_debug_on(const char *what)
{
	const char *d = getenv("JHEAP_DEBUG");
	return d && strstr(d, what);
}

void console_init(struct console *c, bool quiet)
{
	*c = (struct console){ .quiet = quiet, .tty = isatty(STDERR_FILENO) };
	const char *after = getenv("JHEAP_PROGRESS_AFTER");
	c->after = after && *after ? atof(after) : 1.0;
	clock_gettime(CLOCK_MONOTONIC, &c->start);
	c->mark = c->start;
	c->from = c->start;
	c->debug_time = console_debug_on("time");
}

static double cpu_seconds(const struct rusage *ru)
{
	return (double)(ru->ru_utime.tv_sec + ru->ru_stime.tv_sec) +
	       (ru->ru_utime.tv_usec + ru->ru_stime.tv_usec) / 1e6;
}

/* The wall time since the previous stage ended, and the CPU time (all
 * threads) and minor page faults it took. */
void console_stage_done(struct console *c, const char *what)
{
	if (!c->debug_time)
		return;
	struct timespec now;
	struct rusage ru;
	clock_gettime(CLOCK_MONOTONIC, &now);
	getrusage(RUSAGE_SELF, &ru);
	double cpu = cpu_seconds(&ru);
	fprintf(stderr, "jheap: time: %-10s %8.3f s (%.3f s in all), cpu %.3f s, %ld page faults\n",
		what, seconds_between(&c->mark, &now), seconds_between(&c->start, &now),
		cpu - c->mark_cpu, ru.ru_minflt - c->mark_flt);
	c->mark = now;
	c->mark_cpu = cpu;
	c->mark_flt = ru.ru_minflt;
}

void console_mark(struct console *c)
{
	struct rusage ru;
	clock_gettime(CLOCK_MONOTONIC, &c->mark);
	c->from = c->mark;
	getrusage(RUSAGE_SELF, &ru);
	c->mark_cpu = cpu_seconds(&ru);
	c->mark_flt = ru.ru_minflt;
}

void console_clear(struct console *c)
{
	if (c->shown) {
		fputs("\r\033[K", stderr);
		c->shown = false;
	}
}

void console_progress(struct console *c, const char *fmt, ...)
{
	if (!c->tty || c->quiet)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (seconds_between(&c->from, &now) < c->after)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("\r\033[Kjheap: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
	c->shown = true;
}

void console_warn(struct console *c, const char *msg)
{
	console_clear(c);
	if (c->quiet)
		return;
	/* a warning quotes the input: one line, no terminal escapes */
	fputs("jheap: warning: ", stderr);
	escape_fputs(msg, false, stderr);
	fputc('\n', stderr);
}

void console_note(struct console *c, const char *msg)
{
	console_clear(c);
	if (!c->quiet)
		fprintf(stderr, "jheap: note: %s\n", msg);
}

void console_info(struct console *c, const char *msg)
{
	console_clear(c);
	if (!c->quiet)
		fprintf(stderr, "jheap: %s\n", msg);
}

void console_line(struct console *c, const char *line)
{
	console_clear(c);
	if (!c->quiet)
		fprintf(stderr, "%s\n", line);
}

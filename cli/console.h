/*
 * console: what a run prints on standard error beside its report, in one
 * place: warnings, notes, the progress line and the stage times.
 *
 * The progress line ("jheap: parsing x.heap: 12 of 80 MB") is shown only
 * on a terminal, only after JHEAP_PROGRESS_AFTER seconds (default 1) of a
 * stage, never with --quiet, and is cleared before any other line.
 * JHEAP_DEBUG=time prints each stage's wall time (parse, symbolize,
 * aggregate, write) with its CPU time and page faults, to see where a
 * slow run goes.  Errors are not printed here: the driver prints them
 * where it picks the exit status.
 */
#ifndef JHEAP_CONSOLE_H
#define JHEAP_CONSOLE_H

#include <stdbool.h>
#include <time.h>

struct console {
	bool quiet;              /* --quiet: no warning, note or progress line */
	bool tty, shown;         /* stderr is a terminal; the progress line is on it */
	struct timespec start;   /* the run's */
	struct timespec from;    /* the progress line's delay counts from here */
	double after;            /* seconds; JHEAP_PROGRESS_AFTER */
	bool debug_time;         /* JHEAP_DEBUG=time */
	struct timespec mark;    /* end of the previous timed stage */
	double mark_cpu;         /* process CPU seconds at the mark */
	long mark_flt;           /* minor page faults at the mark */
};

/* Starts the clock and reads the terminal and the environment. */
void console_init(struct console *c, bool quiet);

/* Clears the progress line, when it is shown. */
void console_clear(struct console *c);
/* Shows the progress line "jheap: ..." (see above for when). */
void console_progress(struct console *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "jheap: warning: MSG", MSG escaped (it quotes input), unless quiet. */
void console_warn(struct console *c, const char *msg);
/* "jheap: note: MSG" unless quiet. */
void console_note(struct console *c, const char *msg);
/* "jheap: MSG" unless quiet. */
void console_info(struct console *c, const char *msg);
/* LINE as it is, unless quiet (jeprof's "Dropping nodes ..." lines). */
void console_line(struct console *c, const char *line);

/* JHEAP_DEBUG=time: prints the time since the last mark under WHAT and
 * moves the mark to now.  console_mark() only moves it, and starts the
 * progress line's delay again (the shell, before a command, so that
 * waiting for the user is not counted). */
void console_stage_done(struct console *c, const char *what);
void console_mark(struct console *c);

/* Whether JHEAP_DEBUG names WHAT. */
bool console_debug_on(const char *what);

#endif

/*
 * peaks.c: a dump at each new peak of the process's heap (jheap record
 * --peaks, jheap ctl PID peaks on|off).
 *
 * The control thread reads how many bytes the program has allocated
 * (jemalloc's stats.allocated after an "epoch" refresh: about 12 µs with
 * eight arenas, where summing the profiler's own per-size counters,
 * prof.stats.*, takes about 50 µs and needs prof_stats:true from the
 * start; bench/peaks.sh measures both).  It looks every PEAK_FAST_MS
 * while the figure moves, backing off to PEAK_SLOW_MS while it stays the
 * same, so an idle program is woken ten times a second.
 *
 * A peak dump is taken when the figure is at least RATIO above the
 * figure at the last peak dump (the first: above PEAK_FLOOR; turned on by
 * "peaks on", above the figure at that moment), once the
 * heap has stopped rising (a look that finds no more than the look
 * before: a dump taken on the way up would be smaller than the peak; a
 * heap that keeps rising for PEAK_MIN_MS is dumped anyway), and at most
 * one a PEAK_MIN_MS.  The dump is jemalloc's manual dump (prof.dump),
 * renamed from PREFIX.PID.SEQ.mN.heap to PREFIX.PID.SEQ.pK.heap: jemalloc's
 * sequence number stays, so the peak sits in its place among the other
 * dumps, and the "p" tells it apart (analyzer/dumpname.h).
 *
 * At most KEEP peak dumps are kept (JHEAP_CTL_PEAKS_KEEP, 20 by default,
 * 1 to PEAK_MAX_KEEP): when one more is taken, one of the others is
 * removed, the one whose neighbours lie closest in bytes, so that those
 * left spread over the range.  The highest, the newest, always stays.
 * Only files this process made are removed, by the name it gave them.
 *
 * JHEAP_CTL_PEAKS=RATIO (a fraction: 0.1 for 10%) turns it on at start;
 * the state shows in "jheap ctl PID status".  Everything here runs on the
 * control thread and allocates nothing with malloc.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "preload/jheapctl.h"

#define PEAK_FAST_MS 10
#define PEAK_SLOW_MS 100
#define PEAK_MIN_MS 1000
#define PEAK_FLOOR ((size_t)1 << 20)
#define PEAK_MAX_KEEP 64

struct kept {
	size_t bytes;
	char path[PATH_MAX];
};

static bool on;
static double ratio = 0.1;
static int keep = 20;
static struct kept kept[PEAK_MAX_KEEP + 1];
static int nkept;
static size_t last_dump;        /* allocated bytes at the last peak dump */
static size_t last_seen;        /* at the look before */
static size_t high;             /* the most seen */
static long last_dump_ms = -PEAK_MIN_MS, rising_since = -1, next_ms;
static int interval = PEAK_FAST_MS;
static unsigned long taken, removed, looks;
static char why_off[300];       /* why peaks stopped by themselves */

static void parse_env(void)
{
	const char *r = getenv("JHEAP_CTL_PEAKS");
	const char *k = getenv("JHEAP_CTL_PEAKS_KEEP");
	if (k && *k) {
		char *end;
		long v = strtol(k, &end, 10);
		if (!*end && v >= 1 && v <= PEAK_MAX_KEEP)
			keep = (int)v;
	}
	if (r && *r) {
		char *end;
		double v = strtod(r, &end);
		if (!*end && v >= 0.001 && v <= 100) {
			ratio = v;
			on = true;
		}
	}
}

void peaks_init(void)
{
	parse_env();
}

void peaks_after_fork(void)
{
	/* the parent's peak dumps are the parent's: none kept, none removed */
	nkept = 0;
	last_dump = last_seen = high = 0;
	last_dump_ms = -PEAK_MIN_MS;
	rising_since = -1;
	taken = removed = looks = 0;
	interval = PEAK_FAST_MS;
}

long peaks_next_ms(void)
{
	return on ? next_ms : -1;
}

/* PATH's ".mN.heap" becomes ".pK.heap", K the peak's number, without
 * replacing a file that is there; NEW gets the new name.  0 or -1. */
static int rename_peak(const char *path, char *to, size_t len)
{
	const char *end = path + strlen(path);
	if (end - path < 8 || strcmp(end - 5, ".heap"))
		return -1;
	const char *m = end - 6;
	while (m > path && *m >= '0' && *m <= '9')
		m--;
	if (m <= path || *m != 'm' || m[-1] != '.')
		return -1;
	for (unsigned long k = taken; k < taken + 1000; k++) {
		int n = snprintf(to, len, "%.*sp%lu.heap", (int)(m - path), path, k);
		if (n < 0 || (size_t)n >= len)
			return -1;
		if (!renameat2(AT_FDCWD, path, AT_FDCWD, to, RENAME_NOREPLACE))
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	return -1;
}

/* One more than KEEP: the dump whose neighbours lie closest goes. */
static void thin(void)
{
	int best = 0;
	double best_gap = 0;
	for (int i = 0; i < nkept - 1; i++) {
		double lo = (double)kept[i ? i - 1 : i].bytes, hi = (double)kept[i + 1].bytes;
		double gap = lo > 0 ? hi / lo : hi;
		if (i == 0 || gap < best_gap) {
			best = i;
			best_gap = gap;
		}
	}
	unlink(kept[best].path);
	memmove(&kept[best], &kept[best + 1], (size_t)(nkept - best - 1) * sizeof(kept[0]));
	nkept--;
	removed++;
}

static void take(size_t bytes, long now)
{
	char out[1024], path[PATH_MAX];
	struct reply r = { out, 0, sizeof(out) };
	last_dump_ms = now;
	rising_since = -1;
	if (prof_dump_path(&r, path, sizeof(path))) {
		snprintf(why_off, sizeof(why_off), "%.*s", (int)(r.len && out[r.len - 1] == '\n' ? r.len - 1 : r.len),
			 out + (strncmp(out, "error ", 6) ? 0 : 6));
		on = false;
		return;
	}
	struct kept *k = &kept[nkept];
	if (rename_peak(path, k->path, sizeof(k->path))) {
		/* kept as jemalloc named it: still a dump, not told apart */
		snprintf(k->path, sizeof(k->path), "%s", path);
	}
	k->bytes = bytes;
	nkept++;
	taken++;
	last_dump = bytes;
	if (nkept > keep)
		thin();
}

void peaks_tick(long now)
{
	if (!on || now < next_ms)
		return;
	size_t a;
	if (prof_allocated(&a)) {
		snprintf(why_off, sizeof(why_off), "jemalloc gives no stats.allocated (built without statistics?)");
		on = false;
		return;
	}
	looks++;
	bool rising = a > last_seen;
	interval = a != last_seen ? PEAK_FAST_MS : interval * 2 > PEAK_SLOW_MS ? PEAK_SLOW_MS : interval * 2;
	last_seen = a;
	if (a > high)
		high = a;
	size_t floor = last_dump ? last_dump : PEAK_FLOOR;
	bool above = (double)a >= (double)floor * (1 + ratio) && a > PEAK_FLOOR;
	if (!above) {
		rising_since = -1;
	} else {
		if (rising && rising_since < 0)
			rising_since = now;
		/* stopped rising, or rising for a second already */
		bool settled = !rising || now - rising_since >= PEAK_MIN_MS;
		long wait = last_dump_ms + PEAK_MIN_MS - now;
		if (settled && wait <= 0)
			take(a, now);
		else if (!settled)
			interval = PEAK_FAST_MS;
		else if (wait < interval)
			interval = (int)wait;
	}
	next_ms = now + interval;
}

void peaks_cmd(struct reply *r, bool want, long now)
{
	size_t a = 0;
	if (want && prof_allocated(&a)) {
		reply_add(r, "error process %d: jemalloc gives no stats.allocated (built without statistics?): no peak dumps\n",
			  (int)getpid());
		return;
	}
	bool was = on;
	on = want;
	why_off[0] = '\0';
	if (want && !was) {
		/* from here on: a dump when the heap passes what it holds
		 * now (or the last peak dump, when higher) */
		last_seen = a;
		if (a > last_dump)
			last_dump = a;
		next_ms = now;
		interval = PEAK_FAST_MS;
	}
	reply_add(r, "ok peak dumps in process %d are %s (they were %s); a dump when the heap passes the last peak dump by %.3g%%, at most one a second, %d kept\n",
		  (int)getpid(), want ? "on" : "off", was ? "on" : "off", ratio * 100, keep);
}

void peaks_status(struct reply *r)
{
	reply_add(r, "peaks: %s", on ? "on" : "off");
	if (!on && why_off[0])
		reply_add(r, " (stopped: %s)", why_off);
	reply_add(r, "; a dump when the heap passes the last peak dump by %.3g%%, at most one a second, %d kept\n",
		  ratio * 100, keep);
	if (on || taken)
		reply_add(r, "peak dumps: %lu taken, %d kept, %lu removed; last at %zu bytes; high-water %zu bytes allocated (%lu looks)\n",
			  taken, nkept, removed, last_dump, high, looks);
}

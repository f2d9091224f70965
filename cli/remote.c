/* remote: profiles fetched from servers, and names from their symbol page;
 * see remote.h. */
#include "cli/remote.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/chars.h"
#include "lib/errors.h"
#include "analyzer/profile.h"
#include "cli/fetch.h"
#include "cli/url.h"
#include "symbolize/symcache.h"

#define MSG (2 * URL_MAX + 1024)
/* A longer name in a symbol page's answer is ignored (the address keeps
 * module+offset): no symbol is that long, and each is copied. */
#define REMOTE_MAX_NAME 65536

bool remote_is_url(const char *arg)
{
	struct stat st;
	return url_form(arg) && stat(arg, &st) && (errno == ENOENT || errno == ENOTDIR);
}

/* Passes a formatted message to CB (o->note or o->warn), when set. */
__attribute__((format(printf, 3, 4)))
static void tell(const struct remote_options *o, void (*cb)(void *, const char *),
		 const char *fmt, ...)
{
	char msg[MSG];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (cb)
		cb(o->ctx, msg);
}

const char *remote_first_url(const char *const *args, size_t nargs, const char *const *bases,
			     size_t nbases)
{
	for (size_t i = 0; i < nargs + nbases; i++) {
		const char *a = i < nargs ? args[i] : bases[i - nargs];
		if (remote_is_url(a))
			return a;
	}
	return NULL;
}

/* The time limit of a request: T's, or JHEAP_FETCH_TIMEOUT seconds. */
static double time_limit(double dflt)
{
	const char *e = getenv("JHEAP_FETCH_TIMEOUT");
	double v = e && *e ? atof(e) : 0;
	return v > 0 ? v : dflt;
}

/* FETCH_MAX_BYTES, or less when JHEAP_FETCH_MAX_BYTES says so. */
static size_t max_bytes(void)
{
	const char *e = getenv("JHEAP_FETCH_MAX_BYTES");
	unsigned long long v = e && *e ? strtoull(e, NULL, 10) : 0;
	return v && v < FETCH_MAX_BYTES ? (size_t)v : FETCH_MAX_BYTES;
}

struct wait {
	const struct remote_options *o;
	const char *url;
	double collect;
};

static void on_progress(void *ctx, double elapsed, size_t received, size_t expected)
{
	struct wait *w = ctx;
	if (!w->o->progress)
		return;
	/* one terminal line of 80 columns: the end of a long URL */
	const char *url = w->url;
	char end[40], line[128];
	if (strlen(url) > 32) {
		snprintf(end, sizeof(end), "...%s", url + strlen(url) - 29);
		url = end;
	}
	if (received && expected)
		snprintf(line, sizeof(line), "fetching %s: %zu of %zu KB", url, received >> 10,
			 expected >> 10);
	else if (received)
		snprintf(line, sizeof(line), "fetching %s: %zu KB", url, received >> 10);
	else if (w->collect > 0)
		snprintf(line, sizeof(line), "fetching %s: %.0f of %g s, be patient...", url,
			 elapsed, w->collect);
	else
		snprintf(line, sizeof(line), "fetching %s: %.0f s", url, elapsed);
	w->o->progress(w->o->ctx, line);
}

/* Fetches URL (user information kept); SHOWN is URL as messages show it. */
static int fetch(const struct remote_options *o, const char *url, const char *shown,
		 double limit, double collect, const char *post, size_t post_len,
		 struct fetch_reply *r, char *err, size_t errlen)
{
	struct wait w = { .o = o, .url = shown, .collect = collect };
	struct fetch_options fo = {
		.post = post, .post_len = post_len, .timeout = time_limit(limit),
		.max_bytes = max_bytes(), .progress = on_progress, .ctx = &w,
	};
	return fetch_url(url, &fo, r, err, errlen);
}

/* $JHEAP_TMPDIR, else ~/jheap, into BUF, created when missing. */
static int save_dir(char *buf, size_t len, char *err, size_t errlen)
{
	const char *d = getenv("JHEAP_TMPDIR");
	if (d && *d) {
		snprintf(buf, len, "%s", d);
	} else {
		const char *home = getenv("HOME");
		if (!home || !*home) {
			struct passwd *pw = getpwuid(getuid());
			home = pw ? pw->pw_dir : NULL;
		}
		if (!home)
			return jh_err(err, errlen, JH_EIO, "no home folder (set JHEAP_TMPDIR)");
		snprintf(buf, len, "%s/jheap", home);
	}
	if (mkdir(buf, 0777) && errno != EEXIST)
		return jh_err(err, errlen, JH_EIO, "cannot create '%s': %s", buf, strerror(errno));
	return 0;
}

/* Writes BODY to DIR/NAME without ever leaving a partial file there nor
 * replacing one: a temporary file, synced, then renamed to NAME, or to
 * NAME.1, NAME.2... when NAME exists (two fetches in one second). */
static int save_file(const char *dir, const char *name, const char *body, size_t len,
		     char *path, size_t pathlen, char *err, size_t errlen)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, name);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return jh_err(err, errlen, JH_EIO, "cannot create a file in '%s': %s", dir,
			      strerror(errno));
	mode_t mask = umask(0);
	umask(mask);
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(fd, body + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	int e = done < len ? errno : 0;
	if (!e && (fchmod(fd, 0666 & ~mask) || fsync(fd)))
		e = errno;
	if (close(fd) && !e)
		e = errno;
	for (int i = 0; !e && i < 100; i++) {
		if (i)
			snprintf(path, pathlen, "%s/%s.%d", dir, name, i);
		else
			snprintf(path, pathlen, "%s/%s", dir, name);
		if (!renameat2(AT_FDCWD, tmp, AT_FDCWD, path, RENAME_NOREPLACE))
			return 0;
		if (errno == EINVAL || errno == ENOSYS) {
			/* a file system without RENAME_NOREPLACE */
			struct stat st;
			if (!lstat(path, &st))
				continue;
			if (!rename(tmp, path))
				return 0;
		}
		if (errno != EEXIST)
			e = errno;
	}
	unlink(tmp);
	return jh_err(err, errlen, JH_EIO, "cannot write '%s/%s': %s", dir, name,
		      strerror(e ? e : EEXIST));
}

/* The program's name for the saved file: BINARY, else the dump's. */
static const char *program(const struct profile *p, const struct remote_options *o)
{
	if (o->binary)
		return o->binary;
	if (p->main_mapping != UINT32_MAX)
		return strtab_get(&p->strs, p->maps[p->main_mapping].path);
	return strtab_get(&p->strs, p->presym_binary);
}

int remote_load(struct profile *p, const char *arg, const struct remote_options *o,
		const struct parse_options *po, char *saved, size_t savedlen, char *err,
		size_t errlen)
{
	struct url_target t;
	struct fetch_reply r;
	if (savedlen)
		saved[0] = 0;
	int rc = url_target(arg, o->seconds, &t, err, errlen);
	if (rc)
		return rc;
	rc = fetch(o, t.url, t.shown, t.time_limit, t.collect_seconds, NULL, 0, &r, err, errlen);
	if (rc)
		return rc;
	char ex[200];
	fetch_excerpt(ex, sizeof(ex), r.body, r.len, 120);
	if (!r.len)
		rc = jh_err(err, errlen, JH_EFORMAT,
			    "%s: the server answered HTTP %s with nothing, not a profile", t.shown,
			    r.status_line);
	else if (r.html)
		rc = jh_err(err, errlen, JH_EFORMAT,
			    "%s: the server answered HTTP %s with an HTML page%s%s%s, not a profile",
			    t.shown, r.status_line, ex[0] ? " ('" : "", ex, ex[0] ? "')" : "");
	else
		rc = parse_buffer(p, t.shown, r.body, r.len, po, err, errlen);
	if (!rc) {
		char dir[2048], name[1024], path[4096], why[MSG];
		if (url_save_name(name, sizeof(name), program(p, o), time(NULL), &t))
			snprintf(name, sizeof(name), "profile.%lld", (long long)time(NULL));
		if (save_dir(dir, sizeof(dir), why, sizeof(why)) ||
		    save_file(dir, name, r.body, r.len, path, sizeof(path), why, sizeof(why))) {
			tell(o, o->warn, "the profile from %s is not saved: %s", t.shown, why);
		} else {
			tell(o, o->note, "saved %s to %s", t.shown, path);
			if (savedlen)
				snprintf(saved, savedlen, "%s", path);
		}
	}
	fetch_reply_release(&r);
	return rc;
}

/* --- names from /pprof/symbol --- */

/* Whether PATH can be read here, directly or under a --lib_prefix folder
 * (the places the symbolizer looks: PREFIX/full/path, then with leading
 * folders dropped one at a time). */
static bool file_here(const char *path, const char *const *prefixes)
{
	struct stat st;
	char buf[4096];
	for (const char *const *pp = prefixes; pp && *pp; pp++)
		for (const char *tail = path; tail && *tail; tail = strchr(tail + 1, '/')) {
			snprintf(buf, sizeof(buf), "%s/%s", *pp, *tail == '/' ? tail + 1 : tail);
			if (!stat(buf, &st) && S_ISREG(st.st_mode))
				return true;
		}
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The sorted, distinct lookup pcs of P's locations that have no name yet
 * and lie in no mapping or in a file that is not here; the first such
 * file in *MISSING (a string of P, or NULL). */
static int missing_pcs(const struct profile *p, const char *const *prefixes, uint64_t **out,
		       size_t *nout, const char **missing)
{
	uint8_t *here = calloc(p->nmaps + 1, 1);   /* 0 unknown, 1 here, 2 not */
	uint64_t *pcs = malloc((p->nlocs + 1) * sizeof(*pcs));
	size_t n = 0;
	*missing = NULL;
	if (!here || !pcs) {
		free(here);
		free(pcs);
		return JH_ENOMEM;
	}
	for (size_t i = 0; i < p->nlocs; i++) {
		const struct pf_location *l = &p->locs[i];
		uint64_t pc = addr_pc(l->addr, l->leaf);
		if (l->sym != PF_SYM_NOTYET || (p->npresyms && profile_presym_find(p, pc)))
			continue;
		if (l->mapping != UINT32_MAX) {
			const struct pf_mapping *m = &p->maps[l->mapping];
			if (m->kind != PF_MAP_FILE)
				continue;
			if (!here[l->mapping])
				here[l->mapping] = file_here(strtab_get(&p->strs, m->path), prefixes) ? 1 : 2;
			if (here[l->mapping] == 1)
				continue;
			if (!*missing)
				*missing = strtab_get(&p->strs, m->path);
		}
		pcs[n++] = pc;
	}
	free(here);
	qsort(pcs, n, sizeof(*pcs), cmp_u64);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!k || pcs[k - 1] != pcs[i])
			pcs[k++] = pcs[i];
	*out = pcs;
	*nout = k;
	return 0;
}

int remote_read_symbols(struct profile *p, const char *body, size_t len, const uint64_t *pcs,
			size_t npcs, size_t *named)
{
	*named = 0;
	const char *s = body, *e = body + len;
	while (s < e) {
		const char *nl = memchr(s, '\n', (size_t)(e - s));
		const char *le = nl ? nl : e, *q = s;
		s = le + 1;
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		if (le - q < 3 || q[0] != '0' || (q[1] | 32) != 'x' || jh_hexval(q[2]) < 0)
			continue;
		uint64_t addr = 0;
		int digits = 0;
		for (q += 2; q < le && jh_hexval(*q) >= 0; q++, digits++)
			addr = addr << 4 | (uint64_t)jh_hexval(*q);
		if (digits > 16 || q == le || (*q != ' ' && *q != '\t'))
			continue;
		while (q < le && (*q == ' ' || *q == '\t'))
			q++;
		const char *ne = le;
		while (ne > q && (ne[-1] == '\r' || ne[-1] == ' ' || ne[-1] == '\t'))
			ne--;
		if (ne == q || (ne - q == 2 && !memcmp(q, "??", 2)) || ne - q > REMOTE_MAX_NAME)
			continue;
		if (!bsearch(&addr, pcs, npcs, sizeof(*pcs), cmp_u64) || profile_presym_find(p, addr))
			continue;
		char *name = strndup(q, (size_t)(ne - q));
		if (!name)
			return JH_ENOMEM;
		char *dm = symcache_demangle(name);
		int64_t id = strtab_intern(&p->strs, dm ? dm : name);
		free(dm);
		free(name);
		if (id < 0 || profile_presym(p, addr, (uint32_t)id))
			return JH_ENOMEM;
		(*named)++;
	}
	return 0;
}

/* "0xA+0xB+...": the POST body jeprof sends. */
static char *post_body(const uint64_t *pcs, size_t n, size_t *len)
{
	char *b = malloc(n * 20 + 1);
	size_t k = 0;
	if (!b)
		return NULL;
	for (size_t i = 0; i < n; i++)
		k += (size_t)sprintf(b + k, "%s0x%llx", i ? "+" : "", (unsigned long long)pcs[i]);
	*len = k;
	return b;
}

int remote_symbols(struct profile *p, const char *arg, const struct remote_options *o,
		   char *err, size_t errlen)
{
	struct url_target t;
	uint64_t *pcs;
	size_t npcs, named = 0;
	const char *missing;
	char why[MSG];
	if (url_target(arg, o->seconds, &t, why, sizeof(why)))
		return 0;
	if (missing_pcs(p, o->lib_prefixes, &pcs, &npcs, &missing))
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	if (!npcs || (!missing && p->has_maps)) {
		free(pcs);
		return 0;
	}
	if (!missing)
		missing = "the program";
	struct fetch_reply r = { 0 };
	int rc = 0;
	/* GET: "num_symbols: N", N > 0 when the server has names to give */
	if (fetch(o, t.symbol_url, t.symbol_shown, URL_PLAIN_TIMEOUT, 0, NULL, 0, &r, why,
		  sizeof(why))) {
		tell(o, o->warn, "no names from the server: %s", why);
		goto howto;
	}
	char line[200];
	fetch_excerpt(line, sizeof(line), r.body, r.len, 100);
	unsigned long long count = 0;
	if (r.html || sscanf(r.body, "num_symbols: %llu", &count) != 1) {
		tell(o, o->warn, "no names from the server: %s does not answer as a symbol page ('num_symbols: N'; got '%s')",
		      t.symbol_shown, line);
		goto howto;
	}
	if (!count) {
		tell(o, o->warn, "no names from the server: %s has none (num_symbols: 0: its program is stripped)",
		      t.symbol_shown);
		goto howto;
	}
	fetch_reply_release(&r);
	size_t plen;
	char *post = post_body(pcs, npcs, &plen);
	if (!post) {
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
		goto out;
	}
	int frc = fetch(o, t.symbol_url, t.symbol_shown, URL_PLAIN_TIMEOUT, 0, post, plen, &r, why,
			sizeof(why));
	free(post);
	if (frc) {
		tell(o, o->warn, "no names from the server: %s", why);
		goto howto;
	}
	if (remote_read_symbols(p, r.body, r.len, pcs, npcs, &named)) {
		rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
		goto out;
	}
	tell(o, o->note, "names of %zu of %zu addresses from %s", named, npcs, t.symbol_shown);
howto:
	if (named < npcs)
		tell(o, o->warn, "%zu addresses in files that are not on this machine (%s%s%s) have no names: copy the program here and give it as BINARY, point --lib_prefix at a copy of its folders, or set DEBUGINFOD_URLS",
		      npcs - named, p->has_maps ? "such as '" : "", missing, p->has_maps ? "'" : "");
out:
	fetch_reply_release(&r);
	free(pcs);
	return rc;
}

/* jheap --http: the web UI's routes and views (see webui.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cli/browser.h"
#include "cli/control.h"
#include "cli/httpd.h"
#include "cli/webassets.h"
#include "cli/webcmd.h"
#include "cli/webparams.h"
#include "cli/webseries.h"
#include "cli/webui.h"
#include "analyzer/dumpview.h"
#include "lib/errors.h"
#include "lib/escape.h"
#include "output/json.h"

/* No page over 2 MB: text views past it are cut, with a line saying so. */
#define MAX_PAGE (2u << 20)
/* Answers kept (at most 2 MB each). */
#define WEB_ANSWERS 16

/* The pages, each the same page whose script draws the view. */
static const char *const pages[] = { "", "top", "flamegraph", "peek", "source", "disasm", "timeline" };
#define NPAGES (sizeof(pages) / sizeof(*pages))

struct webui {
	struct driver *d;
	pthread_mutex_t lock;      /* the model, the driver's caches, the series */
	const char *binary;
	const char *const *paths;  /* the PROFILE arguments (not a series) */
	size_t npaths;
	bool series;
	struct webseries ser;
	unsigned long version;     /* bumped when the series grows */
	struct cli load;           /* what the model was loaded with */
	/* the command line's view settings as a query (webparams_initial),
	 * and where a page without parameters is sent: each page with it */
	char *initial;
	char *redirect[NPAGES];
	long first_dump;           /* --peak: the dump shown first, or -1 */
	/* the last answers, so that going back to a view costs nothing:
	 * the most recent first, dropped when the model changes */
	struct answer {
		char *key, *body;
		size_t len;
	} answers[WEB_ANSWERS];
	size_t nanswers;
};

/* A message that may quote a path a process or a folder gave: escaped. */
static void print_error(const char *msg)
{
	fputs("jheap: ", stderr);
	escape_fputs(msg, false, stderr);
	fputc('\n', stderr);
}

/* ---- the driver's messages, caught per request ---------------------- */

struct capture {
	int saved, fd;
};

static void capture_begin(struct capture *c)
{
	fflush(stderr);
	c->fd = memfd_create("jheap-web", MFD_CLOEXEC);
	c->saved = c->fd >= 0 ? dup(STDERR_FILENO) : -1;
	if (c->saved >= 0)
		dup2(c->fd, STDERR_FILENO);
}

/* The messages since capture_begin, into MSG (jheap's "jheap: " cut). */
static void capture_end(struct capture *c, char *msg, size_t len)
{
	msg[0] = '\0';
	fflush(stderr);
	if (c->saved < 0) {
		if (c->fd >= 0)
			close(c->fd);
		return;
	}
	dup2(c->saved, STDERR_FILENO);
	close(c->saved);
	ssize_t n = pread(c->fd, msg, len - 1, 0);
	msg[n > 0 ? n : 0] = '\0';
	close(c->fd);
}

/* ---- views ---------------------------------------------------------- */

static void reply_message(struct httpd_response *resp, int status, const char *msg)
{
	httpd_reply(resp, status, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* Checks the series parameters of WP against what is loaded; the dump
 * to show into *DMP (-1: the model as loaded). */
static int check_series(struct webui *w, const struct web_params *wp, bool whole, long *dmp,
			char *err, size_t errlen)
{
	*dmp = -1;
	if (whole)
		return 0;
	if (!w->series) {
		if (wp->d >= 0 || wp->b >= 0)
			return jh_err(err, errlen, JH_EUSAGE, "parameters d and b choose dumps of a series; this profile is not one");
		return 0;
	}
	size_t n = w->ser.n;
	if (wp->d >= (long)n || wp->b >= (long)n)
		return jh_err(err, errlen, JH_EUSAGE, "parameters d and b: the series has %zu dumps (0 to %zu)", n, n ? n - 1 : 0);
	*dmp = wp->d >= 0 ? wp->d : (long)n - 1;
	/* a thread of that dump: as --thread=N on the dump alone */
	size_t nthreads = 0;
	const struct driver *d = w->d;
	if (wp->t && !dumpview_has_thread(&d->model.g, &d->model.p, (size_t)*dmp,
					  strtoll(wp->t, NULL, 10), &nthreads)) {
		const char *path = w->ser.dumps[*dmp].path, *slash = strrchr(path, '/');
		char shown[600];
		escape_into(shown, sizeof(shown), slash ? slash + 1 : path, strlen(slash ? slash + 1 : path));
		return jh_err(err, errlen, JH_EUSAGE, "parameter t: the dump '%s' has no thread %s (%zu threads%s)", shown,
			      wp->t, nthreads, nthreads ? "" : ": it has no per-thread values");
	}
	return 0;
}

/* O set to show dump DMP of the series (against dump B when B >= 0), a
 * view of the aggregate: the model is read, never written. */
static void view_dump(struct cli *o, long dmp, long b)
{
	o->series_view = dmp >= 0;
	o->series_dump = dmp >= 0 ? (size_t)dmp : 0;
	o->series_diff = dmp >= 0 && b >= 0;
	o->series_base = b >= 0 ? (size_t)b : 0;
}

static void answers_drop(struct webui *w)
{
	for (size_t i = 0; i < w->nanswers; i++) {
		free(w->answers[i].key);
		free(w->answers[i].body);
	}
	w->nanswers = 0;
}

/* What makes an answer: every setting a view reads, and the dumps. */
static char *answer_key(const struct cli *o, bool whole, long dmp, long b)
{
	char *key = NULL;
	const char *re[] = { o->focus, o->ignore, o->retain, o->exclude, o->allocator, o->thread,
			     o->peek, o->list, o->weblist, o->tagfocus, o->tagignore };
	size_t len = 0;
	FILE *f = open_memstream(&key, &len);
	if (!f)
		return NULL;
	fprintf(f, "%d %d %d %d %d %ld %ld", (int)o->mode, (int)o->value, (int)o->gran, o->cum, whole,
		dmp, b);
	for (size_t i = 0; i < sizeof(re) / sizeof(*re); i++) {
		/* each as its length and bytes: no two settings read alike */
		if (re[i])
			fprintf(f, " %zu:%s", strlen(re[i]), re[i]);
		else
			fputs(" -", f);
	}
	if (fclose(f)) {
		free(key);
		return NULL;
	}
	return key;
}

/* A copy of the answer kept for KEY into RESP, moved to the front. */
static bool answer_find(struct webui *w, const char *key, struct httpd_response *resp)
{
	for (size_t i = 0; key && i < w->nanswers; i++) {
		if (strcmp(w->answers[i].key, key))
			continue;
		struct answer a = w->answers[i];
		memmove(w->answers + 1, w->answers, i * sizeof(*w->answers));
		w->answers[0] = a;
		free(resp->body);
		resp->body = malloc(a.len + 1);
		if (!resp->body)
			return false;
		memcpy(resp->body, a.body, a.len);
		resp->len = a.len;
		return true;
	}
	return false;
}

/* Keeps a copy of BODY for KEY (which it takes). */
static void answer_keep(struct webui *w, char *key, const char *body, size_t len)
{
	char *copy = key ? malloc(len + 1) : NULL;
	if (!copy) {
		free(key);
		return;
	}
	memcpy(copy, body, len);
	if (w->nanswers == WEB_ANSWERS) {
		w->nanswers--;
		free(w->answers[w->nanswers].key);
		free(w->answers[w->nanswers].body);
	}
	memmove(w->answers + 1, w->answers, w->nanswers * sizeof(*w->answers));
	w->answers[0] = (struct answer){ key, copy, len };
	w->nanswers++;
}

/* Writes the report O asks for into RESP (TYPE), under the lock, with the
 * series' dump chosen by WP (WHOLE: the model as loaded, --growth's). */
static void run_view_of(struct webui *w, const struct web_params *wp, bool whole, struct cli *o,
			const char *type, const char *csp, struct httpd_response *resp)
{
	char err[2048];
	char *buf = NULL;
	size_t len = 0;
	pthread_mutex_lock(&w->lock);
	long dmp;
	if (check_series(w, wp, whole, &dmp, err, sizeof(err))) {
		pthread_mutex_unlock(&w->lock);
		reply_message(resp, 400, err);
		return;
	}
	if (driver_value_missing(&w->d->model.p, o->value, err, sizeof(err) - 8)) {
		pthread_mutex_unlock(&w->lock);
		char msg[sizeof(err) + 16];
		snprintf(msg, sizeof(msg), "jheap: %s\n", err);
		reply_message(resp, 400, msg);
		return;
	}
	if (o->gran == GRAN_ADDRESSES && !w->d->model.by_address) {
		pthread_mutex_unlock(&w->lock);
		reply_message(resp, 400, "parameter g=addresses: start the server with --addresses for one row per address\n");
		return;
	}
	char *key = answer_key(o, whole, dmp, wp->b);
	if (answer_find(w, key, resp)) {
		pthread_mutex_unlock(&w->lock);
		free(key);
		resp->status = 200;
		resp->type = type;
		resp->csp = csp;
		return;
	}
	view_dump(o, dmp, wp->b);
	struct capture cap;
	capture_begin(&cap);
	FILE *f = open_memstream(&buf, &len);
	int rc = f ? driver_write(w->d, o, f) : EXIT_DATA;
	if (f && fclose(f))
		rc = EXIT_DATA;
	capture_end(&cap, err, sizeof(err));
	if (!rc && len <= MAX_PAGE)
		answer_keep(w, key, buf, len);
	else
		free(key);
	pthread_mutex_unlock(&w->lock);
	if (rc) {
		free(buf);
		reply_message(resp, rc == EXIT_USAGE ? 400 : 500, err[0] ? err : "jheap: the report failed\n");
		return;
	}
	if (len > MAX_PAGE && strncmp(type, "text/plain", 10)) {
		/* a page cut short would not be one: say what to do instead */
		char msg[300];
		snprintf(msg, sizeof(msg), "jheap: this view is %.1f MB, over the 2 MB a page may be; narrow it with a regular expression (f) or a filter\n",
			 len / 1048576.0);
		free(buf);
		reply_message(resp, 400, msg);
		return;
	}
	if (len > MAX_PAGE) {
		static const char cut[] = "\n... cut at 2 MB: narrow the regular expression (f) for the rest\n";
		len = MAX_PAGE;
		memcpy(buf + len - sizeof(cut) + 1, cut, sizeof(cut) - 1);
	}
	free(resp->body);
	resp->body = buf;
	resp->len = len;
	resp->status = 200;
	resp->type = type;
	resp->csp = csp;
}

static void run_view(struct webui *w, const struct web_params *wp, struct cli *o,
		     const char *type, const char *csp, struct httpd_response *resp)
{
	run_view_of(w, wp, false, o, type, csp, resp);
}

static void put_str(FILE *f, const char *key, const char *v, bool comma)
{
	fprintf(f, "%s\"%s\":", comma ? "," : "", key);
	if (v)
		json_str(f, v);
	else
		fputs("null", f);
}

static void put_array(FILE *f, const char *key, const char *const *v, size_t n)
{
	fprintf(f, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', f);
		json_str(f, v[i]);
	}
	fputc(']', f);
}

static void reply_file(struct httpd_response *resp, char *buf, size_t len, const char *type)
{
	free(resp->body);
	resp->body = buf;
	resp->len = len;
	resp->status = 200;
	resp->type = type;
}

/* /data/info: what the page needs to know of the loaded profile. */
static void view_info(struct webui *w, struct httpd_response *resp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		reply_message(resp, 500, "jheap: out of memory\n");
		return;
	}
	pthread_mutex_lock(&w->lock);
	const struct driver *d = w->d;
	const struct cli *c = &d->cli;
	fputc('{', f);
	put_str(f, "binary", w->binary, false);
	if (w->series)
		put_array(f, "profiles", w->ser.paths, w->ser.n);
	else
		put_array(f, "profiles", w->paths, w->npaths);
	put_array(f, "bases", c->bases, c->nbases);
	put_array(f, "source_dirs", c->source_dirs, c->nsource);
	fprintf(f, ",\"diff\":%s,\"has_alloc\":%s,\"series\":%s,\"live\":%s,\"pid\":%d,\"dumps\":%zu",
		c->nbases ? "true" : "false", d->model.p.has_alloc ? "true" : "false",
		w->series ? "true" : "false", w->ser.pid ? "true" : "false", (int)w->ser.pid,
		w->series ? w->ser.n : 0);
	fprintf(f, ",\"addresses\":%s,\"version\":%lu", d->model.by_address ? "true" : "false", w->version);
	/* the command line's view settings (the first page's parameters,
	 * for Reset) and the rest of it, for the page's command line */
	put_str(f, "initial", w->initial, true);
	webcmd_json(c, f);
	/* the labels the inputs were given (--label before the PROFILE at
	 * "from") */
	fputs(",\"labels\":[", f);
	size_t first = w->paths >= c->args && w->paths < c->args + c->nargs ? (size_t)(w->paths - c->args) : 0;
	for (size_t i = 0; i < c->nlabels; i++) {
		size_t from = c->labels[i].from_arg > first ? c->labels[i].from_arg - first : 0;
		fprintf(f, "%s[%zu,", i ? "," : "", from);
		json_str(f, c->labels[i].kv);
		fputc(']', f);
	}
	fprintf(f, "],\"has_labels\":%s", d->model.p.labels.nsets > 1 ? "true" : "false");
	fputs(",\"threads\":[", f);
	for (size_t i = 0; i < d->model.p.nthreads && i < 10000; i++) {
		fprintf(f, "%s[%lld,", i ? "," : "", (long long)d->model.p.threads[i].uid);
		json_str(f, strtab_get(&d->model.p.strs, d->model.p.threads[i].name));
		fputc(']', f);
	}
	fputs("]}\n", f);
	pthread_mutex_unlock(&w->lock);
	if (fclose(f)) {
		free(buf);
		reply_message(resp, 500, "jheap: out of memory\n");
		return;
	}
	reply_file(resp, buf, len, "application/json");
}

/* /data/timeline: each dump's totals, from the series' values. */
static void view_timeline(struct webui *w, struct httpd_response *resp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		reply_message(resp, 500, "jheap: out of memory\n");
		return;
	}
	pthread_mutex_lock(&w->lock);
	const struct driver *d = w->d;
	fprintf(f, "{\"series\":%s,\"live\":%s,\"pid\":%d,\"has_alloc\":%s,\"version\":%lu,\"dumps\":[",
		w->series ? "true" : "false", w->ser.pid ? "true" : "false", (int)w->ser.pid,
		d->model.p.has_alloc ? "true" : "false", w->version);
	for (size_t k = 0; w->series && k < w->ser.n && k < d->model.g.ndumps; k++) {
		double tot[PF_NVALUES] = { 0 };
		for (size_t s = 0; s < d->model.g.nsamples; s++)
			for (int j = 0; j < PF_NVALUES; j++)
				tot[j] += growth_value(&d->model.g, s, k, j);
		const struct webseries_dump *dm = &w->ser.dumps[k];
		const char *slash = strrchr(dm->path, '/');
		fputs(k ? ",\n{" : "\n{", f);
		put_str(f, "name", slash ? slash + 1 : dm->path, false);
		put_str(f, "path", dm->path, true);
		fprintf(f, ",\"seq\":%lld,\"time\":", dm->seq);
		json_num(f, dm->mtime);
		static const char *names[] = { "inuse_objects", "inuse_space", "alloc_objects", "alloc_space" };
		for (int j = 0; j < PF_NVALUES; j++) {
			fprintf(f, ",\"%s\":", names[j]);
			json_num(f, tot[j]);
		}
		fputc('}', f);
	}
	fputs("]}\n", f);
	pthread_mutex_unlock(&w->lock);
	if (fclose(f)) {
		free(buf);
		reply_message(resp, 500, "jheap: out of memory\n");
		return;
	}
	reply_file(resp, buf, len, "application/json");
}

/* POST /api/dump: a dump of the process now; the watcher adds it. */
static void api_dump(struct webui *w, struct httpd_response *resp)
{
	char path[4096], err[1200];
	if (!w->ser.pid) {
		reply_message(resp, 400, "jheap: no process to dump: start the UI with --pid=PID\n");
		return;
	}
	/* not under the lock: the process may take a while */
	if (webseries_dump_now(&w->ser, path, sizeof(path), err, sizeof(err))) {
		char msg[1300];
		snprintf(msg, sizeof(msg), "jheap: %s\n", err);
		reply_message(resp, 502, msg);
		return;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		reply_message(resp, 500, "jheap: out of memory\n");
		return;
	}
	fputc('{', f);
	put_str(f, "path", path, false);
	fputs("}\n", f);
	fclose(f);
	reply_file(resp, buf, len, "application/json");
}

static const char *asset_type(const char *name)
{
	const char *dot = strrchr(name, '.');
	if (dot && !strcmp(dot, ".js"))
		return "text/javascript; charset=utf-8";
	if (dot && !strcmp(dot, ".css"))
		return "text/css; charset=utf-8";
	return "text/html; charset=utf-8";
}

static bool serve_asset(const char *name, struct httpd_response *resp)
{
	for (const struct web_asset *a = web_assets; a->name; a++)
		if (!strcmp(a->name, name)) {
			httpd_reply(resp, 200, asset_type(name), (const char *)a->data, a->len);
			return true;
		}
	return false;
}

/* The page REST names (after "/ui/"), or -1. */
static int page_of(const char *rest)
{
	for (size_t i = 0; i < NPAGES; i++)
		if (!strcmp(rest, pages[i]))
			return (int)i;
	return -1;
}

static int count_param(void *ctx, const char *key, const char *value)
{
	(void)key;
	(void)value;
	++*(size_t *)ctx;
	return 0;
}

static void data_view(struct webui *w, const char *name, const struct web_params *wp,
		      struct httpd_response *resp)
{
	struct cli o = w->d->cli;
	webparams_apply(wp, &o);
	o.output = NULL;
	o.nodecount = w->d->cli.nodecount;
	bool needs_re = !strcmp(name, "peek") || !strcmp(name, "source") || !strcmp(name, "disasm");
	if (needs_re && !wp->f) {
		reply_message(resp, 400, "parameter f: this view needs a regular expression naming the functions to show (f=RE)\n");
		return;
	}
	if (needs_re)
		o.focus = NULL;   /* f is the view's RE, as --peek=RE alone */
	if (!strcmp(name, "top")) {
		o.mode = MODE_JSON_TOP;
		run_view(w, wp, &o, "application/json", NULL, resp);
	} else if (!strcmp(name, "flame")) {
		o.mode = MODE_JSON_FLAME;
		run_view(w, wp, &o, "application/json", NULL, resp);
	} else if (!strcmp(name, "graph")) {
		o.mode = MODE_SVG;
		run_view(w, wp, &o, "image/svg+xml", NULL, resp);
	} else if (!strcmp(name, "peek")) {
		o.mode = MODE_TREE;
		o.peek = wp->f;
		run_view(w, wp, &o, "text/plain; charset=utf-8", NULL, resp);
	} else if (!strcmp(name, "source")) {
		o.mode = MODE_LIST;
		o.list = wp->f;
		run_view(w, wp, &o, "text/plain; charset=utf-8", NULL, resp);
	} else if (!strcmp(name, "disasm")) {
		o.mode = MODE_WEBLIST;
		o.weblist = wp->f;
		/* shown in a sandboxed frame: no script at all, its own styles */
		run_view(w, wp, &o, "text/html; charset=utf-8",
			 "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'self'; sandbox", resp);
	} else if (!strcmp(name, "growth")) {
		if (!w->series) {
			reply_message(resp, 400, "the --growth ranking needs a series of dumps\n");
			return;
		}
		o.mode = MODE_TEXT;
		/* the model as loaded: the series' sum, with its growth */
		run_view_of(w, wp, true, &o, "text/plain; charset=utf-8", NULL, resp);
	} else if (!strcmp(name, "timeline")) {
		view_timeline(w, resp);
	} else if (!strcmp(name, "info")) {
		view_info(w, resp);
	} else {
		reply_message(resp, 404, "jheap: no such data\n");
	}
}

static void handle(void *ctx, const struct httpd_request *req, struct httpd_response *resp)
{
	struct webui *w = ctx;
	const char *path = httpd_path(req);
	char err[1200];
	if (!strcmp(httpd_method(req), "POST")) {
		if (!strcmp(path, "/api/dump"))
			api_dump(w, resp);
		else
			reply_message(resp, 404, "jheap: nothing to POST here\n");
		return;
	}
	if (!strcmp(path, "/") || !strcmp(path, "/ui")) {
		resp->status = 302;
		resp->location = w->redirect[0];
		return;
	}
	if (!strcmp(path, "/favicon.ico")) {
		resp->status = 204;
		return;
	}
	if (!strncmp(path, "/static/", 8)) {
		if (!serve_asset(path + 8, resp))
			reply_message(resp, 404, "jheap: no such file\n");
		return;
	}
	int pg = strncmp(path, "/ui/", 4) ? -1 : page_of(path + 4);
	bool page = pg >= 0;
	bool data = !strncmp(path, "/data/", 6);
	if (!page && !data) {
		reply_message(resp, 404, "jheap: no such page; the UI is at /ui/\n");
		return;
	}
	struct web_params wp;
	if (webparams_parse(req, &wp, err, sizeof(err))) {
		char msg[1300];
		snprintf(msg, sizeof(msg), "jheap: %s\n", err);
		reply_message(resp, 400, msg);
		return;
	}
	size_t nparams = 0;
	if (page && w->initial[0] && (httpd_each_param(req, count_param, &nparams), !nparams)) {
		/* a page without parameters starts from the command line's
		 * settings, which the URL then holds */
		resp->status = 302;
		resp->location = w->redirect[pg];
		return;
	}
	if (page) {
		serve_asset("index.html", resp);
		return;
	}
	data_view(w, path + 6, &wp, resp);
}

/* Live: new dumps of the process are loaded with the others. */
static void poll_live(struct webui *w)
{
	char err[1200];
	pthread_mutex_lock(&w->lock);
	int added = webseries_poll(&w->ser, err, sizeof(err));
	if (added < 0)
		print_error(err);
	if (added > 0) {
		int rc = driver_load(w->d, w->binary, w->ser.paths, w->ser.n, &w->load);
		if (rc)
			fprintf(stderr, "jheap: the new dumps could not be loaded; the timeline keeps the ones before\n");
		else
			w->version++;
		answers_drop(w);
	}
	pthread_mutex_unlock(&w->lock);
}

static bool has_display(void)
{
	const char *b = getenv("BROWSER"), *x = getenv("DISPLAY"), *y = getenv("WAYLAND_DISPLAY");
	return (b && *b) || (x && *x) || (y && *y);
}

/* The command line's view settings as the first page's query, and the
 * page each URL without parameters is sent to. */
static int set_redirects(struct webui *w)
{
	for (size_t i = 0; i < NPAGES; i++) {
		free(w->redirect[i]);
		if (asprintf(&w->redirect[i], "/ui/%s%s%s", pages[i], w->initial[0] ? "?" : "",
			     w->initial) < 0) {
			w->redirect[i] = NULL;
			return JH_ENOMEM;
		}
	}
	return 0;
}

static int initial_view(struct webui *w, char *err, size_t errlen)
{
	w->first_dump = -1;
	int rc = webparams_initial(&w->d->cli, &w->initial, err, errlen);
	return rc ? rc : set_redirects(w);
}

/* --peak with a series: the first page shows the dump with the most bytes
 * in use (objects with --inuse_objects), as --peak reports it: d=K. */
static int initial_peak(struct webui *w)
{
	const struct driver *d = w->d;
	enum pf_value v = d->cli.value == PF_INUSE_OBJECTS ? PF_INUSE_OBJECTS : PF_INUSE_SPACE;
	double best = 0;
	size_t k = 0;
	for (size_t i = 0; i < w->ser.n && i < d->model.g.ndumps; i++) {
		double tot = 0;
		for (size_t s = 0; s < d->model.g.nsamples; s++)
			tot += growth_value(&d->model.g, s, i, v);
		if (i == 0 || tot > best) {
			best = tot;
			k = i;
		}
	}
	char *q;
	if (asprintf(&q, "%s%sd=%zu", w->initial, w->initial[0] ? "&" : "", k) < 0)
		return JH_ENOMEM;
	free(w->initial);
	w->initial = q;
	w->first_dump = (long)k;
	return set_redirects(w);
}

/* The first view (Top with the command line's settings, of the last dump
 * of a series), written once before serving: a setting the command line
 * would refuse for this profile (a regular expression, a value it has
 * no counts of, a thread it does not have) ends the run as it would
 * end the command line's, rather than every page saying so.  Returns an
 * exit status. */
static int first_view(struct webui *w)
{
	struct driver *d = w->d;
	struct cli o = d->cli;
	char err[2048];
	o.mode = MODE_JSON_TOP;
	o.output = NULL;
	struct web_params wp = { .si = -1, .g = -1, .d = w->first_dump, .b = -1, .t = o.thread };
	long dmp = -1;
	if (w->series && !w->ser.n)
		return EXIT_OK;
	if (check_series(w, &wp, false, &dmp, err, sizeof(err))) {
		print_error(err);
		return EXIT_DATA;
	}
	if (driver_value_missing(&d->model.p, o.value, err, sizeof(err))) {
		print_error(err);
		return EXIT_DATA;
	}
	view_dump(&o, dmp, -1);
	char *buf = NULL;
	size_t len = 0;
	struct capture cap;
	capture_begin(&cap);
	FILE *f = open_memstream(&buf, &len);
	int rc = f ? driver_write(d, &o, f) : EXIT_DATA;
	if (f && fclose(f))
		rc = EXIT_DATA;
	capture_end(&cap, err, sizeof(err));
	free(buf);
	/* its messages are the first view's: shown when it fails */
	if (rc)
		fputs(err[0] ? err : "jheap: the first view failed\n", stderr);
	return rc;
}

static void webui_free(struct webui *w)
{
	answers_drop(w);
	webseries_release(&w->ser);
	free(w->initial);
	for (size_t i = 0; i < NPAGES; i++)
		free(w->redirect[i]);
}

int webui_run(struct driver *d, const char *binary, const char *const *paths, size_t npaths)
{
	const struct cli *c = &d->cli;
	char err[1200];
	/* the option rules are cli_check()'s (cli/options.c) */
	if (httpd_check_address(c->http, err, sizeof(err))) {
		print_error(err);
		return EXIT_USAGE;
	}
	struct webui w = { .d = d, .binary = binary, .paths = paths, .npaths = npaths };
	w.ser.dirfd = -1;
	int rc = initial_view(&w, err, sizeof(err));
	if (rc) {
		print_error(rc == JH_EUSAGE ? err : "out of memory");
		webui_free(&w);
		return rc == JH_EUSAGE ? EXIT_USAGE : EXIT_DATA;
	}
	if (c->pid) {
		pid_t pid = 0;
		control_parse_pid(c->pid, &pid);   /* checked by cli_check() */
		if (webseries_watch(&w.ser, pid, err, sizeof(err))) {
			print_error(err);
			webui_free(&w);
			return EXIT_DATA;
		}
		w.series = true;
	} else if (!c->nbases) {
		int s = webseries_from_args(&w.ser, paths, npaths, err, sizeof(err));
		if (s < 0) {
			print_error(err);
			webui_free(&w);
			return EXIT_DATA;
		}
		w.series = s > 0;
	}
	w.load = *c;
	w.load.growth = w.series;
	/* every dump of the series, each with its values, however few
	 * (a live series starts with one) */
	w.load.all_dumps = w.series;
	d->model.series_of_one = w.series;
	d->model.series_threads = w.series;   /* t of one dump */
	w.load.mode = MODE_TEXT;
	d->model.want_ranges = true;   /* disasm needs the functions' ranges */
	if (w.series)
		rc = driver_load(d, binary, w.ser.paths, w.ser.n, &w.load);
	else
		rc = driver_load(d, binary, paths, npaths, &w.load);
	if (!rc && c->peak && w.series && w.ser.n && initial_peak(&w)) {
		print_error("out of memory");
		rc = EXIT_DATA;
	}
	if (!rc)
		rc = first_view(&w);
	if (rc) {
		webui_free(&w);
		return rc;
	}
	pthread_mutex_init(&w.lock, NULL);
	/* the signals that end the server wait for this thread alone */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	signal(SIGPIPE, SIG_IGN);
	struct httpd *h;
	if (httpd_start(&h, c->http, handle, &w, err, sizeof(err))) {
		print_error(err);
		rc = EXIT_DATA;
		goto out;
	}
	char url[512];
	snprintf(url, sizeof(url), "http://%s:%u/ui/", httpd_host(h), httpd_port(h));
	if (!httpd_loopback(h))
		fprintf(stderr, "jheap: warning: the web UI listens on %s: everyone who can reach it can read the profile, its function names and its source files\n",
			httpd_host(h));
	fprintf(stderr, "jheap: serving the web UI on %s (Ctrl-C ends it)\n", url);
	fflush(stderr);
	if (!c->no_browser && has_display() && browser_open(url, err, sizeof(err)))
		print_error(err);
	for (;;) {
		struct timespec tick = { 0, 500000000 };
		int sig = sigtimedwait(&set, NULL, &tick);
		if (sig > 0)
			break;
		if (sig < 0 && errno != EAGAIN && errno != EINTR)
			break;
		if (w.ser.pid)
			poll_live(&w);
	}
	httpd_stop(h);
	if (!c->quiet)
		fprintf(stderr, "jheap: the web UI stopped\n");
	/* the signals stay blocked until jheap exits: a second one (a
	 * second Ctrl-C, or timeout(1) passing one on to the process group
	 * as well as to jheap) must not turn the clean stop into death by
	 * signal once the mask is restored */
	pthread_mutex_destroy(&w.lock);
	webui_free(&w);
	return rc;
out:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_mutex_destroy(&w.lock);
	webui_free(&w);
	return rc;
}

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include "cli/options.h"
#include "lib/errors.h"

enum opt_id {
	O_TEXT, O_COLLAPSED, O_FLAMEGRAPH, O_DOT, O_SVG, O_PDF, O_PNG, O_PROTO,
	O_SPEEDSCOPE, O_CALLGRIND, O_RAW, O_SYMBOLIZED, O_SYMBOLS, O_NODEFRACTION,
	O_EDGEFRACTION, O_MAXDEGREE, O_THREAD, O_LIST, O_DISASM, O_SOURCE_DIR, O_GROWTH, O_FOCUS, O_IGNORE, O_RETAIN, O_EXCLUDE, O_INUSE_SPACE, O_INUSE_OBJECTS, O_ALLOC_SPACE, O_ALLOC_OBJECTS, O_CHURN, O_CHURN_OBJECTS,
	O_SHOW_BYTES, O_FUNCTIONS, O_LINES, O_FILES, O_ADDRESSES, O_CUM,
	O_NODECOUNT, O_FULL_NAMES, O_KEEP_ALLOCATOR, O_ALLOCATOR, O_BASE, O_DROP_NEGATIVE,
	O_DEBUGINFO_DIR, O_PERF_MAP, O_LIB_PREFIX, O_SECONDS, O_NO_SYMBOLIZE, O_NO_CACHE, O_OUTPUT, O_QUIET,
	O_HELP, O_VERSION, O_TRACES, O_TREE, O_PEEK, O_WEB, O_WEBLIST, O_GIF, O_PS, O_ADD_LIB,
	O_INTERACTIVE, O_TIMELINE, O_PEAK, O_ALL_DUMPS, O_HTTP, O_NO_BROWSER, O_PID,
	O_LABEL, O_LABEL_FROM_PATH, O_TAGFOCUS, O_TAGIGNORE, O_STRICT,
};

struct option_def {
	const char *name;      /* canonical long name, without the dashes */
	char short_name;       /* 0 when none */
	int id;
	const char *arg;       /* metavariable, or NULL when the option takes none */
	const char *help;
};

/* The option table.  Keep it in step with man/jheap.1: a test compares them. */
static const struct option_def options[] = {
	{ "text", 0, O_TEXT, NULL, "print a table of flat and cumulative values (default)" },
	{ "collapsed", 0, O_COLLAPSED, NULL, "folded stacks for flamegraph.pl and speedscope" },
	{ "flamegraph", 0, O_FLAMEGRAPH, NULL, "an interactive SVG flame graph" },
	{ "dot", 0, O_DOT, NULL, "a call graph in graphviz dot format" },
	{ "svg", 0, O_SVG, NULL, "the call graph rendered as SVG (needs graphviz)" },
	{ "pdf", 0, O_PDF, NULL, "the call graph rendered as PDF (needs graphviz)" },
	{ "png", 0, O_PNG, NULL, "the call graph rendered as PNG (needs graphviz)" },
	{ "proto", 0, O_PROTO, NULL, "gzipped pprof profile.proto for go tool pprof and profiling backends" },
	{ "speedscope", 0, O_SPEEDSCOPE, NULL, "speedscope's JSON file format" },
	{ "callgrind", 0, O_CALLGRIND, NULL, "callgrind format for KCachegrind and callgrind_annotate" },
	{ "raw", 0, O_RAW, NULL, "jeprof's symbolized profile: analyze later without the binary" },
	{ "symbolized", 0, O_SYMBOLIZED, NULL, "the same as --raw" },
	{ "traces", 0, O_TRACES, NULL, "every stack with its value, leaf first (pprof's -traces)" },
	{ "tree", 0, O_TREE, NULL, "each function with its callers and callees (pprof's -tree)" },
	{ "peek", 0, O_PEEK, "RE", "--tree for the functions matching RE only" },
	{ "web", 0, O_WEB, NULL, "the call graph as SVG, opened with $BROWSER or xdg-open" },
	{ "weblist", 0, O_WEBLIST, "RE", "--list=RE with each line's machine code: a web page, in $BROWSER" },
	{ "gif", 0, O_GIF, NULL, "the call graph rendered as GIF (needs graphviz)" },
	{ "ps", 0, O_PS, NULL, "the call graph rendered as PostScript (needs graphviz)" },
	{ "interactive", 0, O_INTERACTIVE, NULL, "open the shell even when not on a terminal" },
	{ "http", 0, O_HTTP, "[HOST]:PORT", "serve the web UI on HOST:PORT (127.0.0.1 when HOST is empty; :0 picks a port)" },
	{ "no_browser", 0, O_NO_BROWSER, NULL, "with --http, do not open a browser" },
	{ "pid", 0, O_PID, "PID", "with --http, a live timeline of the dumps of process PID under jheap record" },
	{ "symbols", 0, O_SYMBOLS, NULL, "read maps and addresses on standard input, print each address's function" },
	{ "nodefraction", 0, O_NODEFRACTION, "F", "call graph: hide nodes below this fraction of the total (0.005)" },
	{ "edgefraction", 0, O_EDGEFRACTION, "F", "call graph: hide edges below this fraction of the total (0.001)" },
	{ "maxdegree", 0, O_MAXDEGREE, "N", "call graph: at most N edges into or out of a node (8)" },
	{ "inuse_space", 0, O_INUSE_SPACE, NULL, "report bytes in use (default)" },
	{ "inuse_objects", 0, O_INUSE_OBJECTS, NULL, "report objects in use" },
	{ "alloc_space", 0, O_ALLOC_SPACE, NULL, "report bytes allocated over the run (needs prof_accum:true)" },
	{ "alloc_objects", 0, O_ALLOC_OBJECTS, NULL, "report objects allocated over the run (needs prof_accum:true)" },
	{ "churn", 0, O_CHURN, NULL, "report bytes allocated and freed again: allocated minus in use (needs prof_accum:true)" },
	{ "churn_objects", 0, O_CHURN_OBJECTS, NULL, "report objects allocated and freed again (needs prof_accum:true)" },
	{ "show_bytes", 0, O_SHOW_BYTES, NULL, "print bytes instead of MB" },
	{ "functions", 0, O_FUNCTIONS, NULL, "one row per function (default)" },
	{ "lines", 0, O_LINES, NULL, "one row per source line" },
	{ "files", 0, O_FILES, NULL, "one row per source file" },
	{ "addresses", 0, O_ADDRESSES, NULL, "one row per code address" },
	{ "cum", 0, O_CUM, NULL, "sort by cumulative value instead of flat" },
	{ "nodecount", 0, O_NODECOUNT, "N", "print at most N rows" },
	{ "full-names", 0, O_FULL_NAMES, NULL, "show whole demangled names with parameters and templates" },
	{ "keep-allocator-frames", 0, O_KEEP_ALLOCATOR, NULL, "do not remove the allocator's own frames" },
	{ "allocator", 0, O_ALLOCATOR, "RE", "count the program's functions matching RE (its malloc wrappers) as the allocator's" },
	{ "thread", 0, O_THREAD, "N", "report thread N only, or every thread with --thread='*'" },
	{ "growth", 0, O_GROWTH, NULL, "rank call sites by steady growth across a series of dumps" },
	{ "all-dumps", 0, O_ALL_DUMPS, NULL, "--growth: also fit the dump at exit and peak dumps" },
	{ "timeline", 0, O_TIMELINE, NULL, "one row per dump of a series: when, in use, change, allocated, what grew most" },
	{ "peak", 0, O_PEAK, NULL, "report the largest of a series of dumps (most bytes in use), saying which" },
	{ "list", 0, O_LIST, "RE", "annotated source of the functions matching RE" },
	{ "disasm", 0, O_DISASM, "RE", "annotated machine code of the functions matching RE (needs objdump)" },
	{ "source-dir", 0, O_SOURCE_DIR, "DIR", "look for source files under DIR (repeatable)" },
	{ "focus", 0, O_FOCUS, "RE", "only stacks with a frame matching RE (name, file:line or address)" },
	{ "ignore", 0, O_IGNORE, "RE", "drop stacks with a frame matching RE" },
	{ "retain", 0, O_RETAIN, "RE", "keep only frames whose name matches RE" },
	{ "exclude", 0, O_EXCLUDE, "RE", "remove frames whose name matches RE" },
	{ "base", 0, O_BASE, "FILE", "subtract the profile FILE or URL (repeatable)" },
	{ "strict", 0, O_STRICT, NULL, "stop at a profile that cannot be read (several are given: it is skipped)" },
	{ "label", 0, O_LABEL, "KEY=VALUE", "label the samples of the profiles after it on the line (repeatable)" },
	{ "label-from-path", 0, O_LABEL_FROM_PATH, "RE", "label each profile's samples with the named groups of RE matched on its path" },
	{ "tagfocus", 0, O_TAGFOCUS, "[KEY=]RE", "only samples with a label (KEY's) whose value matches RE" },
	{ "tagignore", 0, O_TAGIGNORE, "[KEY=]RE", "drop samples with a label (KEY's) whose value matches RE" },
	{ "drop_negative", 0, O_DROP_NEGATIVE, NULL, "with --base, clamp negative values to zero" },
	{ "debuginfo-dir", 0, O_DEBUGINFO_DIR, "DIR", "also look for separate debug files in DIR (repeatable)" },
	{ "perf-map", 0, O_PERF_MAP, "FILE", "name JIT-compiled code from FILE, a perf map (/tmp/perf-PID.map)" },
	{ "lib_prefix", 0, O_LIB_PREFIX, "DIRS", "look for libraries under these comma-separated folders first" },
	{ "seconds", 0, O_SECONDS, "N", "a URL's /pprof/profile collects for N seconds (30)" },
	{ "add_lib", 0, O_ADD_LIB, "FILE", "look up addresses no mapping covers in FILE's code, loaded at its link-time address" },
	{ "no-symbolize", 0, O_NO_SYMBOLIZE, NULL, "do not read object files; name frames module+offset" },
	{ "no-cache", 0, O_NO_CACHE, NULL, "neither read nor write the persistent symbol cache" },
	{ "output", 'o', O_OUTPUT, "FILE", "write the report to FILE instead of standard output" },
	{ "quiet", 'q', O_QUIET, NULL, "print no warnings and no progress line" },
	{ "help", 'h', O_HELP, NULL, "print this help and exit" },
	{ "version", 0, O_VERSION, NULL, "print the version and exit" },
};

#define NOPTIONS (sizeof(options) / sizeof(options[0]))

bool cli_name_eq(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);
	if (alen != blen)
		return false;
	for (size_t i = 0; i < alen; i++) {
		char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];
		if (x != y)
			return false;
	}
	return true;
}

static int push(const char ***arr, size_t *n, const char *v)
{
	const char **p = realloc(*arr, (*n + 2) * sizeof(*p));
	if (!p)
		return JH_ENOMEM;
	p[(*n)++] = v;
	p[*n] = NULL;
	*arr = p;
	return 0;
}

static int set_value(struct cli *c, enum pf_value v, int *seen, char *err, size_t errlen)
{
	if (++*seen > 1)
		return jh_err(err, errlen, JH_EUSAGE,
			      "specify at most one of --inuse_space, --inuse_objects, --alloc_space, --alloc_objects, --churn, --churn_objects");
	c->value = v;
	return 0;
}

static int set_gran(struct cli *c, enum granularity g, int *seen, char *err, size_t errlen)
{
	if (++*seen > 1)
		return jh_err(err, errlen, JH_EUSAGE,
			      "specify at most one of --functions, --lines, --files, --addresses");
	c->gran = g;
	return 0;
}

static int set_mode(struct cli *c, enum output_mode m, int *seen, char *err, size_t errlen)
{
	if (++*seen > 1 && c->mode != m)
		return jh_err(err, errlen, JH_EUSAGE, "specify only one output format");
	c->mode = m;
	c->mode_set = true;
	return 0;
}

static int number(const char *opt, const char *val, double *out, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double d = strtod(val, &end);
	if (errno || end == val || *end || d < 0 || d != d)
		return jh_err(err, errlen, JH_EUSAGE, "--%s expects a non-negative number, not '%s'",
			      opt, val);
	*out = d;
	return 0;
}

static int apply(struct cli *c, const struct option_def *o, char *val, int *nvalue,
		 int *ngran, int *nmode, char *err, size_t errlen)
{
	switch (o->id) {
	case O_TEXT: return set_mode(c, MODE_TEXT, nmode, err, errlen);
	case O_COLLAPSED: return set_mode(c, MODE_COLLAPSED, nmode, err, errlen);
	case O_FLAMEGRAPH: return set_mode(c, MODE_FLAMEGRAPH, nmode, err, errlen);
	case O_DOT: return set_mode(c, MODE_DOT, nmode, err, errlen);
	case O_SVG: return set_mode(c, MODE_SVG, nmode, err, errlen);
	case O_PDF: return set_mode(c, MODE_PDF, nmode, err, errlen);
	case O_PNG: return set_mode(c, MODE_PNG, nmode, err, errlen);
	case O_PROTO: return set_mode(c, MODE_PROTO, nmode, err, errlen);
	case O_SPEEDSCOPE: return set_mode(c, MODE_SPEEDSCOPE, nmode, err, errlen);
	case O_CALLGRIND: return set_mode(c, MODE_CALLGRIND, nmode, err, errlen);
	case O_RAW: case O_SYMBOLIZED: return set_mode(c, MODE_RAW, nmode, err, errlen);
	case O_SYMBOLS: return set_mode(c, MODE_SYMBOLS, nmode, err, errlen);
	case O_NODEFRACTION:
		c->nodefraction_set = true;
		return number(o->name, val, &c->nodefraction, err, errlen);
	case O_EDGEFRACTION: return number(o->name, val, &c->edgefraction, err, errlen);
	case O_MAXDEGREE: {
		double d;
		if (number(o->name, val, &d, err, errlen))
			return JH_EUSAGE;
		c->maxdegree = (long)d;
		return 0;
	}
	case O_INUSE_SPACE: return set_value(c, PF_INUSE_SPACE, nvalue, err, errlen);
	case O_INUSE_OBJECTS: return set_value(c, PF_INUSE_OBJECTS, nvalue, err, errlen);
	case O_ALLOC_SPACE: return set_value(c, PF_ALLOC_SPACE, nvalue, err, errlen);
	case O_ALLOC_OBJECTS: return set_value(c, PF_ALLOC_OBJECTS, nvalue, err, errlen);
	case O_CHURN: return set_value(c, PF_CHURN_SPACE, nvalue, err, errlen);
	case O_CHURN_OBJECTS: return set_value(c, PF_CHURN_OBJECTS, nvalue, err, errlen);
	case O_SHOW_BYTES: c->show_bytes = true; return 0;
	case O_FUNCTIONS: return set_gran(c, GRAN_FUNCTIONS, ngran, err, errlen);
	case O_LINES: return set_gran(c, GRAN_LINES, ngran, err, errlen);
	case O_FILES: return set_gran(c, GRAN_FILES, ngran, err, errlen);
	case O_ADDRESSES: return set_gran(c, GRAN_ADDRESSES, ngran, err, errlen);
	case O_CUM: c->cum = true; return 0;
	case O_NODECOUNT: {
		char *end;
		errno = 0;
		long n = strtol(val, &end, 10);
		if (errno || end == val || *end || n < 0)
			return jh_err(err, errlen, JH_EUSAGE,
				      "--nodecount expects a number of rows, not '%s'", val);
		c->nodecount = n;
		return 0;
	}
	case O_THREAD: {
		char *end;
		if (strcmp(val, "*")) {
			errno = 0;
			long long t = strtoll(val, &end, 10);
			if (errno || end == val || *end || t < 0)
				return jh_err(err, errlen, JH_EUSAGE,
					      "--thread expects a thread number or '*', not '%s'", val);
		}
		c->thread = val;
		return 0;
	}
	case O_LIST:
		c->list = val;
		return set_mode(c, MODE_LIST, nmode, err, errlen);
	case O_GROWTH: c->growth = true; return 0;
	case O_ALL_DUMPS: c->all_dumps = true; return 0;
	case O_TIMELINE: return set_mode(c, MODE_TIMELINE, nmode, err, errlen);
	case O_PEAK: c->peak = true; return 0;
	case O_DISASM:
		c->disasm = val;
		return set_mode(c, MODE_DISASM, nmode, err, errlen);
	case O_TRACES: return set_mode(c, MODE_TRACES, nmode, err, errlen);
	case O_TREE: return set_mode(c, MODE_TREE, nmode, err, errlen);
	case O_PEEK:
		c->peek = val;
		return set_mode(c, MODE_TREE, nmode, err, errlen);
	case O_WEB: return set_mode(c, MODE_WEB, nmode, err, errlen);
	case O_WEBLIST:
		c->weblist = val;
		return set_mode(c, MODE_WEBLIST, nmode, err, errlen);
	case O_GIF: return set_mode(c, MODE_GIF, nmode, err, errlen);
	case O_PS: return set_mode(c, MODE_PS, nmode, err, errlen);
	case O_ADD_LIB: return push(&c->add_libs, &c->nadd_libs, val);
	case O_INTERACTIVE: c->interactive = true; return 0;
	case O_HTTP: c->http = val; return 0;
	case O_NO_BROWSER: c->no_browser = true; return 0;
	case O_PID: c->pid = val; return 0;
	case O_SOURCE_DIR: return push(&c->source_dirs, &c->nsource, val);
	case O_FOCUS: c->focus = val; return 0;
	case O_IGNORE: c->ignore = val; return 0;
	case O_RETAIN: c->retain = val; return 0;
	case O_EXCLUDE: c->exclude = val; return 0;
	case O_FULL_NAMES: c->full_names = true; return 0;
	case O_KEEP_ALLOCATOR: c->keep_allocator = true; return 0;
	case O_ALLOCATOR: c->allocator = *val ? val : NULL; return 0;
	case O_BASE: return push(&c->bases, &c->nbases, val);
	case O_STRICT: c->strict = true; return 0;
	case O_LABEL: {
		const char *eq = strchr(val, '=');
		if (!eq || eq == val)
			return jh_err(err, errlen, JH_EUSAGE, "--label expects KEY=VALUE, not '%s'", val);
		struct cli_label *l = realloc(c->labels, (c->nlabels + 1) * sizeof(*l));
		if (!l)
			return JH_ENOMEM;
		c->labels = l;
		/* for the PROFILEs and --base profiles that follow it */
		l[c->nlabels++] = (struct cli_label){ val, c->nargs, c->nbases };
		return 0;
	}
	case O_LABEL_FROM_PATH: c->label_from_path = val; return 0;
	case O_TAGFOCUS: c->tagfocus = *val ? val : NULL; return 0;
	case O_TAGIGNORE: c->tagignore = *val ? val : NULL; return 0;
	case O_DROP_NEGATIVE: c->drop_negative = true; return 0;
	case O_DEBUGINFO_DIR: return push(&c->debuginfo_dirs, &c->ndebug, val);
	case O_PERF_MAP: c->perf_map = val; return 0;
	case O_LIB_PREFIX:
		/* comma-separated; trailing slashes removed as jeprof does */
		for (char *s = strtok(val, ","); s; s = strtok(NULL, ",")) {
			size_t n = strlen(s);
			while (n > 1 && s[n - 1] == '/')
				s[--n] = 0;
			if (n && push(&c->lib_prefixes, &c->nprefix, s))
				return JH_ENOMEM;
		}
		return 0;
	case O_SECONDS: {
		char *end;
		errno = 0;
		long n = strtol(val, &end, 10);
		if (errno || end == val || *end || n < 0 || n > 86400)
			return jh_err(err, errlen, JH_EUSAGE,
				      "--seconds expects a whole number of seconds (0 to 86400), not '%s'", val);
		c->seconds = n;
		return 0;
	}
	case O_NO_SYMBOLIZE: c->no_symbolize = true; return 0;
	case O_NO_CACHE: c->no_cache = true; return 0;
	case O_OUTPUT: c->output = val; return 0;
	case O_QUIET: c->quiet = true; return 0;
	case O_HELP: c->help = true; return 0;
	case O_VERSION: c->version = true; return 0;
	}
	return 0;
}

int cli_parse(struct cli *c, int argc, char **argv, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->value = PF_INUSE_SPACE;
	c->nodecount = -1;
	c->nodefraction = 0.005;
	c->edgefraction = 0.001;
	c->maxdegree = 8;
	c->seconds = 30;
	int nvalue = 0, ngran = 0, nmode = 0;
	bool only_args = false;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i];
		if (only_args || a[0] != '-' || !a[1]) {
			if (push(&c->args, &c->nargs, a))
				return JH_ENOMEM;
			continue;
		}
		if (!strcmp(a, "--")) {
			only_args = true;
			continue;
		}
		const struct option_def *o = NULL;
		char *val = NULL;
		if (a[1] != '-' && a[2] == 0) {
			for (size_t k = 0; k < NOPTIONS; k++)
				if (options[k].short_name == a[1])
					o = &options[k];
			if (!o)
				return jh_err(err, errlen, JH_EUSAGE, "unknown option '%s'", a);
		} else {
			/* --name, --name=value, and jeprof's single-dash -name */
			char *name = a + (a[1] == '-' ? 2 : 1);
			char *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			for (size_t k = 0; k < NOPTIONS; k++)
				if (cli_name_eq(name, len, options[k].name))
					o = &options[k];
			if (!o) {
				const char *near = cli_nearest_option(name, len);
				if (near)
					return jh_err(err, errlen, JH_EUSAGE,
						      "unknown option '%.*s'; the nearest jheap has is '--%s'",
						      (int)(len + (size_t)(name - a)), a, near);
				return jh_err(err, errlen, JH_EUSAGE, "unknown option '%.*s'",
					      (int)(len + (size_t)(name - a)), a);
			}
			if (eq) {
				if (!o->arg)
					return jh_err(err, errlen, JH_EUSAGE,
						      "option '--%s' takes no value", o->name);
				val = eq + 1;
			}
		}
		if (o->arg && !val) {
			if (i + 1 >= argc)
				return jh_err(err, errlen, JH_EUSAGE, "option '--%s' needs a value (%s)",
					      o->name, o->arg);
			val = argv[++i];
		}
		int rc = apply(c, o, val, &nvalue, &ngran, &nmode, err, errlen);
		if (rc)
			return rc == JH_ENOMEM ? jh_err(err, errlen, rc, "out of memory") : rc;
	}
	return 0;
}

int cli_check_report(const struct cli *c, char *err, size_t errlen)
{
	if (c->thread && !strcmp(c->thread, "*") && c->mode != MODE_TEXT && c->mode != MODE_DOT &&
	    c->mode != MODE_COLLAPSED && c->mode != MODE_CALLGRIND && c->mode != MODE_TRACES &&
	    c->mode != MODE_TREE)
		return jh_err(err, errlen, JH_EUSAGE,
			      "--thread='*' writes one report per thread and works with --text, --traces, --tree, --dot, --collapsed and --callgrind; pick one thread for this format");
	return 0;
}

/* --http, --pid, --no_browser: the web UI's own rules. */
static int check_http(const struct cli *c, size_t nprofiles, char *err, size_t errlen)
{
	if (!c->http)
		return jh_err(err, errlen, JH_EUSAGE, "--%s goes with --http=[HOST]:PORT",
			      c->pid ? "pid" : "no_browser");
	if (c->mode_set || c->output || c->growth || c->interactive)
		return jh_err(err, errlen, JH_EUSAGE,
			      "--http serves every view; it does not combine with an output format, -o, --growth or --interactive");
	if (c->pid) {
		const char *s = c->pid;
		char *end;
		errno = 0;
		long v = *s >= '0' && *s <= '9' ? strtol(s, &end, 10) : -1;
		if (nprofiles || c->nbases || v < 1 || v > INT_MAX || errno || *end)
			return jh_err(err, errlen, JH_EUSAGE,
				      "--pid=PID takes the dumps of process PID (a number), without PROFILE or --base");
	} else if (!nprofiles) {
		snprintf(err, errlen, "no profile given\nUsage: jheap --http=[HOST]:PORT [BINARY] PROFILE... | --pid=PID");
		return JH_EUSAGE;
	}
	return 0;
}

int cli_check(const struct cli *c, size_t nprofiles, char *err, size_t errlen)
{
	if (c->http || c->pid || c->no_browser)
		return check_http(c, nprofiles, err, errlen);
	if (!nprofiles) {
		/* two lines, the usage after the message (jh_err would escape
		 * the newline; nothing here quotes input) */
		snprintf(err, errlen, "no profile given\nUsage: jheap [OPTIONS] [BINARY] PROFILE...");
		return JH_EUSAGE;
	}
	if (c->interactive && (c->mode_set || c->output || c->growth))
		return jh_err(err, errlen, JH_EUSAGE,
			      "--interactive opens the shell; it does not combine with an output format, -o or --growth");
	if (c->growth && (c->nbases || c->thread))
		return jh_err(err, errlen, JH_EUSAGE,
			      "--growth reads a series of dumps of one process; it does not combine with --base or --thread");
	if (c->growth && (c->mode == MODE_RAW || c->mode == MODE_LIST))
		return jh_err(err, errlen, JH_EUSAGE,
			      "--growth works with --text, --collapsed, --flamegraph, --proto, --dot, --callgrind and --speedscope");
	/* the reports of a series (cli/seriesload.h orders the dumps, leaves
	 * out those of another kind and says when fewer than two are left) */
	if (c->mode == MODE_TIMELINE && (c->growth || c->peak || c->nbases || c->thread))
		return jh_err(err, errlen, JH_EUSAGE,
			      "--timeline is a report of its own: one row per dump of a series; it does not combine with --growth, --peak, --base or --thread");
	if (c->peak && c->growth)
		return jh_err(err, errlen, JH_EUSAGE, "--peak reports one dump, --growth fits a series: pick one");
	if (c->all_dumps && !c->growth)
		return jh_err(err, errlen, JH_EUSAGE,
			      "--all-dumps says which dumps --growth fits; it goes with --growth");
	return cli_check_report(c, err, errlen);
}

void cli_release(struct cli *c)
{
	free(c->add_libs);
	free(c->debuginfo_dirs);
	free(c->lib_prefixes);
	free(c->bases);
	free(c->labels);
	free(c->source_dirs);
	free(c->args);
	memset(c, 0, sizeof(*c));
}

void cli_help_line(FILE *out, char short_name, const char *name, const char *arg,
		   const char *help, int width)
{
	char left[64];
	if (short_name)
		snprintf(left, sizeof(left), "-%c, --%s%s%s", short_name, name, arg ? " " : "",
			 arg ? arg : "");
	else
		snprintf(left, sizeof(left), "    --%s%s%s", name, arg ? "=" : "", arg ? arg : "");
	fprintf(out, "  %-*s %s\n", width, left, help);
}

void cli_help(FILE *out)
{
	fputs("Usage: jheap [OPTIONS] [BINARY] PROFILE...\n"
	      "   or: jheap record [OPTIONS] [--] PROGRAM [ARGS...]\n"
	      "   or: jheap dump [OPTIONS] PID [REPORT OPTIONS] [BINARY]\n"
	      "   or: jheap ctl [OPTIONS] PID on|off|reset|sample SIZE|status|dump|peaks on|off\n"
	      "Analyze heap profiles. BINARY is optional: the program is found from the\n"
	      "dump's MAPPED_LIBRARIES; when given, it replaces that path. Several\n"
	      "profiles are summed. Options may come anywhere on the line, as\n"
	      "--opt=value or --opt value; '-' and '_' in option names are alike.\n\n"
	      "Inputs (PROFILE, --base), told by their content:\n"
	      "  FILE    a jemalloc heap dump, a gperftools heap profile, jeprof's\n"
	      "          symbolized profile (--raw) or a pprof profile.proto; gzipped or not\n"
	      "  -       standard input:  curl -s URL | jheap ./app -\n"
	      "  URL     fetched as jeprof does, saved in $JHEAP_TMPDIR or ~/jheap:\n"
	      "          http[s]://host:port/path, or host:port/path when no file has that\n"
	      "          name; a path ending in a pprof page (/pprof/heap) is fetched as\n"
	      "          is, others get /pprof/profile?seconds=N (--seconds), a URL with a\n"
	      "          query string exactly as written; names from /pprof/symbol when\n"
	      "          the program is not on this machine. For example:\n"
	      "            jheap ./databend-query http://localhost:8080/debug/mem\n"
	      "            jheap ./app 'localhost:8080/mtev/heap_profile?trigger_dump=true'\n"
	      "            jheap http://localhost:8000/pprof/heap\n\n"
	      "Options:\n", out);
	for (size_t k = 0; k < NOPTIONS; k++)
		cli_help_line(out, options[k].short_name, options[k].name, options[k].arg,
			      options[k].help, 28);
	fputs("\nThe subcommands take dumps of a running program (jheap SUBCOMMAND --help).\n"
	      "Exit status: 0 success, 1 data error or incomplete result, 2 usage error.\n"
	      "See jheap(1) for details.\n", out);
}

size_t cli_edit_distance(const char *a, size_t n, const char *b, size_t m, size_t limit)
{
	if (n > 64 || m > 64)
		return limit + 1;
	size_t d[65][65];
	for (size_t i = 0; i <= n; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= m; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= n; i++) {
		for (size_t j = 1; j <= m; j++) {
			char x = a[i - 1] == '-' ? '_' : a[i - 1], y = b[j - 1] == '-' ? '_' : b[j - 1];
			size_t v = d[i - 1][j - 1] + (x != y);
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return d[n][m] <= limit ? d[n][m] : limit + 1;
}

/* jeprof's options that jheap has no option of that name for, and what
 * comes nearest in jheap. */
static const struct { const char *jeprof, *jheap; } jeprof_only[] = {
	{"gv", "web"},                  /* a viewer for the call graph */
	{"evince", "pdf"},              /* a PDF viewer for the call graph */
	{"debug-syms-by-id", "debuginfo-dir"}, /* jheap always looks by build id */
};

const char *cli_nearest_option(const char *name, size_t len)
{
	for (size_t k = 0; k < sizeof(jeprof_only) / sizeof(jeprof_only[0]); k++)
		if (cli_name_eq(name, len, jeprof_only[k].jeprof))
			return jeprof_only[k].jheap;
	/* a unique prefix first (Getopt::Long, which jeprof uses, takes
	 * one as the option itself) */
	const char *prefix = NULL;
	size_t nprefix = 0;
	for (size_t k = 0; k < NOPTIONS && len >= 2; k++) {
		size_t m = strlen(options[k].name);
		if (len < m && cli_edit_distance(name, len, options[k].name, len, 0) == 0) {
			prefix = options[k].name;
			nprefix++;
		}
	}
	if (nprefix == 1)
		return prefix;
	/* else the fewest edits: at most a third of the name, at most 3 */
	size_t limit = len / 3 < 3 ? len / 3 : 3, best = limit + 1;
	const char *near = NULL;
	for (size_t k = 0; k < NOPTIONS; k++) {
		size_t dist = cli_edit_distance(name, len, options[k].name, strlen(options[k].name), limit);
		if (dist < best) {
			best = dist;
			near = options[k].name;
		}
	}
	return near;
}

/* The options that choose how a loaded model is reported, which the shell
 * may change between commands (the others choose what is loaded, or are
 * outputs: the shell has commands for those). */
static bool is_setting(int id)
{
	switch (id) {
	case O_NODEFRACTION: case O_EDGEFRACTION: case O_MAXDEGREE:
	case O_INUSE_SPACE: case O_INUSE_OBJECTS: case O_ALLOC_SPACE: case O_ALLOC_OBJECTS:
	case O_CHURN: case O_CHURN_OBJECTS:
	case O_SHOW_BYTES: case O_FUNCTIONS: case O_LINES: case O_FILES: case O_ADDRESSES:
	case O_CUM: case O_NODECOUNT: case O_FULL_NAMES: case O_KEEP_ALLOCATOR: case O_ALLOCATOR:
	case O_THREAD:
	case O_FOCUS: case O_IGNORE: case O_RETAIN: case O_EXCLUDE:
	case O_TAGFOCUS: case O_TAGIGNORE:
		return true;
	default:
		return false;
	}
}

int cli_apply(struct cli *c, const char *name, char *value, char *err, size_t errlen)
{
	const struct option_def *o = NULL;
	for (size_t k = 0; k < NOPTIONS && !o; k++)
		if (cli_name_eq(name, strlen(name), options[k].name))
			o = &options[k];
	if (!o) {
		const char *near = cli_nearest_option(name, strlen(name));
		if (near)
			return jh_err(err, errlen, JH_EUSAGE, "no option '%s'; the nearest is '%s'", name, near);
		return jh_err(err, errlen, JH_EUSAGE, "no option '%s'", name);
	}
	if (!is_setting(o->id))
		return jh_err(err, errlen, JH_EUSAGE, "'%s' is not a setting of a loaded profile", o->name);
	if (o->arg && !value)
		return jh_err(err, errlen, JH_EUSAGE, "'%s' needs a value: %s=%s", o->name, o->name, o->arg);
	if (!o->arg && value)
		return jh_err(err, errlen, JH_EUSAGE, "'%s' takes no value", o->name);
	int nvalue = 0, ngran = 0, nmode = 0;
	int rc = apply(c, o, value, &nvalue, &ngran, &nmode, err, errlen);
	return rc == JH_ENOMEM ? jh_err(err, errlen, rc, "out of memory") : rc;
}

const char *cli_option_help(const char *name, const char **arg)
{
	for (size_t k = 0; k < NOPTIONS; k++)
		if (cli_name_eq(name, strlen(name), options[k].name)) {
			if (arg)
				*arg = options[k].arg;
			return options[k].help;
		}
	return NULL;
}

void cli_each_setting(void (*fn)(void *ctx, const char *name, bool takes_value), void *ctx)
{
	for (size_t k = 0; k < NOPTIONS; k++)
		if (is_setting(options[k].id))
			fn(ctx, options[k].name, options[k].arg != NULL);
}

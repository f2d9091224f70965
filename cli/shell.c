/* The interactive shell (see shell.h): commands, settings, help and
 * completion; the line editing itself is cli/lineedit.c. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <dirent.h>
#include <errno.h>
#include <pcre2.h>
#include <unistd.h>

#include "analyzer/aggregate.h"
#include "lib/array.h"
#include "cli/lineedit.h"
#include "cli/shell.h"

/* Where a command's report goes when no "> FILE" is given. */
enum target {
	T_TERMINAL,   /* printed */
	T_BROWSER,    /* written to a temporary file and opened in the browser */
	T_FILE,       /* binary: a file must be named */
};

struct command {
	const char *name;
	enum output_mode mode;
	enum target target;
	bool takes_re;            /* its words are the routine's regular expression */
	const char *args, *help, *option;
};

static const struct command commands[] = {
	{ "top", MODE_TEXT, T_TERMINAL, false, "[N] [RE...] [-RE...] [--OPTION...]",
	  "the N entries with the largest values (10, or nodecount=N)", "--text --nodecount=N" },
	{ "text", MODE_TEXT, T_TERMINAL, false, "[RE...] [-RE...] [--OPTION...]",
	  "the whole table", "--text" },
	{ "traces", MODE_TRACES, T_TERMINAL, false, "[RE...] [-RE...]",
	  "every stack with its value, leaf first", "--traces" },
	{ "tree", MODE_TREE, T_TERMINAL, false, "[RE...] [-RE...]",
	  "each function with its callers and callees", "--tree" },
	{ "peek", MODE_TREE, T_TERMINAL, true, "RE",
	  "the callers and callees of the functions matching RE", "--peek=RE" },
	{ "list", MODE_LIST, T_TERMINAL, true, "RE",
	  "the source of the functions matching RE, with values per line", "--list=RE" },
	{ "disasm", MODE_DISASM, T_TERMINAL, true, "RE",
	  "the machine code of the functions matching RE, with values", "--disasm=RE" },
	{ "weblist", MODE_WEBLIST, T_BROWSER, true, "RE",
	  "list RE with each line's machine code under it, in the browser", "--weblist=RE" },
	{ "web", MODE_WEB, T_BROWSER, false, "[RE...] [-RE...]",
	  "the call graph as SVG, in the browser", "--web" },
	{ "svg", MODE_SVG, T_BROWSER, false, "[> FILE]",
	  "the call graph as SVG: in the browser, or into FILE", "--svg" },
	{ "flamegraph", MODE_FLAMEGRAPH, T_BROWSER, false, "[> FILE]",
	  "the flame graph: in the browser, or into FILE", "--flamegraph" },
	{ "timeline", MODE_TIMELINE, T_TERMINAL, false, "[RE...] [--OPTION...]",
	  "one row per dump of the series: when, in use, change, what grew most", "--timeline" },
	{ "dot", MODE_DOT, T_TERMINAL, false, "[> FILE]", "the call graph in graphviz's dot language", "--dot" },
	{ "collapsed", MODE_COLLAPSED, T_TERMINAL, false, "[> FILE]", "folded stacks", "--collapsed" },
	{ "callgrind", MODE_CALLGRIND, T_TERMINAL, false, "[FILE]", "callgrind's format (into FILE, as jeprof's)", "--callgrind" },
	{ "speedscope", MODE_SPEEDSCOPE, T_TERMINAL, false, "[> FILE]", "speedscope's JSON", "--speedscope" },
	{ "raw", MODE_RAW, T_TERMINAL, false, "[> FILE]", "jeprof's symbolized profile", "--raw" },
	{ "proto", MODE_PROTO, T_FILE, false, "> FILE", "a gzipped pprof profile.proto", "--proto" },
	{ "pdf", MODE_PDF, T_FILE, false, "> FILE", "the call graph as PDF", "--pdf" },
	{ "png", MODE_PNG, T_FILE, false, "> FILE", "the call graph as PNG", "--png" },
	{ "gif", MODE_GIF, T_FILE, false, "> FILE", "the call graph as GIF", "--gif" },
	{ "ps", MODE_PS, T_FILE, false, "> FILE", "the call graph as PostScript", "--ps" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* Words that are not reports. */
static const char *const others[] = { "help", "options", "quit", "exit", "peak" };

/* The settings the shell knows by a name of its own, beside the options
 * cli_apply() takes: their values are files or choices. */
static const char *const extra_settings[] = { "base", "sample_index" };

struct shell {
	struct driver *d;
	struct cli set;           /* the settings: the command line's, as changed */
	const char *bases[2];     /* base=FILE */
	char **owned;             /* strings the settings point to */
	size_t nowned, cap_owned;
	char **names;             /* function names for completion, sorted, unique */
	size_t nnames;
	bool names_made;
	bool quit;
	bool history_warned;
	struct lineedit *le;
};

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("jheap: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static char *keep(struct shell *sh, const char *s, size_t n)
{
	char *copy = strndup(s, n);
	if (!copy || JH_PUSH(sh->owned, sh->nowned, sh->cap_owned, copy)) {
		free(copy);
		return NULL;
	}
	return copy;
}

static const struct command *find_command(const char *word)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(word, commands[i].name))
			return &commands[i];
	return NULL;
}

/* --- settings -------------------------------------------------------- */

static const char *value_name(enum pf_value v)
{
	static const char *const n[] = { "inuse_objects", "inuse_space", "alloc_objects", "alloc_space",
					 "churn_objects", "churn" };
	return v >= 0 && v < PF_NALL_VALUES ? n[v] : "?";
}

static const char *gran_name(enum granularity g)
{
	static const char *const n[] = { "functions", "lines", "files", "addresses" };
	return n[g];
}

static bool is_false(const char *v)
{
	return !strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "off");
}

static bool bad_regex(const char *name, const char *re)
{
	int code;
	PCRE2_SIZE off;
	pcre2_code *c = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
	if (c) {
		pcre2_code_free(c);
		return false;
	}
	PCRE2_UCHAR msg[200];
	pcre2_get_error_message(code, msg, sizeof(msg));
	say("%s: bad regular expression '%s' at offset %zu: %s", name, re, (size_t)off, (const char *)msg);
	return true;
}

/* Whether the model has the values V needs (accumulated counts). */
static bool value_ok(struct shell *sh, enum pf_value v)
{
	const struct profile *p = driver_profile(sh->d);
	if (v >= PF_ALLOC_OBJECTS && !p->has_alloc && p->nsamples) {
		say("%s: the profile has no allocation counts (the program ran without MALLOC_CONF=prof_accum:true); use inuse_space or inuse_objects",
		    value_name(v));
		return false;
	}
	return true;
}

/* base=FILE (or base= to stop subtracting): the model is loaded again. */
static void set_base(struct shell *sh, const char *file)
{
	struct cli t = sh->set;
	if (*file) {
		char *f = keep(sh, file, strlen(file));
		if (!f) {
			say("out of memory");
			return;
		}
		if (access(f, R_OK)) {
			say("cannot open '%s': %s", f, strerror(errno));
			return;
		}
		sh->bases[0] = f;
		sh->bases[1] = NULL;
		t.bases = sh->bases;
		t.nbases = 1;
	} else {
		t.bases = NULL;
		t.nbases = 0;
	}
	if (driver_reload(sh->d, &t) == EXIT_OK) {
		sh->set = t;
		sh->names_made = false;
	}
}

/* peak, peak off: the reports that follow are of the largest dump of
 * the series, or of all the dumps again; the model is loaded again (the
 * driver says which dump it is). */
static void set_peak(struct shell *sh, bool on)
{
	struct cli t = sh->set;
	t.peak = on;
	t.mode = MODE_TEXT;   /* not a timeline's load; the ranges stay */
	struct driver *d = sh->d;
	if (driver_reload(d, &t) == EXIT_OK) {
		t.mode = sh->set.mode;
		sh->set = t;
		sh->names_made = false;
		if (!on && !d->cli.quiet)
			say("the reports are of all %zu profiles again", d->in.npaths);
	}
}

/* One "name", "name=value" or "--name[=value]" setting into C; prints
 * what is wrong and returns false.  BASE_OK: base= may be given (not in
 * a report command's own options). */
static bool apply_setting(struct shell *sh, struct cli *c, const char *word, bool base_ok)
{
	while (*word == '-')
		word++;
	const char *eq = strchr(word, '=');
	size_t nlen = eq ? (size_t)(eq - word) : strlen(word);
	char *name = keep(sh, word, nlen);
	char *val = eq ? keep(sh, eq + 1, strlen(eq + 1)) : NULL;
	if (!name || (eq && !val)) {
		say("out of memory");
		return false;
	}
	for (char *s = name; *s; s++)
		if (*s == '-')
			*s = '_';
	if (!strcmp(name, "base")) {
		if (!base_ok) {
			say("base=FILE is a setting of its own: give it before the command");
			return false;
		}
		set_base(sh, val ? val : "");
		return true;
	}
	if (!strcmp(name, "sample_index")) {   /* pprof's name for the value */
		if (!val) {
			say("sample_index needs a value: sample_index=inuse_space");
			return false;
		}
		name = val;
		val = NULL;
	}
	/* empty values clear; booleans take =false */
	if (val && !*val && (!strcmp(name, "focus") || !strcmp(name, "ignore") ||
			     !strcmp(name, "retain") || !strcmp(name, "exclude") ||
			     !strcmp(name, "allocator") ||
			     !strcmp(name, "thread") || !strcmp(name, "nodecount"))) {
		if (!strcmp(name, "focus")) c->focus = NULL;
		else if (!strcmp(name, "ignore")) c->ignore = NULL;
		else if (!strcmp(name, "retain")) c->retain = NULL;
		else if (!strcmp(name, "exclude")) c->exclude = NULL;
		else if (!strcmp(name, "allocator")) c->allocator = NULL;
		else if (!strcmp(name, "thread")) c->thread = NULL;
		else c->nodecount = -1;
		return true;
	}
	if (val && (!strcmp(name, "show_bytes") || !strcmp(name, "cum") ||
		    !strcmp(name, "full_names") || !strcmp(name, "keep_allocator_frames"))) {
		bool on = !is_false(val);
		if (!strcmp(name, "show_bytes")) c->show_bytes = on;
		else if (!strcmp(name, "cum")) c->cum = on;
		else if (!strcmp(name, "full_names")) c->full_names = on;
		else c->keep_allocator = on;
		return true;
	}
	if (val && (!strcmp(name, "focus") || !strcmp(name, "ignore") || !strcmp(name, "retain") ||
		    !strcmp(name, "exclude") || !strcmp(name, "allocator")) && bad_regex(name, val))
		return false;
	struct cli t = *c;
	char err[512];
	if (cli_apply(&t, name, val, err, sizeof(err))) {
		say("%s", err);
		return false;
	}
	if (t.value != c->value && !value_ok(sh, t.value))
		return false;
	*c = t;
	return true;
}

static void show_options(struct shell *sh)
{
	const struct cli *c = &sh->set;
	printf("  %-22s %s\n", "value", value_name(c->value));
	printf("  %-22s %s\n", "granularity", gran_name(c->gran));
	printf("  %-22s %s\n", "focus", c->focus ? c->focus : "");
	printf("  %-22s %s\n", "ignore", c->ignore ? c->ignore : "");
	printf("  %-22s %s\n", "retain", c->retain ? c->retain : "");
	printf("  %-22s %s\n", "exclude", c->exclude ? c->exclude : "");
	printf("  %-22s %s\n", "show_bytes", c->show_bytes ? "true" : "false");
	printf("  %-22s %s\n", "cum", c->cum ? "true" : "false");
	if (c->nodecount >= 0)
		printf("  %-22s %ld\n", "nodecount", c->nodecount);
	else
		printf("  %-22s %s\n", "nodecount", "(top: 10, others: all)");
	printf("  %-22s %s\n", "thread", c->thread ? c->thread : "(all)");
	printf("  %-22s %s\n", "peak", c->peak ? "on: the largest dump" : "off");
	printf("  %-22s", "base");
	for (size_t i = 0; i < c->nbases; i++)
		printf(" %s", c->bases[i]);
	printf("\n  %-22s %s\n", "full_names", c->full_names ? "true" : "false");
	printf("  %-22s %s\n", "keep_allocator_frames", c->keep_allocator ? "true" : "false");
	printf("  %-22s %s\n", "allocator", c->allocator ? c->allocator : "");
	/* the command line that gives the same reports */
	printf("The same reports from the command line: jheap --%s", value_name(c->value));
	if (c->gran != GRAN_FUNCTIONS)
		printf(" --%s", gran_name(c->gran));
	const char *res[] = { c->focus, c->ignore, c->retain, c->exclude, c->allocator };
	const char *names[] = { "focus", "ignore", "retain", "exclude", "allocator" };
	for (int i = 0; i < 5; i++)
		if (res[i])
			printf(" --%s='%s'", names[i], res[i]);
	if (c->show_bytes)
		printf(" --show_bytes");
	if (c->cum)
		printf(" --cum");
	if (c->nodecount >= 0)
		printf(" --nodecount=%ld", c->nodecount);
	if (c->thread)
		printf(" --thread='%s'", c->thread);
	if (c->peak)
		printf(" --peak");
	for (size_t i = 0; i < c->nbases; i++)
		printf(" --base=%s", c->bases[i]);
	if (c->full_names)
		printf(" --full-names");
	if (c->keep_allocator)
		printf(" --keep-allocator-frames");
	printf(" ...\n");
}

/* --- help ------------------------------------------------------------ */

static void help(const char *topic)
{
	if (topic) {
		const struct command *cmd = find_command(topic);
		if (cmd) {
			printf("%s %s\n  %s.\n  The same as jheap %s%s.\n", cmd->name, cmd->args, cmd->help,
			       cmd->option, cmd->target == T_FILE ? " -o FILE"
			       : cmd->target == T_BROWSER && !cmd->takes_re && strcmp(cmd->name, "web") ? " -o FILE, or --web" : "");
			if (!cmd->takes_re && cmd->target != T_FILE)
				printf("  Words after it narrow this one report: RE is a --focus, -RE an --ignore\n"
				       "  (joined with '|'), --OPTION[=VALUE] any setting; '> FILE' writes the report to FILE.\n");
			return;
		}
		const char *arg = NULL;
		const char *h = cli_option_help(topic, &arg);
		if (h) {
			printf("%s%s%s\n  %s; applies to the commands that follow.\n  The same as jheap --%s%s%s.\n",
			       topic, arg ? "=" : "", arg ? arg : "", h, topic, arg ? "=" : "", arg ? arg : "");
			return;
		}
		if (!strcmp(topic, "base")) {
			printf("base=FILE\n  subtract the profile FILE (base= stops it); the profiles are loaded again.\n"
			       "  The same as jheap --base=FILE.\n");
			return;
		}
		if (!strcmp(topic, "peak")) {
			printf("peak [on|off]\n  the reports that follow are of the largest of the dumps (most bytes in use),\n"
			       "  which it names; 'peak off' goes back to all of them.  The same as jheap --peak.\n");
			return;
		}
		say("no command or setting '%s'; 'help' lists them", topic);
		return;
	}
	printf("Reports (each prints what the option named at its right prints):\n");
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char left[64];
		snprintf(left, sizeof(left), "%s %s", commands[i].name, commands[i].args);
		printf("  %-34s %s\n", left, commands[i].help);
	}
	printf("  Words after a report narrow it: RE is a focus, -RE an ignore, --OPTION a setting;\n"
	       "  '> FILE' writes it to FILE.\n"
	       "Settings (apply to the reports after them; 'options' shows them):\n"
	       "  focus=RE ignore=RE retain=RE exclude=RE        filters (empty: none)\n"
	       "  inuse_space inuse_objects alloc_space alloc_objects   the value\n"
	       "  functions lines files addresses                  the granularity\n"
	       "  show_bytes[=false] cum[=false] nodecount=N thread=N base=FILE\n"
	       "  allocator=RE                                     the program's malloc wrappers\n"
	       "Series of dumps: timeline (a row per dump), peak [on|off] (the largest dump).\n"
	       "Other commands: options, help [COMMAND], quit (or Ctrl-D).\n"
	       "Tab completes commands, settings, function names and files.\n");
}

/* --- reports --------------------------------------------------------- */

/* Joins a regular expression part to *RE with '|'. */
static bool join_re(struct shell *sh, const char **re, const char *part)
{
	if (!*re) {
		*re = part;
		return true;
	}
	size_t n = strlen(*re) + strlen(part) + 2;
	char *j = malloc(n);
	if (!j)
		return false;
	snprintf(j, n, "%s|%s", *re, part);
	char *k = keep(sh, j, n - 1);
	free(j);
	if (k)
		*re = k;
	return k != NULL;
}

static void run_report(struct shell *sh, const struct command *cmd, long topn, char **words,
		       size_t nwords, const char *file)
{
	struct cli o = sh->set;
	o.mode = cmd->mode;
	o.mode_set = true;
	o.output = NULL;
	o.list = o.disasm = o.peek = o.weblist = NULL;
	const char *focus = NULL, *ignore = NULL, *routine = NULL;
	for (size_t i = 0; i < nwords; i++) {
		const char *w = words[i];
		if (w[0] == '-' && w[1] == '-' && w[2]) {
			if (!apply_setting(sh, &o, w, false))
				return;
		} else if (w[0] == '-' && w[1]) {
			if (bad_regex("ignore", w + 1) || !join_re(sh, &ignore, w + 1))
				return;
		} else if (!join_re(sh, cmd->takes_re ? &routine : &focus, w)) {
			return;
		}
	}
	if (focus) {
		if (bad_regex("focus", focus))
			return;
		o.focus = focus;
	}
	if (ignore)
		o.ignore = ignore;
	if (cmd->takes_re) {
		if (!routine) {
			say("%s needs a regular expression: %s RE", cmd->name, cmd->name);
			return;
		}
		if (bad_regex(cmd->name, routine))
			return;
		switch (cmd->mode) {
		case MODE_LIST: o.list = routine; break;
		case MODE_DISASM: o.disasm = routine; break;
		case MODE_WEBLIST: o.weblist = routine; break;
		default: o.peek = routine; break;
		}
	}
	if (!strcmp(cmd->name, "top"))
		o.nodecount = topn >= 0 ? topn : o.nodecount >= 0 ? o.nodecount : 10;
	if (!file && cmd->target == T_FILE) {
		say("%s writes binary data: name a file, as in '%s > heap.%s'", cmd->name, cmd->name,
		    cmd->mode == MODE_PROTO ? "pb.gz" : cmd->name);
		return;
	}
	struct driver *d = sh->d;
	if (!driver_loaded_for(d, &o) && driver_reload(d, &o))
		return;
	if (file) {
		if (driver_write_file(d, &o, file) == EXIT_OK && !d->cli.quiet)
			say("wrote %s", file);
	} else if (cmd->target == T_BROWSER) {
		driver_show(d, &o, NULL);
	} else {
		driver_write(d, &o, stdout);
	}
	fflush(stdout);
}

/* --- the command line ------------------------------------------------ */

/* Splits LINE into words at blanks (in place); a word starting with '>'
 * and what follows is the file to write to. */
static size_t split(char *line, char **words, size_t max, const char **file, bool *bad)
{
	size_t n = 0;
	*file = NULL;
	*bad = false;
	for (char *s = strtok(line, " \t"); s; s = strtok(NULL, " \t")) {
		if (*file) {
			*bad = true;   /* two names after '>' */
			break;
		}
		if (s[0] == '>') {
			if (s[1])
				*file = s + 1;
			else if (!(*file = strtok(NULL, " \t")))
				*bad = true;
			continue;
		}
		if (n < max)
			words[n++] = s;
		else
			*bad = true;
	}
	return n;
}

static bool is_setting_word(const char *w)
{
	const char *eq = strchr(w, '=');
	size_t n = eq ? (size_t)(eq - w) : strlen(w);
	char name[64];
	if (n >= sizeof(name))
		return false;
	memcpy(name, w, n);
	name[n] = '\0';
	for (size_t i = 0; i < sizeof(extra_settings) / sizeof(*extra_settings); i++)
		if (!strcmp(name, extra_settings[i]))
			return true;
	return cli_option_help(name, NULL) != NULL;
}

/* Whether the setting W (no '=') takes a value. */
static bool takes_value(const char *w)
{
	const char *arg = NULL;
	for (size_t i = 0; i < sizeof(extra_settings) / sizeof(*extra_settings); i++)
		if (!strcmp(w, extra_settings[i]))
			return true;
	return cli_option_help(w, &arg) && arg;
}

/* The command or setting nearest to the mistyped word W, as the shell
 * writes it ("text", "focus=", "show_bytes"), into OUT; false when none
 * is close: the fewest edits, at most a third of the word and 3, a
 * setting's name only when W has a '=' or nothing else is as close. */
static bool nearest_word(const char *w, char *out, size_t len)
{
	const char *eq = strchr(w, '=');
	size_t n = eq ? (size_t)(eq - w) : strlen(w);
	size_t limit = n / 3 < 3 ? n / 3 : 3, best = limit + 1;
	const char *near = NULL;
	bool setting = false;
	for (size_t k = 0; k < NCOMMANDS + sizeof(others) / sizeof(*others) && !eq; k++) {
		const char *c = k < NCOMMANDS ? commands[k].name : others[k - NCOMMANDS];
		size_t d = cli_edit_distance(w, n, c, strlen(c), limit);
		if (d < best) {
			best = d;
			near = c;
		}
	}
	const char *opt = cli_nearest_option(w, n);
	char name[64];
	if (opt && strlen(opt) < sizeof(name)) {
		snprintf(name, sizeof(name), "%s", opt);
		for (char *s = name; *s; s++)
			if (*s == '-')
				*s = '_';
		size_t d = cli_edit_distance(w, n, name, strlen(name), limit);
		if (is_setting_word(name) && (d < best || (eq && d <= limit))) {
			best = d;
			near = name;
			setting = true;
		}
	}
	for (size_t k = 0; k < sizeof(extra_settings) / sizeof(*extra_settings); k++) {
		size_t d = cli_edit_distance(w, n, extra_settings[k], strlen(extra_settings[k]), limit);
		if (d < best) {
			best = d;
			near = extra_settings[k];
			setting = true;
		}
	}
	if (!near)
		return false;
	snprintf(out, len, "%s%s", near, setting && takes_value(near) ? "=" : "");
	return true;
}

static void run_line(struct shell *sh, char *line)
{
	char *words[256];
	const char *file;
	bool bad;
	size_t n = split(line, words, 256, &file, &bad);
	if (bad) {
		say("'> FILE' takes one file name, at the end of the line");
		return;
	}
	if (!n) {
		if (file)
			say("'> FILE' follows a report, as in 'proto > heap.pb.gz'");
		return;
	}
	const char *w = words[0];
	if (!strcmp(w, "quit") || !strcmp(w, "exit") || !strcmp(w, "q")) {
		sh->quit = true;
		return;
	}
	if (!strcmp(w, "help") || !strcmp(w, "?")) {
		help(n > 1 ? words[1] : NULL);
		return;
	}
	if (!strcmp(w, "options")) {
		show_options(sh);
		return;
	}
	if (!strcmp(w, "peak")) {
		if (n > 2 || file || (n == 2 && strcmp(words[1], "on") && strcmp(words[1], "off"))) {
			say("peak takes no report options: 'peak' (or 'peak on') reports the largest dump, 'peak off' all of them");
			return;
		}
		set_peak(sh, n == 1 || !strcmp(words[1], "on"));
		return;
	}
	/* "top20" as jeprof writes it, and "top 20" */
	long topn = -1;
	char *end;
	const struct command *cmd = find_command(w);
	size_t first = 1;
	if (!strncmp(w, "top", 3) && w[3] >= '0' && w[3] <= '9') {
		topn = strtol(w + 3, &end, 10);
		cmd = *end ? NULL : find_command("top");
	} else if (cmd && !strcmp(w, "top") && n > 1 && words[1][0] >= '0' && words[1][0] <= '9') {
		topn = strtol(words[1], &end, 10);
		if (*end) {
			say("top takes a number of entries: top 20");
			return;
		}
		first = 2;
	}
	if (cmd && !strcmp(w, "callgrind") && n == 2 && !file) {
		/* jeprof's "callgrind FILE" */
		run_report(sh, cmd, topn, NULL, 0, words[1]);
		return;
	}
	if (cmd) {
		run_report(sh, cmd, topn, words + first, n - first, file);
		return;
	}
	if (!strcmp(w, "gv") || !strcmp(w, "evince")) {
		say("%s is jeprof's viewer: 'web' shows the call graph in the browser, 'pdf > FILE' writes it", w);
		return;
	}
	if (is_setting_word(w)) {
		if (file) {
			say("settings write no report; '> FILE' follows a report");
			return;
		}
		struct cli t = sh->set;
		for (size_t i = 0; i < n; i++) {
			if (!is_setting_word(words[i])) {
				say("'%s' is not a setting; 'help' lists them", words[i]);
				return;
			}
			const char *word = words[i];
			if (!strchr(word, '=') && takes_value(word) && i + 1 < n) {
				/* "focus RE" as well as "focus=RE" */
				size_t len = strlen(word) + strlen(words[i + 1]) + 2;
				char *joined = malloc(len);
				if (joined)
					snprintf(joined, len, "%s=%s", word, words[++i]);
				word = joined ? keep(sh, joined, len - 1) : NULL;
				free(joined);
				if (!word) {
					say("out of memory");
					return;
				}
			}
			if (!apply_setting(sh, &t, word, true))
				return;
			/* base= has loaded and set the bases already */
			t.bases = sh->set.bases;
			t.nbases = sh->set.nbases;
		}
		sh->set = t;
		return;
	}
	char near[80];
	if (nearest_word(w, near, sizeof(near)))
		say("unknown command '%s'; did you mean %s? ('help' lists the commands)", w, near);
	else
		say("unknown command '%s'; 'help' lists the commands", w);
}

/* --- completion ------------------------------------------------------ */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* The short (or full) names of every function of the model, for
 * completion: made on the first Tab. */
static void make_names(struct shell *sh)
{
	if (sh->names_made)
		return;
	for (size_t i = 0; i < sh->nnames; i++)
		free(sh->names[i]);
	free(sh->names);
	sh->names = NULL;
	sh->nnames = 0;
	sh->names_made = true;
	const struct profile *p = driver_profile(sh->d);
	char **v = malloc((p->nfuncs + 1) * sizeof(*v));
	if (!v)
		return;
	size_t n = 0;
	char buf[4096];
	for (size_t f = 0; f < p->nfuncs; f++) {
		const char *name = aggregate_func_name(p, (uint32_t)f, sh->set.full_names, buf, sizeof(buf));
		if (!name || !*name || has_control(name))
			continue;   /* a profile's name must not drive the terminal */
		if ((v[n] = strdup(name)))
			n++;
	}
	qsort(v, n, sizeof(*v), cmp_str);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(v[m - 1], v[i]))
			free(v[i]);
		else
			v[m++] = v[i];
	}
	sh->names = v;
	sh->nnames = m;
}

/* Adds PREFIX followed by each candidate of the sorted LIST that starts
 * with WORD, and END after it. */
static void add_sorted(struct lineedit_words *out, char *const *list, size_t n, const char *prefix,
		       const char *word, size_t wlen, const char *end)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (strncmp(list[mid], word, wlen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	char buf[4096];
	for (size_t i = lo; i < n && !strncmp(list[i], word, wlen); i++) {
		int k = snprintf(buf, sizeof(buf), "%s%s%s", prefix, list[i], end);
		if (k > 0 && (size_t)k < sizeof(buf) && lineedit_words_add(out, buf, (size_t)k))
			return;
	}
}

static void add_if(struct lineedit_words *out, const char *cand, const char *word, size_t wlen,
		   const char *end)
{
	if (!strncmp(cand, word, wlen)) {
		char buf[256];
		int k = snprintf(buf, sizeof(buf), "%s%s", cand, end);
		if (k > 0 && (size_t)k < sizeof(buf))
			lineedit_words_add(out, buf, (size_t)k);
	}
}

struct setting_ctx {
	struct lineedit_words *out;
	const char *word;
	size_t wlen;
	const char *dashes;
};

static void add_setting(void *ctx, const char *name, bool takes_value)
{
	struct setting_ctx *s = ctx;
	char cand[128];
	snprintf(cand, sizeof(cand), "%s%s", s->dashes, name);
	add_if(s->out, cand, s->word, s->wlen, takes_value ? "=" : " ");
}

/* Files whose names start with WORD (a path), PREFIX before each. */
static void add_files(struct lineedit_words *out, const char *prefix, const char *word, size_t wlen)
{
	char dir[4096];
	const char *slash = memrchr(word, '/', wlen);
	size_t dlen = slash ? (size_t)(slash - word) + 1 : 0;
	if (dlen >= sizeof(dir))
		return;
	memcpy(dir, word, dlen);
	dir[dlen] = '\0';
	DIR *dp = opendir(dlen ? dir : ".");
	if (!dp)
		return;
	const char *base = word + dlen;
	size_t blen = wlen - dlen;
	struct dirent *e;
	while ((e = readdir(dp))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((e->d_name[0] == '.' && (!blen || base[0] != '.')) || strncmp(e->d_name, base, blen))
			continue;
		bool isdir = e->d_type == DT_DIR;
		char buf[8192];
		int k = snprintf(buf, sizeof(buf), "%s%s%s%s", prefix, dir, e->d_name, isdir ? "/" : " ");
		if (k > 0 && (size_t)k < sizeof(buf))
			lineedit_words_add(out, buf, (size_t)k);
	}
	closedir(dp);
}

static size_t complete(void *ctx, const char *line, size_t cursor, struct lineedit_words *out)
{
	struct shell *sh = ctx;
	size_t start = cursor;
	while (start > 0 && line[start - 1] != ' ' && line[start - 1] != '\t')
		start--;
	const char *word = line + start;
	size_t wlen = cursor - start;
	size_t lead = strspn(line, " \t");
	bool first = start <= lead;
	/* the first word and the one before this */
	char cmd[64] = "", prev[64] = "";
	sscanf(line + lead, "%63s", cmd);
	if (!first) {
		size_t e = start;
		while (e > 0 && (line[e - 1] == ' ' || line[e - 1] == '\t'))
			e--;
		size_t b = e;
		while (b > 0 && line[b - 1] != ' ' && line[b - 1] != '\t')
			b--;
		snprintf(prev, sizeof(prev), "%.*s", (int)(e - b), line + b);
	}
	if (!strcmp(prev, ">") || (wlen && word[0] == '>')) {
		bool glued = wlen && word[0] == '>';
		add_files(out, glued ? ">" : "", word + glued, wlen - glued);
		return start;
	}
	const char *eq = memchr(word, '=', wlen);
	if (eq) {
		size_t nlen = (size_t)(eq - word), skip = 0;
		while (skip < nlen && word[skip] == '-')
			skip++;
		char name[64];
		snprintf(name, sizeof(name), "%.*s", (int)(nlen - skip), word + skip);
		const char *v = eq + 1;
		size_t vlen = wlen - nlen - 1;
		char prefix[80];
		snprintf(prefix, sizeof(prefix), "%.*s=", (int)nlen, word);
		if (!strcmp(name, "base")) {
			add_files(out, prefix, v, vlen);
		} else if (!strcmp(name, "sample_index")) {
			for (int k = 0; k < PF_NVALUES; k++) {
				char cand[128];
				snprintf(cand, sizeof(cand), "%s%s", prefix, value_name((enum pf_value)k));
				add_if(out, cand, word, wlen, " ");
			}
		} else if (!strcmp(name, "focus") || !strcmp(name, "ignore") || !strcmp(name, "retain") ||
			   !strcmp(name, "exclude") || !strcmp(name, "allocator")) {
			make_names(sh);
			add_sorted(out, sh->names, sh->nnames, prefix, v, vlen, " ");
		}
		return start;
	}
	if (first) {
		for (size_t i = 0; i < NCOMMANDS; i++)
			add_if(out, commands[i].name, word, wlen, " ");
		for (size_t i = 0; i < sizeof(others) / sizeof(*others); i++)
			add_if(out, others[i], word, wlen, " ");
		for (size_t i = 0; i < sizeof(extra_settings) / sizeof(*extra_settings); i++)
			add_if(out, extra_settings[i], word, wlen, "=");
		struct setting_ctx s = { out, word, wlen, "" };
		cli_each_setting(add_setting, &s);
		return start;
	}
	if (!strcmp(cmd, "help")) {
		for (size_t i = 0; i < NCOMMANDS; i++)
			add_if(out, commands[i].name, word, wlen, " ");
		struct setting_ctx s = { out, word, wlen, "" };
		cli_each_setting(add_setting, &s);
		return start;
	}
	if (wlen >= 2 && word[0] == '-' && word[1] == '-') {
		struct setting_ctx s = { out, word, wlen, "--" };
		cli_each_setting(add_setting, &s);
		return start;
	}
	if (find_command(cmd) || (!strncmp(cmd, "top", 3) && cmd[3] >= '0' && cmd[3] <= '9')) {
		/* a routine, focus or (after '-') ignore expression: a name */
		bool dash = wlen && word[0] == '-';
		make_names(sh);
		add_sorted(out, sh->names, sh->nnames, dash ? "-" : "", word + dash, wlen - dash, " ");
	}
	return start;
}

/* --- the loop -------------------------------------------------------- */

bool shell_wanted(const struct cli *c)
{
	if (c->interactive)
		return true;
	return !c->mode_set && !c->output && !c->growth && isatty(STDIN_FILENO) &&
	       isatty(STDOUT_FILENO);
}

/* $XDG_STATE_HOME/jheap/history, else ~/.local/state/jheap/history. */
static bool history_path(char *buf, size_t len)
{
	const char *state = getenv("XDG_STATE_HOME");
	if (state && state[0] == '/')
		return (size_t)snprintf(buf, len, "%s/jheap/history", state) < len;
	const char *home = getenv("HOME");
	if (home && home[0] == '/')
		return (size_t)snprintf(buf, len, "%s/.local/state/jheap/history", home) < len;
	return false;
}

int shell_run(struct driver *d)
{
	struct shell sh = { .d = d, .set = d->cli };
	d->out.in_shell = true;
	sh.set.mode = MODE_TEXT;
	sh.set.mode_set = false;
	bool edit = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	char hist[4096];
	sh.le = lineedit_new(edit, "(jheap) ", history_path(hist, sizeof(hist)) ? hist : NULL,
			     complete, &sh);
	if (!sh.le) {
		say("out of memory");
		return EXIT_DATA;
	}
	if (lineedit_plain_why(sh.le))
		driver_warn(d, lineedit_plain_why(sh.le));
	if (isatty(STDIN_FILENO) && !d->cli.quiet)
		fprintf(stderr, "Entering interactive mode: 'help' lists the commands, 'quit' or Ctrl-D leaves.\n");
	while (!sh.quit) {
		char *line = lineedit_read(sh.le);
		if (!line)
			break;
		const char *herr = lineedit_history_error(sh.le);
		if (herr && !sh.history_warned && !d->cli.quiet) {
			driver_warn(d, herr);
			sh.history_warned = true;
		}
		driver_mark(d);
		run_line(&sh, line);
		free(line);
		fflush(stdout);
	}
	lineedit_free(sh.le);
	for (size_t i = 0; i < sh.nowned; i++)
		free(sh.owned[i]);
	free(sh.owned);
	for (size_t i = 0; i < sh.nnames; i++)
		free(sh.names[i]);
	free(sh.names);
	return EXIT_OK;
}

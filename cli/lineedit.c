#include <errno.h>
#include <histedit.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/dynlib.h"
#include "lib/errors.h"
#include "cli/lineedit.h"

/* The libedit functions used here, from libedit.so.2, loaded when the
 * first line editor is made (see lib/dynlib.h); histedit.h gives
 * their types. */
static struct {
	__typeof__(el_init) *el_init;
	__typeof__(el_end) *el_end;
	__typeof__(el_get) *el_get;
	__typeof__(el_set) *el_set;
	__typeof__(el_wset) *el_wset;
	__typeof__(el_source) *el_source;
	__typeof__(el_gets) *el_gets;
	__typeof__(el_line) *el_line;
	__typeof__(el_insertstr) *el_insertstr;
	__typeof__(el_reset) *el_reset;
	__typeof__(history_init) *history_init;
	__typeof__(history) *history;
	__typeof__(history_end) *history_end;
} lib;

#define FN(f) DYNLIB_FN(lib.f, #f)
static const struct dynlib_fn libedit_fns[] = {
	FN(el_init), FN(el_end), FN(el_get), FN(el_set), FN(el_wset), FN(el_source), FN(el_gets),
	FN(el_line), FN(el_insertstr), FN(el_reset), FN(history_init), FN(history),
	FN(history_end),
};
#undef FN

/* Loads libedit the first time; NULL, or why it cannot be used. */
static const char *load_libedit(void)
{
	static bool tried;
	static char missing[1024];
	if (!tried) {
		char why[sizeof(missing) - 200];
		tried = true;
		if (dynlib_load("libedit.so.2", libedit_fns, sizeof(libedit_fns) / sizeof(*libedit_fns),
				why, sizeof(why)))
			snprintf(missing, sizeof(missing),
				 "line editing needs libedit (libedit.so.2, Debian package libedit2): %s; reading plain lines, without history or completion",
				 why);
	}
	return missing[0] ? missing : NULL;
}

struct lineedit {
	bool edit;
	char *prompt;
	EditLine *el;
	History *hist;
	char *history_path;
	const char *history_error;   /* the first problem with the file, or NULL */
	const char *plain_why;       /* why a terminal gets plain lines, or NULL */
	char history_why[512];
	lineedit_complete_fn complete;
	void *ctx;
};

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

int lineedit_words_add(struct lineedit_words *w, const char *word, size_t len)
{
	char *s = strndup(word, len);
	if (!s || JH_PUSH(w->v, w->n, w->cap, s)) {
		free(s);
		return JH_ENOMEM;
	}
	return 0;
}

static void words_release(struct lineedit_words *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i]);
	free(w->v);
	memset(w, 0, sizeof(*w));
}

static int cmp_words(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The candidates in columns under the line being edited. */
static void list_words(FILE *out, struct lineedit_words *w)
{
	qsort(w->v, w->n, sizeof(*w->v), cmp_words);
	fputc('\n', out);
	if (w->n > 200) {
		fprintf(out, "(%zu possibilities: type more of the name)\n", w->n);
		return;
	}
	size_t width = 0;
	for (size_t i = 0; i < w->n; i++) {
		size_t n = strlen(w->v[i]);
		if (n > width)
			width = n;
	}
	struct winsize ws;
	size_t cols = 80;
	if (!ioctl(fileno(out), TIOCGWINSZ, &ws) && ws.ws_col)
		cols = ws.ws_col;
	size_t per = cols / (width + 2);
	if (per < 1)
		per = 1;
	size_t rows = (w->n + per - 1) / per;
	for (size_t r = 0; r < rows; r++) {
		for (size_t c = 0; c < per; c++) {
			size_t i = c * rows + r;
			if (i >= w->n)
				break;
			size_t n = strlen(w->v[i]);
			if (n && w->v[i][n - 1] == ' ')
				n--;
			bool last = c + 1 == per || (c + 1) * rows + r >= w->n;
			fprintf(out, "%.*s%*s", (int)n, w->v[i], last ? 0 : (int)(width + 2 - n), "");
		}
		fputc('\n', out);
	}
}

static unsigned char complete_cb(EditLine *el, int ch)
{
	(void)ch;
	struct lineedit *le;
	if (lib.el_get(el, EL_CLIENTDATA, &le) || !le || !le->complete)
		return CC_ERROR;
	const LineInfo *li = lib.el_line(el);
	size_t cursor = (size_t)(li->cursor - li->buffer);
	char *line = strndup(li->buffer, cursor);
	if (!line)
		return CC_ERROR;
	struct lineedit_words w = { 0 };
	size_t start = le->complete(le->ctx, line, cursor, &w);
	unsigned char rc = CC_ERROR;
	size_t typed = start <= cursor ? cursor - start : 0;
	if (w.n == 1) {
		if (strlen(w.v[0]) > typed && lib.el_insertstr(el, w.v[0] + typed) == 0)
			rc = CC_REFRESH;
	} else if (w.n > 1) {
		size_t common = strlen(w.v[0]);
		for (size_t i = 1; i < w.n; i++) {
			size_t k = 0;
			while (k < common && w.v[i][k] == w.v[0][k])
				k++;
			common = k;
		}
		if (common > typed) {
			char *ext = strndup(w.v[0] + typed, common - typed);
			if (ext && lib.el_insertstr(el, ext) == 0)
				rc = CC_REFRESH;
			free(ext);
		} else {
			FILE *out = stdout;
			list_words(out, &w);
			fflush(out);
			rc = CC_REDISPLAY;
		}
	}
	words_release(&w);
	free(line);
	return rc;
}

static const char *prompt_cb(EditLine *el)
{
	struct lineedit *le;
	if (lib.el_get(el, EL_CLIENTDATA, &le) || !le)
		return "> ";
	return le->prompt;
}

/* mkdir -p of PATH's folder, each new level with mode 0700. */
static int make_parent(const char *path)
{
	char *dir = strdup(path);
	if (!dir)
		return -1;
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir) {
		free(dir);
		return 0;
	}
	*slash = '\0';
	for (char *p = dir + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;
			*p = '\0';
			if (mkdir(dir, 0700) && errno != EEXIST) {
				free(dir);
				return -1;
			}
			*p = c;
			if (!c)
				break;
		}
	}
	free(dir);
	return 0;
}

static void history_failed(struct lineedit *le, const char *what)
{
	if (le->history_error)
		return;
	snprintf(le->history_why, sizeof(le->history_why), "cannot %s the history '%s'%s%s", what,
		 le->history_path, errno ? ": " : "", errno ? strerror(errno) : "");
	le->history_error = le->history_why;
}

struct lineedit *lineedit_new(bool edit, const char *prompt, const char *history_path,
			      lineedit_complete_fn complete, void *ctx)
{
	struct lineedit *le = calloc(1, sizeof(*le));
	if (!le || !(le->prompt = strdup(prompt))) {
		free(le);
		return NULL;
	}
	le->complete = complete;
	le->ctx = ctx;
	if (edit && (le->plain_why = load_libedit()))
		edit = false;
	le->edit = edit;
	if (!edit)
		return le;
	le->el = lib.el_init("jheap", stdin, stdout, stderr);
	le->hist = lib.history_init();
	if (!le->el || !le->hist) {
		lineedit_free(le);
		return NULL;
	}
	HistEvent ev;
	lib.history(le->hist, &ev, H_SETSIZE, 1000);
	lib.history(le->hist, &ev, H_SETUNIQUE, 1);
	if (history_path) {
		le->history_path = strdup(history_path);
		if (le->history_path) {
			struct stat st;
			errno = 0;
			if (make_parent(history_path))
				history_failed(le, "keep");
			else if (!stat(history_path, &st) && lib.history(le->hist, &ev, H_LOAD, history_path) < 0)
				history_failed(le, "read");
		}
	}
	lib.el_set(le->el, EL_CLIENTDATA, le);
	lib.el_set(le->el, EL_PROMPT, prompt_cb);
	lib.el_set(le->el, EL_EDITOR, "emacs");
	lib.el_set(le->el, EL_SIGNAL, 1);
	lib.el_set(le->el, EL_HIST, lib.history, le->hist);
	/* the wide form: libedit keeps these strings as they are (the narrow
	 * one copies them and never frees the copies) */
	lib.el_wset(le->el, EL_ADDFN, L"jheap-complete", L"complete a command, an option or a name",
		complete_cb);
	lib.el_set(le->el, EL_BIND, "^I", "jheap-complete", NULL);
	lib.el_source(le->el, NULL);   /* the user's ~/.editrc, as other libedit programs read it */
	return le;
}

static char *strip(char *line)
{
	size_t n = strlen(line);
	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	return line;
}

/* SIGINT sets `interrupted` (and stops a read) until restore_sigint. */
static void catch_sigint(struct sigaction *old)
{
	struct sigaction sa = { .sa_handler = on_sigint };
	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	sigaction(SIGINT, &sa, old);
}

static void restore_sigint(const struct sigaction *old)
{
	sigaction(SIGINT, old, NULL);
}

/* A plain line.  On a terminal (libedit missing, or standard output
 * elsewhere) the prompt goes to standard error and Ctrl-C drops the line
 * as the editor does: the terminal has discarded what was typed. */
static char *read_plain(struct lineedit *le)
{
	bool tty = isatty(STDIN_FILENO);
	char *line = NULL;
	size_t cap = 0;
	for (;;) {
		struct sigaction old;
		if (tty) {
			fputs(le->prompt, stderr);
			fflush(stderr);
			catch_sigint(&old);
		}
		ssize_t n = getline(&line, &cap, stdin);
		if (tty)
			restore_sigint(&old);
		if (n >= 0)
			return strip(line);
		if (!tty || !interrupted)
			break;
		clearerr(stdin);
		fputc('\n', stderr);
	}
	free(line);
	return NULL;
}

char *lineedit_read(struct lineedit *le)
{
	if (!le->edit)
		return read_plain(le);
	for (;;) {
		struct sigaction old;
		catch_sigint(&old);
		int count = 0;
		const char *got = lib.el_gets(le->el, &count);
		restore_sigint(&old);
		if (!got && interrupted) {
			/* Ctrl-C: drop the line, as a shell does */
			fputc('\n', stdout);
			lib.el_reset(le->el);
			continue;
		}
		if (!got || count <= 0) {
			fputc('\n', stdout);   /* leave the terminal on a new line */
			return NULL;
		}
		char *line = strdup(got);
		if (!line)
			return NULL;
		strip(line);
		if (line[strspn(line, " \t")]) {
			HistEvent ev;
			lib.history(le->hist, &ev, H_ENTER, line);
			errno = 0;
			if (le->history_path && lib.history(le->hist, &ev, H_SAVE, le->history_path) < 0)
				history_failed(le, "write");
		}
		return line;
	}
}

const char *lineedit_history_error(const struct lineedit *le)
{
	return le->history_error;
}

const char *lineedit_plain_why(const struct lineedit *le)
{
	return le->plain_why;
}

void lineedit_free(struct lineedit *le)
{
	if (!le)
		return;
	if (le->el)
		lib.el_end(le->el);
	if (le->hist)
		lib.history_end(le->hist);
	free(le->history_path);
	free(le->prompt);
	free(le);
}

/* jheap's entry point: the command line, then the driver's stages (load
 * once: cli/load.c; write the report: cli/driver.c); the only place with
 * main() and the exit status (0 ok, 1 data error or degraded result, 2
 * usage error).  The command line goes to cli/subcmd.c first (jheap
 * record, dump, ctl); otherwise it names a BINARY or a profile, and after
 * the load either the one report asked for is written or the model is
 * handed to the shell (cli/shell.h). */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "analyzer/aggregate.h"
#include "lib/array.h"
#include "lib/chars.h"
#include "lib/escape.h"
#include "analyzer/maps.h"
#include "analyzer/profile.h"
#include "cli/driver.h"
#include "cli/fdlimit.h"
#include "cli/options.h"
#include "cli/remote.h"
#include "cli/shell.h"
#include "cli/sigbus.h"
#include "cli/subcmd.h"
#include "cli/webui.h"
#include "symbolize/symbolize.h"

#ifndef JHEAP_VERSION
#define JHEAP_VERSION "0.1.0"
#endif

/* 1 when PATH starts with the ELF magic, 0 when not, -1 (errno set) when it
 * cannot be read. */
static int is_elf(const char *path)
{
	if (!strcmp(path, "-"))
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	unsigned char b[4] = { 0 };
	ssize_t n = read(fd, b, 4);
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	return n == 4 && !memcmp(b, "\177ELF", 4);
}

static bool is_alnum(char c)
{
	return (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') || c == '_';
}


/* The first word "0x<hex>" of LINE (jeprof's /\b(0x[0-9a-f]+)\b/i), or NULL. */
static const char *find_hex_token(const char *line)
{
	for (const char *s = line; *s; s++) {
		if (s[0] != '0' || (s[1] | 32) != 'x' || jh_hexval(s[2]) < 0 || (s > line && is_alnum(s[-1])))
			continue;
		const char *e = s + 2;
		while (jh_hexval(*e) >= 0)
			e++;
		if (!is_alnum(*e))
			return s;
	}
	return NULL;
}

/* --symbols: jeprof's PrintSymbols.  Standard input holds maps lines and
 * lines with a "0x..." address (looked up as given, without the -1 of
 * return addresses); one line per address is printed: the short name of
 * its outermost function, or the address as 16 hex digits when unknown. */
static int run_symbols(struct driver *r, const char *binary)
{
	struct profile p;
	char err[1024], *line = NULL;
	size_t cap = 0;
	ssize_t n;
	uint32_t *order = NULL;
	size_t norder = 0, cap_order = 0;
	int rc = EXIT_OK;
	if (profile_init(&p))
		return EXIT_DATA;
	while ((n = getline(&line, &cap, stdin)) > 0) {
		const char *hex = find_hex_token(line);
		if (hex) {
			uint64_t a = strtoull(hex, NULL, 16);
			int64_t id = profile_location(&p, a, true, UINT32_MAX);
			if (id < 0 || JH_PUSH(order, norder, cap_order, (uint32_t)id))
				goto oom;
			continue;
		}
		struct maps_line ml;
		if (maps_parse_line(line, (size_t)n - (line[n - 1] == '\n'), &ml, err, sizeof(err)))
			continue;
		struct pf_mapping m = { .start = ml.start, .limit = ml.end, .offset = ml.offset,
					.exec = ml.exec, .deleted = ml.deleted,
					.kind = profile_map_kind(ml.path, ml.pathlen) };
		int64_t sid = strtab_intern_n(&p.strs, ml.path, ml.pathlen);
		if (sid < 0)
			goto oom;
		m.path = (uint32_t)sid;
		if (profile_mapping(&p, &m) < 0)
			goto oom;
		p.has_maps = true;
	}
	free(line);
	line = NULL;
	if (profile_resolve_mappings(&p))
		goto oom;
	struct symcache *sc = symcache_new(&(struct symcache_options){
		.debuginfo_dirs = r->cli.debuginfo_dirs });
	if (!sc)
		goto oom;
	struct diskcache *dc = driver_open_cache(r, sc);
	struct symbolize_options so = { .binary = binary, .lib_prefixes = r->cli.lib_prefixes,
					.cache = dc, .note = driver_debug_on("cache") ? driver_note : NULL,
					.warn = driver_warn, .ctx = r,
					.symcache_opts = { .debuginfo_dirs = r->cli.debuginfo_dirs } };
	struct symbolize_stats st;
	if (symbolize_profile(&p, sc, &so, &st, err, sizeof(err))) {
		diskcache_free(dc);
		symcache_free(sc);
		goto oom;
	}
	char buf[4096];
	for (size_t i = 0; i < norder; i++) {
		const struct pf_location *l = &p.locs[order[i]];
		if (l->sym == PF_SYM_UNKNOWN || !l->nlines) {
			printf("0x%016llx\n", (unsigned long long)l->addr);
			continue;
		}
		const struct pf_line *outer = &p.lines[l->line0 + l->nlines - 1];
		escape_fputs(aggregate_func_name(&p, outer->function, r->cli.full_names, buf, sizeof(buf)),
			     false, stdout);
		putchar('\n');
	}
	diskcache_free(dc);
	symcache_free(sc);
	goto out;
oom:
	fprintf(stderr, "jheap: out of memory\n");
	rc = EXIT_DATA;
out:
	free(line);
	free(order);
	profile_release(&p);
	return rc;
}

static int run(struct driver *r, int argc, char **argv)
{
	struct cli *c = &r->cli;
	char err[1024];
	if (cli_parse(c, argc, argv, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\nTry 'jheap --help' for more information.\n", err);
		return EXIT_USAGE;
	}
	driver_init(r);
	if (c->help) {
		cli_help(stdout);
		return EXIT_OK;
	}
	if (c->version) {
		printf("jheap %s\n", JHEAP_VERSION);
		return EXIT_OK;
	}
	/* [BINARY] PROFILE...: a binary is told from a profile by its content */
	const char *binary = NULL;
	size_t first = 0;
	for (size_t i = 0; i < c->nargs; i++) {
		int e = is_elf(c->args[i]);
		if (e < 0 && (remote_is_url(c->args[i]) || (c->http && errno == EISDIR)))
			continue;   /* a URL; the web UI's dump folder */
		if (e < 0) {
			fprintf(stderr, "jheap: cannot open '%s': %s\n", c->args[i], strerror(errno));
			return EXIT_DATA;
		}
		if (e && i == 0) {
			binary = c->args[0];
			first = 1;
		} else if (e) {
			fprintf(stderr, "jheap: '%s' is an ELF file, not a heap profile; only the first argument may be the program\n",
				c->args[i]);
			return EXIT_USAGE;
		}
	}
	if (c->mode == MODE_SYMBOLS)
		return run_symbols(r, binary);
	if (cli_check(c, c->nargs - first, err, sizeof(err))) {
		fprintf(stderr, "jheap: %s\n", err);
		return EXIT_USAGE;
	}
	if (c->http) {
		/* the web UI loads what it serves (a series, --pid) itself */
		int wrc = webui_run(r, binary, (const char *const *)c->args + first, c->nargs - first);
		driver_release(r);
		return wrc ? wrc : r->degraded ? EXIT_DATA : EXIT_OK;
	}
	int rc = EXIT_OK;
	r->model.want_ranges = shell_wanted(c);
	rc = driver_load(r, binary, (const char *const *)c->args + first, c->nargs - first, c);
	if (rc)
		goto out;
	if (shell_wanted(c))
		rc = shell_run(r);
	else if (c->mode == MODE_WEB || c->mode == MODE_WEBLIST)
		rc = driver_show(r, c, c->output);
	else if (c->output)
		rc = driver_write_file(r, c, c->output);
	else
		rc = driver_write(r, c, stdout);
out:
	driver_release(r);
	if (!rc && r->degraded)
		rc = EXIT_DATA;
	return rc;
}

int main(int argc, char **argv)
{
	/* jheap record|dump|ctl ...; jheap dump PID --text comes back here
	 * with its dump to analyze */
	int sub = subcmd_main(&argc, &argv);
	if (sub >= 0)
		return sub;
	struct driver r = { 0 };
	fdlimit_raise();
	sigbus_install();
	int rc = run(&r, argc, argv);
	cli_release(&r.cli);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "jheap: error writing the report: %s\n", strerror(errno));
		rc = EXIT_DATA;
	}
	return rc;
}

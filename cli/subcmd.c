/*
 * subcmd.c: which subcommand a command line is, and the option parsing the
 * subcommands share.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/errors.h"
#include "cli/options.h"
#include "cli/subcmd.h"

int subcmd_main(int *argcp, char ***argvp)
{
	if (*argcp < 2)
		return -1;
	const char *word = (*argvp)[1];
	if (!strcmp(word, "record"))
		return record_main(*argcp - 1, *argvp + 1);
	if (!strcmp(word, "ctl"))
		return ctl_main(*argcp - 1, *argvp + 1);
	if (!strcmp(word, "dump"))
		return dump_main(*argcp - 1, *argvp + 1, argcp, argvp);
	return -1;
}

int subopt_match(const struct subopt *table, size_t n, int argc, char **argv, int *i,
		 const struct subopt **opt, const char **val, char *err, size_t errlen)
{
	const char *a = argv[*i];
	const char *eq = NULL;
	*opt = NULL;
	*val = NULL;
	if (a[0] != '-' || !a[1])
		return 0;
	if (a[1] != '-') {
		if (a[2])
			return 0;
		for (size_t k = 0; k < n; k++)
			if (table[k].short_name == a[1])
				*opt = &table[k];
	} else {
		const char *name = a + 2;
		eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		for (size_t k = 0; k < n; k++)
			if (cli_name_eq(name, len, table[k].name))
				*opt = &table[k];
	}
	if (!*opt)
		return 0;
	/* an optional value ("[RATIO]"): only as --name=VALUE */
	if (!eq && (*opt)->arg && (*opt)->arg[0] == '[')
		return 1;
	if (eq) {
		if (!(*opt)->arg)
			return jh_err(err, errlen, JH_EUSAGE, "option '--%s' takes no value", (*opt)->name);
		*val = eq + 1;
	} else if ((*opt)->arg) {
		if (*i + 1 >= argc)
			return jh_err(err, errlen, JH_EUSAGE, "option '--%s' needs a value (%s)",
				      (*opt)->name, (*opt)->arg);
		*val = argv[++*i];
	}
	return 1;
}

void subopt_help(FILE *out, const struct subopt *table, size_t n)
{
	fputs("Options:\n", out);
	for (size_t k = 0; k < n; k++) {
		const char *arg = table[k].arg;
		if (arg && arg[0] == '[') {
			/* "--name[=VALUE]" */
			char name[96];
			snprintf(name, sizeof(name), "%s[=%.*s]", table[k].name, (int)strlen(arg) - 2, arg + 1);
			cli_help_line(out, table[k].short_name, name, NULL, table[k].help, 24);
		} else {
			cli_help_line(out, table[k].short_name, table[k].name, arg, table[k].help, 24);
		}
	}
}

int subopt_size(const char *s, unsigned long long *out)
{
	char *end;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	int shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (shift && *end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (errno || *end || !v || v > (~0ULL >> 1) >> shift)
		return -1;
	*out = v << shift;
	return 0;
}

int subopt_lg(unsigned long long v)
{
	int lg = 0;
	while (v >>= 1)
		lg++;
	return lg;
}

/* --disasm=RE: for each function whose name matches, its machine code with
 * the flat and cumulative values of each instruction (jeprof's layout).
 * The code comes from binutils' objdump, run with execvp and an argument
 * vector (never a shell) over the function's symbol range; the values from
 * the model's locations, whose link-time addresses the symbolizer recorded
 * (struct pf_location.vaddr, func_lo, func_hi). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <errno.h>
#include <fcntl.h>
#include <pcre2.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyzer/names.h"
#include "analyzer/util.h"
#include "output/output.h"

struct routine {
	uint32_t name;            /* short name, string id in the profile */
	uint32_t object;          /* object file, string id */
	uint64_t lo, hi;
};

struct insn {
	uint64_t addr;
	char *text;               /* the instruction, or a "file:line" marker (addr 0) */
	bool marker;
	double flat, cum;
};

/* Runs objdump over [lo, hi) of OBJ; its standard output in *buf.
 * Returns 0, or a negative code with a message. */
static int run_objdump(const char *obj, uint64_t lo, uint64_t hi, char **buf, size_t *len,
		       char *err, size_t errlen)
{
	char start[40], stop[40];
	snprintf(start, sizeof(start), "--start-address=0x%llx", (unsigned long long)lo);
	snprintf(stop, sizeof(stop), "--stop-address=0x%llx", (unsigned long long)hi);
	char *argv[] = { "objdump", "-d", "-C", "-l", "--no-show-raw-insn", start, stop,
			 (char *)obj, NULL };
	int fds[2], errp[2];
	if (pipe(fds))
		return jh_err(err, errlen, JH_EIO, "cannot run objdump: %s", strerror(errno));
	if (pipe(errp)) {
		close(fds[0]);
		close(fds[1]);
		return jh_err(err, errlen, JH_EIO, "cannot run objdump: %s", strerror(errno));
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fds[0]), close(fds[1]), close(errp[0]), close(errp[1]);
		return jh_err(err, errlen, JH_EIO, "cannot run objdump: %s", strerror(errno));
	}
	if (pid == 0) {
		dup2(fds[1], 1);
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 2);
		close(fds[0]), close(fds[1]), close(errp[0]);
		execvp(argv[0], argv);
		/* tell the parent why exec failed */
		int e = errno;
		if (write(errp[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(fds[1]);
	close(errp[1]);
	size_t cap = 0;
	*buf = NULL;
	*len = 0;
	for (;;) {
		if (jh_grow(buf, &cap, *len + 65536, 1))
			break;
		ssize_t n = read(fds[0], *buf + *len, cap - *len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*len += (size_t)n;
	}
	close(fds[0]);
	int e = 0, status = 0;
	ssize_t got = read(errp[0], &e, sizeof(e));
	close(errp[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got == (ssize_t)sizeof(e) && e) {
		free(*buf);
		*buf = NULL;
		if (e == ENOENT)
			return jh_err(err, errlen, JH_EIO,
				      "--disasm needs binutils' 'objdump' program: install binutils (apt-get install binutils); --list shows source lines without it");
		return jh_err(err, errlen, JH_EIO, "cannot run objdump: %s", strerror(e));
	}
	if (!*buf)
		return jh_err(err, errlen, JH_ENOMEM, "out of memory");
	(*buf)[*len] = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return jh_err(err, errlen, JH_EIO, "objdump failed on '%s'", obj);
	return 0;
}

/* Parses objdump's lines into instructions and file:line markers. */
static int parse_objdump(char *buf, struct insn **out, size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		struct insn in = { 0 };
		char *s = line;
		while (*s == ' ')
			s++;
		char *colon = strchr(s, ':');
		if (s != line && colon && colon > s && colon[1] == '\t') {
			char *end;
			in.addr = strtoull(s, &end, 16);
			if (end != colon)
				continue;
			in.text = colon + 2;
		} else if ((line[0] == '/' || line[0] == '.') && !strstr(line, "file format")) {
			in.marker = true; /* "file:line" from -l */
			in.text = line;
		} else {
			continue;
		}
		if (JH_PUSH(*out, *n, cap, in))
			return JH_ENOMEM;
	}
	return 0;
}

static int cmp_routines(const void *x, const void *y, void *arg)
{
	const struct profile *p = arg;
	const struct routine *a = x, *b = y;
	int c = strcmp(strtab_get(&p->strs, a->name), strtab_get(&p->strs, b->name));
	if (c)
		return c;
	c = strcmp(strtab_get(&p->strs, a->object), strtab_get(&p->strs, b->object));
	return c ? c : (a->lo < b->lo ? -1 : a->lo > b->lo);
}

/* Flat and cum of every location, with the report's cut and filters. */
static int location_values(const struct report *r, double *flat, double *cum)
{
	const struct profile *p = r->p;
	uint32_t *keys = NULL, *stamp = calloc(p->nlocs + 1, sizeof(*stamp));
	size_t cap = 0;
	if (!stamp)
		return JH_ENOMEM;
	for (size_t si = 0; si < p->nsamples; si++) {
		const struct pf_sample *s = &p->samples[si];
		double v = s->v[r->value];
		if (v == 0 || aggregate_stack_keys(r->a, p, (uint32_t)si, &keys, &cap) <= 0)
			continue;
		uint32_t start = aggregate_stack_start(r->a, p, (uint32_t)si, NULL);
		for (uint32_t i = start; i < s->depth; i++) {
			uint32_t l = p->stacks[s->stack0 + i];
			if (i == start)
				flat[l] += v;
			if (stamp[l] != si + 1) {
				stamp[l] = (uint32_t)si + 1;
				cum[l] += v;
			}
		}
	}
	free(keys);
	free(stamp);
	return 0;
}

static void value_alt(char *buf, size_t len, double v, enum units u)
{
	if (v == 0)
		snprintf(buf, len, ".");
	else
		text_format_value(buf, len, v, u);
}

int output_disasm(FILE *out, const struct report *r, char *err, size_t errlen)
{
	const struct profile *p = r->p;
	int code;
	PCRE2_SIZE off;
	pcre2_code *re = pcre2_compile((PCRE2_SPTR)r->disasm, PCRE2_ZERO_TERMINATED, 0, &code, &off, NULL);
	if (!re) {
		PCRE2_UCHAR msg[200];
		pcre2_get_error_message(code, msg, sizeof(msg));
		return jh_err(err, errlen, JH_EUSAGE, "--disasm: bad regular expression '%s': %s",
			      r->disasm, (const char *)msg);
	}
	pcre2_match_data *md = pcre2_match_data_create(4, NULL);
	struct routine *rts = NULL;
	size_t nrts = 0, cap = 0;
	double *flat = calloc(p->nlocs + 1, sizeof(double)), *cum = calloc(p->nlocs + 1, sizeof(double));
	int rc = md && flat && cum ? location_values(r, flat, cum) : JH_ENOMEM;
	char buf[4096];
	for (size_t i = 0; !rc && i < p->nlocs; i++) {
		const struct pf_location *l = &p->locs[i];
		if (!l->nlines || l->func_hi <= l->func_lo || l->mapping == UINT32_MAX ||
		    !p->maps[l->mapping].object || cum[i] == 0)
			continue;
		const struct pf_line *outer = &p->lines[l->line0 + l->nlines - 1];
		const char *full = strtab_get(&p->strs, p->funcs[outer->function].name);
		names_short(full, buf, sizeof(buf));
		if (pcre2_match(re, (PCRE2_SPTR)full, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) < 0 &&
		    pcre2_match(re, (PCRE2_SPTR)buf, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL) < 0)
			continue;
		struct routine rt = { .object = p->maps[l->mapping].object, .lo = l->func_lo, .hi = l->func_hi };
		uint32_t sid = strtab_find(&p->strs, buf);
		rt.name = sid == UINT32_MAX ? p->funcs[outer->function].name : sid;
		bool seen = false;
		for (size_t k = 0; k < nrts && !seen; k++)
			seen = rts[k].object == rt.object && rts[k].lo == rt.lo;
		if (!seen && JH_PUSH(rts, nrts, cap, rt))
			rc = JH_ENOMEM;
	}
	if (!rc)
		jh_qsort_r(rts, nrts, sizeof(*rts), cmp_routines, (void *)p);
	if (!rc && !nrts)
		rc = jh_err(err, errlen, JH_EFORMAT, "--disasm: no function matching '%s' holds any %s",
			    r->disasm, r->units == UNITS_OBJECTS ? "objects" : "memory");
	for (size_t k = 0; !rc && k < nrts; k++) {
		const struct routine *rt = &rts[k];
		char *text = NULL;
		size_t len = 0, ni = 0;
		struct insn *ins = NULL;
		rc = run_objdump(strtab_get(&p->strs, rt->object), rt->lo, rt->hi, &text, &len, err, errlen);
		if (!rc && parse_objdump(text, &ins, &ni))
			rc = jh_err(err, errlen, JH_ENOMEM, "out of memory");
		double tf = 0, tc = 0;
		for (size_t i = 0; !rc && i < p->nlocs; i++) {
			const struct pf_location *l = &p->locs[i];
			if (l->mapping == UINT32_MAX || p->maps[l->mapping].object != rt->object ||
			    l->vaddr < rt->lo || l->vaddr >= rt->hi)
				continue;
			/* the instruction holding the pc: the last one at or before it */
			struct insn *best = NULL;
			for (size_t j = 0; j < ni; j++)
				if (!ins[j].marker && ins[j].addr <= l->vaddr)
					best = &ins[j];
			if (best) {
				best->flat += flat[i];
				best->cum += cum[i];
			}
			tf += flat[i];
			tc += cum[i];
		}
		if (!rc) {
			char f1[64], f2[64];
			text_format_value(f1, sizeof(f1), tf, r->units);
			text_format_value(f2, sizeof(f2), tc, r->units);
			fprintf(out, "ROUTINE ====================== %s in %s\n", strtab_get(&p->strs, rt->name),
				strtab_get(&p->strs, rt->object));
			fprintf(out, "%6s %6s %s (flat, cumulative) %.1f%% of total\n", f1, f2,
				text_unit_name(r->units),
				r->a->flat_total ? tc * 100.0 / r->a->flat_total : 0.0);
			for (size_t j = 0; j < ni; j++) {
				if (ins[j].marker) {
					fprintf(out, "-------------------- %s\n", ins[j].text);
					continue;
				}
				value_alt(f1, sizeof(f1), ins[j].flat, r->units);
				value_alt(f2, sizeof(f2), ins[j].cum, r->units);
				fprintf(out, "%6s %6s    %8llx: %s\n", f1, f2, (unsigned long long)ins[j].addr,
					ins[j].text);
			}
		}
		free(ins);
		free(text);
	}
	if (rc == JH_ENOMEM && !*err)
		jh_err(err, errlen, rc, "out of memory");
	free(rts);
	free(flat);
	free(cum);
	pcre2_match_data_free(md);
	pcre2_code_free(re);
	return rc;
}

/* --disasm=RE: for each function whose name matches, its machine code with
 * the flat and cumulative values of each instruction (jeprof's layout).
 * The code comes from binutils' objdump, run with execvp and an argument
 * vector (never a shell) over the function's symbol range; the values from
 * the model's locations, whose link-time addresses the symbolizer recorded
 * (struct pf_location.vaddr, func_lo, func_hi). */
#include <errno.h>
#include <sys/wait.h>

#include "analyzer/escape.h"
#include "analyzer/names.h"
#include "analyzer/pattern.h"
#include "analyzer/util.h"
#include "output/child.h"
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

/* The most output kept from one objdump run: a function's disassembly
 * with its line markers is far smaller. */
#define OBJDUMP_MAX_OUTPUT ((size_t)64 << 20)

/* Runs objdump over [lo, hi) of OBJ; its standard output in *buf (the
 * caller frees it).  Returns 0, or a negative code with a message. */
static int run_objdump(const char *obj, uint64_t lo, uint64_t hi, char **buf, size_t *len,
		       char *err, size_t errlen)
{
	char start[40], stop[40];
	snprintf(start, sizeof(start), "--start-address=0x%llx", (unsigned long long)lo);
	snprintf(stop, sizeof(stop), "--stop-address=0x%llx", (unsigned long long)hi);
	/* "--": a file named "--version" is a file */
	const char *argv[] = { "objdump", "-d", "-C", "-l", "--no-show-raw-insn", start, stop,
			       "--", obj, NULL };
	struct child c = { .argv = argv, .max_out = OBJDUMP_MAX_OUTPUT };
	*buf = NULL;
	*len = 0;
	int rc = child_run(&c, err, errlen);
	if (!rc && c.exec_errno == ENOENT)
		rc = jh_err(err, errlen, JH_EIO,
			    "--disasm needs binutils' 'objdump' program: install binutils (apt-get install binutils); --list shows source lines without it");
	else if (!rc && c.exec_errno)
		rc = jh_err(err, errlen, JH_EIO, "cannot run objdump: %s", strerror(c.exec_errno));
	else if (!rc && (c.timed_out || c.too_much))
		rc = child_failure(&c, "objdump", err, errlen);
	else if (!rc && !(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0))
		rc = jh_err(err, errlen, JH_EIO, "objdump failed on '%s'", obj);
	if (rc) {
		free(c.buf);
		return rc;
	}
	*buf = c.buf;
	*len = c.len;
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
	struct pattern *re;
	int rc = pattern_compile(&re, "disasm", r->disasm, err, errlen);
	if (rc)
		return rc;
	struct routine *rts = NULL;
	size_t nrts = 0, cap = 0;
	double *flat = calloc(p->nlocs + 1, sizeof(double)), *cum = calloc(p->nlocs + 1, sizeof(double));
	rc = flat && cum ? location_values(r, flat, cum) : JH_ENOMEM;
	char buf[4096];
	for (size_t i = 0; !rc && i < p->nlocs; i++) {
		const struct pf_location *l = &p->locs[i];
		if (!l->nlines || l->func_hi <= l->func_lo || l->mapping == UINT32_MAX ||
		    !p->maps[l->mapping].object || cum[i] == 0)
			continue;
		const struct pf_line *outer = &p->lines[l->line0 + l->nlines - 1];
		const char *full = strtab_get(&p->strs, p->funcs[outer->function].name);
		names_short(full, buf, sizeof(buf));
		int m = pattern_match(re, full, err, errlen);
		if (!m)
			m = pattern_match(re, buf, err, errlen);
		if (m < 0)
			rc = m;
		if (m <= 0)
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
			fputs("ROUTINE ====================== ", out);
			escape_fputs(strtab_get(&p->strs, rt->name), false, out);
			fputs(" in ", out);
			escape_fputs(strtab_get(&p->strs, rt->object), false, out);
			fprintf(out, "\n%6s %6s %s (flat, cumulative) %.1f%% of total\n", f1, f2,
				text_unit_name(r->units),
				r->a->flat_total ? tc * 100.0 / r->a->flat_total : 0.0);
			for (size_t j = 0; j < ni; j++) {
				if (ins[j].marker) {
					fputs("-------------------- ", out);
					escape_fputs(ins[j].text, true, out);
					fputc('\n', out);
					continue;
				}
				value_alt(f1, sizeof(f1), ins[j].flat, r->units);
				value_alt(f2, sizeof(f2), ins[j].cum, r->units);
				fprintf(out, "%6s %6s    %8llx: ", f1, f2, (unsigned long long)ins[j].addr);
				escape_fputs(ins[j].text, true, out);
				fputc('\n', out);
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
	pattern_free(re);
	return rc;
}

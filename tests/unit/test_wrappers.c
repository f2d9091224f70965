/* analyzer/wrappers.c and analyzer/forks.c, their pure parts: which names
 * may be wrappers, the --allocator pattern the hint writes (checked with
 * PCRE2 itself against the names it must match and must not), the rule
 * on a model built by hand, and the pid in a dump's name and the layout
 * test of forks. */
#include <stdint.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include "analyzer/aggregate.h"
#include "analyzer/forks.h"
#include "analyzer/wrappers.h"
#include "unit.h"

static bool re_matches(const char *re, const char *s)
{
	int err;
	PCRE2_SIZE off;
	pcre2_code *c = pcre2_compile((PCRE2_SPTR)re, PCRE2_ZERO_TERMINATED, 0, &err, &off, NULL);
	if (!c)
		return false;
	pcre2_match_data *md = pcre2_match_data_create_from_pattern(c, NULL);
	int m = pcre2_match(c, (PCRE2_SPTR)s, PCRE2_ZERO_TERMINATED, 0, 0, md, NULL);
	pcre2_match_data_free(md);
	pcre2_code_free(c);
	return m >= 0;
}

TEST(names_that_fit)
{
	CHECK(wrappers_name_fits("ngx_alloc"));
	CHECK(wrappers_name_fits("ngx_memalign"));
	CHECK(wrappers_name_fits("Perl_safesysmalloc"));
	CHECK(wrappers_name_fits("node::NodeArrayBufferAllocator::Allocate"));
	CHECK(wrappers_name_fits("xstrdup"));
	CHECK(wrappers_name_fits("isc__mem_get"));
	CHECK(wrappers_name_fits("postgres+0x5c7730"));
	CHECK(wrappers_name_fits("libstdc++.so.6.0.30+0xa5780"));
	CHECK(!wrappers_name_fits("_sdsnewlen"));
	CHECK(!wrappers_name_fits("makeTargetEntry"));
	CHECK(!wrappers_name_fits("std::__new_allocator::allocate"));
	CHECK(!wrappers_name_fits("[anon]+0x4f"));
	CHECK(!wrappers_name_fits("0x00007f0000001000"));
	CHECK(!wrappers_name_fits("foo+0x"));
	CHECK(!wrappers_name_fits("a b+0x10"));
	CHECK(!wrappers_name_fits(""));
}

TEST(pattern_escapes)
{
	struct wrappers w = { .n = 4 };
	w.names[0] = "ngx_alloc";
	w.names[1] = "nginx+0x278b0";
	w.names[2] = "v8::internal::Snapshot::Initialize [clone .part.0]";
	w.names[3] = "a\x1b[31m(x)|y$";
	char buf[512];
	int n = wrappers_pattern(&w, NULL, buf, sizeof(buf));
	CHECK(n > 0);
	CHECK_STR(buf, "^(ngx_alloc|nginx\\+0x278b0|v8::internal::Snapshot::Initialize\\x20\\[clone\\x20\\.part\\.0\\]|a\\x1b\\[31m\\(x\\)\\|y\\$)$");
	for (size_t i = 0; i < w.n; i++)
		CHECK(re_matches(buf, w.names[i]));
	CHECK(!re_matches(buf, "ngx_alloc_more"));
	CHECK(!re_matches(buf, "nginxX0x278b0"));
	CHECK(!re_matches(buf, "y$"));
	n = wrappers_pattern(&w, "^z(try)?malloc", buf, sizeof(buf));
	CHECK(n > 0 && !strncmp(buf, "^z(try)?malloc|^(ngx_alloc|", 27));
	CHECK(re_matches(buf, "ztrymalloc_usable") && re_matches(buf, "ngx_alloc"));
	CHECK(wrappers_pattern(&w, NULL, buf, 20) == -1);
}

/* A model: leaf FN, the frames above it, innermost first, and a value. */
struct model {
	struct profile p;
	uint32_t fn[32];
	size_t nfn;
	uint64_t next;
};

static uint32_t func(struct model *m, const char *name)
{
	for (size_t i = 0; i < m->nfn; i++)
		if (!strcmp(strtab_get(&m->p.strs, m->p.funcs[m->fn[i]].name), name))
			return m->fn[i];
	uint32_t id = (uint32_t)strtab_intern(&m->p.strs, name);
	m->fn[m->nfn] = (uint32_t)profile_function(&m->p, id, 0, 0, 0);
	return m->fn[m->nfn++];
}

/* One sample: NAMES innermost first, NULL-terminated, VALUE bytes. */
static void sample(struct model *m, double value, const char *const *names)
{
	uint32_t st[16];
	size_t n = 0;
	for (; names[n]; n++) {
		int64_t id = profile_location(&m->p, 0x1000 + 16 * m->next++, false, UINT32_MAX);
		struct pf_location *l = &m->p.locs[id];
		l->line0 = (uint32_t)m->p.nlines;
		struct pf_line ln = { .function = func(m, names[n]) };
		profile_add_line(&m->p, &ln);
		l->nlines = 1;
		st[n] = (uint32_t)id;
	}
	int64_t s = profile_sample(&m->p, st, n);
	m->p.samples[s].v[PF_INUSE_SPACE] += value;
}

#define S(v, ...) sample(&m, v, (const char *const[]){ __VA_ARGS__, NULL })

TEST(rule_on_a_model)
{
	struct model m = { 0 };
	profile_init(&m.p);
	/* xmalloc from three callers, two of them through the unnamed
	 * prog+0x100 (which has a third caller of its own); str_new, named
	 * for what it builds, from three; leaf_alloc from two */
	S(100, "xmalloc", "prog+0x100", "make_users", "main");
	S(100, "xmalloc", "prog+0x100", "make_orders", "main");
	S(60, "xmalloc", "prog+0x100", "make_sessions", "main");
	S(80, "xmalloc", "make_index", "main");
	S(10, "str_new", "a", "main");
	S(10, "str_new", "b", "main");
	S(10, "str_new", "c", "main");
	S(30, "leaf_alloc", "caller_a", "main");
	S(70, "leaf_alloc", "caller_b", "main");
	struct agg_options o = { .value = PF_INUSE_SPACE, .gran = GRAN_FUNCTIONS };
	struct aggregate a;
	CHECK_INT(aggregate_build(&a, &m.p, &o), 0);
	struct wrappers w;
	CHECK_INT(wrappers_find(&w, &a, &m.p, PF_INUSE_SPACE, NULL, NULL), 0);
	CHECK_INT(w.n, 2);
	if (w.n == 2) {
		CHECK_STR(w.names[0], "xmalloc");
		CHECK_STR(w.names[1], "prog+0x100");
	}
	CHECK(w.share > 0.72 && w.share < 0.73);   /* 340 of 470 */
	wrappers_release(&w);
	aggregate_release(&a);
	profile_release(&m.p);
}

TEST(dump_pids)
{
	CHECK_INT(forks_pid_of("/x/nginx.4242.0.m0.heap"), 4242);
	CHECK_INT(forks_pid_of("jeprof.17.3.f.heap.gz"), 17);
	CHECK_INT(forks_pid_of("a.b.c.99.12.i3.heap"), 99);
	CHECK_INT(forks_pid_of("x.heap"), -1);
	CHECK_INT(forks_pid_of("w.heap"), -1);
	CHECK_INT(forks_pid_of(".4242.0.f.heap"), -1);
	CHECK_INT(forks_pid_of("n.42a.0.f.heap"), -1);
	CHECK_INT(forks_pid_of("n.42.0.x.heap"), -1);
	CHECK_INT(forks_pid_of("n.0.0.f.heap"), -1);
}

/* A profile of one main program at MAIN and libc at LIBC. */
static void layout(struct profile *p, const char *prog, uint64_t main, uint64_t libc)
{
	profile_init(p);
	struct pf_mapping mp = { .start = main, .limit = main + 0x1000, .exec = true,
				 .path = (uint32_t)strtab_intern(&p->strs, prog) };
	struct pf_mapping ml = { .start = libc, .limit = libc + 0x1000, .exec = true,
				 .path = (uint32_t)strtab_intern(&p->strs, "/lib/libc.so.6") };
	profile_mapping(p, &mp);
	profile_mapping(p, &ml);
	p->main_mapping = 0;
}

TEST(fork_layouts)
{
	struct profile a, b, c, d, e;
	layout(&a, "/usr/sbin/nginx", 0x55d000000000, 0x7f1000000000);
	layout(&b, "/usr/sbin/nginx", 0x55d000000000, 0x7f1000000000);
	layout(&c, "/usr/sbin/nginx", 0x561000000000, 0x7f2000000000);   /* another run */
	layout(&d, "/usr/sbin/other", 0x55d000000000, 0x7f1000000000);
	layout(&e, "/usr/sbin/nginx", 0x555555554000, 0x7ffff7d80000);   /* no randomization */
	struct forks f;
	forks_init(&f);
	CHECK_INT(forks_add(&f, &a, "d/nginx.10.0.m0.heap"), 0);
	CHECK_INT(forks_add(&f, &b, "d/nginx.11.0.m0.heap"), 0);
	CHECK_INT(forks_add(&f, &c, "d/nginx.20.0.m0.heap"), 0);
	CHECK_INT(forks_add(&f, &d, "d/other.10.0.m0.heap"), 0);
	CHECK_INT(forks_add(&f, &e, "d/nginx.30.0.m0.heap"), 0);
	CHECK_INT(forks_add(&f, &e, "d/nginx.31.0.m0.heap"), 0);
	CHECK(forks_related(&f, 0, 1));
	CHECK(!forks_related(&f, 0, 2));
	CHECK(!forks_related(&f, 0, 3));
	CHECK(!forks_related(&f, 4, 5));
	forks_group(&f);
	CHECK_INT(forks_group_of(&f, 1), 0);
	CHECK_INT(forks_group_of(&f, 2), 2);
	CHECK_INT(forks_group_of(&f, 5), 5);
	CHECK_INT(f.e[1].pid, 11);
	forks_release(&f);
	profile_release(&a);
	profile_release(&b);
	profile_release(&c);
	profile_release(&d);
	profile_release(&e);
}

int main(void)
{
	RUN(names_that_fit);
	RUN(pattern_escapes);
	RUN(rule_on_a_model);
	RUN(dump_pids);
	RUN(fork_layouts);
	return UNIT_END();
}

/* A series of dumps: file names (analyzer/dumpname.h), the order, the
 * refusals and the clock of a series, per-site values, the growth ranking
 * (--cum too) and the timeline (analyzer/series.h), churn as a derived
 * value, and jemalloc's leak summary line (analyzer/leaksum.h).  The
 * expected figures are worked out by hand in the comments. */
#include <math.h>
#include "analyzer/leaksum.h"
#include "analyzer/series.h"
#include "lib/errors.h"
#include "unit.h"

TEST(names_of_jemalloc)
{
	struct dumpname d;
	dumpname_parse("/x/y/jeprof.123.45.i6.heap", &d);
	CHECK(d.jemalloc);
	CHECK_INT(d.pid, 123);
	CHECK_INT(d.seq, 45);
	CHECK_INT(d.kind, 'i');
	CHECK_INT(d.kseq, 6);
	CHECK_STR(d.base, "jeprof.123.45.i6.heap");
	CHECK_INT(d.prefix_len, 6);
	dumpname_parse("app.v2.77.9.f.heap", &d);
	CHECK(d.jemalloc);
	CHECK_INT(d.kind, 'f');
	CHECK_INT(d.kseq, -1);
	CHECK_INT(d.pid, 77);
	CHECK_INT(d.seq, 9);
	CHECK_INT(d.prefix_len, 6);       /* "app.v2" */
	dumpname_parse("w.5.12.p3.heap.gz", &d);
	CHECK(d.jemalloc && d.kind == 'p' && d.kseq == 3 && d.seq == 12);
	/* with the pid namespace: the namespace is part of the prefix */
	dumpname_parse("jeprof.4026531836.99.0.m0.heap", &d);
	CHECK(d.jemalloc && d.pid == 99 && d.seq == 0 && d.prefix_len == 17);
}

TEST(names_of_others)
{
	struct dumpname d;
	dumpname_parse("slow.3.heap", &d);
	CHECK(!d.jemalloc);
	CHECK_INT(d.seq, 3);
	CHECK_INT(d.kind, 0);
	dumpname_parse("dir.7/before-0012.prof", &d);
	CHECK_INT(d.seq, 12);
	dumpname_parse("a.heap", &d);
	CHECK_INT(d.seq, -1);
	/* a kind letter jemalloc does not write: not jemalloc's shape */
	dumpname_parse("x.1.2.z3.heap", &d);
	CHECK(!d.jemalloc);
	CHECK_INT(d.seq, 3);
	dumpname_parse("x.1.2.i.heap", &d);    /* "i" without its number */
	CHECK(!d.jemalloc);
	CHECK(dumpname_regular('i') && dumpname_regular('m') && dumpname_regular(0));
	CHECK(!dumpname_regular('f') && !dumpname_regular('p') && !dumpname_regular('u'));
}

TEST(plan_orders_and_refuses)
{
	struct series s;
	char err[1024];
	const char *paths[] = { "d/a.9.10.i10.heap", "d/a.9.2.i2.heap", "d/a.9.11.f.heap" };
	double times[] = { 30, 10, 40 };
	CHECK_INT(series_plan(&s, paths, times, 3, err, sizeof(err)), 0);
	CHECK_STR(s.dumps[0].path, "d/a.9.2.i2.heap");
	CHECK_STR(s.dumps[1].path, "d/a.9.10.i10.heap");
	CHECK_STR(s.dumps[2].path, "d/a.9.11.f.heap");
	CHECK_INT(s.clock, SERIES_TIME);
	CHECK(series_when(&s, 1) == 20);
	struct series other;
	CHECK_INT(series_split_irregular(&s, &other), 0);
	CHECK_INT(s.n, 2);
	CHECK_INT(other.n, 1);
	CHECK_STR(other.dumps[0].path, "d/a.9.11.f.heap");
	series_release(&other);
	series_release(&s);

	/* times that go back in the names' order: the sequence numbers */
	double back[] = { 10, 30, 5 };
	CHECK_INT(series_plan(&s, paths, back, 3, err, sizeof(err)), 0);
	CHECK_INT(s.clock, SERIES_SEQ);
	CHECK(series_when(&s, 2) == 11);
	series_release(&s);
	/* all the same time (copied in one go): the sequence numbers */
	double same[] = { 7, 7, 7 };
	CHECK_INT(series_plan(&s, paths, same, 3, err, sizeof(err)), 0);
	CHECK_INT(s.clock, SERIES_SEQ);
	series_release(&s);

	/* names without numbers: as given, by position */
	const char *plain[] = { "b.heap", "a.heap" };
	CHECK_INT(series_plan(&s, plain, NULL, 2, err, sizeof(err)), 0);
	CHECK_STR(s.dumps[0].path, "b.heap");
	CHECK_INT(s.clock, SERIES_ORDER);
	series_release(&s);

	const char *mixed[] = { "a.9.1.i1.heap", "a.10.2.i2.heap" };
	CHECK_INT(series_plan(&s, mixed, NULL, 2, err, sizeof(err)), JH_EUSAGE);
	CHECK(strstr(err, "different processes") && strstr(err, "'a.10.2.i2.heap' (a, process 10)"));
	series_release(&s);
	const char *prefixes[] = { "a.9.1.i1.heap", "b.9.2.i2.heap" };
	CHECK_INT(series_plan(&s, prefixes, NULL, 2, err, sizeof(err)), JH_EUSAGE);
	series_release(&s);
	const char *twice[] = { "a.9.1.i1.heap", "x/a.9.1.i1.heap", "a.9.0.m0.heap" };
	CHECK_INT(series_plan(&s, twice, NULL, 3, err, sizeof(err)), JH_EUSAGE);
	CHECK(strstr(err, "same sequence number, 1"));
	series_release(&s);
}

/* A model of three locations f (leaf), g, h with the stacks f<-g<-h and
 * g<-h, four dumps.  Per dump (in-use bytes): stack 0 (leaf f) 10, 20, 30,
 * 40: a leak of 10 a dump; stack 1 (leaf g) 50, 0, 50, 0: a spike. */
struct model {
	struct profile p;
	struct growth g;
	struct aggregate a;
};

static void model_build(struct model *m, bool cum_sort)
{
	profile_init(&m->p);
	growth_init(&m->g);
	const char *names[] = { "f", "g", "h" };
	uint32_t file = (uint32_t)strtab_intern(&m->p.strs, "m.c");
	for (int i = 0; i < 3; i++) {
		uint32_t name = (uint32_t)strtab_intern(&m->p.strs, names[i]);
		uint32_t fn = (uint32_t)profile_function(&m->p, name, 0, file, i + 1);
		int64_t id = profile_location(&m->p, 0x1000 + 16 * (uint64_t)i, i == 0, UINT32_MAX);
		struct pf_location *l = &m->p.locs[id];
		l->line0 = (uint32_t)m->p.nlines;
		l->nlines = 1;
		l->sym = PF_SYM_DWARF;
		struct pf_line ln = { .function = fn, .file = file, .line = 10 * (i + 1) };
		profile_add_line(&m->p, &ln);
	}
	uint32_t s0[] = { 0, 1, 2 }, s1[] = { 1, 2 };
	profile_sample(&m->p, s0, 3);
	profile_sample(&m->p, s1, 2);
	double leak[] = { 10, 20, 30, 40 }, spike[] = { 50, 0, 50, 0 };
	/* snapshots of running sums, as the driver takes them; allocated is
	 * in use plus 5 freed per dump and stack (churn 5, 10, 15, 20) */
	for (int k = 0; k < 4; k++) {
		m->p.samples[0].v[PF_INUSE_SPACE] += leak[k];
		m->p.samples[1].v[PF_INUSE_SPACE] += spike[k];
		m->p.samples[0].v[PF_ALLOC_SPACE] += leak[k] + 5 * (k + 1);
		m->p.samples[1].v[PF_ALLOC_SPACE] += spike[k] + 5 * (k + 1);
		growth_snapshot(&m->g, &m->p);
	}
	growth_finish(&m->g, &m->p, NULL);
	struct agg_options ao = { .value = PF_INUSE_SPACE };
	aggregate_build(&m->a, &m->p, &ao);
	aggregate_sort(&m->a, cum_sort);
}

static void model_release(struct model *m)
{
	aggregate_release(&m->a);
	growth_release(&m->g);
	profile_release(&m->p);
}

static const char *key(const struct model *m, uint32_t k)
{
	return strtab_get(&m->a.keys, k);
}

TEST(rank_leaf_and_cum)
{
	struct model m;
	model_build(&m, false);
	struct series_site *sites;
	size_t n;
	CHECK_INT(series_rank(&m.g, &m.p, &m.a, PF_INUSE_SPACE, false, &sites, &n), 0);
	/* f: slope 10, fit 1; g: 50,0,50,0 slope -10 (fit 0.2) */
	CHECK_INT(n, 2);
	CHECK_STR(key(&m, sites[0].key), "f");
	CHECK(fabs(sites[0].slope - 10) < 1e-9 && fabs(sites[0].r2 - 1) < 1e-9);
	CHECK_STR(key(&m, sites[1].key), "g");
	CHECK(fabs(sites[1].slope + 10) < 1e-9);
	free(sites);
	/* --cum: g and h hold f's leak too: g 60,20,80,40 (the rise and
	 * the spike cancel: slope 0), h the same; f alone scores 10 */
	CHECK_INT(series_rank(&m.g, &m.p, &m.a, PF_INUSE_SPACE, true, &sites, &n), 0);
	CHECK_INT(n, 3);
	CHECK_STR(key(&m, sites[0].key), "f");
	CHECK(fabs(sites[1].slope) < 1e-9);
	CHECK(fabs(sites[1].first - 60) < 1e-9 && fabs(sites[1].last - 40) < 1e-9);
	/* g and h score alike and end alike: by name */
	CHECK_STR(key(&m, sites[1].key), "g");
	CHECK_STR(key(&m, sites[2].key), "h");
	free(sites);
	model_release(&m);
}

TEST(timeline_rows_and_peak)
{
	struct model m;
	model_build(&m, false);
	struct series s;
	char err[256];
	const char *paths[] = { "t.1.0.m0.heap", "t.1.1.p0.heap", "t.1.2.m1.heap", "t.1.3.f.heap" };
	CHECK_INT(series_plan(&s, paths, NULL, 4, err, sizeof(err)), 0);
	series_totals(&s, &m.g);
	/* totals 60, 20, 80, 40 */
	CHECK(s.dumps[2].total[PF_INUSE_SPACE] == 80);
	CHECK_INT(series_peak(&s, PF_INUSE_SPACE), 2);
	/* churn: allocated minus in use, 10, 20, 30, 40 a dump in all */
	CHECK(pf_value_of(s.dumps[3].total, PF_CHURN_SPACE) == 40);
	CHECK_INT(series_peak(&s, PF_CHURN_SPACE), 3);
	struct series_row *rows;
	CHECK_INT(series_timeline(&s, &m.g, &m.p, &m.a, PF_INUSE_SPACE, false, &rows), 0);
	/* dump 0: g is the largest (50); 1: f rose 10; 2: g rose 50;
	 * 3: f rose 10 */
	CHECK_STR(key(&m, rows[0].grew_key), "g");
	CHECK(rows[0].grew_by == 50 && rows[0].change == 0 && rows[0].value == 60);
	CHECK_STR(key(&m, rows[1].grew_key), "f");
	CHECK(rows[1].change == -40);
	CHECK_STR(key(&m, rows[2].grew_key), "g");
	CHECK(rows[2].grew_by == 50);
	CHECK_STR(key(&m, rows[3].grew_key), "f");
	free(rows);
	/* by churn, each stack rose by 5 a dump: ties go to the first name */
	CHECK_INT(series_timeline(&s, &m.g, &m.p, &m.a, PF_CHURN_SPACE, false, &rows), 0);
	CHECK_STR(key(&m, rows[1].grew_key), "f");
	CHECK(rows[1].grew_by == 5 && rows[1].value == 20);
	free(rows);
	series_release(&s);
	model_release(&m);
}

/* Two dumps of one program: the same main executable at the same place;
 * a third elsewhere is another process, a fourth another program. */
TEST(note_dump_programs)
{
	struct profile one[4];
	const char *progs[] = { "/bin/app", "/bin/app", "/bin/app", "/bin/other" };
	uint64_t starts[] = { 0x5000, 0x5000, 0x9000, 0x5000 };
	for (int i = 0; i < 4; i++) {
		profile_init(&one[i]);
		struct pf_mapping mp = { .start = starts[i], .limit = starts[i] + 0x1000, .exec = true };
		mp.path = (uint32_t)strtab_intern(&one[i].strs, progs[i]);
		one[i].main_mapping = (uint32_t)profile_mapping(&one[i], &mp);
	}
	const char *paths[] = { "a.heap", "b.heap", "c.heap" };
	struct series s;
	char err[512];
	CHECK_INT(series_plan(&s, paths, NULL, 3, err, sizeof(err)), 0);
	CHECK_INT(series_note_dump(&s, 0, &one[0], err, sizeof(err)), 0);
	CHECK_INT(series_note_dump(&s, 1, &one[1], err, sizeof(err)), 0);
	CHECK_INT(series_note_dump(&s, 2, &one[2], err, sizeof(err)), JH_EFORMAT);
	CHECK(strstr(err, "different processes") && strstr(err, "'c.heap'") && strstr(err, "0x9000"));
	CHECK_INT(series_note_dump(&s, 2, &one[3], err, sizeof(err)), JH_EFORMAT);
	CHECK(strstr(err, "different programs") && strstr(err, "/bin/other"));
	series_release(&s);
	for (int i = 0; i < 4; i++)
		profile_release(&one[i]);
}

TEST(leak_summary_lines)
{
	struct leaksum ls = { 0 };
	const char t1[] = "noise\n<jemalloc>: Leak approximation summary: ~1228800 bytes, ~11 objects, >= 2 contexts\n<jemalloc>: Run jeprof on dump output for leak detail\n";
	CHECK_INT(leaksum_parse(t1, strlen(t1), &ls), 1);
	CHECK(ls.bytes == 1228800 && ls.objects == 11 && ls.contexts == 2 && ls.approx);
	const char t2[] = "<jemalloc>: Leak summary: 1 byte, 1 object, 1 context\n";
	CHECK_INT(leaksum_parse(t2, strlen(t2), &ls), 1);
	CHECK(ls.bytes == 1 && ls.objects == 1 && ls.contexts == 1 && !ls.approx);
	const char t3[] = "<jemalloc>: Leak approximation summary: ~12 bytes\n";
	CHECK_INT(leaksum_parse(t3, strlen(t3), &ls), 0);
	CHECK_INT(leaksum_parse("", 0, &ls), 0);
}

int main(void)
{
	RUN(names_of_jemalloc);
	RUN(names_of_others);
	RUN(plan_orders_and_refuses);
	RUN(rank_leaf_and_cum);
	RUN(timeline_rows_and_peak);
	RUN(note_dump_programs);
	RUN(leak_summary_lines);
	return UNIT_END();
}

/* dumpmodel FILE...: parses each file with jheap's parser, sums them and
 * prints the model in a canonical text form, for the parser's golden tests.
 * A file whose body was parsed in two threads is named on stderr. */
#include <stdio.h>
#include "analyzer/merge.h"
#include "analyzer/parse.h"

static void warn(void *ctx, const char *msg)
{
	(void)ctx;
	printf("warning: %s\n", msg);
}

int main(int argc, char **argv)
{
	struct profile p;
	profile_init(&p);
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		struct profile one;
		char err[512];
		bool split = false;
		struct parse_options o = { .warn = warn, .split = &(struct parse_split_options){ .done = &split } };
		profile_init(&one);
		int prc = parse_file(&one, argv[i], &o, err, sizeof(err));
		if (split)
			fprintf(stderr, "dumpmodel: %s: parsed in two threads\n", argv[i]);
		if (prc) {
			printf("error: %s\n", err);
			rc = 1;
		} else {
			profile_merge(&p, &one, 1, err, sizeof(err));
		}
		profile_release(&one);
	}
	static const char *fmts[] = { "none", "heap_v2", "gperftools" };
	printf("format %s period %llu has_alloc %d has_maps %d\n", fmts[p.format],
	       (unsigned long long)p.period, p.has_alloc, p.has_maps);
	printf("header %.6f %.6f %.6f %.6f\n", p.header_total[0], p.header_total[1],
	       p.header_total[2], p.header_total[3]);
	for (size_t i = 0; i < p.nmaps; i++) {
		struct pf_mapping *m = &p.maps[i];
		printf("mapping %zu %llx-%llx off %llx %s%s%s kind %d '%s'\n", i,
		       (unsigned long long)m->start, (unsigned long long)m->limit,
		       (unsigned long long)m->offset, m->exec ? "x" : "-",
		       m->deleted ? " deleted" : "", m->is_main ? " main" : "", m->kind,
		       strtab_get(&p.strs, m->path));
	}
	for (size_t i = 0; i < p.nthreads; i++)
		printf("thread t%lld '%s'\n", (long long)p.threads[i].uid,
		       strtab_get(&p.strs, p.threads[i].name));
	for (size_t i = 0; i < p.nsamples; i++) {
		struct pf_sample *s = &p.samples[i];
		printf("sample %.6f %.6f %.6f %.6f @", s->v[0], s->v[1], s->v[2], s->v[3]);
		for (uint32_t j = 0; j < s->depth; j++) {
			struct pf_location *l = &p.locs[p.stacks[s->stack0 + j]];
			printf(" %llx%s", (unsigned long long)l->addr, l->leaf ? "L" : "");
			if (l->mapping != UINT32_MAX)
				printf("/m%u", l->mapping);
		}
		printf("\n");
	}
	for (size_t i = 0; i < p.ntvals; i++) {
		struct pf_thread_value *t = &p.tvals[i];
		printf("thread-value sample %u t%lld %.6f %.6f %.6f %.6f\n", t->sample,
		       (long long)p.threads[t->thread].uid, t->v[0], t->v[1], t->v[2], t->v[3]);
	}
	for (size_t i = 0; i < p.npresyms; i++)
		printf("presym %llx '%s'\n", (unsigned long long)p.presyms[i].addr,
		       strtab_get(&p.strs, p.presyms[i].names));
	if (p.presym_binary)
		printf("binary '%s'\n", strtab_get(&p.strs, p.presym_binary));
	profile_release(&p);
	return rc;
}

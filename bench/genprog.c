/*
 * genprog: write the C++ sources of the benchmark program of `make bench`.
 *
 *   genprog OUTDIR [NFILES [LEVELS [SEED]]]
 *
 * writes OUTDIR/bench.h, OUTDIR/main.cc and OUTDIR/mNNN.cc (NNN = 0 ..
 * NFILES-1).  File mNNN holds one externally visible function per level
 * (LEVELS levels); a function of level l calls 2 to 4 functions of level l+1
 * or l+2 in other files (a layered graph, so no recursion), chosen by a
 * seeded PRNG, and the functions of the deeper levels are leaves that
 * allocate with new, malloc, std::string, std::vector, std::make_shared or
 * std::map, at sizes from 16 bytes to a few kilobytes.  Many call sites go
 * through small file-local helpers and templates that GCC inlines, so the
 * return addresses lie in inlined code and symbolizing them needs the
 * inline frames; the allocation helpers in bench.h pull in libstdc++'s
 * inline templates too.  Names vary: free functions, function templates
 * explicitly instantiated, functions in nested namespaces, overloads.
 *
 * At run time every path id i is mixed into a 64-bit value (a bijection),
 * and each function picks its callee from that value, so the ids walk
 * random, mostly distinct paths of 12 to 24 frames: the number of distinct
 * stacks in a heap dump grows with the number of ids run.  main.cc:
 *
 *   prog FIRST COUNT [MARK...]
 *
 * runs the ids FIRST .. FIRST+COUNT-1, and after MARK ids (each MARK
 * counted from FIRST) allocates 1 GiB in 64 KiB blocks, each freed at
 * once, so that with MALLOC_CONF lg_prof_interval:30 jemalloc writes one
 * interval dump there and nowhere else (the program's own allocations stay
 * far below 1 GiB), and the dump holds one 64 KiB block of it.
 *
 * The output depends only on the arguments: same arguments, same bytes.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 2000
#define MAX_LEVELS 40
#define MAX_CALLS 6

static uint64_t rng_state;

/* splitmix64: small, good enough, and the same on every platform. */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static unsigned rnd_below(unsigned n)
{
	return (unsigned)(rnd() % n);
}

static const char *const verbs[] = {
	"parse", "merge", "scan", "flush", "encode", "decode", "build", "route",
	"apply", "load", "store", "index", "split", "join", "probe", "visit",
	"resolve", "commit", "render", "compact", "prefetch", "collect", "emit",
	"filter", "reduce", "expand", "hash", "sort", "match", "update",
};
static const char *const nouns[] = {
	"record", "block", "tree", "page", "frame", "batch", "chunk", "row",
	"column", "segment", "token", "buffer", "entry", "table", "node",
	"packet", "query", "cursor", "span", "slice", "bucket", "request",
	"schema", "window", "region", "header", "payload", "stream", "ledger",
	"tile",
};
#define NVERBS (sizeof(verbs) / sizeof(verbs[0]))
#define NNOUNS (sizeof(nouns) / sizeof(nouns[0]))

enum fkind {
	FK_PLAIN,    /* uint64_t mNNN::verb_noun_LL(uint64_t) */
	FK_TEMPLATE, /* template <int K> uint64_t mNNN::Verb_noun_LL<K>(uint64_t) */
	FK_DETAIL,   /* uint64_t mNNN::detail::verb_noun_LL(uint64_t, int) */
	FK_TYPED,    /* template <typename T> uint64_t mNNN::verb_noun_LL<T>(T) */
	FK_COUNT
};

struct func {
	char name[48];
	enum fkind kind;
	int targ;                 /* the K of FK_TEMPLATE, type index of FK_TYPED */
	int ncalls;               /* callees; 0 for a leaf */
	int callee[MAX_CALLS];    /* function ids */
	int via[MAX_CALLS];       /* 0 direct, 1..3 depth of inline helpers */
	int nallocs;              /* allocation sites */
	int alloc[4];             /* allocation kinds */
	uint64_t salt;
};

static struct func *funcs;
static int nfiles, nlevels;

static int fid(int file, int level)
{
	return file * nlevels + level;
}

static const char *const typed_names[] = { "unsigned long", "long", "unsigned int" };
static const char *const typed_casts[] = { "(unsigned long)", "(long)", "(unsigned int)" };

static FILE *open_out(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		fprintf(stderr, "genprog: cannot create '%s': %s\n", path, strerror(errno));
	return f;
}

static int close_out(FILE *f)
{
	int bad = ferror(f);

	if (fclose(f) != 0 || bad) {
		fprintf(stderr, "genprog: write error: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* The qualified name used to call function g, with its arguments. */
static void print_call(FILE *o, int g, const char *arg)
{
	const struct func *fn = &funcs[g];
	int file = g / nlevels;

	switch (fn->kind) {
	case FK_PLAIN:
		fprintf(o, "m%03d::%s(%s)", file, fn->name, arg);
		break;
	case FK_TEMPLATE:
		fprintf(o, "m%03d::%s<%d>(%s)", file, fn->name, fn->targ, arg);
		break;
	case FK_DETAIL:
		fprintf(o, "m%03d::detail::%s(%s, %d)", file, fn->name, arg, (int)(fn->salt % 7));
		break;
	default:
		fprintf(o, "m%03d::%s(%s%s)", file, fn->name, typed_casts[fn->targ], arg);
		break;
	}
}

/* Declaration of function g as seen from another file. */
static void print_decl(FILE *o, int g)
{
	const struct func *fn = &funcs[g];
	int file = g / nlevels;

	switch (fn->kind) {
	case FK_PLAIN:
		fprintf(o, "namespace m%03d { uint64_t %s(uint64_t); }\n", file, fn->name);
		break;
	case FK_TEMPLATE:
		fprintf(o, "namespace m%03d { template <int K> uint64_t %s(uint64_t); }\n", file, fn->name);
		break;
	case FK_DETAIL:
		fprintf(o, "namespace m%03d { namespace detail { uint64_t %s(uint64_t, int); } }\n",
			file, fn->name);
		break;
	default:
		fprintf(o, "namespace m%03d { template <typename T> uint64_t %s(T); }\n", file, fn->name);
		break;
	}
}

/* The function's own signature (definition side). */
static void print_head(FILE *o, const struct func *fn)
{
	switch (fn->kind) {
	case FK_PLAIN:
		fprintf(o, "uint64_t %s(uint64_t p)\n", fn->name);
		break;
	case FK_TEMPLATE:
		fprintf(o, "template <int K>\nuint64_t %s(uint64_t p)\n", fn->name);
		break;
	case FK_DETAIL:
		fprintf(o, "namespace detail {\nuint64_t %s(uint64_t p, int lane)\n", fn->name);
		break;
	default:
		fprintf(o, "template <typename T>\nuint64_t %s(T p_)\n", fn->name);
		break;
	}
}

static void print_tail(FILE *o, const struct func *fn)
{
	switch (fn->kind) {
	case FK_TEMPLATE:
		fprintf(o, "template uint64_t %s<%d>(uint64_t);\n", fn->name, fn->targ);
		break;
	case FK_DETAIL:
		fprintf(o, "} // namespace detail\n");
		break;
	case FK_TYPED:
		fprintf(o, "template uint64_t %s<%s>(%s);\n", fn->name,
			typed_names[fn->targ], typed_names[fn->targ]);
		break;
	default:
		break;
	}
}

static const int blob_sizes[] = { 16, 24, 40, 48, 64, 96, 128, 200, 256, 384, 512, 1000, 2048 };
#define NBLOBS (sizeof(blob_sizes) / sizeof(blob_sizes[0]))

/* One allocation statement of kind k, using the local h. */
static void print_alloc(FILE *o, int k, uint64_t salt)
{
	switch (k % 8) {
	case 0:
		fprintf(o, "bench::make_blob<%d>(h);", blob_sizes[salt % NBLOBS]);
		break;
	case 1:
		fprintf(o, "bench::raw_bytes(h, 16 + (h >> 20) %% %u);", 100u + (unsigned)(salt % 3000));
		break;
	case 2:
		fprintf(o, "bench::make_text(h, 16 + (h >> 24) %% %u);", 40u + (unsigned)(salt % 400));
		break;
	case 3:
		fprintf(o, "bench::make_vec<%s>(h, 1 + (h >> 28) %% %u);",
			(salt & 1) ? "uint32_t" : "double", 8u + (unsigned)(salt % 120));
		break;
	case 4:
		fprintf(o, "bench::make_shared_blob<%d>(h);", blob_sizes[salt % NBLOBS]);
		break;
	case 5:
		fprintf(o, "bench::make_map(h, 1 + (int)((h >> 32) %% 3));");
		break;
	case 6:
		fprintf(o, "bench::array_of<%d>(h, 1 + (h >> 36) %% 16);", blob_sizes[salt % NBLOBS]);
		break;
	default:
		fprintf(o, "bench::zeroed(h, %u);", 8u + (unsigned)(salt % 600));
		break;
	}
}

/* Inline helpers for call site c of function fn (id g): a chain of
 * fn->via[c] functions, the innermost of which makes the call. */
static void print_helpers(FILE *o, int g, const struct func *fn, int c)
{
	int depth = fn->via[c], d;
	int lvl = g % nlevels;

	for (d = depth; d >= 1; d--) {
		/* helper d calls helper d+1, the last one calls the callee */
		int templated = ((fn->salt >> (c * 4 + d)) & 3) == 0;
		int forced = ((fn->salt >> (c * 3 + d + 20)) & 3) != 0;

		if (templated)
			fprintf(o, "template <int D>\n");
		fprintf(o, "static inline%s uint64_t %s_%s_%d_%d(uint64_t h)\n{\n",
			forced ? " __attribute__((always_inline))" : "",
			d == 1 ? "via" : (d == 2 ? "hop" : "step"), nouns[(fn->salt >> (c + d)) % NNOUNS],
			lvl, c * 10 + d);
		if (d == depth) {
			fprintf(o, "\tuint64_t r = ");
			print_call(o, fn->callee[c], templated ? "h ^ D" : "h");
			fprintf(o, ";\n\treturn r * %u + (h >> %d);\n}\n", 3u + (unsigned)(fn->salt % 5), 3 + d);
		} else {
			int next = d + 1;
			int ntempl = ((fn->salt >> (c * 4 + next)) & 3) == 0;

			fprintf(o, "\tuint64_t r = %s_%s_%d_%d%s(bench::mix(h, %d));\n",
				next == 2 ? "hop" : "step", nouns[(fn->salt >> (c + next)) % NNOUNS],
				lvl, c * 10 + next, ntempl ? "<3>" : "", d + c);
			fprintf(o, "\treturn r ^ (h << %d);\n}\n", d + 1);
		}
	}
}

static void print_body(FILE *o, int g)
{
	const struct func *fn = &funcs[g];
	int c, a, nb = fn->ncalls + fn->nallocs;
	int lvl = g % nlevels;

	for (c = 0; c < fn->ncalls; c++)
		if (fn->via[c])
			print_helpers(o, g, fn, c);
	print_head(o, fn);
	fprintf(o, "{\n");
	if (fn->kind == FK_TYPED)
		fprintf(o, "\tconst uint64_t p = (uint64_t)p_ ^ %lluULL;\n",
			(unsigned long long)(fn->salt & 0xffff));
	if (fn->kind == FK_DETAIL)
		fprintf(o, "\tconst uint64_t h = bench::mix(p + (uint64_t)lane, %lluULL);\n",
			(unsigned long long)(fn->salt >> 8));
	else if (fn->kind == FK_TEMPLATE)
		fprintf(o, "\tconst uint64_t h = bench::mix(p, %lluULL + K);\n",
			(unsigned long long)(fn->salt >> 8));
	else
		fprintf(o, "\tconst uint64_t h = bench::mix(p, %lluULL);\n",
			(unsigned long long)(fn->salt >> 8));
	fprintf(o, "\tuint64_t r = 0;\n\tswitch (h %% %d) {\n", nb);
	for (c = 0; c < fn->ncalls; c++) {
		fprintf(o, "\tcase %d:\n\t\tr = ", c);
		if (fn->via[c]) {
			int templated = ((fn->salt >> (c * 4 + 1)) & 3) == 0;

			fprintf(o, "via_%s_%d_%d%s(h)", nouns[(fn->salt >> (c + 1)) % NNOUNS],
				lvl, c * 10 + 1, templated ? "<1>" : "");
		} else {
			print_call(o, fn->callee[c], "h");
		}
		/* not a tail call: the caller's frame stays on the stack */
		fprintf(o, " + %d;\n\t\tbreak;\n", c + 1);
	}
	for (a = 0; a < fn->nallocs; a++) {
		fprintf(o, "\tcase %d:\n\t\t", fn->ncalls + a);
		print_alloc(o, fn->alloc[a], fn->salt >> (a * 5));
		fprintf(o, "\n\t\tr = h >> %d;\n\t\tbreak;\n", a + 2);
	}
	fprintf(o, "\t}\n\treturn r ^ (h >> 11);\n}\n");
	print_tail(o, fn);
	fprintf(o, "\n");
}

static void plan(void)
{
	int f, l, c;

	for (f = 0; f < nfiles; f++) {
		for (l = 0; l < nlevels; l++) {
			struct func *fn = &funcs[fid(f, l)];
			int leafish;

			fn->salt = rnd();
			snprintf(fn->name, sizeof(fn->name), "%s_%s_%02d", verbs[rnd_below(NVERBS)],
				nouns[rnd_below(NNOUNS)], l);
			fn->kind = l == 0 ? FK_PLAIN : (enum fkind)rnd_below(FK_COUNT);
			if (fn->kind == FK_TEMPLATE) {
				fn->targ = 1 + (int)rnd_below(9);
				fn->name[0] = (char)(fn->name[0] - 'a' + 'A');
			} else if (fn->kind == FK_TYPED) {
				fn->targ = (int)rnd_below(3);
			}
			/* deeper levels end more paths; the last level only allocates */
			leafish = l == nlevels - 1 ||
				(l >= nlevels / 2 && rnd_below(100) < (unsigned)(8 * (l - nlevels / 2)));
			if (leafish) {
				fn->ncalls = 0;
				fn->nallocs = 2 + (int)rnd_below(3);
			} else {
				fn->ncalls = 2 + (int)rnd_below(3);
				fn->nallocs = (l >= nlevels / 3 && rnd_below(100) < 15) ? 1 : 0;
			}
			for (c = 0; c < fn->nallocs; c++)
				fn->alloc[c] = (int)rnd_below(8);
			for (c = 0; c < fn->ncalls; c++) {
				int tl = l + 1, tf;

				if (tl + 1 < nlevels && rnd_below(100) < 20)
					tl++;
				do
					tf = (int)rnd_below((unsigned)nfiles);
				while (tf == f && nfiles > 1 && rnd_below(100) >= 10);
				fn->callee[c] = fid(tf, tl);
				fn->via[c] = rnd_below(100) < 45 ? 1 + (int)rnd_below(3) : 0;
			}
		}
	}
}

static int write_header(const char *dir)
{
	FILE *o = open_out(dir, "bench.h");

	if (!o)
		return -1;
	fputs("// Generated by bench/genprog.c: shared helpers of the benchmark program.\n"
	      "#pragma once\n"
	      "#include <cstdint>\n#include <cstdlib>\n#include <cstring>\n"
	      "#include <map>\n#include <memory>\n#include <string>\n#include <vector>\n\n"
	      "namespace bench {\n"
	      "extern void *volatile sink[256];\n\n"
	      "// A bijection on 64 bits, so distinct path ids stay distinct.\n"
	      "inline uint64_t mix(uint64_t x, uint64_t k)\n{\n"
	      "\tx ^= k;\n\tx ^= x >> 31;\n\tx *= 0x9e3779b97f4a7c15ULL;\n\tx ^= x >> 29;\n"
	      "\tx *= 0xbf58476d1ce4e5b9ULL;\n\treturn x ^ (x >> 32);\n}\n\n"
	      "inline __attribute__((always_inline)) void keep(void *p, uint64_t h)\n{\n"
	      "\tsink[h & 255] = p;\n}\n\n"
	      "template <int N> struct Blob {\n"
	      "\tunsigned char bytes[N];\n"
	      "\tBlob() { bytes[0] = (unsigned char)N; }\n};\n\n"
	      "template <int N> inline Blob<N> *make_blob(uint64_t h)\n{\n"
	      "\tBlob<N> *b = new Blob<N>();\n\tkeep(b, h);\n\treturn b;\n}\n\n"
	      "inline void *raw_bytes(uint64_t h, size_t n)\n{\n"
	      "\tvoid *p = std::malloc(n);\n\tkeep(p, h);\n\treturn p;\n}\n\n"
	      "inline void *zeroed(uint64_t h, size_t n)\n{\n"
	      "\tvoid *p = std::calloc(1, n);\n\tkeep(p, h);\n\treturn p;\n}\n\n"
	      "inline std::string *make_text(uint64_t h, size_t n)\n{\n"
	      "\tstd::string *s = new std::string(n, (char)('a' + h % 26));\n"
	      "\tkeep(s, h);\n\treturn s;\n}\n\n"
	      "template <typename T> inline std::vector<T> *make_vec(uint64_t h, size_t n)\n{\n"
	      "\tstd::vector<T> *v = new std::vector<T>();\n\tv->reserve(n);\n"
	      "\tv->push_back(T(h));\n\tkeep(v, h);\n\treturn v;\n}\n\n"
	      "template <int N> inline void make_shared_blob(uint64_t h)\n{\n"
	      "\tauto *sp = new std::shared_ptr<Blob<N>>(std::make_shared<Blob<N>>());\n"
	      "\tkeep(sp, h);\n}\n\n"
	      "inline void make_map(uint64_t h, int n)\n{\n"
	      "\tauto *m = new std::map<uint64_t, std::string>();\n"
	      "\tfor (int i = 0; i < n; i++)\n"
	      "\t\t(*m)[h + (uint64_t)i] = std::string(20 + (size_t)i * 8, 'm');\n"
	      "\tkeep(m, h);\n}\n\n"
	      "template <int N> inline void array_of(uint64_t h, size_t n)\n{\n"
	      "\tBlob<N> *a = new Blob<N>[n];\n\tkeep(a, h);\n}\n"
	      "} // namespace bench\n", o);
	return close_out(o);
}

static int write_file(const char *dir, int f)
{
	char name[32];
	FILE *o;
	int l, c, g, k;
	static unsigned char *seen;

	snprintf(name, sizeof(name), "m%03d.cc", f);
	o = open_out(dir, name);
	if (!o)
		return -1;
	fprintf(o, "// Generated by bench/genprog.c: file %d of %d.\n#include \"bench.h\"\n\n", f, nfiles);
	if (!seen) {
		seen = calloc((size_t)nfiles * (size_t)nlevels, 1);
		if (!seen) {
			fprintf(stderr, "genprog: out of memory\n");
			fclose(o);
			return -1;
		}
	}
	/* declarations of the other files' callees, once each, in id order */
	memset(seen, 0, (size_t)nfiles * (size_t)nlevels);
	for (l = 0; l < nlevels; l++)
		for (c = 0; c < funcs[fid(f, l)].ncalls; c++) {
			g = funcs[fid(f, l)].callee[c];
			if (g / nlevels != f)
				seen[g] = 1;
		}
	for (k = 0; k < nfiles * nlevels; k++)
		if (seen[k])
			print_decl(o, k);
	fprintf(o, "\nnamespace m%03d {\n", f);
	/* forward declarations of this file's own functions: callees in the
	 * same file may come later */
	for (l = 0; l < nlevels; l++) {
		const struct func *fn = &funcs[fid(f, l)];

		if (fn->kind == FK_PLAIN)
			fprintf(o, "uint64_t %s(uint64_t);\n", fn->name);
		else if (fn->kind == FK_TEMPLATE)
			fprintf(o, "template <int K> uint64_t %s(uint64_t);\n", fn->name);
		else if (fn->kind == FK_DETAIL)
			fprintf(o, "namespace detail { uint64_t %s(uint64_t, int); }\n", fn->name);
		else
			fprintf(o, "template <typename T> uint64_t %s(T);\n", fn->name);
	}
	fprintf(o, "}\n\n");
	/* deepest level first, so same-file callees are defined before use
	 * (needed for the templates' explicit instantiations) */
	for (l = nlevels - 1; l >= 0; l--) {
		fprintf(o, "namespace m%03d {\n", f);
		print_body(o, fid(f, l));
		fprintf(o, "} // namespace m%03d\n\n", f);
	}
	return close_out(o);
}

static int write_main(const char *dir)
{
	FILE *o = open_out(dir, "main.cc");
	int f;

	if (!o)
		return -1;
	fprintf(o, "// Generated by bench/genprog.c: the driver.\n#include \"bench.h\"\n#include <cstdio>\n\n");
	for (f = 0; f < nfiles; f++)
		print_decl(o, fid(f, 0));
	fprintf(o, "\nvoid *volatile bench::sink[256];\n\n"
		   "__attribute__((noinline)) static uint64_t dispatch(uint64_t p)\n{\n"
		   "\tswitch (p %% %d) {\n", nfiles);
	for (f = 0; f < nfiles; f++) {
		fprintf(o, "\tcase %d:\n\t\treturn ", f);
		print_call(o, fid(f, 0), "p");
		fprintf(o, " + 1;\n");
	}
	fprintf(o, "\t}\n\treturn 0;\n}\n\n"
		   "// 1 GiB in 64 KiB blocks, each freed at once: with lg_prof_interval:30\n"
		   "// jemalloc writes one interval dump here, holding one live block.\n"
		   "__attribute__((noinline)) static void checkpoint(void)\n{\n"
		   "\tvoid *(*volatile alloc)(size_t) = std::malloc;\n"
		   "\tvoid (*volatile release)(void *) = std::free;\n"
		   "\tfor (int i = 0; i < 16384; i++)\n"
		   "\t\trelease(alloc((size_t)1 << 16));\n}\n\n"
		   "int main(int argc, char **argv)\n{\n"
		   "\tif (argc < 3) {\n"
		   "\t\tstd::fprintf(stderr, \"usage: %%s FIRST COUNT [MARK...]\\n\", argv[0]);\n"
		   "\t\treturn 2;\n\t}\n"
		   "\tuint64_t first = std::strtoull(argv[1], nullptr, 10);\n"
		   "\tuint64_t count = std::strtoull(argv[2], nullptr, 10);\n"
		   "\tuint64_t acc = 0;\n\tint next = 3;\n"
		   "\tfor (uint64_t i = 0; i < count; i++) {\n"
		   "\t\tacc += dispatch(bench::mix(first + i, 0x5eedULL));\n"
		   "\t\twhile (next < argc && std::strtoull(argv[next], nullptr, 10) == i + 1) {\n"
		   "\t\t\tcheckpoint();\n\t\t\tnext++;\n\t\t}\n\t}\n"
		   "\tstd::printf(\"%%llu\\n\", (unsigned long long)(acc & 0xffff));\n"
		   "\treturn 0;\n}\n");
	return close_out(o);
}

int main(int argc, char **argv)
{
	int f;

	if (argc < 2 || argc > 5) {
		fprintf(stderr, "usage: genprog OUTDIR [NFILES [LEVELS [SEED]]]\n");
		return 2;
	}
	nfiles = argc > 2 ? atoi(argv[2]) : 300;
	nlevels = argc > 3 ? atoi(argv[3]) : 24;
	rng_state = argc > 4 ? strtoull(argv[4], NULL, 0) : 20240501;
	if (nfiles < 1 || nfiles > MAX_FILES || nlevels < 4 || nlevels > MAX_LEVELS) {
		fprintf(stderr, "genprog: NFILES must be 1..%d and LEVELS 4..%d\n", MAX_FILES, MAX_LEVELS);
		return 2;
	}
	funcs = calloc((size_t)nfiles * (size_t)nlevels, sizeof(*funcs));
	if (!funcs) {
		fprintf(stderr, "genprog: out of memory\n");
		return 1;
	}
	plan();
	if (write_header(argv[1]) < 0 || write_main(argv[1]) < 0)
		return 1;
	for (f = 0; f < nfiles; f++)
		if (write_file(argv[1], f) < 0)
			return 1;
	return 0;
}

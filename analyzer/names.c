#include <string.h>
#include "analyzer/names.h"

/* Removes every innermost group OPEN..CLOSE (no nested OPEN/CLOSE inside);
 * with PARENS also an immediately following "\s*const".  A parenthesis
 * right after a '.' is left: no C++ name has one, and in Go's names
 * ("main.(*Server).handle", from a pprof input) it is a receiver type, not
 * an argument list.  Returns whether anything was removed.  Works in
 * place. */
static bool strip_groups(char *s, char open, char close, bool parens)
{
	bool changed = false;
	char *w = s;
	for (char *r = s; *r;) {
		if (*r == open && !(parens && r > s && r[-1] == '.')) {
			char *q = r + 1;
			while (*q && *q != open && *q != close)
				q++;
			if (*q == close) {
				q++;
				if (parens) {
					char *c = q;
					while (*c == ' ' || *c == '\t')
						c++;
					if (!strncmp(c, "const", 5))
						q = c + 5;
				}
				r = q;
				changed = true;
				continue;
			}
		}
		*w++ = *r++;
	}
	*w = 0;
	return changed;
}

static bool is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The index after the "<...>" group that starts at S[I] ("->" inside is
 * an arrow, not a bracket), or the end of S when it is not closed. */
static size_t group_end(const char *s, size_t i)
{
	int depth = 0;
	for (; s[i]; i++) {
		if (s[i] == '<')
			depth++;
		else if (s[i] == '>' && !(i && s[i - 1] == '-') && --depth == 0)
			return i + 1;
	}
	return i;
}

/* A Rust name with a qualified path: "<T as Trait>::method" or, in v0
 * demangling, "<Type<u8>>::method"; a "::<" is v0's turbofish or a legacy
 * "<impl Trait for T>" block.  No C++ name has either (C++'s "operator<"
 * follows "operator", not "::"). */
static bool is_rust_qualified(const char *s)
{
	return s[0] == '<' || strstr(s, "::<") != NULL;
}

/* The short form of a Rust name: generic arguments dropped (those after a
 * name, "Vec<u8>", and v0's turbofish "::<T>"), the brackets of qualified
 * paths kept ("<T as Trait>", "<impl Trait for T>") with their insides
 * shortened the same way, and a leading "<Type>::" of v0 unwrapped, so a
 * name reads the same in legacy and v0 demangling:
 * "<alloc::raw_vec::RawVec<u8>>::grow_one" and
 * "alloc::raw_vec::RawVec<T,A>::grow_one" are both
 * "alloc::raw_vec::RawVec::grow_one". */
static void rust_short(const char *s, char *out, size_t outlen)
{
	size_t n = 0, i = 0;
	while (s[i] && n + 1 < outlen) {
		char c = s[i];
		if (c != '<') {
			out[n++] = c;
			i++;
			continue;
		}
		char prev = i ? s[i - 1] : 0;
		if (prev == ':' && strncmp(s + i + 1, "impl ", 5)) {
			/* turbofish: "::<...>" goes, its "::" too */
			while (n && out[n - 1] == ':')
				n--;
			i = group_end(s, i);
		} else if (prev && (is_word(prev) || prev == '>')) {
			i = group_end(s, i);   /* generic arguments */
		} else {
			out[n++] = c;          /* a qualified path's bracket */
			i++;
		}
	}
	out[n] = 0;
	/* "<a::b::C>::m" -> "a::b::C::m" when the bracket holds a plain path */
	if (out[0] == '<') {
		size_t k = 1;
		while (is_word(out[k]) || out[k] == ':')
			k++;
		if (k > 1 && out[k] == '>' && out[k + 1] == ':' && out[k + 2] == ':') {
			memmove(out + k, out + k + 1, n - k);
			memmove(out, out + 1, n);
		}
	}
}

#define ANON_NS "(anonymous namespace)"
/* stand-ins for its parentheses while groups are stripped: control
 * characters no demangled name holds */
#define ANON_OPEN '\x01'
#define ANON_CLOSE '\x02'

void names_short(const char *full, char *out, size_t outlen)
{
	if (!outlen)
		return;
	if (is_rust_qualified(full)) {
		rust_short(full, out, outlen);
		return;
	}
	size_t n = strlen(full);
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, full, n);
	out[n] = 0;
	/* "(anonymous namespace)" is a namespace, not an argument list: its
	 * parentheses are kept out of the stripping and put back after
	 * ("v8::internal::(anonymous namespace)::ConstructBuffer") */
	bool anon = !strchr(out, ANON_OPEN) && !strchr(out, ANON_CLOSE);
	for (char *a = out; anon && (a = strstr(a, ANON_NS)); a += sizeof(ANON_NS) - 1) {
		a[0] = ANON_OPEN;
		a[sizeof(ANON_NS) - 2] = ANON_CLOSE;
	}
	while (strip_groups(out, '(', ')', true))
		;
	while (strip_groups(out, '<', '>', false))
		;
	for (char *a = out; anon && *a; a++)
		if (*a == ANON_OPEN)
			*a = '(';
		else if (*a == ANON_CLOSE)
			*a = ')';
	/* s/^.*\s+(\w+::)/$1/: the last whitespace run followed by word:: */
	char *cut = NULL;
	for (char *p = out; *p; p++) {
		if (*p != ' ' && *p != '\t')
			continue;
		char *q = p;
		while (*q == ' ' || *q == '\t')
			q++;
		char *w = q;
		while (is_word(*w))
			w++;
		if (w > q && w[0] == ':' && w[1] == ':')
			cut = q;
	}
	if (cut)
		memmove(out, cut, strlen(cut) + 1);
}

static const char *const skip_names[] = {
	/* jeprof 5.3.0 */
	"calloc", "cfree", "malloc", "newImpl", "void* newImpl", "free", "memalign",
	"posix_memalign", "aligned_alloc", "pvalloc", "valloc", "realloc", "mallocx",
	"rallocx", "xallocx", "dallocx", "sdallocx", "sdallocx_noflags", "tc_calloc",
	"tc_cfree", "tc_malloc", "tc_free", "tc_memalign", "tc_posix_memalign",
	"tc_pvalloc", "tc_valloc", "tc_realloc", "tc_new", "tc_delete", "tc_newarray",
	"tc_deletearray", "tc_new_nothrow", "tc_newarray_nothrow", "do_malloc",
	"::do_malloc", "::do_malloc_or_cpp_alloc", "DoSampledAllocation",
	"simple_alloc::allocate", "__malloc_alloc_template::allocate",
	"__builtin_delete", "__builtin_new", "__builtin_vec_delete", "__builtin_vec_new",
	"operator new", "operator new[]", "malloc_zone_malloc", "malloc_zone_calloc",
	"malloc_zone_valloc", "malloc_zone_realloc", "malloc_zone_memalign",
	"malloc_zone_free", "__start_google_malloc", "__stop_google_malloc",
	"__start_malloc_hook", "__stop_malloc_hook",
	/* jemalloc dev additions (2023, 2024) */
	"je_malloc_default", "fallbackNewImpl", "void* fallbackNewImpl", "fallback_impl",
	"void* fallback_impl", "imalloc", "int imalloc", "imalloc_body", "int imalloc_body",
	"prof_alloc_prep", "prof_tctx_t *prof_alloc_prep", "prof_backtrace_impl",
	"void prof_backtrace_impl", "je_prof_backtrace", "void je_prof_backtrace",
	"je_prof_tctx_create", "prof_tctx_t* prof_tctx_create", "irallocx_prof",
	"void *irallocx_prof", "do_rallocx", "ixallocx_prof", "size_t ixallocx_prof",
	/* jemalloc entry points of 5.x not in either list */
	"malloc_default", "je_malloc", "je_calloc", "je_realloc", "je_mallocx",
	"je_rallocx", "je_posix_memalign", "je_aligned_alloc", "je_memalign",
	"je_valloc", "je_pvalloc", "prof_backtrace", "prof_tctx_create",
	/* Rust's allocation functions (the shims and the rest of the glue are
	 * rust_glue()'s) */
	"alloc::alloc::alloc", "alloc::alloc::alloc_zeroed", "alloc::alloc::realloc",
	"alloc::alloc::dealloc", "alloc::alloc::exchange_malloc",
	NULL,
};

/* The rules of rust_glue() and of the jemalloc prefixes as regular
 * expressions (RE2 and PCRE alike, matched against the whole name). */
static const char *const patterns[] = {
	"(?:_rjem_|je_).*",
	"__rustc::__rust_.*",
	"(?:.*::)?(?:__rdl_|__rg_|__rust_alloc|__rust_dealloc|__rust_realloc)[^:]*",
	"alloc::alloc::Global::.*",
	"<alloc::alloc::Global as core::alloc::Allocator>::.*",
	"<.* as core::alloc::global::GlobalAlloc>::(?:alloc|alloc_zeroed|realloc|dealloc)",
	".*<impl core::alloc::global::GlobalAlloc for .*>::(?:alloc|alloc_zeroed|realloc|dealloc)",
	"std::sys::(?:.*::)?alloc::.*",
	/* Go's runtime, but runtime.panic*: "runtime." and then anything
	 * that does not begin with "panic" (RE2 has no lookahead) */
	"runtime\\.(?:|[^p].*|p(?:|[^a].*|a(?:|[^n].*|n(?:|[^i].*|i(?:|[^c].*)))))",
	NULL,
};

/* Mach-O underscore, and prefixed jemalloc builds */
static const char *const prefixes[] = { "_rjem_je_", "_rjem_", "je_", "_", NULL };

const char *const *names_allocator_list(void)
{
	return skip_names;
}

const char *const *names_allocator_prefixes(void)
{
	return prefixes;
}

const char *const *names_allocator_patterns(void)
{
	return patterns;
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static const char *const global_alloc_methods[] = { "alloc", "alloc_zeroed", "realloc",
							 "dealloc", NULL };

/* Whether S (N bytes) ends with BEFORE and then one of GlobalAlloc's
 * methods. */
static bool global_alloc_method(const char *s, size_t n, const char *before)
{
	size_t k = strlen(before);
	for (const char *const *p = global_alloc_methods; *p; p++) {
		size_t m = strlen(*p);
		if (n >= k + m && !memcmp(s + n - m, *p, m) && !memcmp(s + n - m - k, before, k))
			return true;
	}
	return false;
}

/* Rust's allocation glue and jemalloc's own namespaces, by the rules that
 * patterns[] spells as regular expressions: the shims rustc generates
 * ("__rust_alloc", "__rustc::__rust_realloc"), std's and a #[global_allocator]
 * static's ("__rdl_alloc", "__rg_alloc", at the end of any path), any
 * GlobalAlloc impl's alloc/alloc_zeroed/realloc/dealloc (v0's "<T as
 * core::alloc::global::GlobalAlloc>::alloc" and legacy's "<impl
 * core::alloc::global::GlobalAlloc for T>::alloc"), alloc::alloc::Global
 * and its Allocator impl, std's system allocator module, and every name
 * in jemalloc's "_rjem_" (Rust's jemalloc-sys) and "je_" namespaces. */
static bool rust_glue(const char *s, size_t n)
{
	if (starts_with(s, "_rjem_") || starts_with(s, "je_") || starts_with(s, "__rustc::__rust_") ||
	    starts_with(s, "alloc::alloc::Global::") ||
	    starts_with(s, "<alloc::alloc::Global as core::alloc::Allocator>::"))
		return true;
	const char *last = s;
	for (const char *p = s; (p = strstr(p, "::")); p += 2)
		last = p + 2;
	if ((starts_with(last, "__rdl_") || starts_with(last, "__rg_") ||
	     starts_with(last, "__rust_alloc") || starts_with(last, "__rust_dealloc") ||
	     starts_with(last, "__rust_realloc")) && !strchr(last, ':'))
		return true;
	if (s[0] == '<' && global_alloc_method(s, n, " as core::alloc::global::GlobalAlloc>::"))
		return true;
	if (strstr(s, "<impl core::alloc::global::GlobalAlloc for ") &&
	    global_alloc_method(s, n, ">::"))
		return true;
	return starts_with(s, "std::sys::") &&
	       (starts_with(s + 10, "alloc::") || strstr(s + 10, "::alloc::"));
}

static bool in_list(const char *s, size_t n)
{
	/* first byte first: most names differ there, and no strlen per entry */
	for (const char *const *p = skip_names; *p; p++)
		if ((*p)[0] == s[0] && !strncmp(*p, s, n) && (*p)[n] == '\0')
			return true;
	return false;
}

static bool match_one(const char *s, size_t n)
{
	if (!n)
		return false;
	if (in_list(s, n))
		return true;
	for (const char *const *p = prefixes; *p; p++) {
		size_t k = strlen(*p);
		if (n > k && !memcmp(s, *p, k) && in_list(s + k, n - k))
			return true;
	}
	return false;
}

bool names_is_go_runtime(const char *name)
{
	return !strncmp(name, "runtime.", 8) && strncmp(name + 8, "panic", 5);
}

bool names_is_allocator(const char *name)
{
	size_t n = strlen(name);
	if (match_one(name, n))
		return true;
	const char *sp = memchr(name, ' ', n);
	if (sp && match_one(name, (size_t)(sp - name)))
		return true;
	if (strstr(name, "TCMalloc") || !strncmp(name, "tcmalloc::", 10))
		return true;
	return rust_glue(name, n) || names_is_go_runtime(name);
}

size_t names_split_inline(const char *s, size_t n, struct names_part *parts, size_t max)
{
	size_t np = 0, start = 0, i = 0;
	while (i <= n) {
		size_t sep = 0;
		if (i == n) {
			sep = 0;
		} else if (i + 1 < n && s[i] == '-' && s[i + 1] == '-') {
			size_t k = 2;
			while (i + k < n && s[i + k] == '-')
				k++;
			if (i >= 8 && !memcmp(s + i - 8, "operator", 8)) {
				/* C++'s operator-- or operator-, then maybe "--" */
				size_t own = k == 3 ? 1 : 2;
				i += own;
				if (k - own < 2)
					continue;
			}
			sep = 2;
		} else {
			i++;
			continue;
		}
		if (np < max)
			parts[np] = (struct names_part){ s + start, i - start };
		np++;
		if (!sep)
			break;
		i += sep;
		start = i;
	}
	return np;
}

bool names_unknown(const char *s, size_t n)
{
	return n == 0 || (n == 2 && s[0] == '?' && s[1] == '?');
}

bool names_is_allocator_object(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return !strncmp(base, "libjemalloc", 11);
}

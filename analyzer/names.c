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

void names_short(const char *full, char *out, size_t outlen)
{
	if (!outlen)
		return;
	size_t n = strlen(full);
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, full, n);
	out[n] = 0;
	while (strip_groups(out, '(', ')', true))
		;
	while (strip_groups(out, '<', '>', false))
		;
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
	/* Rust's global-allocator shims (tikv-jemallocator and std) */
	"__rust_alloc", "__rust_alloc_zeroed", "__rust_realloc", "__rdl_alloc",
	"__rdl_alloc_zeroed", "__rdl_realloc", "__rg_alloc", "__rg_alloc_zeroed",
	"__rg_realloc",
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
	return false;
}

bool names_is_allocator_object(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return !strncmp(base, "libjemalloc", 11);
}

/*
 * names: how function names are shown.  jeprof's ShortFunctionName rule
 * (parameters, templates and a leading return type dropped) so that reports
 * name functions as jeprof users know them, and the allocator-frame test.
 */
#ifndef JHEAP_NAMES_H
#define JHEAP_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* Writes the short form of FULL into OUT (at most OUTLEN bytes, always
 * NUL-terminated): repeatedly removes innermost "(...)" groups with an
 * optional following " const", then innermost "<...>" groups, then a return
 * type in front of "word::".  "ns::Holder<int>::add(int)" -> "ns::Holder::add";
 * "void* fallback_impl<false>(unsigned long)" -> "void* fallback_impl".
 * A Rust name with a qualified path ("<T as Trait>::f", v0's
 * "<Vec<u8>>::push", "<impl Trait for T>") keeps its qualified paths and
 * loses only generic arguments: "<hashbrown::raw::RawTable<T> as
 * core::clone::Clone>::clone" -> "<hashbrown::raw::RawTable as
 * core::clone::Clone>::clone", "<alloc::vec::Vec<u8>>::push" ->
 * "alloc::vec::Vec::push" (as legacy's "alloc::vec::Vec<T,A>::push"). */
void names_short(const char *full, char *out, size_t outlen);

/* True when SHORT (a short name) is an allocator entry point or internal
 * function: jeprof 5.3.0's skip list, the later jemalloc additions, the
 * tcmalloc pattern, every name in jemalloc's prefixed namespaces ("je_",
 * "_rjem_"), Rust's allocation glue (the __rust_alloc shims, __rdl_*,
 * __rg_*, GlobalAlloc impls' methods, alloc::alloc's functions and Global,
 * std's system allocator) and Go's runtime (names_is_go_runtime()).  The
 * list is compared on the whole name and on its first word. */
bool names_is_allocator(const char *short_name);

/* True for a function of Go's runtime ("runtime.mallocgc",
 * "runtime.makeslice", "runtime.mapassign_fast64") but runtime.panic*:
 * the frames pprof drops from a heap profile's leaf (its legacy parser's
 * drop and keep patterns) and Go's own profile writer leaves out.  Both
 * keep a stack that is Go's runtime alone whole: the aggregate does too. */
bool names_is_go_runtime(const char *short_name);

/* The skip list behind names_is_allocator(), NULL-terminated, the
 * prefixes it also strips ("_rjem_je_", "_rjem_", "je_", "_"), and its
 * other rules as regular expressions that match whole names, for writers
 * that must express the same test another way (pprof's drop_frames). */
const char *const *names_allocator_list(void);
const char *const *names_allocator_prefixes(void);
const char *const *names_allocator_patterns(void);

/* One frame's name in a symbolized profile's names field. */
struct names_part {
	const char *s;
	size_t n;
};

/* Splits the names field S (N bytes) of a symbolized profile's symbol line,
 * "outer--inlined--innermost" as jeprof and ClickHouse write it, into its
 * frames, outer first: at each "--", except where it belongs to C++'s
 * operator-- or operator- ("A::operator--(int)" is one name,
 * "A::operator---B" is "A::operator-" and "B").  Fills at most MAX parts
 * and returns how many there are. */
size_t names_split_inline(const char *s, size_t n, struct names_part *parts, size_t max);

/* Whether a frame's name in a symbolized profile says "unknown": "??"
 * (what ClickHouse and addr2line write) or nothing. */
bool names_unknown(const char *s, size_t n);

/* True when the object file PATH is the allocator's own library
 * (its base name starts with "libjemalloc"). */
bool names_is_allocator_object(const char *path);

#endif

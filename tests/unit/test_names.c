/* Short names (jeprof's ShortFunctionName; examples from spec section 3.3),
 * the allocator-frame test and the address conversions. */
#include <elf.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include "analyzer/names.h"
#include "analyzer/profile.h"
#include "symbolize/addr.h"
#include "unit.h"

static const char *sh(const char *full)
{
	static char buf[512];
	names_short(full, buf, sizeof(buf));
	return buf;
}

TEST(short_names_as_jeprof)
{
	CHECK_STR(sh("ns::Holder<int>::add(int)"), "ns::Holder::add");
	CHECK_STR(sh("void* fallback_impl<false>(unsigned long)"), "void* fallback_impl");
	CHECK_STR(sh("std::__throw_ios_failure(char const*, int)@@GLIBCXX_3.4.26"),
		  "std::__throw_ios_failure@@GLIBCXX_3.4.26");
	CHECK_STR(sh("main"), "main");
	/* Go's receivers (a pprof input) are not argument lists */
	CHECK_STR(sh("runtime.(*scavengerState).init"), "runtime.(*scavengerState).init");
	CHECK_STR(sh("main.(*T).get(int)"), "main.(*T).get");
	CHECK_STR(sh("Foo::bar() const"), "Foo::bar");
	CHECK_STR(sh("std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<int*, std::vector<int, std::allocator<int> > >, int const&)"),
		  "std::vector::_M_realloc_insert");
	CHECK_STR(sh("int ns::f<int (*)(int)>(int (*)(int))"), "ns::f");
	CHECK_STR(sh("operator new(unsigned long)"), "operator new");
	CHECK_STR(sh("operator new[](unsigned long, std::nothrow_t const&)"), "operator new[]");
	/* a namespace, not an argument list (node's V8 frames) */
	CHECK_STR(sh("v8::internal::(anonymous namespace)::ConstructBuffer(v8::internal::Isolate*)"),
		  "v8::internal::(anonymous namespace)::ConstructBuffer");
	CHECK_STR(sh("(anonymous namespace)::f<(anonymous namespace)::T>(int)"),
		  "(anonymous namespace)::f");
	CHECK_STR(sh("a::(anonymous namespace)::b::(anonymous namespace)::c() const"),
		  "a::(anonymous namespace)::b::(anonymous namespace)::c");
	CHECK_STR(sh("x\x01(int)"), "x\x01");
}

/* Rust names keep what they say: a qualified path's type and trait,
 * without generic arguments; legacy and v0 demangling read alike.  The
 * full names are libiberty's (c++filt -i) of rustc 1.95's symbols. */
TEST(short_names_rust)
{
	CHECK_STR(sh("<rheap::Je as core::alloc::global::GlobalAlloc>::alloc"),
		  "<rheap::Je as core::alloc::global::GlobalAlloc>::alloc");
	CHECK_STR(sh("<hashbrown::map::HashMap<K,V,S,A> as core::iter::traits::collect::Extend<(K,V)>>::extend"),
		  "<hashbrown::map::HashMap as core::iter::traits::collect::Extend>::extend");
	/* v0's inherent impl and legacy's name of the same function */
	CHECK_STR(sh("<alloc::raw_vec::RawVecInner>::try_allocate_in"),
		  "alloc::raw_vec::RawVecInner::try_allocate_in");
	CHECK_STR(sh("<alloc::raw_vec::RawVec<u8>>::with_capacity_in"),
		  "alloc::raw_vec::RawVec::with_capacity_in");
	CHECK_STR(sh("alloc::raw_vec::RawVec<T,A>::with_capacity_in"),
		  "alloc::raw_vec::RawVec::with_capacity_in");
	/* v0's turbofish */
	CHECK_STR(sh("<alloc::collections::btree::node::LeafNode<usize, u8>>::new::<alloc::alloc::Global>"),
		  "alloc::collections::btree::node::LeafNode::new");
	CHECK_STR(sh("core::ptr::drop_in_place::<alloc::vec::Vec<(u32, alloc::string::String)>>"),
		  "core::ptr::drop_in_place");
	/* legacy's impl blocks, nested qualified paths, tuples, references,
	 * arrows */
	CHECK_STR(sh("std::sys::pal::unix::alloc::<impl core::alloc::global::GlobalAlloc for std::alloc::System>::alloc"),
		  "std::sys::pal::unix::alloc::<impl core::alloc::global::GlobalAlloc for std::alloc::System>::alloc");
	CHECK_STR(sh("<<alloc::boxed::Box<str> as core::convert::From<&str>>::from as core::ops::function::FnOnce<(&str,)>>::call_once"),
		  "<<alloc::boxed::Box as core::convert::From>::from as core::ops::function::FnOnce>::call_once");
	CHECK_STR(sh("<(A, B) as core::fmt::Debug>::fmt"), "<(A, B) as core::fmt::Debug>::fmt");
	CHECK_STR(sh("<&mut [u8] as std::io::Write>::write"), "<&mut [u8] as std::io::Write>::write");
	CHECK_STR(sh("<fn(u8) -> u8 as core::ops::function::FnOnce<(u8,)>>::call_once"),
		  "<fn(u8) -> u8 as core::ops::function::FnOnce>::call_once");
	CHECK_STR(sh("rheap::main::{{closure}}"), "rheap::main::{{closure}}");
	CHECK_STR(sh("<rheap::Square as rheap::Shape>::build::{closure#0}"),
		  "<rheap::Square as rheap::Shape>::build::{closure#0}");
	/* never "::method" */
	CHECK(sh("<T as alloc::string::SpecExtendStr>::spec_extend_into")[0] == '<');
	/* C++'s operator< is not a Rust path */
	CHECK_STR(sh("bool std::operator< <int>(std::vector<int> const&, std::vector<int> const&)"),
		  "std::operator< ");
}

TEST(allocator_names)
{
	CHECK(names_is_allocator("malloc"));
	CHECK(names_is_allocator("operator new"));
	CHECK(names_is_allocator("operator new[]"));
	CHECK(names_is_allocator("void* fallback_impl"));
	CHECK(names_is_allocator("prof_backtrace_impl"));
	CHECK(names_is_allocator("je_malloc_default"));
	CHECK(names_is_allocator("_rjem_je_malloc_default"));
	CHECK(names_is_allocator("_rjem_mallocx"));
	CHECK(names_is_allocator("__rust_alloc"));
	CHECK(names_is_allocator("tcmalloc::allocate_full_cpp_throw_oom"));
	CHECK(names_is_allocator("int imalloc_body"));
	CHECK(!names_is_allocator("leaf_alloc"));
	CHECK(!names_is_allocator("malloc_usable_size"));
	CHECK(!names_is_allocator("std::vector::_M_realloc_insert"));
	CHECK(!names_is_allocator("xmalloc"));
	/* jemalloc under its prefixes, whatever the function */
	CHECK(names_is_allocator("_rjem_je_prof_tctx_create"));
	CHECK(names_is_allocator("je_arena_malloc_hard"));
	/* Rust's glue, in the short form names_short() gives */
	CHECK(names_is_allocator("__rustc::__rust_alloc"));
	CHECK(names_is_allocator("__rustc::__rust_realloc"));
	CHECK(names_is_allocator("__rust_alloc_zeroed"));
	CHECK(names_is_allocator("__rustc::__rdl_alloc"));
	CHECK(names_is_allocator("std::alloc::__default_lib_allocator::__rdl_realloc"));
	CHECK(names_is_allocator("__rg_alloc"));
	CHECK(names_is_allocator("<rheap::Je as core::alloc::global::GlobalAlloc>::alloc"));
	CHECK(names_is_allocator("<tikv_jemallocator::Jemalloc as core::alloc::global::GlobalAlloc>::realloc"));
	CHECK(names_is_allocator("<std::alloc::System as core::alloc::global::GlobalAlloc>::alloc_zeroed"));
	CHECK(names_is_allocator("std::sys::pal::unix::alloc::<impl core::alloc::global::GlobalAlloc for std::alloc::System>::alloc"));
	CHECK(names_is_allocator("std::sys::alloc::unix::aligned_malloc"));
	CHECK(names_is_allocator("alloc::alloc::alloc"));
	CHECK(names_is_allocator("alloc::alloc::realloc"));
	CHECK(names_is_allocator("alloc::alloc::exchange_malloc"));
	CHECK(names_is_allocator("alloc::alloc::Global::alloc_impl"));
	CHECK(names_is_allocator("<alloc::alloc::Global as core::alloc::Allocator>::allocate"));
	/* the program's code and its containers are not */
	CHECK(!names_is_allocator("alloc::raw_vec::RawVecInner::finish_grow"));
	CHECK(!names_is_allocator("hashbrown::raw::alloc::inner::do_alloc"));
	CHECK(!names_is_allocator("alloc::boxed::box_new_uninit"));
	CHECK(!names_is_allocator("<rheap::Je as core::alloc::global::GlobalAlloc>::alloc::{{closure}}"));
	CHECK(!names_is_allocator("<rheap::Je as rheap::Cache>::alloc"));
	CHECK(!names_is_allocator("rheap::alloc"));
	CHECK(!names_is_allocator("my_je_thing"));
	/* Go's runtime, as pprof's legacy heap parser drops it, but panics */
	CHECK(names_is_allocator("runtime.mallocgc"));
	CHECK(names_is_allocator("runtime.makeBucketArray"));
	CHECK(names_is_allocator("runtime.(*mheap).alloc"));
	CHECK(names_is_go_runtime("runtime.malg"));
	CHECK(!names_is_allocator("runtime.panicmem"));
	CHECK(!names_is_go_runtime("runtime.panic"));
	CHECK(!names_is_allocator("main.runtime"));
	CHECK(!names_is_allocator("myruntime.alloc"));
	CHECK(!names_is_go_runtime("runtime::alloc"));
	CHECK(names_is_allocator_object("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"));
	CHECK(!names_is_allocator_object("/usr/lib/x86_64-linux-gnu/libc.so.6"));
}

TEST(address_conversions)
{
	/* a PIE: text segment at file offset 0x1000, vaddr 0x1000 */
	struct symsegment segs[] = {
		{ 0x0, 0x600, 0x0, 0x600, PF_R },
		{ 0x1000, 0x2000, 0x1000, 0x2000, PF_R | PF_X },
		{ 0x3db8, 0x258, 0x4db8, 0x260, PF_R | PF_W },
	};
	uint64_t v;
	CHECK_INT(addr_pc(0x5634a11561a7, false), 0x5634a11561a6);
	CHECK_INT(addr_pc(0x5634a11561a7, true), 0x5634a11561a7);
	/* spec 3.2: 0x5634a11561a6 - 0x5634a1156000 + 0x1000 = 0x11a6 */
	CHECK_INT(addr_rel(0x5634a11561a6, 0x5634a1156000, 0x1000), 0x11a6);
	CHECK_INT(addr_rel_to_vaddr(segs, 3, 0x11a6, &v), 0);
	CHECK_INT(v, 0x11a6);
	/* data segment: vaddr differs from the file offset */
	CHECK_INT(addr_rel_to_vaddr(segs, 3, 0x3dc0, &v), 0);
	CHECK_INT(v, 0x4dc0);
	CHECK_INT(addr_rel_to_vaddr(segs, 3, 0x9000, &v), -1);
	/* a non-PIE text segment: vaddr 0x401000 at offset 0x1000 */
	struct symsegment exe[] = { { 0x1000, 0x800, 0x401000, 0x800, PF_R | PF_X } };
	CHECK_INT(addr_rel_to_vaddr(exe, 1, 0x1136, &v), 0);
	CHECK_INT(v, 0x401136);
	CHECK(addr_mapping_fits(segs, 3, 0x1000, 0x2000, true));
	CHECK(!addr_mapping_fits(segs, 3, 0x5000, 0x1000, true));
	CHECK(!addr_mapping_fits(segs, 3, 0x1000, 0x400000, true));
}

static const char *split(const char *s)
{
	static char buf[512];
	struct names_part parts[8];
	size_t n = names_split_inline(s, strlen(s), parts, 8), k = 0;
	for (size_t i = 0; i < n && i < 8; i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s[%.*s]", i ? " " : "",
				      (int)parts[i].n, parts[i].s);
	if (!n)
		buf[0] = 0;
	return buf;
}

/* A symbolized profile's "outer--inner" names: "--" splits, except in
 * C++'s operator-- and after operator-. */
TEST(split_inline_names)
{
	CHECK_STR(split("main"), "[main]");
	CHECK_STR(split("outer--mid--inner"), "[outer] [mid] [inner]");
	CHECK_STR(split("A::operator--(int)--B"), "[A::operator--(int)] [B]");
	CHECK_STR(split("A::operator--"), "[A::operator--]");
	CHECK_STR(split("B--A::operator--"), "[B] [A::operator--]");
	CHECK_STR(split("A::operator----B"), "[A::operator--] [B]");
	CHECK_STR(split("A::operator---B"), "[A::operator-] [B]");
	CHECK_STR(split("A::operator-=--B"), "[A::operator-=] [B]");
	CHECK_STR(split("A::operator->--B"), "[A::operator->] [B]");
	CHECK_STR(split("--g"), "[] [g]");
	CHECK_STR(split("f--"), "[f] []");
	CHECK_STR(split(""), "[]");
	CHECK(names_unknown("??", 2));
	CHECK(names_unknown("", 0));
	CHECK(!names_unknown("???", 3));
	CHECK(!names_unknown("f", 1));
}

/* The regular expressions that stand for the rules in pprof's
 * drop_frames say the same as names_is_allocator(). */
TEST(allocator_patterns_agree)
{
	static const char *const names[] = {
		"_rjem_mallocx", "je_malloc_stats_print", "xje_malloc",
		"__rustc::__rust_alloc", "__rustc::__rust_alloc_error_handler",
		"__rust_realloc", "foo::__rust_alloc", "__rust_start_panic",
		"std::alloc::__default_lib_allocator::__rdl_alloc", "__rg_alloc_zeroed",
		"alloc::alloc::Global::grow_impl", "<alloc::alloc::Global as core::alloc::Allocator>::grow",
		"<alloc::alloc::Global as core::clone::Clone>::clone",
		"<X as core::alloc::global::GlobalAlloc>::dealloc",
		"<X as core::alloc::global::GlobalAlloc>::layout",
		"<<X as core::alloc::global::GlobalAlloc>::Y as Z>::alloc",
		"a::<impl core::alloc::global::GlobalAlloc for a::B>::realloc",
		"std::sys::alloc::unix::aligned_malloc", "std::sys::pal::unix::alloc::realloc_fallback",
		"std::sys::thread::Thread::new", "main", "alloc::raw_vec::RawVec::grow_one",
		/* Go's runtime but runtime.panic* */
		"runtime.mallocgc", "runtime.makeBucketArray", "runtime.(*mheap).alloc",
		"runtime.p", "runtime.pa", "runtime.pan", "runtime.pani", "runtime.panic",
		"runtime.panicmem", "runtime.pbar", "runtime.pabc", "runtime.panx", "runtime.panix",
		"runtime.", "runtimeX.foo", "main.runtime.x", "runtime::alloc",
	};
	const char *const *pt = names_allocator_patterns();
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		bool any = false;
		for (size_t k = 0; pt[k]; k++) {
			char rx[512];
			snprintf(rx, sizeof(rx), "^(?:%s)$", pt[k]);
			int code;
			PCRE2_SIZE off;
			pcre2_code *re = pcre2_compile((PCRE2_SPTR)rx, PCRE2_ZERO_TERMINATED, 0,
						       &code, &off, NULL);
			CHECK(re != NULL);
			if (!re)
				continue;
			pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
			any |= pcre2_match(re, (PCRE2_SPTR)names[i], PCRE2_ZERO_TERMINATED, 0, 0, md,
					   NULL) >= 0;
			pcre2_match_data_free(md);
			pcre2_code_free(re);
		}
		/* the skip list (jeprof's names) is matched apart */
		bool listed = false;
		for (const char *const *n = names_allocator_list(); *n; n++)
			listed |= !strcmp(*n, names[i]);
		if (any != (names_is_allocator(names[i]) && !listed)) {
			fprintf(stderr, "%s: patterns say %d\n", names[i], any);
			CHECK(false);
		}
	}
}

int main(void)
{
	RUN(short_names_as_jeprof);
	RUN(short_names_rust);
	RUN(split_inline_names);
	RUN(allocator_patterns_agree);
	RUN(allocator_names);
	RUN(address_conversions);
	return UNIT_END();
}

/* Short names (jeprof's ShortFunctionName; examples from spec section 3.3),
 * the allocator-frame test and the address conversions. */
#include <elf.h>
#include "analyzer/names.h"
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

int main(void)
{
	RUN(short_names_as_jeprof);
	RUN(allocator_names);
	RUN(address_conversions);
	return UNIT_END();
}

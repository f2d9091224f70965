/* The call-instruction check on hand-assembled code (encodings from the
 * Intel SDM, vol. 2, CALL, and the Arm ARM, BL/BLR/BLRAA), and the
 * address conversion it and the FDE names use.  tests/t0232 compares the
 * check with objdump and llvm-objdump on real binaries. */
#include <elf.h>
#include <stdint.h>

#include "tests/unit/unit.h"
#include "symbolize/addr.h"
#include "symbolize/callcheck.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

/* text at 0x1000-0x3000, data (a GOT) at 0x4000-0x5000 */
static const struct symsegment segs[] = {
	{ 0x1000, 0x2000, 0x1000, 0x2000, PF_R | PF_X },
	{ 0x3000, 0x1000, 0x4000, 0x1000, PF_R | PF_W },
};

/* whether CODE (N bytes, ending at link-time RA) ends with a call */
static int x86(const uint8_t *code, size_t n, uint64_t ra)
{
	return callcheck_follows_call(EM_X86_64, code, n, ra, segs, 2);
}

TEST(x86_64_direct_calls)
{
	/* nop; call rel32 to 0x1800 from 0x2005: 0x1800 - 0x2005 = -0x805 */
	const uint8_t good[] = { 0x90, 0xe8, 0xfb, 0xf7, 0xff, 0xff };
	CHECK_INT(x86(good, sizeof(good), 0x2005), 1);
	/* the same bytes, but the target would lie outside the code */
	CHECK_INT(x86(good, sizeof(good), 0x9005), 0);
	/* target in the data segment, not code */
	const uint8_t to_data[] = { 0xe8, 0xfb, 0x1f, 0x00, 0x00 };   /* 0x2005 + 0x1ffb = 0x4000 */
	CHECK_INT(x86(to_data, sizeof(to_data), 0x2005), 0);
	/* mov $imm32, %eax: no call */
	const uint8_t mov[] = { 0xb8, 0x01, 0x02, 0x03, 0x04 };
	CHECK_INT(x86(mov, sizeof(mov), 0x2005), 0);
}

TEST(x86_64_indirect_calls)
{
	const struct { uint8_t b[8]; size_t n; int want; const char *what; } c[] = {
		{ { 0xff, 0xd0 }, 2, 1, "call *%rax" },
		{ { 0x41, 0xff, 0xd3 }, 3, 1, "call *%r11" },
		{ { 0x3e, 0xff, 0xd0 }, 3, 1, "notrack call *%rax" },
		{ { 0xff, 0x10 }, 2, 1, "call *(%rax)" },
		{ { 0xff, 0x14, 0x24 }, 3, 1, "call *(%rsp)" },
		{ { 0xff, 0x50, 0x08 }, 3, 1, "call *0x8(%rax)" },
		{ { 0xff, 0x54, 0xc8, 0x10 }, 4, 1, "call *0x10(%rax,%rcx,8)" },
		{ { 0xff, 0x90, 0x40, 0x01, 0x00, 0x00 }, 6, 1, "call *0x140(%rax)" },
		{ { 0xff, 0x94, 0xc8, 0x00, 0x01, 0x00, 0x00 }, 7, 1, "call *0x100(%rax,%rcx,8)" },
		{ { 0xff, 0x14, 0xc5, 0x00, 0x40, 0x00, 0x00 }, 7, 1, "call *0x4000(,%rax,8)" },
		{ { 0x41, 0xff, 0x54, 0x24, 0x08 }, 5, 1, "call *0x8(%r12)" },
		{ { 0xff, 0xe0 }, 2, 0, "jmp *%rax (FF /4)" },
		{ { 0xff, 0xc0 }, 2, 0, "inc %eax (FF /0)" },
		{ { 0xff, 0x30 }, 2, 0, "push (%rax) (FF /6)" },
		{ { 0xff, 0x50 }, 2, 0, "FF 50 wants a displacement byte" },
		{ { 0xff, 0xd0, 0x90 }, 3, 0, "call *%rax; nop: ends one byte early" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int got = x86(c[i].b, c[i].n, 0x2000);
		if (got != c[i].want) {
			fprintf(stderr, "%s: got %d\n", c[i].what, got);
			CHECK(0);
		}
	}
	/* call *disp32(%rip): through the GOT (in the file), or outside it */
	const uint8_t got_ok[] = { 0xff, 0x15, 0xfa, 0x1f, 0x00, 0x00 };   /* 0x2006 + 0x1ffa = 0x4000 */
	CHECK_INT(x86(got_ok, sizeof(got_ok), 0x2006), 1);
	const uint8_t got_out[] = { 0xff, 0x15, 0x00, 0x00, 0x10, 0x00 };
	CHECK_INT(x86(got_out, sizeof(got_out), 0x2006), 0);
	/* too few bytes before the address */
	CHECK_INT(x86(got_ok, 1, 0x2006), 0);
}

TEST(aarch64_calls)
{
	uint8_t b[4];
	/* BL from 0x2000 to 0x1800: imm26 = (0x1800 - 0x2000) / 4 = -0x200 */
	uint32_t bl = 0x94000000u | (0x03ffffffu & (uint32_t)-0x200);
	const struct { uint32_t insn; uint64_t ra; int want; const char *what; } c[] = {
		{ bl, 0x2004, 1, "bl to code" },
		{ 0x94000000u | 0x1000, 0x2004, 0, "bl out of the code (0x6000)" },
		{ 0xd63f0100u, 0x2004, 1, "blr x8" },
		{ 0xd63f083fu, 0x2004, 1, "blraaz x1" },
		{ 0xd73f0822u, 0x2004, 1, "blraa x1, x2" },
		{ 0xd63f0c7fu, 0x2004, 1, "blrabz x3" },
		{ 0xd73f0c85u, 0x2004, 1, "blrab x4, x5" },
		{ 0xd61f0100u, 0x2004, 0, "br x8" },
		{ 0xd65f03c0u, 0x2004, 0, "ret" },
		{ 0x14000010u, 0x2004, 0, "b (no link)" },
		{ 0xd503201fu, 0x2004, 0, "nop" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		for (int k = 0; k < 4; k++)
			b[k] = (uint8_t)(c[i].insn >> (8 * k));
		int got = callcheck_follows_call(EM_AARCH64, b, 4, c[i].ra, segs, 2);
		if (got != c[i].want) {
			fprintf(stderr, "%s: got %d\n", c[i].what, got);
			CHECK(0);
		}
	}
	CHECK_INT(callcheck_follows_call(EM_386, b, 4, 0x2004, segs, 2), -1);
}

TEST(vaddr_to_file_offset)
{
	uint64_t rel = 0, v = 0;
	CHECK_INT(addr_vaddr_to_rel(segs, 2, 0x1800, &rel), 0);
	CHECK_INT(rel, 0x1800);
	CHECK_INT(addr_vaddr_to_rel(segs, 2, 0x4010, &rel), 0);
	CHECK_INT(rel, 0x3010);
	CHECK_INT(addr_vaddr_to_rel(segs, 2, 0x3800, &rel), -1);
	/* and back */
	CHECK_INT(addr_rel_to_vaddr(segs, 2, 0x3010, &v), 0);
	CHECK_INT(v, 0x4010);
	/* non-PIE text: vaddr 0x401000 at offset 0x1000 */
	const struct symsegment exe[] = { { 0x1000, 0x800, 0x401000, 0x800, PF_R | PF_X } };
	CHECK_INT(addr_vaddr_to_rel(exe, 1, 0x401136, &rel), 0);
	CHECK_INT(rel, 0x1136);
}

int main(void)
{
	RUN(x86_64_direct_calls);
	RUN(x86_64_indirect_calls);
	RUN(aarch64_calls);
	RUN(vaddr_to_file_offset);
	return UNIT_END();
}

#include <elf.h>
#include <stdbool.h>
#include <string.h>

#include "symbolize/addr.h"
#include "symbolize/callcheck.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

/* The longest x86 instruction. */
#define X86_MAX_INSN 15

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Whether link-time address V lies in one of SEGS (an executable one
 * when EXEC). */
static bool in_segments(const struct symsegment *segs, size_t n, uint64_t v, bool exec)
{
	for (size_t i = 0; i < n; i++)
		if ((!exec || (segs[i].flags & PF_X)) && v >= segs[i].vaddr &&
		    v - segs[i].vaddr < segs[i].memsz)
			return true;
	return false;
}

/* Legacy prefixes and REX, as compilers put them before an indirect call
 * (REX.B for r8-r15, 3E "notrack" with CET, F2 "bnd" with MPX). */
static bool x86_prefix(uint8_t b)
{
	return (b >= 0x40 && b <= 0x4f) || b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e ||
	       b == 0x64 || b == 0x65 || b == 0x66 || b == 0x67 || b == 0xf2 || b == 0xf3;
}

/* The length of the FF /2 (near indirect call) instruction at C (AVAIL
 * bytes readable), from its opcode on, or 0 when C is not one.  A
 * RIP-relative form sets *RIPREL and *DISP. */
static size_t x86_ff2_len(const uint8_t *c, size_t avail, bool *riprel, int32_t *disp)
{
	if (avail < 2 || c[0] != 0xff || ((c[1] >> 3) & 7) != 2)
		return 0;
	unsigned mod = c[1] >> 6, rm = c[1] & 7;
	size_t len = 2;
	if (mod == 3)
		return len;
	if (rm == 4) {
		if (avail < 3)
			return 0;
		len++;
		if (mod == 0 && (c[2] & 7) == 5)
			len += 4;   /* SIB without base: disp32 */
	} else if (mod == 0 && rm == 5) {
		if (avail < 6)
			return 0;
		*riprel = true;
		*disp = (int32_t)le32(c + 2);
		len += 4;
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2)
		len += 4;
	return len;
}

static bool x86_64_call(const uint8_t *c, size_t n, uint64_t ra,
			const struct symsegment *segs, size_t nsegs)
{
	/* call rel32: the target must be code of this file (a call into
	 * another object goes through its PLT, which is in this one) */
	if (n >= 5 && c[n - 5] == 0xe8 &&
	    in_segments(segs, nsegs, ra + (uint64_t)(int64_t)(int32_t)le32(c + n - 4), true))
		return true;
	/* call r/m64, after up to four prefixes */
	for (size_t len = 2; len <= X86_MAX_INSN && len <= n; len++) {
		const uint8_t *s = c + n - len;
		size_t i = 0;
		while (i < len && i < 4 && x86_prefix(s[i]))
			i++;
		bool riprel = false;
		int32_t disp = 0;
		if (x86_ff2_len(s + i, len - i, &riprel, &disp) != len - i)
			continue;
		/* a RIP-relative pointer (the GOT of -fno-plt code, a
		 * function table) lies in this file */
		if (riprel && !in_segments(segs, nsegs, ra + (uint64_t)(int64_t)disp, false))
			continue;
		return true;
	}
	return false;
}

static bool aarch64_call(const uint8_t *c, size_t n, uint64_t ra,
			 const struct symsegment *segs, size_t nsegs)
{
	if (n < 4)
		return false;
	uint32_t insn = le32(c + n - 4);
	if ((insn & 0xfc000000u) == 0x94000000u) {
		/* BL imm26: a signed word offset from the instruction */
		int64_t off = (int64_t)((uint64_t)(insn & 0x03ffffffu) << 38) >> 36;
		return in_segments(segs, nsegs, ra - 4 + (uint64_t)off, true);
	}
	return (insn & 0xfffffc1fu) == 0xd63f0000u ||   /* BLR Xn */
	       (insn & 0xfefff800u) == 0xd63f0800u;     /* BLRAA(Z), BLRAB(Z) */
}

int callcheck_follows_call(int machine, const uint8_t *code, size_t len, uint64_t ra,
			   const struct symsegment *segs, size_t nsegs)
{
	switch (machine) {
	case EM_X86_64: return x86_64_call(code, len, ra, segs, nsegs);
	case EM_AARCH64: return aarch64_call(code, len, ra, segs, nsegs);
	default: return -1;
	}
}

void callcheck_module(struct symmodule *mod, const uint64_t *rels, size_t n,
		      struct callcheck *out, uint8_t *follows)
{
	*out = (struct callcheck){ 0 };
	if (follows)
		memset(follows, 1, n);
	size_t size = 0, nsegs = 0;
	const uint8_t *image = symmodule_image(mod, &size);
	const struct symsegment *segs = symmodule_segments(mod, &nsegs);
	int machine = symmodule_machine(mod);
	if (!image || callcheck_follows_call(machine, NULL, 0, 0, NULL, 0) < 0)
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t rel = rels[i], ra;
		int yes = 0;
		/* an address outside the file or its segments follows nothing */
		if (rel <= size && !addr_rel_to_vaddr(segs, nsegs, rel, &ra)) {
			size_t len = rel < X86_MAX_INSN ? (size_t)rel : X86_MAX_INSN;
			yes = callcheck_follows_call(machine, image + rel - len, len, ra, segs, nsegs) == 1;
		}
		out->checked++;
		out->calls += (size_t)yes;
		if (follows)
			follows[i] = (uint8_t)yes;
	}
	size_t fails = out->checked - out->calls;
	if (!out->checked)
		out->verdict = CALLCHECK_UNKNOWN;
	else if (out->checked >= CALLCHECK_MIN && 2 * out->calls < out->checked)
		out->verdict = CALLCHECK_MISMATCH;
	else if (fails > out->checked / 50)
		out->verdict = CALLCHECK_PARTIAL;
	else
		out->verdict = CALLCHECK_MATCH;
}

/*
 * callcheck: is this object file the code that wrote the dump?
 *
 * Every return address of a stack follows a call instruction in the
 * program that ran: the unwinder records where each call returns to.  In
 * another build of the program (rebuilt in place after the dump, or a
 * different file given as BINARY), the code has moved and most of those
 * addresses land in the middle of other instructions.  Checking them
 * (a few bytes each) tells the two apart without build ids, which
 * jemalloc dumps do not carry, and tells which addresses of a program
 * changed in part are still right.  Encodings known: x86-64 (E8 rel32; FF /2 in every ModRM,
 * SIB and displacement form, with prefixes) and AArch64 (BL, BLR and the
 * pointer-authenticating BLRA*, at the address minus 4).  Other machines
 * get no verdict.
 */
#ifndef JHEAP_CALLCHECK_H
#define JHEAP_CALLCHECK_H

#include <stddef.h>
#include <stdint.h>
#include "symbolize/symcache.h"

/* Fewer checked addresses than this say nothing of the object as a
 * whole. */
#define CALLCHECK_MIN 4

enum callcheck_verdict {
	CALLCHECK_UNKNOWN = 0,   /* no address, or a machine not known */
	CALLCHECK_MATCH,         /* all follow a call (but one in fifty): the
	                            code that ran */
	CALLCHECK_PARTIAL,       /* more do not, but not most, or some of
	                            fewer than CALLCHECK_MIN: code that
	                            changed in part, or only the addresses
	                            that do not follow a call are suspect */
	CALLCHECK_MISMATCH,      /* most do not (of CALLCHECK_MIN or more):
	                            other code */
};

struct callcheck {
	size_t checked;          /* return addresses looked at */
	size_t calls;            /* of those, how many follow a call */
	enum callcheck_verdict verdict;
};

/* Whether the LEN bytes at CODE, which end at a return address whose
 * link-time address is RA, end with a call instruction of MACHINE (an ELF
 * e_machine) whose target, where the instruction holds one (a direct
 * call, a RIP-relative pointer), lies in SEGS (a direct call's in an
 * executable segment).  Returns 1 or 0, or -1 for a machine it does not
 * know. */
int callcheck_follows_call(int machine, const uint8_t *code, size_t len, uint64_t ra,
			   const struct symsegment *segs, size_t nsegs);

/* Checks the return addresses RELS[0..n) (file offsets of the return
 * addresses in MOD's file) into *OUT, and when FOLLOWS is not NULL,
 * FOLLOWS[i] = whether RELS[i] follows a call (1 for every address when
 * there is no verdict). */
void callcheck_module(struct symmodule *mod, const uint64_t *rels, size_t n,
		      struct callcheck *out, uint8_t *follows);

#endif

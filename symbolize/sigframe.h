/*
 * sigframe: return addresses into the signal trampoline.
 *
 * When a signal handler runs, the kernel pushes a signal frame and makes
 * the handler return to the trampoline that calls rt_sigreturn (glibc's
 * and musl's __restore_rt, given with SA_RESTORER; the vdso's
 * __kernel_rt_sigreturn on AArch64).  An unwinder that walks through it
 * (libgcc, as jemalloc uses it; libunwind) records the trampoline's own
 * address as the handler's return address, then the pc the signal
 * interrupted (the instruction after a `syscall`, or anywhere), which
 * follows no call.  gdb and libunwind look both up at the address itself,
 * not minus one: minus one lands before the trampoline (glibc puts a nop
 * there for unwinders) and in the instruction before the interrupted pc.
 * A dump's frames in a program forked from a signal handler (PostgreSQL's
 * autovacuum workers) or that allocated in one go through there.
 *
 * The trampoline is told by its code, as libgcc's unwinder tells it: on
 * x86-64 `mov $15, %rax; syscall` (48 c7 c0 0f 00 00 00 0f 05) at the
 * address, on AArch64 `mov x8, #139; svc #0` (d2801168 d4000001); and on
 * AArch64 any return address in the [vdso] (the kernel's
 * __kernel_rt_sigreturn; nothing else there calls out), which a dump does
 * not hold the code of (symbolize.c decides that one).
 */
#ifndef JHEAP_SIGFRAME_H
#define JHEAP_SIGFRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "symbolize/symcache.h"

/* Whether the code at the return address whose file offset is REL in
 * MOD's file is a signal trampoline (see above). */
bool sigframe_at(struct symmodule *mod, uint64_t rel);

#endif

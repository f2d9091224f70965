/*
 * procmods: the code of a running process, for attaching to it (cli/attach.c):
 * where its jemalloc's mallctl is, which code is that jemalloc's, and
 * whether a stopped thread is inside it.
 *
 * The objects are those of /proc/PID/maps, reported by libdwfl.  Each is
 * opened through /proc/PID/map_files (the very file mapped, when jheap
 * may: CAP_SYS_ADMIN), /proc/PID/exe, or else by its path under
 * /proc/PID/root (resolved inside that root), first without reading it
 * (O_PATH), and used only when it is a regular file whose device and
 * inode are those its maps line names: a path that the process (or
 * another user) changed after mapping it names nothing here, and no FIFO
 * or device is ever opened.  Only the objects' own symbol tables are read
 * (.symtab, else .dynsym, and MiniDebugInfo), no separate debug files.
 *
 * mallctl goes by three names (plain as Debian builds it, "je_" as Redis
 * bundles it, "_rjem_" in Rust's jemalloc-sys and tikv-jemalloc-sys); a
 * program that links jemalloc statically (Rust programs, ClickHouse)
 * often has it in .symtab only.  The program's own copy comes first, then
 * the libjemalloc* objects, then the other shared objects.
 *
 * "The allocator's code" is the whole of a libjemalloc* object that holds
 * mallctl; in any other object, the functions named in jemalloc's
 * namespaces (je_*, _rjem_*), its public names when it has no prefix
 * (malloc, free, mallocx, ...), the local functions of jemalloc's own
 * source files (after an STT_FILE symbol naming one), and any code of
 * that object that no symbol covers.  Calling into jemalloc on a thread
 * stopped inside it is what corrupts a heap (its locks are not
 * recursive, its thread caches not reentrant), so a thread is used only
 * when no frame of its stack is the allocator's.
 *
 * One procmods at a time per thread (libdwfl's callbacks carry no
 * argument of their own).
 */
#ifndef JHEAP_PROCMODS_H
#define JHEAP_PROCMODS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct procmods;

/* mallctl as found in the process. */
struct procmods_fn {
	uint64_t addr;            /* its run-time address */
	const char *name;         /* "mallctl", "je_mallctl" or "_rjem_mallctl" */
	const char *module;       /* path of the object that defines it */
	const char *conf;         /* the environment variable its jemalloc reads:
	                             MALLOC_CONF, JE_MALLOC_CONF, _RJEM_MALLOC_CONF */
	int machine, elfclass;    /* of that object: EM_X86_64, ELFCLASS64, ... */
};

/* Reads the maps and objects of process PID (which runs on, untouched).
 * Returns 0 with *OUT (free with procmods_free), or a negative JH_ code
 * with a message (JH_EIO: the maps cannot be read, errno kept). */
int procmods_open(pid_t pid, struct procmods **out, char *err, size_t errlen);

/* Finds mallctl and the allocator's code around it, and readies the
 * call-frame information of every object (so that a stopped thread is
 * unwound quickly).  Returns 0 with *FN (strings owned by PM), or
 * JH_EFORMAT with a message saying that no object defines any of the
 * three names (naming the objects that could not be read). */
int procmods_find_mallctl(struct procmods *pm, struct procmods_fn *fn, char *err, size_t errlen);

/* Whether PC is the allocator's code (after procmods_find_mallctl). */
bool procmods_is_allocator(const struct procmods *pm, uint64_t pc);

/* "je_arena_malloc_hard+0x1c (in /path/prog)" or "libjemalloc.so.2+0x1234"
 * for PC, into BUF. */
void procmods_describe(struct procmods *pm, uint64_t pc, char *buf, size_t len);

/* The mapping [*START, *END) that holds ADDR, with its path ("" when
 * anonymous, "[stack]" for the main thread's); -1 when none does. */
int procmods_mapping(const struct procmods *pm, uint64_t addr, uint64_t *start, uint64_t *end,
		     const char **path);

/* Reads LEN bytes of the process at ADDR into BUF; returns the number of
 * bytes read (fewer at an unmapped page), -1 on error. */
typedef ssize_t (*procmods_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

enum procmods_verdict {
	PROCMODS_CLEAN,           /* no frame is the allocator's */
	PROCMODS_ALLOCATOR,       /* a frame is (or may be) the allocator's */
};

/* Looks at every frame of thread TID, stopped, whose registers are REGS
 * (NREGS of them in DWARF numbering; x86-64: rax rdx rcx rbx rsi rdi rbp
 * rsp r8-r15 rip) and program counter PC, reading its memory through
 * READ.  The frames are unwound with the objects' call-frame information;
 * when that stops short of the thread's outermost frame, every word of
 * the rest of its stack (up to 512 KiB) that points into the allocator's
 * code counts as a frame of it: a stale word may wrongly say so, never
 * the other way.  *WHERE_PC is the allocator's pc found. */
enum procmods_verdict procmods_check_thread(struct procmods *pm, pid_t tid, const uint64_t *regs,
					    unsigned nregs, uint64_t pc, procmods_read_fn read,
					    void *arg, uint64_t *where_pc);

/* Frees PM; NULL is a no-op. */
void procmods_free(struct procmods *pm);

#endif

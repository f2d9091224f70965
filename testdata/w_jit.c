/*
 * w_jit: code compiled at run time into anonymous executable memory that
 * allocates, and the perf map a JIT runtime writes for it
 * (/tmp/perf-PID.map: "START SIZE NAME" in hex), as node
 * --perf-basic-prof, Java's perf-map-agent or LuaJIT write theirs.
 *
 * Two pieces of x86-64 code are written into an anonymous mapping, each
 * calling a C function through a register (sub rsp,8; movabs rax,FN;
 * call rax; add rsp,8; ret) and named in the map "LazyCompile:*jsAlloc
 * app.js:1" and "Builtin:jsGrow".  They have no unwind tables, so the
 * dump's stacks stop in them, as they stop at JavaScript frames:
 *
 *   jit_alloc_small  20 x 65536 bytes, under jsAlloc
 *   jit_alloc_large   4 x 1048576 bytes, under jsGrow
 *
 * The perf map goes to $W_JIT_MAP when set, else /tmp/perf-PID.map.
 * Built with -O0 -g; run under libjemalloc.so.2 with
 * MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:...
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void *volatile keep[32];

__attribute__((noinline)) static void jit_alloc_small(void)
{
	for (int i = 0; i < 20; i++)
		keep[i] = malloc(65536);
}

__attribute__((noinline)) static void jit_alloc_large(void)
{
	for (int i = 0; i < 4; i++)
		keep[20 + i] = malloc(1048576);
}

/* Writes at P a function that calls FN; returns its length. */
static size_t emit_call(uint8_t *p, void (*fn)(void))
{
	static const uint8_t head[] = { 0x48, 0x83, 0xec, 0x08, 0x48, 0xb8 };
	static const uint8_t tail[] = { 0xff, 0xd0, 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	uint64_t a = (uint64_t)(uintptr_t)fn;
	memcpy(p, head, sizeof(head));
	memcpy(p + sizeof(head), &a, 8);
	memcpy(p + sizeof(head) + 8, tail, sizeof(tail));
	return sizeof(head) + 8 + sizeof(tail);
}

int main(void)
{
#if defined(__x86_64__)
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 1;
	memset(code, 0xcc, 4096);
	size_t n1 = emit_call(code + 64, jit_alloc_small);
	size_t n2 = emit_call(code + 256, jit_alloc_large);
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC))
		return 1;
	char path[64];
	const char *map = getenv("W_JIT_MAP");
	if (!map || !*map) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
		map = path;
	}
	FILE *f = fopen(map, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx LazyCompile:*jsAlloc app.js:1\n", (unsigned long)(uintptr_t)(code + 64), n1);
	fprintf(f, "%lx %zx Builtin:jsGrow\n", (unsigned long)(uintptr_t)(code + 256), n2);
	if (fclose(f))
		return 1;
	((void (*)(void))(code + 64))();
	((void (*)(void))(code + 256))();
	return 0;
#else
	return 77;
#endif
}

/* sigframe: the signal trampoline told by its code; see sigframe.h. */
#include <elf.h>
#include <stdbool.h>
#include <string.h>

#include "symbolize/sigframe.h"

#ifndef EM_AARCH64
#define EM_AARCH64 183
#endif

/* rt_sigreturn's call, as each machine's C libraries write it */
static const uint8_t x86_64_restore_rt[] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };
static const uint8_t aarch64_sigreturn[] = { 0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4 };

bool sigframe_at(struct symmodule *mod, uint64_t rel)
{
	size_t size = 0;
	const uint8_t *image = mod ? symmodule_image(mod, &size) : NULL;
	const uint8_t *want;
	size_t len;
	switch (mod ? symmodule_machine(mod) : EM_NONE) {
	case EM_X86_64:
		want = x86_64_restore_rt;
		len = sizeof(x86_64_restore_rt);
		break;
	case EM_AARCH64:
		want = aarch64_sigreturn;
		len = sizeof(aarch64_sigreturn);
		break;
	default:
		return false;
	}
	return image && rel <= size && size - rel >= len && !memcmp(image + rel, want, len);
}

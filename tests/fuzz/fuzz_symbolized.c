/* libFuzzer target: jeprof's symbolized format.  The input becomes the
 * "--- symbol" section's body, followed by a fixed small heap_v2 profile,
 * so the fuzzer spends its time in the symbol-line grammar and the
 * presymbol lookup. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "analyzer/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char head[] = "--- symbol\nbinary=./prog\n";
	static const char tail[] = "\n---\n--- heap\nheap_v2/1\n@ 0x7 0x1234 0x1241\n  t*: 1: 64 [0: 0]\n";
	char *buf = malloc(sizeof(head) + size + sizeof(tail));
	if (!buf)
		return 0;
	memcpy(buf, head, sizeof(head) - 1);
	memcpy(buf + sizeof(head) - 1, data, size);
	memcpy(buf + sizeof(head) - 1 + size, tail, sizeof(tail) - 1);
	struct profile p;
	char err[512];
	profile_init(&p);
	parse_buffer(&p, "fuzz.sym", buf, sizeof(head) - 1 + size + sizeof(tail) - 1, NULL, err, sizeof(err));
	for (size_t i = 0; i < p.nlocs; i++)
		profile_presym_find(&p, p.locs[i].addr);
	profile_release(&p);
	free(buf);
	return 0;
}

/* libFuzzer target: the dump parser (heap_v2, gperftools, symbolized),
 * then the merge, the fold by symbol and the aggregation that every report
 * runs, on whatever the parser accepted.  Built by "make fuzz". */
#include <stddef.h>
#include <stdint.h>
#include "analyzer/aggregate.h"
#include "analyzer/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile one, sum;
	char err[512];
	profile_init(&one);
	profile_init(&sum);
	if (!parse_buffer(&one, "fuzz.heap", (const char *)data, size, NULL, err, sizeof(err))) {
		profile_merge(&sum, &one, 1, err, sizeof(err));
		profile_merge(&sum, &one, -1, err, sizeof(err));
		profile_fold_by_symbol(&sum, false, NULL);
		struct aggregate a;
		struct agg_options o = { .value = PF_INUSE_SPACE, .gran = GRAN_ADDRESSES };
		if (!aggregate_build(&a, &one, &o))
			aggregate_sort(&a, false);
		aggregate_release(&a);
	}
	profile_release(&one);
	profile_release(&sum);
	return 0;
}

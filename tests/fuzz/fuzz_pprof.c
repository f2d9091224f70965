/* libFuzzer target: the pprof profile.proto reader on uncompressed input
 * (parse_buffer, which fuzz_parse runs, sends gzip through zlib first),
 * then the merge that --base runs (lines of symbolized locations copied)
 * and the aggregation by function and by line.  Built by "make fuzz". */
#include <stddef.h>
#include <stdint.h>
#include "analyzer/aggregate.h"
#include "analyzer/pprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile one, sum;
	char err[512];
	profile_init(&one);
	profile_init(&sum);
	pprof_sniff(data, size);
	pprof_broken_at(data, size);
	if (!pprof_read(&one, "fuzz.pb", data, size, NULL, NULL, err, sizeof(err)) &&
	    !profile_resolve_mappings(&one)) {
		profile_merge(&sum, &one, 1, err, sizeof(err));
		profile_merge(&sum, &one, -1, err, sizeof(err));
		for (int g = 0; g < 2; g++) {
			struct aggregate a;
			struct agg_options o = { .value = PF_INUSE_SPACE,
						 .gran = g ? GRAN_LINES : GRAN_FUNCTIONS };
			if (!aggregate_build(&a, &sum, &o))
				aggregate_sort(&a, false);
			aggregate_release(&a);
		}
	}
	profile_release(&one);
	profile_release(&sum);
	return 0;
}

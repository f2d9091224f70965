/* --raw: being written. */
#include "analyzer/util.h"
#include "output/output.h"

int output_raw(FILE *out, const struct report *r, char *err, size_t errlen)
{
	return jh_err(err, errlen, JH_EUSAGE, "this output format is not implemented yet");
}


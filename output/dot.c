/* --dot: being written. */
#include "analyzer/util.h"
#include "output/output.h"

int output_dot(FILE *out, const struct report *r, char *err, size_t errlen)
{
	return jh_err(err, errlen, JH_EUSAGE, "this output format is not implemented yet");
}

int output_graphviz(FILE *out, const struct report *r, const char *format, char *err, size_t errlen)
{
	return jh_err(err, errlen, JH_EUSAGE, "this output format is not implemented yet");
}


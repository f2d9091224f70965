#include <math.h>
#include "analyzer/unsample.h"

void unsample_pair(enum unsample_kind kind, double rate, double *objs, double *bytes)
{
	if (kind == UNSAMPLE_NONE || *objs == 0 || rate <= 0)
		return;
	double ratio = (*bytes / *objs) / rate;
	if (kind == UNSAMPLE_V2) {
		/* exp(-40) is below 2^-54, half an ulp under 1: 1 - exp(-ratio)
		 * rounds to exactly 1 and so would the scale.  (Not only a
		 * shortcut: with every allocation sampled, ratio is the mean
		 * object size, and this skips an exp per counts line.) */
		if (ratio > 40)
			return;
		double scale = 1 / (1 - exp(-ratio));
		*objs *= scale;
		*bytes *= scale;
	} else if (ratio < 1 && ratio > 0) {
		*objs /= ratio;
		*bytes /= ratio;
	}
}

/* peakload: an allocation-heavy program whose heap reaches a new peak
 * again and again, for the cost of jheap record --peaks (bench/peaks.sh).
 * ROUNDS rounds (argv[1], default 30): each allocates a list of blocks of
 * 16 to 4096 bytes, 6% more blocks than the round before (so the heap's
 * high-water mark rises each round), with TEMPS (argv[2], default 10)
 * short-lived allocations between two kept ones, then frees the list.
 * About 20 million allocations in all with the defaults. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 30;
	int temps = argc > 2 ? atoi(argv[2]) : 10;
	size_t n = 100000;
	unsigned s = 12345;
	volatile char sink = 0;
	for (int r = 0; r < rounds; r++) {
		void **keep = malloc(n * sizeof(*keep));
		if (!keep)
			return 1;
		for (size_t i = 0; i < n; i++) {
			for (int k = 0; k < temps; k++) {
				char *t = malloc(32 + (s % 200));
				s = s * 1103515245 + 12345;
				t[0] = (char)k;
				sink = t[0];
				free(t);
			}
			keep[i] = malloc(16 + (s >> 8) % 4080);
			s = s * 1103515245 + 12345;
		}
		for (size_t i = 0; i < n; i++)
			free(keep[i]);
		free(keep);
		n = n * 106 / 100;
	}
	printf("%d\n", (int)sink);
	return 0;
}

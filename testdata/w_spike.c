/* w_spike: a heap with a transient spike between two quiet moments, for
 * the tests of jheap record --peaks, --timeline and --peak against
 * heaptrack (tests/t0425-peaks.sh).  Built -O0 -g.
 *
 * function      what                                          held
 * ------------  --------------------------------------------  ------------------
 * baseline      5 blocks of 1 MiB, at start, kept             5 MiB to the end
 * spike         40 blocks of 1 MiB                            40 MiB until freed
 * climb_step    (climb mode) blocks of 1 MiB, kept: the heap  +50% a step
 *               grows by half at each step
 *
 * 1 MiB is one of jemalloc's size classes, so jemalloc's counts and
 * heaptrack's (the sizes asked for) agree: the peak is 45 MiB and 80 KiB
 * (libstdc++'s emergency pool) in both.
 *
 *   w_spike            steered by SIGUSR1 (read from a signalfd), each
 *                      printing one line: "ready" after baseline; then
 *                      the spike ("spiked", the 40 MiB held), its free
 *                      ("freed"), and the exit ("bye")
 *   w_spike climb N    "ready" after baseline; each SIGUSR1 a climb step
 *                      ("level K"), the Nth ends the program ("bye")
 *   w_spike run        all at once, without waiting: baseline, the spike
 *                      allocated and freed, exit (heaptrack's run)
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define MIB ((size_t)1 << 20)

static void *kept[1000];
static int nkept;
static void *spiked[40];

NOINLINE void baseline(void)
{
	for (int i = 0; i < 5; i++)
		kept[nkept++] = malloc(MIB);
}

NOINLINE void spike(void)
{
	for (int i = 0; i < 40; i++)
		spiked[i] = malloc(MIB);
}

NOINLINE void spike_free(void)
{
	for (int i = 0; i < 40; i++)
		free(spiked[i]);
}

/* the heap grows by half: nkept blocks become nkept * 3 / 2 */
NOINLINE void climb_step(void)
{
	int want = nkept * 3 / 2;
	while (nkept < want && nkept < 1000)
		kept[nkept++] = malloc(MIB);
}

static int sfd = -1;

static void wait_signal(void)
{
	struct signalfd_siginfo si;
	if (read(sfd, &si, sizeof(si)) != sizeof(si))
		exit(1);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "run")) {
		baseline();
		spike();
		spike_free();
		return 0;
	}
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if ((sfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0)
		return 1;
	baseline();
	puts("ready");
	if (argc == 3 && !strcmp(argv[1], "climb")) {
		int n = atoi(argv[2]);
		for (int k = 1; k <= n; k++) {
			wait_signal();
			if (k == n)
				break;
			climb_step();
			printf("level %d\n", k);
		}
		puts("bye");
		return 0;
	}
	wait_signal();
	spike();
	puts("spiked");
	wait_signal();
	spike_free();
	puts("freed");
	wait_signal();
	puts("bye");
	return 0;
}

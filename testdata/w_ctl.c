/* w_ctl: a long-running program steered by signals, for the tests of
 * jheap record, jheap dump and jheap ctl.  Built -O0 -g.
 *
 * It blocks SIGUSR1, SIGUSR2 and SIGTERM and reads them from a signalfd,
 * as event loops do (so a thread that left them unblocked would get the
 * first one and its default action would kill the process: the control
 * library's thread must block them; sigwait would not show it, as it
 * unblocks the signals it waits for).  After each step it
 * prints one line on standard output (flushed), which the tests wait for.
 *
 *   SIGUSR1  the next step; prints "step N"
 *   SIGUSR2  fork(): the child runs ctl_child, prints "child PID" and goes
 *            on waiting for signals as the parent does (its steps print
 *            "child-step N"); the parent prints "forked PID"
 *   SIGTERM  exit(0) (prints "bye")
 *
 * step  function     call             count  usable  kept bytes
 * ----  -----------  ---------------  -----  ------  ----------
 * 1     ctl_first    malloc(10000)       50   10240      512000
 * 2     ctl_second   malloc(40000)       20   40960      819200
 * 3...  ctl_more     malloc(100000)       8  114688      917504 each step
 * fork  ctl_child    malloc(60000)        4   65536      262144 (child only)
 *
 * Nothing is freed.  "w_ctl grow MS N" instead runs ctl_leak N times, MS
 * milliseconds apart (1 block of 4096 B each time, kept), prints "done"
 * and exits: a steady leak for the --every and --growth tests.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *keep[100000];
static int nkeep;

static void hold(void *p)
{
	if (nkeep < 100000)
		keep[nkeep++] = p;
}

NOINLINE void ctl_first(void)
{
	for (int i = 0; i < 50; i++)
		hold(malloc(10000));
}

NOINLINE void ctl_second(void)
{
	for (int i = 0; i < 20; i++)
		hold(malloc(40000));
}

NOINLINE void ctl_more(void)
{
	for (int i = 0; i < 8; i++)
		hold(malloc(100000));
}

NOINLINE void ctl_child(void)
{
	for (int i = 0; i < 4; i++)
		hold(malloc(60000));
}

NOINLINE void ctl_leak(void)
{
	hold(malloc(4096));
}

static int grow(int ms, int n)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	for (int i = 0; i < n; i++) {
		ctl_leak();
		nanosleep(&t, NULL);
	}
	puts("done");
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "grow"))
		return grow(atoi(argv[2]), atoi(argv[3]));
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGUSR2);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, NULL);
	int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	int step = 0;
	const char *who = "";
	puts("ready");
	for (;;) {
		struct signalfd_siginfo si;
		if (read(sfd, &si, sizeof(si)) != sizeof(si))
			return 1;
		int sig = (int)si.ssi_signo;
		if (sig == SIGTERM) {
			puts("bye");
			exit(0);
		}
		if (sig == SIGUSR2) {
			fflush(stdout);
			pid_t pid = fork();
			if (pid < 0)
				return 1;
			if (pid == 0) {
				ctl_child();
				who = "child-";
				printf("child %d\n", (int)getpid());
			} else {
				printf("forked %d\n", (int)pid);
			}
			continue;
		}
		step++;
		if (step == 1)
			ctl_first();
		else if (step == 2)
			ctl_second();
		else
			ctl_more();
		printf("%sstep %d\n", who, step);
	}
}

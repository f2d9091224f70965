/*
 * w_sigfork: allocations made in a signal handler, and in a child forked
 * from that handler, as PostgreSQL's postmaster starts its autovacuum
 * workers (from its SIGUSR1 handler while it waits in select()).
 *
 * The main thread waits in select(); a second thread sends SIGUSR1 until
 * the handler sees (from the interrupted context's pc, through dladdr)
 * that the signal arrived inside select.  The handler then allocates
 * (handler_alloc: 5 x 32768 bytes, kept) and forks; the child, still in
 * the handler, allocates (child_work: 10 x 65536 bytes, kept) and exits,
 * which writes its final dump (MALLOC_CONF=prof_final:true).  So every
 * one of those stacks runs child_work/handler_alloc <- on_signal <-
 * the signal trampoline (__restore_rt) <- select <- wait_loop <- main.
 *
 * Built with -O0 -g; run under libjemalloc.so.2 with
 * MALLOC_CONF=prof:true,prof_final:true,lg_prof_sample:0,prof_prefix:DIR/jeprof.
 *
 *   in use, parent:  handler_alloc 5 x 32768
 *   in use, child:   handler_alloc 5 x 32768 (inherited), child_work 10 x 65536
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

static volatile sig_atomic_t forked;
static volatile pid_t child;
static void *volatile keep[16];

__attribute__((noinline)) static void child_work(void)
{
	for (int i = 0; i < 10; i++) {
		keep[i] = malloc(65536);
		memset(keep[i], 1, 65536);
	}
}

__attribute__((noinline)) static void handler_alloc(void)
{
	for (int i = 0; i < 5; i++) {
		keep[10 + i] = malloc(32768);
		memset(keep[10 + i], 2, 32768);
	}
}

/* Whether the signal interrupted select() (the pc in its code). */
static int in_select(void *uc)
{
	Dl_info info;
	void *pc = NULL;
#if defined(__x86_64__)
	pc = (void *)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	pc = (void *)((ucontext_t *)uc)->uc_mcontext.pc;
#endif
	return pc && dladdr(pc, &info) && info.dli_sname &&
	       (!strcmp(info.dli_sname, "select") || !strcmp(info.dli_sname, "__select"));
}

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	if (forked || !in_select(uc))
		return;
	forked = 1;
	handler_alloc();
	pid_t pid = fork();
	if (pid == 0) {
		child_work();
		exit(0);
	}
	child = pid;
}

static void *sender(void *arg)
{
	pthread_t main_thread = *(pthread_t *)arg;
	for (int i = 0; i < 100000 && !forked; i++) {
		pthread_kill(main_thread, SIGUSR1);
		usleep(1000);
	}
	return NULL;
}

__attribute__((noinline)) static void wait_loop(void)
{
	while (!forked) {
		struct timeval tv = { 0, 100000 };
		select(0, NULL, NULL, NULL, &tv);
	}
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return 1;
	pthread_t self = pthread_self(), t;
	if (pthread_create(&t, NULL, sender, &self))
		return 1;
	wait_loop();
	pthread_join(t, NULL);
	int status = 0;
	if (child <= 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		fprintf(stderr, "w_sigfork: the child failed\n");
		return 1;
	}
	return 0;
}

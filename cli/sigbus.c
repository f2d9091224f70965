#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/readfile.h"
#include "cli/sigbus.h"

static void say(const char *s)
{
	ssize_t unused = write(STDERR_FILENO, s, strlen(s));
	(void)unused;
}

/* Only async-signal-safe calls: write and _exit. */
static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	const char *path = readfile_guard(si->si_addr);
	if (path) {
		say("jheap: ");
		say(path);
		say(": the file was truncated while it was read\n");
	} else {
		say("jheap: a file was truncated while it was read (an object file or a debug file?)\n");
	}
	_exit(1);
}

void sigbus_install(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

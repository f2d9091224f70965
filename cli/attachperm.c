/*
 * attachperm.c: why the kernel would not let jheap attach to a process,
 * and what to do (attach_refusal(), attach_perm_read(); cli/attach.h).
 *
 * ptrace says only EPERM.  The reasons, in the order the kernel weighs
 * them for a caller without CAP_SYS_PTRACE: a process of another user (its
 * real, effective and saved user must all be the caller's), a process
 * that is not dumpable (a set-user-ID program, or one that called
 * prctl(PR_SET_DUMPABLE, 0)), then Yama's kernel.yama.ptrace_scope (1:
 * only a process's ancestors may attach; 2: only with CAP_SYS_PTRACE; 3:
 * nobody, until the next boot).  Past those, a security module (SELinux,
 * AppArmor) or a container (seccomp, a dropped CAP_SYS_PTRACE) said no.
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/attach.h"

#define CAP_SYS_PTRACE_BIT 19

static void user_text(char *out, size_t len, const char *name, uid_t uid)
{
	if (name)
		snprintf(out, len, "%s (uid %u)", name, (unsigned)uid);
	else
		snprintf(out, len, "uid %u", (unsigned)uid);
}

/* The process's user to name: the first of its real, effective and saved
 * users that is not jheap's, else its effective one. */
static uid_t other_uid(const struct attach_perm *p)
{
	for (int i = 0; i < 3; i++)
		if (p->target_uid[i] != p->uid)
			return p->target_uid[i];
	return p->target_uid[1];
}

char *attach_refusal(const struct attach_perm *p, char *buf, size_t len)
{
	char me[96], them[96];
	uid_t tu = other_uid(p);
	bool other = false;
	for (int i = 0; i < 3; i++)
		other |= p->target_uid[i] != p->uid;
	user_text(me, sizeof(me), p->user, p->uid);
	user_text(them, sizeof(them), p->target_user, tu);
	if (!p->cap_ptrace && other)
		snprintf(buf, len, "process %d runs as user %s and jheap as %s: attaching needs the process's own user or root (CAP_SYS_PTRACE); run jheap as that user, or with sudo",
			 (int)p->pid, them, me);
	else if (!p->cap_ptrace && !p->dumpable)
		snprintf(buf, len, "process %d is not dumpable (a set-user-ID or set-group-ID program, or one that called prctl(PR_SET_DUMPABLE, 0)): only root (CAP_SYS_PTRACE) may attach to it; run jheap with sudo",
			 (int)p->pid);
	else if (p->yama >= 3)
		snprintf(buf, len, "attaching is disabled on this machine (kernel.yama.ptrace_scope is 3, which only a reboot resets): no process may attach to another, root included; start the program with 'jheap record -- PROGRAM' instead");
	else if (p->yama == 2 && !p->cap_ptrace)
		snprintf(buf, len, "kernel.yama.ptrace_scope is 2: only root (CAP_SYS_PTRACE) may attach to a process; run jheap with sudo");
	else if (p->yama == 1 && !p->cap_ptrace)
		snprintf(buf, len, "kernel.yama.ptrace_scope is 1: a process may attach only to its own descendants, and process %d is not jheap's; run jheap with sudo, or allow it with 'sysctl kernel.yama.ptrace_scope=0' (as root; it weakens a protection for every process), or start the program with 'jheap record -- PROGRAM'",
			 (int)p->pid);
	else
		snprintf(buf, len, "ptrace was refused (Operation not permitted) although %s: a security module (SELinux, AppArmor) or the container jheap runs in (seccomp, a dropped CAP_SYS_PTRACE: docker run --cap-add=SYS_PTRACE) forbids it",
			 p->cap_ptrace ? "jheap has CAP_SYS_PTRACE" : "the process is jheap's user's");
	return buf;
}

/* The text after "KEY:" in /proc status text S, or NULL. */
static const char *field(const char *s, const char *key)
{
	size_t n = strlen(key);
	for (const char *p = s; p && *p;) {
		if (!strncmp(p, key, n) && p[n] == ':')
			return p + n + 1;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return NULL;
}

static bool read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n > 0;
}

void attach_perm_read(pid_t pid, struct attach_perm *p)
{
	static char user[64], target[64];
	char buf[4096], path[64];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->yama = -1;
	p->uid = geteuid();
	p->dumpable = true;
	if (read_text("/proc/sys/kernel/yama/ptrace_scope", buf, sizeof(buf)))
		p->yama = atoi(buf);
	if (read_text("/proc/self/status", buf, sizeof(buf))) {
		const char *c = field(buf, "CapEff");
		if (c)
			p->cap_ptrace = (strtoull(c, NULL, 16) >> CAP_SYS_PTRACE_BIT) & 1;
	}
	for (int i = 0; i < 3; i++)
		p->target_uid[i] = p->uid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_text(path, buf, sizeof(buf))) {
		const char *u = field(buf, "Uid");
		for (int i = 0; u && i < 3; i++) {
			char *end;
			p->target_uid[i] = (uid_t)strtoul(u, &end, 10);
			u = end;
		}
	}
	/* the /proc files of a process that is not dumpable belong to root */
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (!stat(path, &st) && st.st_uid == 0 && p->target_uid[1] != 0)
		p->dumpable = false;
	struct passwd *pw = getpwuid(p->uid);
	if (pw) {
		snprintf(user, sizeof(user), "%s", pw->pw_name);
		p->user = user;
	}
	pw = getpwuid(other_uid(p));
	if (pw) {
		snprintf(target, sizeof(target), "%s", pw->pw_name);
		p->target_user = target;
	}
}

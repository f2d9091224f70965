/* Unit tests for cli/attachperm.c: the message for a refused attach, for
 * each reason the kernel has (another user, not dumpable, each Yama
 * ptrace_scope, a security module), so that the cases a test machine
 * cannot produce (Yama is not in every kernel, and a scope of 3 cannot be
 * undone without a reboot) are checked too. */
#include "unit.h"
#include "cli/attach.h"

static struct attach_perm base(void)
{
	struct attach_perm p = { .yama = -1, .cap_ptrace = false, .uid = 1000,
				 .target_uid = { 1000, 1000, 1000 }, .dumpable = true, .pid = 4242,
				 .user = "me", .target_user = "me" };
	return p;
}

static const char *msg(const struct attach_perm *p)
{
	static char buf[1024];
	return attach_refusal(p, buf, sizeof(buf));
}

TEST(other_user)
{
	struct attach_perm p = base();
	p.target_uid[0] = p.target_uid[1] = p.target_uid[2] = 33;
	p.target_user = "www-data";
	p.yama = 1;   /* the user comes first: it is what to fix */
	CHECK_STR(msg(&p), "process 4242 runs as user www-data (uid 33) and jheap as me (uid 1000): attaching needs the process's own user or root (CAP_SYS_PTRACE); run jheap as that user, or with sudo");
	/* a set-user-ID program that kept the caller as its real user */
	p = base();
	p.target_uid[1] = p.target_uid[2] = 0;
	p.target_user = NULL;
	CHECK(strstr(msg(&p), "runs as user uid 0 and jheap as me (uid 1000)") != NULL);
}

TEST(not_dumpable)
{
	struct attach_perm p = base();
	p.dumpable = false;
	CHECK(strstr(msg(&p), "process 4242 is not dumpable") != NULL);
	CHECK(strstr(msg(&p), "prctl(PR_SET_DUMPABLE, 0)") != NULL);
	/* root may */
	p.cap_ptrace = true;
	CHECK(strstr(msg(&p), "not dumpable") == NULL);
}

TEST(yama_scopes)
{
	struct attach_perm p = base();
	p.yama = 1;
	CHECK(strstr(msg(&p), "kernel.yama.ptrace_scope is 1: a process may attach only to its own descendants") != NULL);
	CHECK(strstr(msg(&p), "'sysctl kernel.yama.ptrace_scope=0'") != NULL);
	p.yama = 2;
	CHECK_STR(msg(&p), "kernel.yama.ptrace_scope is 2: only root (CAP_SYS_PTRACE) may attach to a process; run jheap with sudo");
	p.yama = 3;
	CHECK(strstr(msg(&p), "kernel.yama.ptrace_scope is 3, which only a reboot resets") != NULL);
	/* scope 3 refuses root too; 1 and 2 do not */
	p.cap_ptrace = true;
	CHECK(strstr(msg(&p), "ptrace_scope is 3") != NULL);
	p.yama = 2;
	CHECK(strstr(msg(&p), "ptrace_scope") == NULL);
	CHECK(strstr(msg(&p), "security module") != NULL);
	p.yama = 1;
	CHECK(strstr(msg(&p), "ptrace_scope") == NULL);
}

TEST(security_module)
{
	struct attach_perm p = base();
	p.yama = 0;
	CHECK(strstr(msg(&p), "a security module (SELinux, AppArmor) or the container") != NULL);
	CHECK(strstr(msg(&p), "although the process is jheap's user's") != NULL);
	p.cap_ptrace = true;
	p.target_uid[0] = p.target_uid[1] = p.target_uid[2] = 0;
	CHECK(strstr(msg(&p), "although jheap has CAP_SYS_PTRACE") != NULL);
}

TEST(no_overflow)
{
	struct attach_perm p = base();
	char small[16];
	p.yama = 3;
	attach_refusal(&p, small, sizeof(small));
	CHECK_INT(strlen(small), 15);
}

int main(void)
{
	RUN(other_user);
	RUN(not_dumpable);
	RUN(yama_scopes);
	RUN(security_module);
	RUN(no_overflow);
	return UNIT_END();
}

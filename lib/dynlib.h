/*
 * dynlib: a shared library opened with dlopen when a feature first needs
 * it, rather than linked.  jheap loads three libraries this way:
 *
 *   libcurl.so.4 (package libcurl4)   by the first URL (cli/fetch.c)
 *   libedit.so.2 (package libedit2)   when the shell opens on a terminal
 *                                     (cli/lineedit.c)
 *   libdebuginfod.so.1                only when DEBUGINFOD_URLS is set, as
 *                                     libdwfl itself does
 *                                     (symbolize/debuginfod.c)
 *
 * Linked, libcurl brought about thirty libraries (OpenSSL, GnuTLS,
 * Kerberos, LDAP, SSH, ...) whose loading and constructors every run paid:
 * jheap --version took 6.5 ms instead of 1.1 ms, and a --text report of a
 * small dump 8 ms instead of 2.7 ms, and scripts run jheap many times.
 * tests/t0030-libraries-on-demand.sh checks that --version and --text load
 * none of them.  The headers still give the functions' types, so the -dev
 * packages are needed to build (scripts/deps.sh installs the run-time
 * packages too).  Without libcurl a URL is an error naming the library and
 * its package (exit status 1); without libedit the shell reads plain lines
 * with a warning; without libdebuginfod there is no lookup.
 *
 * A caller lists the functions it uses in a table of DYNLIB_FN entries,
 * each naming a function pointer of its own, and calls dynlib_load once
 * (under its own lock or pthread_once when threads may race).
 */
#ifndef JHEAP_DYNLIB_H
#define JHEAP_DYNLIB_H

#include <stddef.h>

/* One function to resolve: its symbol and the function pointer that gets
 * its address. */
struct dynlib_fn {
	const char *name;
	void *ptr;   /* the address of a function pointer */
};

/* An entry for the function pointer PTR (an lvalue) and symbol NAME. */
#define DYNLIB_FN(ptr, name) { (name), &(ptr) }

/* Opens SONAME ("libcurl.so.4") with RTLD_NOW | RTLD_LOCAL and sets every
 * function pointer of FNS[0..n) to its symbol.  Returns 0, or JH_EIO with
 * the reason in ERR (dlerror's: not installed, not loadable; or "SONAME
 * has no NAME" for the first symbol missing), the library closed again
 * and the pointers left alone.  The library stays loaded for the rest of
 * the run.  Test hook: JHEAP_TEST_LIBDIR=DIR opens DIR/SONAME instead, so
 * that a test can make a library missing. */
int dynlib_load(const char *soname, const struct dynlib_fn *fns, size_t n, char *err,
		size_t errlen);

#endif

/*
 * dynlib: a shared library opened with dlopen when a feature first needs
 * it, rather than linked.  jheap loads libcurl (fetching URLs), libedit
 * (the shell's line editing) and libdebuginfod (DEBUGINFOD_URLS) this way:
 * linked, libcurl and the thirty libraries it needs would be loaded and
 * initialised by every run, which took most of a short run's time.
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

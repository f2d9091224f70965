/* dynlib: a shared library opened when it is first needed; see dynlib.h. */
#include "lib/dynlib.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>

#include "lib/errors.h"

int dynlib_load(const char *soname, const struct dynlib_fn *fns, size_t n, char *err,
		size_t errlen)
{
	char path[4096];
	const char *dir = getenv("JHEAP_TEST_LIBDIR");
	if (dir && *dir && (size_t)snprintf(path, sizeof(path), "%s/%s", dir, soname) < sizeof(path))
		soname = path;
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		return jh_err(err, errlen, JH_EIO, "%s", why ? why : soname);
	}
	for (size_t i = 0; i < n; i++) {
		if (!dlsym(h, fns[i].name)) {
			/* the file that was found under that name */
			struct link_map *lm = NULL;
			int rc = jh_err(err, errlen, JH_EIO, "%s has no %s",
					!dlinfo(h, RTLD_DI_LINKMAP, &lm) && lm && lm->l_name[0]
						? lm->l_name : soname,
					fns[i].name);
			dlclose(h);
			return rc;
		}
	}
	/* all there: set them (memcpy: a function pointer from dlsym's
	 * void *, as POSIX allows, not written through another type) */
	for (size_t i = 0; i < n; i++) {
		void *addr = dlsym(h, fns[i].name);
		memcpy(fns[i].ptr, &addr, sizeof(addr));
	}
	return 0;
}

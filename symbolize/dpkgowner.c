/* dpkgowner: a file's Debian package from dpkg's database; see dpkgowner.h. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize/dpkgowner.h"

/* FD's file, if a regular file of at most MAX bytes, malloc'd and
 * NUL-terminated (*N bytes), else NULL.  FD is closed. */
static char *read_bounded(int fd, size_t max, size_t *n)
{
	struct stat st;
	char *buf = NULL;
	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && (size_t)st.st_size <= max &&
	    (buf = malloc((size_t)st.st_size + 1))) {
		size_t got = 0;
		while (got < (size_t)st.st_size) {
			ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		buf[got] = 0;
		*n = got;
	}
	close(fd);
	return buf;
}

/* Whether LIST[0..n) has the line LINE. */
static int has_line(const char *list, size_t n, const char *line)
{
	size_t k = strlen(line);
	for (const char *s = list, *e = list + n; (s = memmem(s, (size_t)(e - s), line, k));
	     s++)
		if ((s == list || s[-1] == '\n') && (s + k == e || s[k] == '\n'))
			return 1;
	return 0;
}

int dpkgowner_find(const char *db, const char *path, char *pkg, size_t len)
{
	if (!db)
		db = getenv("JHEAP_DPKG_INFO");
	if (!db || !*db)
		db = "/var/lib/dpkg/info";
	/* the path, and its other spelling under merged /usr */
	char alt[4096] = "";
	if (!strncmp(path, "/usr/", 5) &&
	    (!strncmp(path + 4, "/lib", 4) || !strncmp(path + 4, "/bin/", 5) ||
	     !strncmp(path + 4, "/sbin/", 6)))
		snprintf(alt, sizeof(alt), "%s", path + 4);
	else if (!strncmp(path, "/lib", 4) || !strncmp(path, "/bin/", 5) ||
		 !strncmp(path, "/sbin/", 6))
		snprintf(alt, sizeof(alt), "/usr%s", path);
	int dfd = open(db, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd < 0 ? NULL : fdopendir(dfd);
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return 0;
	}
	int found = 0;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		size_t nl = strlen(de->d_name);
		if (nl < 6 || strcmp(de->d_name + nl - 5, ".list") || de->d_name[0] == '.')
			continue;
		size_t n = 0;
		char *list = read_bounded(openat(dirfd(d), de->d_name,
						 O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC),
					  DPKGOWNER_MAX_LIST, &n);
		if (list && (has_line(list, n, path) || (alt[0] && has_line(list, n, alt)))) {
			size_t pl = strcspn(de->d_name, ":");
			if (pl > nl - 5)
				pl = nl - 5;
			snprintf(pkg, len, "%.*s", (int)pl, de->d_name);
			found = 1;
		}
		free(list);
	}
	closedir(d);
	return found;
}

void dpkgowner_debug_source(char *buf, size_t len)
{
	char code[64] = "RELEASE";
	size_t n = 0;
	char *os = read_bounded(open("/etc/os-release", O_RDONLY | O_NONBLOCK | O_CLOEXEC), 65536, &n);
	const char *v = os ? strstr(os, "VERSION_CODENAME=") : NULL;
	if (v && (v == os || v[-1] == '\n')) {
		v += 17;
		size_t k = 0;
		while (k + 1 < sizeof(code) && ((v[k] >= 'a' && v[k] <= 'z') || (v[k] >= '0' && v[k] <= '9')))
			k++;
		if (k) {
			memcpy(code, v, k);
			code[k] = 0;
		}
	}
	free(os);
	snprintf(buf, len, "deb http://deb.debian.org/debian-debug/ %s-debug main", code);
}

/* libFuzzer target: the files a profile names.  Each input becomes a dump
 * whose maps name files in a scratch folder made once: a FIFO, a link to
 * /dev/zero, a folder, a 1 GiB sparse file, a missing file, the fuzzer
 * itself, and copies of it whose .gnu_debuglink, .gnu_debugaltlink and
 * build-id debug file are FIFOs; it is symbolized (every object and
 * debug-file candidate is opened), then a source listing is made of
 * frames whose file is one of those paths, named by the DWARF or by the
 * profile, under --source-dir or not.  Nothing may block: "make fuzz"
 * runs it with -timeout=10.  Built by "make fuzz"; needs objcopy for the
 * copies (they are left out without it). */
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <libelf.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyzer/aggregate.h"
#include "lib/chars.h"
#include "analyzer/parse.h"
#include "output/output.h"
#include "symbolize/symbolize.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

extern char **environ;

static char scratch[] = "/tmp/jheap-fuzz-paths-XXXXXX";
static char paths[12][4200];
static size_t npaths;
static const char *dirs[2] = { scratch, NULL };

static void add_path(const char *name)
{
	snprintf(paths[npaths++], sizeof(paths[0]), "%s/%s", scratch, name);
}

static int run(const char *const argv[])
{
	pid_t pid;
	int status;
	if (posix_spawnp(&pid, argv[0], NULL, NULL, (char *const *)argv, environ))
		return -1;
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void cleanup(void)
{
	nftw(scratch, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The build id of the ELF file PATH as hex, or "" */
static void build_id(const char *path, char *hex)
{
	hex[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	elf_version(EV_CURRENT);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	const void *id;
	ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &id) : -1;
	if (n > 1 && n <= 64)
		jh_hex(hex, id, (size_t)n);
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	char self[4096], p[4300], q[4300];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (!mkdtemp(scratch) || n <= 0)
		abort();
	self[n] = '\0';
	atexit(cleanup);
	snprintf(p, sizeof(p), "%s/fifo", scratch);
	mkfifo(p, 0600);
	add_path("fifo");
	snprintf(p, sizeof(p), "%s/zero", scratch);
	if (!symlink("/dev/zero", p))
		add_path("zero");
	snprintf(p, sizeof(p), "%s/folder", scratch);
	mkdir(p, 0700);
	add_path("folder");
	snprintf(p, sizeof(p), "%s/sparse", scratch);
	int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	if (fd >= 0 && !ftruncate(fd, 1L << 30))
		add_path("sparse");
	if (fd >= 0)
		close(fd);
	add_path("missing");
	snprintf(p, sizeof(p), "%s/self", scratch);
	if (!symlink(self, p))
		add_path("self");
	/* a copy without DWARF whose debuglink is a FIFO */
	snprintf(p, sizeof(p), "%s/prog.debug", scratch);
	close(open(p, O_CREAT | O_WRONLY, 0600));
	snprintf(q, sizeof(q), "--add-gnu-debuglink=%s", p);
	char out[4300];
	snprintf(out, sizeof(out), "%s/stripped", scratch);
	const char *strip[] = { "objcopy", "--strip-debug", q, self, out, NULL };
	if (!run(strip) && !unlink(p) && !mkfifo(p, 0600))
		add_path("stripped");
	/* a copy whose dwz alt file is a FIFO */
	snprintf(p, sizeof(p), "%s/link.bin", scratch);
	FILE *f = fopen(p, "w");
	if (f) {
		fwrite("alt.debug\0aaaaaaaaaaaaaaaaaaaa", 1, 30, f);
		fclose(f);
	}
	snprintf(q, sizeof(q), ".gnu_debugaltlink=%s", p);
	snprintf(out, sizeof(out), "%s/alt", scratch);
	const char *alt[] = { "objcopy", "--add-section", q, self, out, NULL };
	snprintf(p, sizeof(p), "%s/alt.debug", scratch);
	if (!run(alt) && !mkfifo(p, 0600))
		add_path("alt");
	/* the fuzzer's own build-id debug file, under the scratch folder
	 * (given as --debuginfo-dir), is a FIFO */
	char hex[130];
	build_id(self, hex);
	if (hex[0]) {
		snprintf(p, sizeof(p), "%s/.build-id", scratch);
		mkdir(p, 0700);
		snprintf(p, sizeof(p), "%s/.build-id/%.2s", scratch, hex);
		mkdir(p, 0700);
		snprintf(p, sizeof(p), "%s/.build-id/%.2s/%s.debug", scratch, hex, hex + 2);
		mkfifo(p, 0600);
	}
	snprintf(p, sizeof(p), "%s/src.c", scratch);
	f = fopen(p, "w");
	if (f) {
		fputs("int one;\nint two;\nint three;\n", f);
		fclose(f);
		add_path("src.c");
	}
	return 0;
}

/* A dump of the input's records over mappings of the scratch files. */
static char *make_dump(const uint8_t *data, size_t size, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		return NULL;
	fputs("heap_v2/1\n", f);
	for (size_t i = 0; i + 4 <= size && i < 4096; i += 4) {
		unsigned m = data[i] % npaths;
		uint64_t a = 0x100000000ULL * (m + 1) + (((uint64_t)data[i + 1] << 16 |
							   (uint64_t)data[i + 2] << 8 | data[i + 3]) & 0xfffff);
		fprintf(f, "@ 0x%llx 0x%llx\n  t*: 1: 8 [1: 8]\n  t0: 1: 8 [1: 8]\n",
			(unsigned long long)a, (unsigned long long)(a + 0x40));
	}
	fputs("MAPPED_LIBRARIES:\n", f);
	for (size_t m = 0; m < npaths; m++)
		fprintf(f, "%llx-%llx r-xp 00000000 00:00 0 %s\n",
			0x100000000ULL * (m + 1), 0x100000000ULL * (m + 1) + 0x100000, paths[m]);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* A frame of a function in file PATH at LINE, named by the DWARF (a path
 * read directly) or by the profile (read under --source-dir only). */
static void add_frame(struct profile *p, const char *path, int line, bool from_profile)
{
	int64_t name = strtab_intern(&p->strs, "listed"), file = strtab_intern(&p->strs, path);
	int64_t fn = name < 0 || file < 0 ? -1 :
		     profile_function(p, (uint32_t)name, 0, (uint32_t)file, line);
	int64_t loc = profile_location(p, 0xfff0000000000000ULL + (uint64_t)line, true, UINT32_MAX);
	struct pf_line ln = { .function = (uint32_t)fn, .file = (uint32_t)file, .line = line };
	int64_t id = fn < 0 || loc < 0 ? -1 : profile_add_line(p, &ln);
	if (id < 0)
		return;
	p->locs[loc].line0 = (uint32_t)id;
	p->locs[loc].nlines = 1;
	p->locs[loc].sym = from_profile ? PF_SYM_PROFILE : PF_SYM_DWARF;
	uint32_t stack = (uint32_t)loc;
	int64_t s = profile_sample(p, &stack, 1);
	if (s >= 0)
		p->samples[s].v[PF_INUSE_SPACE] += 8;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct profile p;
	char err[1024];
	size_t len = 0;
	char *dump = make_dump(data, size, &len);
	profile_init(&p);
	if (dump && !parse_buffer(&p, "fuzz.heap", dump, len, NULL, err, sizeof(err))) {
		struct symcache *sc = symcache_new(&(struct symcache_options){ .debuginfo_dirs = dirs });
		struct symbolize_options so = { .symcache_opts = { .debuginfo_dirs = dirs },
						.ranges = size && (data[0] & 1) };
		struct symbolize_stats st;
		if (sc && !symbolize_profile(&p, sc, &so, &st, err, sizeof(err))) {
			for (size_t i = 0; i + 2 <= size && i < 64; i += 2)
				add_frame(&p, paths[data[i] % npaths], data[i + 1] % 5,
					  (data[i + 1] & 0x80) != 0);
			struct aggregate a;
			struct agg_options o = { .value = PF_INUSE_SPACE, .gran = GRAN_FUNCTIONS };
			FILE *null = fopen("/dev/null", "we");
			memset(&a, 0, sizeof(a));
			if (null && !aggregate_build(&a, &p, &o) && !aggregate_sort(&a, false)) {
				struct report r = {
					.p = &p, .a = &a, .value = PF_INUSE_SPACE, .units = UNITS_BYTES,
					.list = ".", .source_dirs = size > 1 && (data[1] & 1) ? dirs : NULL,
				};
				output_list(null, &r, err, sizeof(err));
			}
			aggregate_release(&a);
			if (null)
				fclose(null);
		}
		symcache_free(sc);
	}
	free(dump);
	profile_release(&p);
	return 0;
}

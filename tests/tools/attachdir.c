/* attachdir PID NAME: cli/attachdir.c's dump folder for process PID,
 * with the process's part played by the test (tests/t0840): prints the
 * file name the process would write ("target PATH"), waits for a line on
 * standard input (meanwhile the test, as the process's user, writes or
 * plants what it likes there), then takes the file back as jheap does
 * and prints "dump PATH", or "refused MESSAGE" (exit 1). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/attachdir.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: attachdir PID NAME\n");
		return 2;
	}
	struct attachdir d;
	char err[2048], path[PATH_MAX + 256], line[64];
	if (attachdir_prepare(&d, (pid_t)atoi(argv[1]), err, sizeof(err))) {
		printf("refused %s\n", err);
		attachdir_release(&d);
		return 1;
	}
	printf("target %s\n", d.target);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin)) {
		attachdir_release(&d);
		return 2;
	}
	int rc = attachdir_finish(&d, argv[2], path, sizeof(path), err, sizeof(err));
	attachdir_release(&d);
	if (rc) {
		printf("refused %s\n", err);
		return 1;
	}
	printf("dump %s\n", path);
	return 0;
}

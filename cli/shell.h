/*
 * shell: jheap's interactive mode, jeprof's and pprof's shell on the model
 * in memory.  Reports are commands (top, text, list, disasm, traces, tree,
 * peek, web, weblist, flamegraph, dot, proto, ...), the options that shape
 * them are settings (focus=RE, inuse_objects, lines, nodecount=N, cum,
 * thread=N, base=FILE, ...) that apply to the commands after them, and
 * each command writes exactly what the one-shot option with the same
 * settings writes, through the same driver functions.
 */
#ifndef JHEAP_SHELL_H
#define JHEAP_SHELL_H

#include <stdbool.h>
#include "cli/driver.h"

/* Whether the command line asks for the shell: no output format, no -o,
 * no --growth, and standard input and output are terminals, or
 * --interactive. */
bool shell_wanted(const struct cli *c);

/* Reads and runs commands until "quit" or the end of input, on the model
 * D has loaded from its command line.  Returns an exit status: that of the
 * loading (the commands' own errors are reported as they happen). */
int shell_run(struct driver *d);

#endif

/*
 * help.h: the dnsnap tool's help texts, one per command, and the overview.
 * doc/dnsnap.1 says the same at length; keep the two in step.
 */
#ifndef DNSNAP_CLI_HELP_H
#define DNSNAP_CLI_HELP_H

#include <stdio.h>

/**
 * The full help of one command, as `dnsnap help CMD` and `dnsnap CMD --help`
 * print it: usage lines, what the command does, its options with their
 * defaults, exit codes where they differ from the usual ones, examples.
 * Lines fit in 80 columns; the text ends with a newline.
 *
 * @param cmd  a command name ("dump"); NULL is taken as unknown
 * @return a static string (never free it), or NULL for an unknown command
 */
const char *help_command(const char *cmd);

/**
 * Print the overview (`dnsnap help`, `dnsnap --help`): usage, a one-line
 * summary per command, where to find more, the argument conventions, the exit
 * codes, progress output and the environment.
 */
void help_overview(FILE *f);

#endif

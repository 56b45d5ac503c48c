/*
 * main.c: the dnsnap command-line tool: the command table and dispatch. One
 * file per command (cli/CMD.c, cmd_CMD()); what they share is in cli.h. The
 * tool uses only the public headers.
 *
 * Exit codes, like grep: 0 success, 1 nothing found, 2 bad usage or bad data.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "help.h"
#include "lazy.h"

/* ldns: the commands that print records or parse names and types with it
 * open it before they start (cli/lazy.h), so that a missing library stops
 * them before they write anything; the others, serve first, start without.
 * libpcap opens at the first capture `load` reads, libmicrohttpd with
 * `serve --metrics`. */
static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	int ldns;
} commands[] = {
	{ "demo", cmd_demo, 1 },     { "encode", cmd_encode, 0 }, { "decode", cmd_decode, 1 },
	{ "info", cmd_info, 0 },     { "verify", cmd_verify, 0 }, { "get", cmd_get, 1 },
	{ "dump", cmd_dump, 1 },     { "diff", cmd_diff, 1 },     { "purge", cmd_purge, 1 },
	{ "stats", cmd_stats, 1 },   { "load", cmd_load, 1 },     { "export", cmd_export, 1 },
	{ "import", cmd_import, 0 }, { "serve", cmd_serve, 0 },    { "control", cmd_control, 0 },
};

static int run(int argc, char **argv)
{
	if (argc < 2)
		return help_overview(stderr), EXIT_USAGE;
	const char *cmd = argv[1];
	if (strcmp(cmd, "--version") == 0) {
		/* the library's version, and the formats it reads and writes */
		printf("dnsnap %s (entries and export stream %s, snapshots %d.%d)\n", DNSNAP_VERSION,
		       dnsnap_format_version(), DNSNAP_SNAP_MAJOR, DNSNAP_SNAP_MINOR);
		return 0;
	}
	if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
	    (strcmp(cmd, "help") == 0 && argc == 2))
		return help_overview(stdout), 0;
	/* CMD ... --help (or -h) ...: the command's help, before anything else */
	for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++)
		if ((strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) &&
		    help_command(cmd) != NULL)
			return fputs(help_command(cmd), stdout), 0;
	if (strcmp(cmd, "help") == 0) {
		const char *h = help_command(argv[2]);
		if (argc > 3)
			return fail("help", NULL, "takes one command");
		if (h == NULL)
			return fail("help", NULL, "unknown command '%s' (dnsnap help lists them)",
				    argv[2]);
		return fputs(h, stdout), 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(cmd, commands[i].name) != 0)
			continue;
		const char *why = commands[i].ldns ? lazy_ldns() : NULL;
		if (why != NULL)
			return fail(cmd, NULL, "%s", why);
		return commands[i].run(argc - 1, argv + 1);
	}
	fprintf(stderr, "dnsnap: unknown command '%s' (dnsnap help lists them)\n", cmd);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	int rc = run(argc, argv);
	/* what went to standard output is the result: a write that failed (a full
	 * disk, /dev/full) is an error, never exit 0 with the output lost */
	errno = 0;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		const char *cmd = argc > 1 && argv[1][0] != '-' ? argv[1] : NULL;
		fprintf(stderr, "dnsnap%s%s: standard output: %s\n", cmd ? " " : "", cmd ? cmd : "",
			errno ? strerror(errno) : "write error");
		return EXIT_USAGE;
	}
	return rc;
}

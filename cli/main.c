/*
 * main.c: the dnsnap command-line tool: the command table and dispatch. One
 * file per command (cli/CMD.c, cmd_CMD()); what they share is in cli.h. The
 * tool uses only the public headers.
 *
 * Exit codes, like grep: 0 success, 1 nothing found, 2 bad usage or bad data.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "help.h"

int main(int argc, char **argv)
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
	for (int i = 2; i < argc && strcmp(argv[i], "--") != 0; i++) /* before "help CMD" */
		if (strcmp(argv[i], "--help") == 0 && help_command(cmd) != NULL)
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
	if (strcmp(cmd, "demo") == 0)
		return cmd_demo(argc - 1, argv + 1);
	if (strcmp(cmd, "encode") == 0)
		return cmd_encode(argc - 1, argv + 1);
	if (strcmp(cmd, "decode") == 0)
		return cmd_decode(argc - 1, argv + 1);
	if (strcmp(cmd, "info") == 0)
		return cmd_info(argc - 1, argv + 1);
	if (strcmp(cmd, "verify") == 0)
		return cmd_verify(argc - 1, argv + 1);
	if (strcmp(cmd, "get") == 0)
		return cmd_get(argc - 1, argv + 1);
	if (strcmp(cmd, "dump") == 0)
		return cmd_dump(argc - 1, argv + 1);
	if (strcmp(cmd, "diff") == 0)
		return cmd_diff(argc - 1, argv + 1);
	if (strcmp(cmd, "purge") == 0)
		return cmd_purge(argc - 1, argv + 1);
	if (strcmp(cmd, "stats") == 0)
		return cmd_stats(argc - 1, argv + 1);
	if (strcmp(cmd, "load") == 0)
		return cmd_load(argc - 1, argv + 1);
	if (strcmp(cmd, "export") == 0)
		return cmd_export(argc - 1, argv + 1);
	if (strcmp(cmd, "import") == 0)
		return cmd_import(argc - 1, argv + 1);
	if (strcmp(cmd, "serve") == 0) return cmd_serve(argc - 1, argv + 1);
	fprintf(stderr, "dnsnap: unknown command '%s' (dnsnap help lists them)\n", cmd);
	return EXIT_USAGE;
}

/*
 * control: steer a running `dnsnap serve` through its control socket
 * (cli/ctl.h): every server of SNAP, or the one at --control PATH.
 *
 *   dnsnap control [--timeout S] SNAP COMMAND [ARGS...]
 *   dnsnap control [--timeout S] --control PATH COMMAND [ARGS...]
 *
 * COMMAND and ARGS go to the server as they are; the server parses them
 * (cli/serve/control.c) and its output comes back as if it were this
 * command's. With several servers (a deploy), each is asked in turn, and
 * the exit status is the worst of theirs. --timeout bounds the whole (all
 * the servers, default CTL_TOTAL_S); a server silent for CTL_SILENCE_MS
 * (not even its "w" keepalive) is given up.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctl.h"

static const char CMD[] = "control";

/* Ask every server in @p socks by @p end (ms); @return the worst exit status */
static int ask_all(char socks[][CTL_PATH_MAX], int n, int argc, char **argv, int64_t end)
{
	int worst = 0, json = 0;
	for (int i = 0; i < argc; i++)
		json |= strcmp(argv[i], "--json") == 0;
	for (int i = 0; i < n; i++) {
		char why[CTL_PATH_MAX + 512];
		if (n > 1 && !json) {
			const char *pid = strrchr(socks[i], '.');
			printf("%sserver %s (%s):\n", i ? "\n" : "", pid ? pid + 1 : "?", socks[i]);
			fflush(stdout);
		}
		struct ctl_bounds b = { CTL_SILENCE_MS, end - ctl_now_ms() };
		int rc = b.total_ms <= 0 ? -1 : ctl_call(socks[i], argc, argv, stdout, stderr, &b,
							  why, sizeof why);
		fflush(stdout);
		if (b.total_ms <= 0)
			snprintf(why, sizeof why, "%.*s: not asked: --timeout spent", CTL_PATH_MAX, socks[i]);
		if (rc == CTL_DEAD)
			snprintf(why, sizeof why, "%.*s: no server listens there (a dead socket)", CTL_PATH_MAX,
				 socks[i]);
		if (rc < 0)
			rc = fail(CMD, NULL, "%s", why);
		if (rc > worst)
			worst = rc;
	}
	return worst;
}

int cmd_control(int argc, char **argv)
{
	static char socks[CTL_SERVERS_MAX][CTL_PATH_MAX];
	int i = 1, n;
	unsigned long long timeout = CTL_TOTAL_S;
	if (argc > i && strncmp(argv[i], "--timeout", 9) == 0) {
		const char *v = argv[i][9] == '=' ? argv[i] + 10 : argv[i][9] == 0 && argc > i + 1
			? argv[++i] : NULL;
		if (v == NULL || number(CMD, "--timeout", v, 86400, &timeout) || timeout == 0)
			return v == NULL || timeout == 0 ? fail(CMD, NULL, "--timeout needs seconds, "
								 "1 to 86400 (dnsnap help control)")
				: EXIT_USAGE;
		i++;
	}
	if (argc > i && strncmp(argv[i], "--control", 9) == 0) {
		const char *p = argv[i][9] == '=' ? argv[i] + 10 : argv[i][9] == 0 && argc > i + 1
			? argv[++i] : NULL;
		if (p == NULL || p[0] == 0)
			return fail(CMD, NULL, "--control needs a socket's path");
		if (strlen(p) >= CTL_PATH_MAX)
			return fail(CMD, p, "--control: a path of at most %d bytes", CTL_PATH_MAX - 1);
		snprintf(socks[0], CTL_PATH_MAX, "%s", p);
		n = 1;
		i++;
	} else {
		if (argc <= i || argv[i][0] == '-')
			return fail(CMD, NULL, "needs a snapshot (or --control PATH), then a command: "
				    "status, publish, flush, dump, reload, log-level");
		char err[512];
		n = ctl_find(argv[i], socks, stderr, err, sizeof err);
		if (n < 0)
			return fail(CMD, NULL, "%s", err);
		if (n == 0) {
			fprintf(stderr, "dnsnap %s: %s: no dnsnap serve answers for it (no control "
				"socket beside it)\n", CMD, argv[i]);
			return EXIT_NONE;
		}
		i++;
	}
	if (i >= argc)
		return fail(CMD, NULL, "needs a command: status, publish, flush, dump, reload, "
			    "log-level");
	if (argc - i >= CTL_ARGS_MAX)
		return fail(CMD, NULL, "at most %d arguments", CTL_ARGS_MAX - 1);
	for (int k = i; k < argc; k++)
		if (strchr(argv[k], '\n') != NULL || strlen(argv[k]) >= CTL_ARG_MAX)
			return fail(CMD, NULL, "an argument holds a newline or is over %d bytes",
				    CTL_ARG_MAX - 1);
	return ask_all(socks, n, argc - i, argv + i, ctl_now_ms() + 1000ll * (int64_t)timeout);
}

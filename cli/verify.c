/*
 * verify: every page and entry of a snapshot checked, with a report.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int cmd_verify(int argc, char **argv)
{
	if (argc != 2)
		return fail("verify", NULL, "needs one snapshot");
	dnsnap_snap_t *s;
	if (open_snap("verify", argv[1], &s))
		return EXIT_USAGE;
	dnsnap_diag_t d;
	dnsnap_snap_info_t in;
	dnsnap_snap_info(s, &in);
	progress_t pg;
	int err = dnsnap_snap_verify(s, progress_start(&pg, "verify"), &d);
	progress_end(&pg);
	dnsnap_snap_close(s);
	if (err != DNSNAP_OK)
		return fail("verify", NULL, "%s (%s)", d.msg, dnsnap_errname(err));
	printf("%s: good: %llu entries, digest %016llx\n", argv[1],
	       (unsigned long long)in.entry_count, (unsigned long long)in.digest);
	return 0;
}

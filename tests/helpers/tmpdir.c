/* tmpdir.c: see tmpdir.h. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tmpdir.h"

int tmpdir_make(char *dir, size_t cap, const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	if (snprintf(dir, cap, "%s/dnsnap-%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", tag) >= (int)cap)
		return -1;
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return -1;
	}
	return 0;
}

const char *tmpdir_path(const char *dir, const char *name)
{
	static char p[2][4096];
	static int k;
	k ^= 1;
	snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
	return p[k];
}

int tmpdir_remove(const char *dir)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return -1;
	char path[4096];
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	return rmdir(dir);
}

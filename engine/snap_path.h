/*
 * snap_path.h: where a snapshot is published (snap_path.c): the file a path
 * finally names through symbolic links, and the writers' lock. Not installed.
 */
#ifndef DNSNAP_SNAP_PATH_H
#define DNSNAP_SNAP_PATH_H

#include <stddef.h>

/**
 * The file @p path finally names: symbolic links followed (at most 40 hops),
 * a relative link read from its link's directory. The file need not exist
 * (a dangling link gives its target). @return 0, -ELOOP, -ENAMETOOLONG, -errno
 */
int dnsnap__path_target(const char *path, char *out, size_t cap);

#endif

/*
 * tmpdir.h: a fresh directory for a test's files, and its removal.
 */
#ifndef DNSNAP_TEST_TMPDIR_H
#define DNSNAP_TEST_TMPDIR_H

#include <stddef.h>

/** Make $TMPDIR (or /tmp) /dnsnap-TAG.XXXXXX into @p dir. @return 0 or -1 */
int tmpdir_make(char *dir, size_t cap, const char *tag);

/** Remove @p dir and the files in it (not subdirectories). @return 0 or -1 */
int tmpdir_remove(const char *dir);

/** DIR/NAME in a static buffer; two in turn, so two paths can be one call's
 * arguments. */
const char *tmpdir_path(const char *dir, const char *name);

#endif

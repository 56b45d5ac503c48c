/*
 * lazy.c: dlopen() at the first use of a library only some commands need
 * (lazy.h). Why not a second executable for those commands: they are most of
 * the tool (get, dump, diff, load, export, stats, purge print or parse with
 * ldns), serve alone needs none of them, and one file stays one file to
 * install. Why not plain linking with -Wl,--as-needed: the tool does use the
 * libraries, so the linker keeps them, and ld.so loads and relocates every
 * DT_NEEDED library at exec whether a command calls it or not.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "lazy.h"

/* Loads are rare and short: one lock for them all. */
static pthread_mutex_t loading = PTHREAD_MUTEX_INITIALIZER;

static int load(lazy_lib_t *lib)
{
	const char *env = getenv(lib->env);
	const char *so = env != NULL && env[0] != '\0' ? env : lib->soname;
	const char *pkg = lib->package;
	/* the library stays open until exit: its functions are in the table */
	void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *why = dlerror();
		snprintf(lib->msg, sizeof lib->msg, "cannot load %s%s%s%s: %s", lib->name,
			 pkg[0] ? " (Debian package " : "", pkg, pkg[0] ? ")" : "",
			 why != NULL ? why : so);
		return -1;
	}
	/* every function or none: a stub never finds half a table */
	for (size_t i = 0; i < lib->n; i++)
		if (dlsym(h, lib->names[i]) == NULL) {
			snprintf(lib->msg, sizeof lib->msg, "cannot load %s: %s has no %s (another "
				 "version?)", lib->name, so, lib->names[i]);
			return -1;
		}
	for (size_t i = 0; i < lib->n; i++)
		__atomic_store_n(&lib->fns[i], dlsym(h, lib->names[i]), __ATOMIC_RELEASE);
	return 1;
}

int lazy_load(lazy_lib_t *lib)
{
	pthread_mutex_lock(&loading);
	if (lib->state == 0)
		lib->state = load(lib);
	int st = lib->state;
	pthread_mutex_unlock(&loading);
	return st == 1 ? 0 : -1;
}

void *lazy_fn(lazy_lib_t *lib, size_t i)
{
	void *f = __atomic_load_n(&lib->fns[i], __ATOMIC_ACQUIRE);
	if (f != NULL)
		return f;
	if (lazy_load(lib) != 0) {
		fprintf(stderr, "dnsnap: %s\n", lib->msg);
		exit(2);
	}
	return lib->fns[i];
}

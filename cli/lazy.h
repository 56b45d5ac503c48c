/*
 * lazy.h: the libraries only some commands need (ldns, libpcap,
 * libmicrohttpd), opened with dlopen() when one of those commands runs, so
 * that `dnsnap serve` and the other commands start without them and the ten
 * libraries they pull in (OpenSSL, GnuTLS, D-Bus, systemd...).
 *
 * Each library has a file of stubs (lazy_ldns.c, lazy_pcap.c, lazy_mhd.c):
 * functions of the library's own names and prototypes (checked against its
 * header) that call the library's function through a table filled at the
 * first call. The code that uses the library is unchanged, and linked with
 * the library itself it works as well (the unit tests do that). Only the
 * tool links the stubs, never the library beside them.
 *
 * The soname each stub file opens is the one the linker records for -lLIB
 * at build time (the Makefile finds it); DNSNAP_SONAME_LDNS,
 * DNSNAP_SONAME_PCAP and DNSNAP_SONAME_MICROHTTPD override it (the tests
 * name a missing one).
 */
#ifndef DNSNAP_LAZY_H
#define DNSNAP_LAZY_H

#include <stddef.h>
#include <string.h>

typedef struct lazy_lib {
	const char *name;                /* for messages: ldns */
	const char *soname;              /* the build's: libldns.so.3 */
	const char *env;                 /* its override: DNSNAP_SONAME_LDNS */
	const char *package;             /* the Debian package, "" when unknown */
	const char *const *names;        /* the functions the stubs call */
	void **fns;                      /* their addresses, once loaded */
	size_t n;
	int state;                       /* 0 not tried, 1 loaded, -1 failed (msg) */
	char msg[384];                   /* why the load failed */
} lazy_lib_t;

#define LAZY_LIB(name_, soname_, env_, package_, names_, fns_)                            \
	{ .name = name_, .soname = soname_, .env = env_, .package = package_, .names = names_,            \
	  .fns = fns_, .n = sizeof names_ / sizeof names_[0], .state = 0, .msg = "" }

/** Open @p lib and find each of its functions, once (thread-safe).
 * @return 0, or -1 and @p lib's msg says why ("cannot load ldns (Debian package
 *         libldns3): libldns.so.3: cannot open shared object file: ...") */
int lazy_load(lazy_lib_t *lib);

/** Function @p i of @p lib for a stub: loads @p lib at the first call; when it
 * cannot be loaded, prints its msg and exits 2 (a command that loaded it
 * first, as the tool's main() does, never gets there). */
void *lazy_fn(lazy_lib_t *lib, size_t i);

/*
 * The stubs of a library, one file each: its list, LIST(F, V), names each
 * function once, as F(RET, NAME, (PARAMS), (ARGS)), or V(NAME, (PARAMS),
 * (ARGS)) when it returns void; LAZY_STUBS(LIST, NAME, SONAME, ENV, PACKAGE)
 * defines the file's library (static lazy_lib_t lazy_this), its table and a
 * function NAME per entry that calls the library's. The library's header is
 * included first: its prototypes check the stubs'. The slot's void * is
 * copied into the function pointer (memcpy): POSIX makes dlsym()'s result
 * usable so, and ISO C has no cast between the two.
 */
#define LAZY_ENUM_F(ret, name, params, args) LAZY_I_##name,
#define LAZY_ENUM_V(name, params, args) LAZY_I_##name,
#define LAZY_NAME_F(ret, name, params, args) #name,
#define LAZY_NAME_V(name, params, args) #name,
#define LAZY_STUB_F(ret, name, params, args)                                              \
	ret name params                                                                    \
	{                                                                                  \
		ret(*f_) params;                                                           \
		void *p_ = lazy_fn(&lazy_this, LAZY_I_##name);                              \
		memcpy(&f_, &p_, sizeof f_);                                               \
		return f_ args;                                                            \
	}
#define LAZY_STUB_V(name, params, args)                                                   \
	void name params                                                                   \
	{                                                                                  \
		void(*f_) params;                                                          \
		void *p_ = lazy_fn(&lazy_this, LAZY_I_##name);                              \
		memcpy(&f_, &p_, sizeof f_);                                               \
		f_ args;                                                                   \
	}
#define LAZY_STUBS(list, name, soname, env, package)                                      \
	enum { list(LAZY_ENUM_F, LAZY_ENUM_V) LAZY_N };                                   \
	static const char *const lazy_names[] = { list(LAZY_NAME_F, LAZY_NAME_V) };       \
	static void *lazy_fns[LAZY_N];                                                    \
	static lazy_lib_t lazy_this =                                                     \
		LAZY_LIB(name, soname, env, package, lazy_names, lazy_fns);               \
	list(LAZY_STUB_F, LAZY_STUB_V)

/* Load one of the three libraries (in its stub file) now, where a failure is
 * reported cleanly. @return NULL once loaded, else why not (lazy_load()) */
const char *lazy_ldns(void);
const char *lazy_pcap(void);
const char *lazy_mhd(void);

#endif

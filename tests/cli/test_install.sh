#!/bin/sh
# make install into a scratch DESTDIR, then use what it installed: the files
# are where they belong, a program builds against the installed header and
# library through the installed pkg-config file and runs, the installed tool
# runs, the man page renders without a warning, and make uninstall removes it
# all. Usage (from the repository root, as tests/run.sh runs it):
#   tests/cli/test_install.sh BUILD
# BUILD is already built (make test and make asan build it first), so the
# install below only copies.
set -u
build=${1:-build}
prefix=/usr/local
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
dest=$root$prefix
fails=0

ok() { echo "ok - $1"; }
not_ok() { # NAME [FILE of details]
	echo "not ok - $1"
	[ $# -gt 1 ] && sed 's/^/#   /' "$2"
	fails=$((fails + 1))
}

# Only this test's variables go to make; -s keeps its output to errors.
if make -s install BUILD="$build" DESTDIR="$root" PREFIX=$prefix >"$tmp/log" 2>&1; then
	ok "make install DESTDIR=... PREFIX=$prefix"
else
	not_ok "make install" "$tmp/log"
	exit 1
fi

for f in bin/dnsnap lib/libdnsnap.a lib/pkgconfig/libdnsnap.pc include/dnsnap.h \
	 include/dnsnap_format.h share/man/man1/dnsnap.1; do
	[ -f "$dest/$f" ] && ok "installed $f" || not_ok "$f not installed"
done
[ -x "$dest/bin/dnsnap" ] || not_ok "bin/dnsnap not executable"
find "$root" -type f ! -path "$dest/*" >"$tmp/stray"
[ -s "$tmp/stray" ] && not_ok "files outside PREFIX" "$tmp/stray"

# The .pc file as installed: PREFIX filled in, nothing left to substitute.
pc=$dest/lib/pkgconfig/libdnsnap.pc
if grep -q '@' "$pc"; then
	not_ok "libdnsnap.pc has unsubstituted @VARS@" "$pc"
elif [ "$(PKG_CONFIG_PATH=${pc%/*} pkg-config --variable=prefix libdnsnap)" != $prefix ]; then
	not_ok "libdnsnap.pc: prefix is not $prefix" "$pc"
else
	ok "libdnsnap.pc names prefix $prefix"
fi
version=$(sed -n 's/^#define DNSNAP_VERSION "\(.*\)"$/\1/p' engine/dnsnap.h)
got=$(PKG_CONFIG_PATH=${pc%/*} pkg-config --modversion libdnsnap 2>&1)
[ "$got" = "$version" ] && ok "pkg-config --modversion: $got" ||
	{ echo "$got" >"$tmp/v"; not_ok "pkg-config --modversion is not $version" "$tmp/v"; }

# Build against the staged tree. PKG_CONFIG_SYSROOT_DIR would also prefix the
# system libraries' paths (-I$root/usr/include); instead, a copy of the .pc
# with only its prefix= line moved into DESTDIR. Every other path must derive
# from ${prefix}, or the build below does not find them.
mkdir "$tmp/pc"
sed "s|^prefix=.*|prefix=$dest|" "$pc" >"$tmp/pc/libdnsnap.pc"
if flags=$(PKG_CONFIG_PATH=$tmp/pc pkg-config --cflags --libs --static libdnsnap 2>"$tmp/err"); then
	ok "pkg-config --cflags --libs --static libdnsnap: $flags"
else
	not_ok "pkg-config --static libdnsnap" "$tmp/err"
fi
cat >"$tmp/prog.c" <<'EOF'
/* Uses the cache (the engine, threads), snapshots (LMDB, xxHash) and the
 * export stream (zstd), so every library the .pc file names is needed. */
#include <stdio.h>

#include <dnsnap.h>

int main(void)
{
	dnsnap_cache_opts_t o;
	dnsnap_cache_t *c;
	dnsnap_snap_t *s;
	dnsnap_diag_t d;

	dnsnap_cache_opts_default(&o);
	if (dnsnap_cache_new(&o, &c) != DNSNAP_OK)
		return 1;
	if (dnsnap_snap_open("/nonexistent/dnsnap.snap", &s, &d) == DNSNAP_OK)
		return 1;
	if (dnsnap_import(-1, "/nonexistent/dnsnap.snap", 0, NULL, NULL, &d) == DNSNAP_OK)
		return 1;
	dnsnap_cache_free(c);
	printf("dnsnap %s (format %s)\n", DNSNAP_VERSION, dnsnap_format_version());
	return 0;
}
EOF
# A sanitizer build's library needs the sanitizer's runtime too.
san=
nm "$dest/lib/libdnsnap.a" 2>/dev/null | grep -q ' U __asan_' &&
	san="-fsanitize=address,undefined"
# shellcheck disable=SC2086 # flags are words
if ${CC:-cc} -std=c11 -Wall -Wextra -Werror $san -o "$tmp/prog" "$tmp/prog.c" $flags \
	>"$tmp/err" 2>&1; then
	ok "a program builds against the installed header and library"
	"$tmp/prog" >"$tmp/prog.out" 2>&1 && ok "it runs: $(cat "$tmp/prog.out")" ||
		not_ok "the program fails" "$tmp/prog.out"
	"$dest/bin/dnsnap" --version >"$tmp/cli.out" 2>&1
	cmp -s "$tmp/prog.out" "$tmp/cli.out" && ok "the installed dnsnap agrees on the version" ||
		not_ok "dnsnap --version differs from the library's" "$tmp/cli.out"
else
	not_ok "building against the installed library" "$tmp/err"
fi

# The man page: groff renders it without a warning; mandoc's linter, if
# installed, finds nothing; man finds it under the installed MANPATH.
page=$dest/share/man/man1/dnsnap.1
if ! command -v groff >/dev/null; then
	not_ok "groff is not installed (make deps installs groff-base)"
elif groff -man -Tutf8 -ww -z "$page" >"$tmp/groff" 2>&1 && [ ! -s "$tmp/groff" ]; then
	ok "groff -man -ww renders dnsnap.1 without a warning"
else
	not_ok "groff warns about dnsnap.1" "$tmp/groff"
fi
if command -v mandoc >/dev/null; then
	mandoc -Tlint -Wwarning "$page" >"$tmp/lint" 2>&1 && ok "mandoc -Tlint: clean" ||
		not_ok "mandoc -Tlint dnsnap.1" "$tmp/lint"
fi
if command -v man >/dev/null; then
	[ "$(MANPATH=$dest/share/man man -w dnsnap 2>/dev/null)" = "$page" ] &&
		ok "man -w dnsnap finds the installed page" ||
		not_ok "man -w dnsnap does not find $page"
fi

if make -s uninstall BUILD="$build" DESTDIR="$root" PREFIX=$prefix >"$tmp/log" 2>&1; then
	find "$root" -type f >"$tmp/left"
	[ -s "$tmp/left" ] && not_ok "make uninstall left files" "$tmp/left" ||
		ok "make uninstall removes every file"
else
	not_ok "make uninstall" "$tmp/log"
fi

[ "$fails" -eq 0 ]

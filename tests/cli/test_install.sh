#!/bin/sh
# make install into a scratch DESTDIR, then use what it installed: exactly the
# files that belong there; the shared library's soname, links and exports (the
# public dnsnap_* functions of the installed headers, nothing else); a program
# that includes <dnsnap/dnsnap.h>, builds a cache, inserts a response and
# answers it, then through a snapshot and the export stream, and makes the
# upstream query for it and a forwarder (<dnsnap/forward.h>), built through
# the installed pkg-config file once against the shared library and once
# statically; the installed tool runs; the man page renders without a warning;
# make uninstall removes it all. Usage (from the repository root, as
# tests/run.sh runs it):
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
lib=$dest/lib
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

# Exactly these files and links, nothing else (no header at the top of include/,
# nothing outside PREFIX, not the tool's own ingest library).
version=$(sed -n 's/^#define DNSNAP_VERSION "\(.*\)"$/\1/p' engine/dnsnap.h)
soname=libdnsnap.so.$(sed -n 's/^SOVERSION *= *//p' Makefile)
sofile=$soname.${version#*.}
cat >"$tmp/want" <<EOF
.$prefix/bin/dnsnap
.$prefix/include/dnsnap/dnsnap.h
.$prefix/include/dnsnap/dnsnap_format.h
.$prefix/include/dnsnap/forward.h
.$prefix/lib/libdnsnap.a
.$prefix/lib/libdnsnap.so
.$prefix/lib/$soname
.$prefix/lib/$sofile
.$prefix/lib/pkgconfig/libdnsnap.pc
.$prefix/share/man/man1/dnsnap.1
EOF
(cd "$root" && find . ! -type d | LC_ALL=C sort) >"$tmp/got"
diff -u "$tmp/want" "$tmp/got" >"$tmp/diff" && ok "installed: $(wc -l <"$tmp/got") files and links" ||
	not_ok "the installed files differ (+ got, - want)" "$tmp/diff"
[ -x "$dest/bin/dnsnap" ] || not_ok "bin/dnsnap not executable"

# The shared library: its links, its soname, and its exports are the functions
# the installed headers declare (after the preprocessor, the declarations at file
# level), no fewer, and no more (the engine's dnsnap__* internals stay local).
if [ "$(readlink "$lib/libdnsnap.so")" = $soname ] && [ "$(readlink "$lib/$soname")" = "$sofile" ] &&
   [ -f "$lib/$sofile" ] && [ ! -L "$lib/$sofile" ]; then
	ok "libdnsnap.so -> $soname -> $sofile"
else
	ls -l "$lib" >"$tmp/ls"
	not_ok "the shared library's links" "$tmp/ls"
fi
got=$(readelf -d "$lib/$sofile" 2>&1 | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
[ "$got" = $soname ] && ok "soname $got" || not_ok "soname is '$got', not $soname"
headers="dnsnap.h forward.h"   # every installed header but dnsnap_format.h (dnsnap.h has it)
# shellcheck disable=SC2046 # one -include per header
${CC:-cc} -E -std=c11 -I"$dest/include" $(for h in $headers; do echo "-include dnsnap/$h"; done) \
	-x c /dev/null 2>"$tmp/err" |
python3 -c '
import re, sys
src = re.sub(r"^#.*$", "", sys.stdin.read(), flags=re.M)
flat, depth = [], 0
for ch in src:                # file level only: struct and inline bodies go
    if ch == "{":
        depth += 1
    elif ch == "}":
        depth -= 1
        if depth == 0:
            flat.append(";")
    elif depth == 0:
        flat.append(ch)
names = set()
for decl in "".join(flat).split(";"):
    d = " ".join(decl.split())
    m = re.search(r"\b(dnsnap_\w+)\s*\(", d)
    if m and not d.startswith(("typedef", "static")):
        names.add(m.group(1))
    m = re.match(r"extern\b[^(]*\b(dnsnap_\w+)$", d)   # data: the tier tables
    if m:
        names.add(m.group(1))
print("\n".join(sorted(names)))' >"$tmp/declared"
nm -D --defined-only "$lib/$sofile" | awk '{ print $NF }' | LC_ALL=C sort >"$tmp/exported"
n=$(grep -c . "$tmp/declared")
if [ "$n" -lt 40 ]; then
	cat "$tmp/err" >>"$tmp/declared"
	not_ok "only $n functions found in the installed headers" "$tmp/declared"
elif diff -u "$tmp/declared" "$tmp/exported" >"$tmp/diff"; then
	ok "nm -D: exactly the $n functions (and tables) the installed headers declare"
else
	not_ok "exported (+) differ from the headers' functions (-)" "$tmp/diff"
fi
nm "$lib/$sofile" | grep -q ' t dnsnap__cache_pin$' &&
	ok "dnsnap__cache_pin (an internal) is in the library, local" ||
	not_ok "dnsnap__cache_pin is not a local symbol of the shared library"

# The .pc file as installed: PREFIX filled in, nothing left to substitute.
pc=$lib/pkgconfig/libdnsnap.pc
if grep -q '@' "$pc"; then
	not_ok "libdnsnap.pc has unsubstituted @VARS@" "$pc"
elif [ "$(PKG_CONFIG_PATH=${pc%/*} pkg-config --variable=prefix libdnsnap)" != $prefix ]; then
	not_ok "libdnsnap.pc: prefix is not $prefix" "$pc"
else
	ok "libdnsnap.pc names prefix $prefix"
fi
got=$(PKG_CONFIG_PATH=${pc%/*} pkg-config --modversion libdnsnap 2>&1)
[ "$got" = "$version" ] && ok "pkg-config --modversion: $got" ||
	{ echo "$got" >"$tmp/v"; not_ok "pkg-config --modversion is not $version" "$tmp/v"; }

# Build against the staged tree. PKG_CONFIG_SYSROOT_DIR would also prefix the
# system libraries' paths (-I$root/usr/include), and --define-prefix would
# relocate theirs too (lmdb.pc in lib/x86_64-linux-gnu/pkgconfig); instead, a
# copy of the .pc with only its prefix= line moved into DESTDIR. Every other
# path must derive from ${prefix}, or the builds below do not find them.
mkdir "$tmp/pc"
sed "s|^prefix=.*|prefix=$dest|" "$pc" >"$tmp/pc/libdnsnap.pc"
# shared: libdnsnap alone (its own dependencies are in its NEEDED entries)
want="-I$dest/include -L$lib -ldnsnap"
shared=$(PKG_CONFIG_PATH=$tmp/pc pkg-config --cflags --libs libdnsnap 2>&1 | sed 's/ *$//')
[ "$shared" = "$want" ] && ok "pkg-config --cflags --libs libdnsnap: $shared" ||
	{ echo "$shared" >"$tmp/f"; not_ok "pkg-config --cflags --libs is not '$want'" "$tmp/f"; }
# static: and what it needs, after it
static=$(PKG_CONFIG_PATH=$tmp/pc pkg-config --static --cflags --libs libdnsnap 2>&1 | sed 's/ *$//')
case " $static " in
*" -ldnsnap "*-llmdb*) ;;
*) static="$static (no -llmdb after -ldnsnap)" ;;
esac
for l in -llmdb -lzstd -lxxhash -pthread; do
	case " $static " in *" $l "*) ;; *) static="$static (no $l)" ;; esac
done
case $static in
*"(no "*) echo "$static" >"$tmp/f"; not_ok "pkg-config --static --libs libdnsnap" "$tmp/f" ;;
*) ok "pkg-config --static --cflags --libs libdnsnap: $static" ;;
esac

cat >"$tmp/prog.c" <<'EOF'
/* Uses the cache (the engine, threads), a snapshot (LMDB, xxHash) and the
 * export stream (zstd), so every library the .pc file names is needed: a
 * response is inserted, then the query is answered from the cache, from a
 * snapshot of it, and from the snapshot its export stream imports into.
 * Then the forwarder: the upstream query for it, its reply check, and a
 * forwarder made and freed (nothing is sent). */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dnsnap/dnsnap.h>
#include <dnsnap/forward.h>
#include <netinet/in.h>

#define QNAME 3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0
#define NOW 1800000000u

static const uint8_t response[] = {
	0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0, /* QR RD RA, 1 question, 1 answer */
	QNAME, 0, 1, 0, 1,                              /* www.example.com. IN A */
	0xc0, 12, 0, 1, 0, 1, 0, 0, 0x01, 0x2c,         /* TTL 300 */
	0, 4, 192, 0, 2, 1,
};
static const uint8_t query[] = {
	0x43, 0x21, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, QNAME, 0, 1, 0, 1,
};

static int fail(const char *what, int err, const dnsnap_diag_t *d)
{
	fprintf(stderr, "%s: %s%s%s\n", what, dnsnap_strerror(err), d ? ": " : "",
		d ? d->msg : "");
	return 1;
}

/* The answer's last record: "TTL a.b.c.d" */
static void show(const char *from, const uint8_t *a, size_t n)
{
	const uint8_t *t = a + n - 10, *ip = a + n - 4;

	printf("%s: id %02x%02x, %u answer, ttl %u, %u.%u.%u.%u\n", from, a[0], a[1],
	       (unsigned)a[7], (unsigned)(t[0] << 24 | t[1] << 16 | t[2] << 8 | t[3]),
	       ip[0], ip[1], ip[2], ip[3]);
}

static void done(void *arg, enum dnsnap_fwd_result r, const uint8_t *reply, size_t len,
		 void *const *waiters, size_t n)
{
	(void)arg, (void)r, (void)reply, (void)len, (void)waiters, (void)n;
}

static void rejected(void *arg, void *waiter, int why)
{
	(void)arg, (void)waiter, (void)why;
}

/* The upstream query for @p q, its own reply accepted, a forwarder for
 * 127.0.0.1:53 made and freed. */
static int forward(const dnsnap_query_t *q)
{
	uint8_t m[DNSNAP_FWD_QUERY_MAX];
	size_t n = dnsnap_fwd_build_query(q, 0x1234, NULL, m, sizeof m);
	if (n == 0)
		return fail("dnsnap_fwd_build_query", DNSNAP_ENOSPC, NULL);
	m[2] |= 0x80;   /* QR: the query as its own reply */
	dnsnap_fwd_opts_t o = { .nup = 1 };
	struct sockaddr_in *a = (struct sockaddr_in *)&o.up[0].addr;
	a->sin_family = AF_INET;
	a->sin_port = htons(53);
	a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	o.up[0].addr_len = sizeof *a;
	dnsnap_fwd_hooks_t h = { .done = done, .rejected = rejected };
	dnsnap_fwd_t *f;
	dnsnap_diag_t d;
	int err = dnsnap_fwd_new(&o, &h, &f, &d);
	if (err != DNSNAP_OK)
		return fail("dnsnap_fwd_new", err, &d);
	printf("forward: a query of %zu bytes, its reply accepted %d, timeout %d\n", n,
	       dnsnap_fwd_reply_matches(m, n, m, n, 0), dnsnap_fwd_timeout_ms(f));
	dnsnap_fwd_free(f);
	return 0;
}

int main(int argc, char **argv)
{
	static dnsnap_encoded_t scratch;
	char snap[4096], snap2[4096], stream[4096];
	dnsnap_cache_t *c;
	dnsnap_snap_t *s;
	dnsnap_query_t q;
	dnsnap_diag_t d;
	uint8_t out[512];
	size_t n;
	int err, fd;

	if (argc != 2)
		return 2;
	snprintf(snap, sizeof snap, "%s/a.snap", argv[1]);
	snprintf(snap2, sizeof snap2, "%s/b.snap", argv[1]);
	snprintf(stream, sizeof stream, "%s/a.dnsx", argv[1]);
	printf("dnsnap %s (entries and export stream %s, snapshots %d.%d)\n", DNSNAP_VERSION,
	       dnsnap_format_version(), DNSNAP_SNAP_MAJOR, DNSNAP_SNAP_MINOR);

	if ((err = dnsnap_cache_new(NULL, &c)) != DNSNAP_OK)
		return fail("dnsnap_cache_new", err, NULL);
	err = dnsnap_cache_insert(c, response, sizeof response, NOW, NULL, 0, &scratch, &d);
	if (err != DNSNAP_OK)
		return fail("dnsnap_cache_insert", err, &d);
	if ((err = dnsnap_query_parse(query, sizeof query, NULL, 0, &q, &d)) != DNSNAP_OK)
		return fail("dnsnap_query_parse", err, &d);
	err = dnsnap_cache_answer(c, &q, NOW + 100, 0, out, sizeof out, &n);
	if (err != DNSNAP_OK)
		return fail("dnsnap_cache_answer", err, NULL);
	show("cache", out, n);

	if ((err = dnsnap_snap_write(c, snap, NOW + 100, NULL, &d)) != DNSNAP_OK)
		return fail("dnsnap_snap_write", err, &d);
	dnsnap_cache_free(c);
	if ((err = dnsnap_snap_open(snap, &s, &d)) != DNSNAP_OK)
		return fail("dnsnap_snap_open", err, &d);
	if ((err = dnsnap_snap_answer(s, &q, NOW + 200, 0, out, sizeof out, &n)) != DNSNAP_OK)
		return fail("dnsnap_snap_answer", err, NULL);
	show("snapshot", out, n);

	if ((fd = open(stream, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0)
		return fail(stream, DNSNAP_EINVAL, NULL);
	err = dnsnap_export_write(s, fd, 0, 0, NULL, &d);
	close(fd);
	dnsnap_snap_close(s);
	if (err != DNSNAP_OK)
		return fail("dnsnap_export_write", err, &d);
	if ((fd = open(stream, O_RDONLY)) < 0)
		return fail(stream, DNSNAP_EINVAL, NULL);
	err = dnsnap_import(fd, snap2, NOW + 250, NULL, NULL, &d);
	close(fd);
	if (err != DNSNAP_OK)
		return fail("dnsnap_import", err, &d);
	if ((err = dnsnap_snap_open(snap2, &s, &d)) != DNSNAP_OK)
		return fail("dnsnap_snap_open", err, &d);
	if ((err = dnsnap_snap_answer(s, &q, NOW + 250, 0, out, sizeof out, &n)) != DNSNAP_OK)
		return fail("dnsnap_snap_answer", err, NULL);
	show("imported", out, n);
	dnsnap_snap_close(s);
	return forward(&q);
}
EOF
cat >"$tmp/prog.want" <<EOF
dnsnap $version (entries and export stream 1.0, snapshots 2.1)
cache: id 4321, 1 answer, ttl 200, 192.0.2.1
snapshot: id 4321, 1 answer, ttl 100, 192.0.2.1
imported: id 4321, 1 answer, ttl 50, 192.0.2.1
forward: a query of 44 bytes, its reply accepted 1, timeout -1
EOF
"$dest/bin/dnsnap" --version >"$tmp/cli.out" 2>&1
head -1 "$tmp/prog.want" | cmp -s - "$tmp/cli.out" &&
	ok "the installed dnsnap: $(cat "$tmp/cli.out")" ||
	not_ok "dnsnap --version is not '$(head -1 "$tmp/prog.want")'" "$tmp/cli.out"

# A sanitizer build's library needs the sanitizer's runtime too.
san=
nm "$lib/libdnsnap.a" 2>/dev/null | grep -q ' U __asan_' && san="-fsanitize=address,undefined"

# run NAME BINARY [ENV...]: the program answers as expected
run() {
	name=$1 bin=$2
	shift 2
	mkdir -p "$tmp/run.$name"
	if env "$@" "$bin" "$tmp/run.$name" >"$tmp/prog.out" 2>&1 &&
	   diff -u "$tmp/prog.want" "$tmp/prog.out" >"$tmp/diff"; then
		ok "it runs ($name): cache, snapshot and import answer; the forwarder's query"
	else
		cat "$tmp/prog.out" >>"$tmp/diff"
		not_ok "the $name program's output (+) is not the expected (-)" "$tmp/diff"
	fi
}

# Against the shared library: it records the soname, and ld.so finds that in
# the installed lib/ (LD_LIBRARY_PATH: DESTDIR is not in ld.so's paths).
# shellcheck disable=SC2086 # flags are words
if ${CC:-cc} -std=c11 -Wall -Wextra -Werror $san -o "$tmp/prog" "$tmp/prog.c" $shared \
	>"$tmp/err" 2>&1; then
	ok "a program builds against the installed header and shared library"
	needed=$(readelf -d "$tmp/prog" | sed -n 's/.*(NEEDED).*\[\(libdnsnap.*\)\]$/\1/p')
	[ "$needed" = $soname ] && ok "it needs $needed" ||
		not_ok "the program needs '$needed', not $soname"
	LD_LIBRARY_PATH=$lib ldd "$tmp/prog" >"$tmp/ldd" 2>&1
	grep -q "^[[:space:]]*$soname => $lib/$soname " "$tmp/ldd" &&
		ok "ldd: $soname => DESTDIR$prefix/lib/$soname" ||
		not_ok "ldd does not resolve $soname to $lib" "$tmp/ldd"
	run shared "$tmp/prog" LD_LIBRARY_PATH="$lib"
else
	not_ok "building against the installed shared library" "$tmp/err"
fi

# Statically, with pkg-config --static: -static makes the linker take
# libdnsnap.a (it prefers the .so otherwise). Not with a sanitizer: its
# runtime does not link statically.
if [ -n "$san" ]; then
	ok "# skip the static program (sanitizer build)"
# shellcheck disable=SC2086 # flags are words
elif ${CC:-cc} -std=c11 -Wall -Wextra -Werror -static -o "$tmp/prog-static" "$tmp/prog.c" \
	$static >"$tmp/err" 2>&1; then
	ok "a program builds statically against the installed libdnsnap.a"
	readelf -d "$tmp/prog-static" >"$tmp/dyn" 2>&1
	grep -q 'NEEDED' "$tmp/dyn" && not_ok "the static program needs shared libraries" "$tmp/dyn" ||
		ok "it needs no shared library"
	run static "$tmp/prog-static"
else
	not_ok "building statically against the installed library" "$tmp/err"
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

# Uninstall: no file or link left, nor the include/dnsnap directory.
if make -s uninstall BUILD="$build" DESTDIR="$root" PREFIX=$prefix >"$tmp/log" 2>&1; then
	find "$root" ! -type d >"$tmp/left"
	[ -d "$dest/include/dnsnap" ] && echo "$dest/include/dnsnap/" >>"$tmp/left"
	[ -s "$tmp/left" ] && not_ok "make uninstall left these" "$tmp/left" ||
		ok "make uninstall removes every file, link and include/dnsnap"
else
	not_ok "make uninstall" "$tmp/log"
fi

[ "$fails" -eq 0 ]

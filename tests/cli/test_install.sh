#!/bin/sh
# make install into a scratch DESTDIR, then use what it installed: exactly the
# files that belong there; the shared libraries' sonames, links and exports
# (libdnsnap: the public dnsnap_* functions of dnsnap.h, dnsnap_format.h and
# forward.h; libdnsnap-l2: the dnsnap_l2_* functions l2.h adds; nothing else);
# a program that includes <dnsnap/dnsnap.h>, builds a cache, inserts a
# response and answers it, then through a snapshot and the export stream,
# and makes the upstream query for it and a forwarder (<dnsnap/forward.h>),
# and one that includes <dnsnap/l2.h> and reads a value through the Redis
# client from a fake Redis it runs itself, each built through the installed
# pkg-config files once against the shared libraries and once statically; the
# installed tool runs; the man page renders without a warning; make uninstall
# removes it all. Usage (from the repository root, as tests/run.sh runs it):
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
l2soname=libdnsnap-l2.so.$(sed -n 's/^L2_SOVERSION *= *//p' Makefile)
l2sofile=$l2soname.${version#*.}
cat >"$tmp/want" <<EOF
.$prefix/bin/dnsnap
.$prefix/include/dnsnap/dnsnap.h
.$prefix/include/dnsnap/dnsnap_format.h
.$prefix/include/dnsnap/forward.h
.$prefix/include/dnsnap/l2.h
.$prefix/lib/libdnsnap-l2.a
.$prefix/lib/libdnsnap-l2.so
.$prefix/lib/$l2soname
.$prefix/lib/$l2sofile
.$prefix/lib/libdnsnap.a
.$prefix/lib/libdnsnap.so
.$prefix/lib/$soname
.$prefix/lib/$sofile
.$prefix/lib/pkgconfig/libdnsnap-l2.pc
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
# headers_decls HEADER...: the dnsnap_* functions (and tables) the installed
# headers declare, with what they include, sorted
headers_decls() {
# shellcheck disable=SC2046 # one -include per header
${CC:-cc} -E -std=c11 -I"$dest/include" $(for h in "$@"; do echo "-include dnsnap/$h"; done) \
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
print("\n".join(sorted(names)))' | LC_ALL=C sort
}
headers_decls dnsnap.h forward.h >"$tmp/declared"
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

# run_as PROG WHAT NAME BINARY [ENV...]: BINARY (PROG.c built as NAME) prints
# PROG.want, given a directory of its own; WHAT says what that shows
run_as() {
	prog=$1 what=$2 name=$3 bin=$4
	shift 4
	mkdir -p "$tmp/run.$prog.$name"
	if env "$@" "$bin" "$tmp/run.$prog.$name" >"$tmp/$prog.out" 2>&1 &&
	   diff -u "$tmp/$prog.want" "$tmp/$prog.out" >"$tmp/diff"; then
		ok "it runs ($name): $what"
	else
		cat "$tmp/$prog.out" >>"$tmp/diff"
		not_ok "the $name $prog's output (+) is not the expected (-)" "$tmp/diff"
	fi
}
# run NAME BINARY [ENV...]: the cache program answers as expected
run() { run_as prog "cache, snapshot and import answer; the forwarder's query" "$@"; }

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
# static_build PROG FLAGS WHAT RUN: PROG.c linked -static with FLAGS (against WHAT),
# needing no shared library, run by the function RUN
static_build() {
	if [ -n "$san" ]; then
		ok "# skip the static $1 (sanitizer build)"
		return
	fi
	# shellcheck disable=SC2086 # flags are words
	if ${CC:-cc} -std=c11 -Wall -Wextra -Werror -static -o "$tmp/$1-static" "$tmp/$1.c" \
		$2 >"$tmp/err" 2>&1; then
		ok "a program ($1) builds statically against $3"
		readelf -d "$tmp/$1-static" >"$tmp/dyn" 2>&1
		grep -q 'NEEDED' "$tmp/dyn" && not_ok "the static $1 needs shared libraries" "$tmp/dyn" ||
			ok "it needs no shared library"
		$4 static "$tmp/$1-static"
	else
		not_ok "building $1 statically against $3" "$tmp/err"
	fi
}
static_build prog "$static" "the installed libdnsnap.a" run

# ------------------------------------------------------------ libdnsnap-l2
# The Redis client: its links and soname, what it needs (libdnsnap and
# hiredis), its exports: exactly the functions l2.h declares beyond dnsnap.h's.
if [ "$(readlink "$lib/libdnsnap-l2.so")" = $l2soname ] &&
   [ "$(readlink "$lib/$l2soname")" = "$l2sofile" ] && [ -f "$lib/$l2sofile" ] &&
   [ ! -L "$lib/$l2sofile" ]; then
	ok "libdnsnap-l2.so -> $l2soname -> $l2sofile"
else
	ls -l "$lib" >"$tmp/ls"
	not_ok "libdnsnap-l2's links" "$tmp/ls"
fi
got=$(readelf -d "$lib/$l2sofile" 2>&1 | sed -n 's/.*(SONAME).*\[\(.*\)\]$/\1/p')
[ "$got" = $l2soname ] && ok "soname $got" || not_ok "soname is '$got', not $l2soname"
readelf -d "$lib/$l2sofile" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' >"$tmp/l2needed"
grep -qx "$soname" "$tmp/l2needed" && grep -q '^libhiredis\.so' "$tmp/l2needed" &&
	ok "libdnsnap-l2 needs $soname and $(grep '^libhiredis' "$tmp/l2needed")" ||
	not_ok "libdnsnap-l2 does not need $soname and libhiredis" "$tmp/l2needed"
headers_decls l2.h | LC_ALL=C comm -23 - "$tmp/declared" >"$tmp/l2declared"
nm -D --defined-only "$lib/$l2sofile" | awk '{ print $NF }' | LC_ALL=C sort >"$tmp/l2exported"
n=$(grep -c . "$tmp/l2declared")
if [ "$n" -lt 15 ]; then
	not_ok "only $n functions found in l2.h" "$tmp/l2declared"
elif diff -u "$tmp/l2declared" "$tmp/l2exported" >"$tmp/diff"; then
	ok "nm -D: exactly the $n dnsnap_l2_* functions l2.h declares"
else
	not_ok "libdnsnap-l2's exports (+) differ from l2.h's functions (-)" "$tmp/diff"
fi
nm "$lib/$l2sofile" | grep -q ' t dnsnap__l2_url_parse$' &&
	ok "dnsnap__l2_url_parse (an internal) is in the library, local" ||
	not_ok "dnsnap__l2_url_parse is not a local symbol of libdnsnap-l2"

# Its .pc file: prefix, version, and the flags of both libraries, hiredis
# only for static links (Libs.private: Debian's hiredis.pc would put
# -I/usr/include/hiredis on every embedder's include path).
l2pc=$lib/pkgconfig/libdnsnap-l2.pc
if grep -q '@' "$l2pc"; then
	not_ok "libdnsnap-l2.pc has unsubstituted @VARS@" "$l2pc"
else
	ok "libdnsnap-l2.pc: every @VAR@ filled in"
fi
sed "s|^prefix=.*|prefix=$dest|" "$l2pc" >"$tmp/pc/libdnsnap-l2.pc"
got=$(PKG_CONFIG_PATH=$tmp/pc pkg-config --modversion libdnsnap-l2 2>&1)
[ "$got" = "$version" ] && ok "pkg-config --modversion libdnsnap-l2: $got" ||
	{ echo "$got" >"$tmp/v"; not_ok "libdnsnap-l2's --modversion is not $version" "$tmp/v"; }
want="-I$dest/include -L$lib -ldnsnap-l2 -ldnsnap"
l2shared=$(PKG_CONFIG_PATH=$tmp/pc pkg-config --cflags --libs libdnsnap libdnsnap-l2 2>&1 |
	sed 's/ *$//')
[ "$l2shared" = "$want" ] && ok "pkg-config --cflags --libs libdnsnap libdnsnap-l2: $l2shared" ||
	{ echo "$l2shared" >"$tmp/f"; not_ok "pkg-config --cflags --libs is not '$want'" "$tmp/f"; }
l2static=$(PKG_CONFIG_PATH=$tmp/pc pkg-config --static --cflags --libs libdnsnap libdnsnap-l2 \
	2>&1 | sed 's/ *$//')
case " $l2static " in
*" -ldnsnap-l2 "*-lhiredis*" -ldnsnap "*-llmdb*) ok "pkg-config --static: $l2static" ;;
*)
	echo "$l2static" >"$tmp/f"
	not_ok "pkg-config --static: not -ldnsnap-l2 -lhiredis, then -ldnsnap and its own" "$tmp/f"
	;;
esac

cat >"$tmp/l2prog.c" <<'EOF'
/* The Redis client (libdnsnap-l2) carrying libdnsnap's value: a response is
 * encoded and sealed here, served by a fake Redis on a Unix socket that this
 * program runs in its own poll() loop beside the client's descriptor
 * (dnsnap_l2_fd(), dnsnap_l2_timeout_ms(), dnsnap_l2_process(): no thread),
 * read back with dnsnap_l2_get() and accepted with dnsnap_l2_value_accept(). */
#define _GNU_SOURCE
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <dnsnap/l2.h>

#define NOW 1800000000u

static const uint8_t response[] = {
	0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0,
	3, 'w', 'w', 'w', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1,
	0xc0, 12, 0, 1, 0, 1, 0, 0, 0x01, 0x2c, 0, 4, 192, 0, 2, 1, /* A 192.0.2.1, TTL 300 */
};
static dnsnap_encoded_t enc;
static uint8_t val[DNSNAP_L2_VALUE_MAX];
static int done;

static void got(void *arg, void *waiter, dnsnap_l2_status_t st, const uint8_t *v, size_t len)
{
	const uint8_t *e;
	size_t el;
	dnsnap_diag_t d;
	(void)arg;
	(void)waiter;
	done = 1;
	if (st != DNSNAP_L2_HIT) {
		printf("get: status %d\n", (int)st);
		return;
	}
	int err = dnsnap_l2_value_accept(NULL, enc.key, enc.key_len, v, len, NOW + 10, &e, &el,
					 &d);
	printf("get: a hit of %zu bytes, %s: a %zu-byte entry\n", len,
	       err == DNSNAP_OK ? "accepted" : d.msg, el);
}

int main(int argc, char **argv)
{
	char path[108], url[128], err[256], buf[4096];
	size_t vlen, got_len = 0;
	dnsnap_diag_t d;
	dnsnap_l2_t *l;
	if (argc != 2)
		return 2;
	printf("url: %s; slot of foo: %u\n",
	       dnsnap_l2_url_check("redis://u:pw@h", err, sizeof err) ? "a password refused" : "?",
	       dnsnap_l2_key_slot((const uint8_t *)"foo", 3));
	if (dnsnap_msg_encode(response, sizeof response, NOW, NULL, 0, &enc, &d) != DNSNAP_OK ||
	    dnsnap_l2_value_seal(enc.key, enc.key_len, enc.entry, enc.entry_len, val, sizeof val,
				 &vlen) != DNSNAP_OK)
		return 1;
	snprintf(path, sizeof path, "%s/r.sock", argv[1]);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0), cfd = -1;
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof a) != 0 || listen(lfd, 1) != 0)
		return 1;
	snprintf(url, sizeof url, "unix://%s", path);
	dnsnap_l2_opts_t o = {.url = url, .wait_ms = 5000, .connect_ms = 5000};
	dnsnap_l2_hooks_t h = {.got = got};
	if (dnsnap_l2_new(&o, &h, &l, err, sizeof err) != DNSNAP_OK ||
	    dnsnap_l2_get(l, enc.key, enc.key_len, 0, NULL) != DNSNAP_OK) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	for (int turns = 0; !done && turns < 1000; turns++) {
		struct pollfd p[3] = {{.fd = lfd, .events = POLLIN}, {.fd = cfd, .events = POLLIN},
				      {.fd = dnsnap_l2_fd(l), .events = POLLIN}};
		int t = dnsnap_l2_timeout_ms(l);
		poll(p, 3, t < 0 || t > 100 ? 100 : t);
		if (p[0].revents & POLLIN)
			cfd = accept(lfd, NULL, NULL);
		if (cfd >= 0 && (p[1].revents & POLLIN)) { /* PING, then GETRANGE ... 196608 */
			ssize_t n = read(cfd, buf + got_len, sizeof buf - got_len);
			int had_ping = memmem(buf, got_len, "PING\r\n", 6) != NULL;
			got_len += n > 0 ? (size_t)n : 0;
			if (!had_ping && memmem(buf, got_len, "PING\r\n", 6) &&
			    write(cfd, "+PONG\r\n", 7) != 7)
				return 1;
			if (got_len >= 8 && memcmp(buf + got_len - 8, "196608\r\n", 8) == 0) {
				int hl = snprintf(buf, sizeof buf, "$%zu\r\n", vlen);
				if (write(cfd, buf, (size_t)hl) != hl ||
				    write(cfd, val, vlen) != (ssize_t)vlen ||
				    write(cfd, "\r\n", 2) != 2)
					return 1;
				got_len = 0;
			}
		}
		if (dnsnap_l2_process(l) != DNSNAP_OK)
			return 1;
	}
	dnsnap_l2_stats_t st;
	dnsnap_l2_stats(l, &st);
	printf("stats: gets %llu, hits %llu, nodes %u\n", (unsigned long long)st.gets,
	       (unsigned long long)st.hits, st.nodes);
	dnsnap_l2_free(l, 0);
	close(cfd);
	close(lfd);
	return done ? 0 : 1;
}
EOF
cat >"$tmp/l2prog.want" <<EOF
url: a password refused; slot of foo: 12182
get: a hit of 45 bytes, accepted: a 31-byte entry
stats: gets 1, hits 1, nodes 1
EOF
# run_l2 NAME BINARY [ENV...]: the l2 program reads its value back
run_l2() { run_as l2prog "a value sealed, read back from Redis, accepted" "$@"; }
# shellcheck disable=SC2086 # flags are words
if ${CC:-cc} -std=c11 -Wall -Wextra -Werror $san -o "$tmp/l2prog" "$tmp/l2prog.c" $l2shared \
	>"$tmp/err" 2>&1; then
	ok "a program builds against <dnsnap/l2.h> and the shared libraries"
	readelf -d "$tmp/l2prog" | sed -n 's/.*(NEEDED).*\[\(libdnsnap.*\)\]$/\1/p' >"$tmp/needed"
	printf '%s\n%s\n' "$l2soname" "$soname" | cmp -s - "$tmp/needed" &&
		ok "it needs $l2soname and $soname" ||
		not_ok "the l2 program does not need exactly $l2soname and $soname" "$tmp/needed"
	run_l2 shared "$tmp/l2prog" LD_LIBRARY_PATH="$lib"
else
	not_ok "building against the installed shared libdnsnap-l2" "$tmp/err"
fi
# Statically: Debian's libhiredis-dev has libhiredis.a. The linker warns that
# getaddrinfo() in a static program needs glibc's shared NSS modules at run
# time (the client resolves host names in dnsnap_l2_new()): a warning, and
# this program connects to a Unix socket.
static_build l2prog "$l2static" "libdnsnap-l2.a, libdnsnap.a and libhiredis.a" run_l2

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

#!/bin/sh
# A sysroot of Debian's s390x builds of the libraries the tests link, for
# make test-cross. Usage: tests/cross/sysroot.sh DIR (e.g. build-s390x)
#
# The host's dpkg is left as it is (no dpkg --add-architecture): apt-get runs with
# a private state directory (DIR/apt) whose architecture is s390x, reads the host's
# sources, resolves the dependencies with apt-cache depends, downloads the .debs
# into DIR/apt/debs and unpacks each with dpkg -x into DIR/sysroot. Done once: the
# sysroot is kept, with the list it was made from, until that list changes.
set -eu
dir=${1:-build-s390x}
# The -dev packages the tests build against (jemalloc: resolver_demo; hiredis:
# test_l2 and the fuzz_l2_* replays); their libraries (libssl3 for ldns, libdbus
# for libpcap, ...) and glibc come in as dependencies.
want="liblmdb-dev libzstd-dev libxxhash-dev libcmocka-dev libldns-dev libpcap-dev libjemalloc-dev
      libmicrohttpd-dev libhiredis-dev"
# Never unpacked: the cross compiler brings glibc's headers and crt files
# (libc6-dev-s390x-cross), and two sets of them would clash; the rest are tools
# or an alternative (libelogind0 for libsystemd0).
skip="libc6-dev libc-dev-bin libcrypt-dev libnsl-dev libtirpc-dev linux-libc-dev rpcsvc-proto
      pkg-config pkgconf pkgconf-bin libpkgconf3 sed sgml-base xml-core libelogind0"

sysroot=$dir/sysroot
stamp=$sysroot/.packages
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	exit 0
fi

mkdir -p "$dir"
apt=$(cd "$dir" && pwd)/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/debs"
touch "$apt/status"
set -- -o APT::Architecture=s390x -o APT::Architectures::=s390x \
	-o Dir::State="$apt" -o Dir::State::Lists="$apt/lists" \
	-o Dir::State::status="$apt/status" -o Dir::Cache="$apt/cache" \
	-o APT::Sandbox::User=root
# what the host's dpkg has before, to check below that it has exactly that after
foreign=$(dpkg --print-foreign-architectures | sort | tr '\n' ' ')
echo "test-cross: apt-get update (s390x lists in $apt)"
apt-get "$@" -qq update
pkgs=$(apt-cache "$@" depends --recurse --no-recommends --no-suggests --no-conflicts \
	--no-breaks --no-replaces --no-enhances --no-pre-depends $want |
	grep -v -e '^ ' -e '^<' | sort -u)
keep=""
for p in $pkgs; do
	case " $(echo $skip) " in *" $p "*) continue ;; esac
	keep="$keep $p"
done
echo "test-cross: downloading" $keep
(cd "$apt/debs" && apt-get "$@" -qq download $keep)
rm -rf "$sysroot"
mkdir -p "$sysroot"
for p in $keep; do
	# the newest .deb of each package (an older one may be cached)
	deb=$(ls -t "$apt/debs/${p}_"*_s390x.deb "$apt/debs/${p}_"*_all.deb 2>/dev/null | head -1)
	[ -n "$deb" ] || { echo "test-cross: no .deb for $p" >&2; exit 1; }
	dpkg -x "$deb" "$sysroot"
done
if [ "$(dpkg --print-foreign-architectures | sort | tr '\n' ' ')" != "$foreign" ]; then
	echo "test-cross: the host's dpkg architectures changed (was: '$foreign')" >&2
	exit 1
fi
echo "$want" > "$stamp"

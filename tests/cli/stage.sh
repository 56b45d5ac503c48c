# stage.sh: `make install` into a scratch DESTDIR, for the tests that build
# programs against what it installs (test_install.sh, test_embed.sh). Source
# it from the repository root with build and tmp set; it sets prefix, root
# (DESTDIR), dest (DESTDIR/PREFIX) and lib.
prefix=/usr/local
root=$tmp/root
dest=$root$prefix
lib=$dest/lib

# stage_install: make install of BUILD into $root, its output in $tmp/log.
# BUILD is built already (make test and make asan build it first), so it only
# copies; but it writes BUILD/libdnsnap.pc and BUILD/libdnsnap-l2.pc on the
# way, so the tests that stage it at once (tests/run.sh runs them side by
# side) take turns, under flock(1) on BUILD. Only the test's variables go to
# make; -s keeps its output to errors.
stage_install() {
	flock "$build" make -s install BUILD="$build" DESTDIR="$root" PREFIX=$prefix \
		>"$tmp/log" 2>&1
}

# stage_pc NAME: $tmp/pc/NAME.pc, the installed NAME.pc with only its
# prefix= line moved into DESTDIR, for PKG_CONFIG_PATH=$tmp/pc. Not
# PKG_CONFIG_SYSROOT_DIR, which would also prefix the system libraries' paths
# (-I$root/usr/include), nor --define-prefix, which would relocate theirs too
# (lmdb.pc in lib/x86_64-linux-gnu/pkgconfig). Every other path of the .pc
# must derive from ${prefix}, or the builds against it do not find them.
stage_pc() {
	mkdir -p "$tmp/pc"
	sed "s|^prefix=.*|prefix=$dest|" "$lib/pkgconfig/$1.pc" >"$tmp/pc/$1.pc"
}

# stage_san: the flags a program built against a sanitizer build's libraries
# needs (their runtime), nothing for another build
stage_san() {
	if nm "$lib/libdnsnap.a" 2>/dev/null | grep -q ' U __asan_'; then
		echo "-fsanitize=address,undefined"
	fi
}

#!/bin/sh
# Run the cross-built tests under qemu-user, from the repository root (the tests
# read spec/vectors). Usage: tests/cross/run.sh BUILD QEMU SYSROOT
# Each unit test binary, each fuzz target over its seeds (tests/cross/replay.c
# in place of libFuzzer), then the CLI tests (tests/cli) against BUILD's programs
# through wrappers in BUILD/qemu that run them under QEMU; not test_install.sh,
# which builds and installs with the host's compiler, nor test_unbound_module.sh,
# which loads the library into the host's python3. One line per test, then one
# line "N passed, N failed"; exits non-zero on any failure. A failing test's
# output is kept in BUILD/log/TEST.log.
set -u
build=$1
qemu=$2
sysroot=$3
pass=0
fail=0
failed=""
mkdir -p "$build/log" "$build/qemu"

check() { # name, command...
	name=$1
	shift
	log=$build/log/$name.log
	start=$(date +%s)
	if "$@" >"$log" 2>&1; then
		pass=$((pass + 1))
		echo "ok     $name ($(($(date +%s) - start)) s)"
	else
		fail=$((fail + 1))
		failed="$failed $name"
		echo "FAILED $name ($(($(date +%s) - start)) s), $log:"
		{ grep -E '^\[  (FAILED|ERROR)|^\[   LINE|^not ok|^#' "$log" || tail -5 "$log"; } |
			head -20 | sed 's/^/    /'
	fi
}

# big_endian_s390 FILE...: each an ELF of class 64, big-endian (EI_DATA 2), machine
# EM_S390 (22): what runs below is the build for the other byte order, not the host's.
big_endian_s390() {
	for f in "$@"; do
		h=$(od -A n -t u1 -N 20 "$f" | tr -s ' \n' '  ')
		case "$h" in
		" 127 69 76 70 2 2 "*" 0 22 ") ;;
		*) echo "$f: not a big-endian s390x ELF:$h"; return 1 ;;
		esac
	done
}
check big-endian-elf big_endian_s390 "$build"/bin/test_* "$build"/replay/fuzz_* "$build"/dnsnap \
	"$build"/mkcaptures "$build"/mkquery "$build"/resolver_demo "$build"/mkcorpus \
	"$build"/mksnapseeds "$build"/mksweep

for t in "$build"/bin/test_*; do
	[ -x "$t" ] || continue
	check "$(basename "$t")" "$qemu" -L "$sysroot" "$t"
done

# Each fuzz target (built without libFuzzer) over the seeds make test gives it:
# the vectors, mkcorpus's messages and tests/fuzz/seeds/TARGET.
seeds=$(mktemp -d)
trap 'rm -rf "$seeds"' EXIT
check mkcorpus "$qemu" -L "$sysroot" "$build/mkcorpus" "$seeds"
for f in "$build"/replay/fuzz_*; do
	[ -x "$f" ] || continue
	own=tests/fuzz/seeds/$(basename "$f")
	[ -d "$own" ] || own=
	check "$(basename "$f")-seeds" "$qemu" -L "$sysroot" "$f" spec/vectors/valid \
		spec/vectors/invalid "$seeds" $own
done

here=$(pwd)
for p in dnsnap mkcaptures mkquery mksnapseeds mksweep resolver_demo deploy_zipfload \
	peers_dnsprobe; do
	printf '#!/bin/sh\nexec %s -L "%s" "%s/%s/%s" "$@"\n' "$qemu" "$sysroot" "$here" "$build" "$p" \
		>"$build/qemu/$p"
	chmod +x "$build/qemu/$p"
done
for t in tests/cli/test_*.sh; do
	case $(basename "$t") in test_install.sh | test_unbound_module.sh) continue ;; esac
	check "$(basename "$t")" sh "$t" "$build/qemu"
done

echo
[ -n "$failed" ] && echo "failed:$failed"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/bin/sh
# contrib/systemd's units, checked by systemd itself: systemd-analyze verify
# loads each (dnsnap-serve.service, and the template dnsnap-serve@.service as
# instances a and b, the two of a deploy) with ExecStart pointed at BUILD's
# dnsnap, and contrib/unbound's drop-in over Debian's unbound.service, and must
# say nothing: an unknown or misspelt key, a bad value, a
# missing ExecStart all make it talk. systemd-analyze security rates the
# hardening offline; the units must stay at an exposure of 2.0 or less ("OK";
# without the sandboxing lines they score over 5). Without systemd-analyze
# (not a systemd system) the test is skipped: checking that keys are present
# by grep would prove nothing about what systemd makes of them.
# Usage: tests/cli/test_systemd.sh BUILD
set -u
build=${1:-build}
if ! command -v systemd-analyze >/dev/null 2>&1; then
	echo "ok - # SKIP systemd-analyze not installed: the units are not checked"
	exit 0
fi
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

# Documentation=man:dnsnap(1) is checked by running man: give it our page
mkdir -p "$tmp/man/man1" "$tmp/units"
cp doc/dnsnap.1 "$tmp/man/man1/"
for u in dnsnap-serve.service dnsnap-serve@.service; do
	sed "s|/usr/local/bin/dnsnap |$build/dnsnap |" "contrib/systemd/$u" >"$tmp/units/$u"
	grep -q "^ExecStart=$build/dnsnap serve " "$tmp/units/$u" || {
		echo "not ok - $u: no ExecStart=/usr/local/bin/dnsnap serve ..."
		fails=$((fails + 1))
	}
done

cd "$tmp/units" || exit 2
for u in dnsnap-serve.service dnsnap-serve@a.service dnsnap-serve@b.service; do
	if MANPATH=$tmp/man systemd-analyze verify "./$u" >"$tmp/out" 2>&1 && ! [ -s "$tmp/out" ]
	then
		echo "ok - systemd-analyze verify $u: nothing to say"
	else
		echo "not ok - systemd-analyze verify $u:"
		sed 's/^/#   /' "$tmp/out"
		fails=$((fails + 1))
	fi
	if systemd-analyze security --offline=yes --threshold=20 "./$u" >"$tmp/out" 2>&1; then
		echo "ok - systemd-analyze security $u: $(grep 'Overall exposure' "$tmp/out" |
			sed 's/.*: //')"
	else
		echo "not ok - systemd-analyze security $u: exposure over 2.0"
		grep -e '✗' -e 'Overall' "$tmp/out" | sed 's/^/#   /'
		fails=$((fails + 1))
	fi
done

# contrib/unbound's drop-in, over Debian's own unbound.service (package unbound):
# found through SYSTEMD_UNIT_PATH as /etc/systemd/system's would be; the same
# drop-in with a misspelt key must make systemd talk (it is read)
if [ -f /lib/systemd/system/unbound.service ]; then
	mkdir -p "$tmp/ub/unbound.service.d" "$tmp/ubbad/unbound.service.d"
	cp /lib/systemd/system/unbound.service "$tmp/ub/"
	cp /lib/systemd/system/unbound.service "$tmp/ubbad/"
	cp "$OLDPWD/contrib/unbound/unbound.service.d/dnsnap.conf" "$tmp/ub/unbound.service.d/"
	sed 's/^TimeoutStopSec=/TimeoutStopSek=/' "$OLDPWD/contrib/unbound/unbound.service.d/dnsnap.conf" \
		>"$tmp/ubbad/unbound.service.d/dnsnap.conf"
	SYSTEMD_UNIT_PATH=$tmp/ubbad: systemd-analyze verify unbound.service >"$tmp/out.bad" 2>&1
	if SYSTEMD_UNIT_PATH=$tmp/ub: systemd-analyze verify unbound.service >"$tmp/out" 2>&1 &&
		! [ -s "$tmp/out" ] && grep -q "TimeoutStopSek" "$tmp/out.bad"; then
		echo "ok - systemd-analyze verify unbound.service with contrib/unbound's drop-in: nothing to say"
	else
		echo "not ok - systemd-analyze verify unbound.service with contrib/unbound's drop-in:"
		sed 's/^/#   /' "$tmp/out" "$tmp/out.bad"
		fails=$((fails + 1))
	fi
else
	echo "ok - # SKIP no /lib/systemd/system/unbound.service: the drop-in is not checked"
fi

[ "$fails" -eq 0 ]

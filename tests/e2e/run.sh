#!/bin/sh
# Run the end-to-end tests: real DNS software (NSD, dig, kdig, drill, delv,
# tcpdump, ldns-signzone) against dnsnap, on 127.0.0.1 only; each script
# starts what it needs and stops it. Ends with one line "e2e: N passed,
# N failed", N counting the checks (the "ok -" and "not ok -" lines; a
# "not ok - ... # TODO" is a known difference, listed, not a failure; a
# script that fails without saying which check counts as one failure).
# Usage (from the repository root): tests/e2e/run.sh BUILD
set -u
build=${1:-build}
pass=0
fail=0
todo=0
failed=""
out=$(mktemp)
trap 'rm -f "$out"' EXIT
trap 'exit 2' INT TERM HUP
for t in tests/e2e/auth_clients.sh tests/e2e/bad_traffic.sh tests/e2e/unbound_roundtrip.sh \
	tests/e2e/forward.sh tests/e2e/forward_faults.sh tests/e2e/forward_deploy.sh \
	tests/e2e/l2_client.sh tests/e2e/l2_shared.sh tests/e2e/l2_cluster.sh \
	tests/e2e/l2_authority.sh tests/e2e/unbound_module.sh tests/e2e/deploy_warm.sh \
	tests/e2e/hostile.sh; do
	name=$(basename "$t" .sh)
	echo "# $name"
	start=$(date +%s)
	sh "$t" "$build" >"$out" 2>&1
	rc=$?
	cat "$out"
	p=$(grep -c '^ok - ' "$out")
	f=$(grep '^not ok - ' "$out" | grep -vc '# TODO')
	d=$(grep '^not ok - ' "$out" | grep -c '# TODO')
	# a skip (exit 77: a tool missing or a server that would not start) is a
	# failure where everything must run (CI sets DNSNAP_E2E_NO_SKIP)
	if [ "$rc" -eq 77 ] && [ -z "${DNSNAP_E2E_NO_SKIP:-}" ]; then
		echo "# $name: skipped"
		continue
	fi
	[ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	pass=$((pass + p))
	fail=$((fail + f))
	todo=$((todo + d))
	[ "$f" -gt 0 ] && failed="$failed $name"
	echo "# $name: $p passed, $f failed, $d todo, $(($(date +%s) - start)) s"
done
echo
[ -n "$failed" ] && echo "failed:$failed"
[ "$todo" -gt 0 ] && echo "known differences (TODO): $todo"
echo "e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ]

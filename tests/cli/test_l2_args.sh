#!/bin/sh
# The shared second level's options as a careless operator meets them, no
# Redis needed: every refusal exits 2 with a line that says why, before
# anything is written or started (serve --l2, import --from, export --to).
# A secret on the command line (a URL with user:password@) and an AUTH file
# others can read are refused; an unreachable Redis is a clear error for the
# bulk commands, and an existing snapshot is left as it was. Then, against a
# redis-server of its own (Debian's, in make deps): import --from an empty
# Redis (or a mistyped prefix) is exit 1 and never empties a snapshot, and
# export --to of a damaged snapshot writes the good entries, says how many
# were damaged, and exits 2.
# Usage (from the repository root): tests/cli/test_l2_args.sh BUILD
set -u
build=${1:-build}
bin=$build/dnsnap
tmp=$(mktemp -d)
rpid=
trap '[ -n "$rpid" ] && kill "$rpid" 2>/dev/null; rm -rf "$tmp"' EXIT
trap 'exit 2' INT TERM HUP
. tests/cli/lib.sh
T=$tmp
snap=spec/vectors/valid/401-snapshot-one-entry.snap
up=127.0.0.1:9 # never asked: every command below stops before

# serve
expect "--l2 without --upstream: exit 2" 2 "$bin" serve "$T/s.snap" --l2 redis://127.0.0.1:1 &&
	err_has "names --upstream" "--l2 needs --upstream"
expect "--l2-wait without --l2: exit 2" 2 "$bin" serve "$T/s.snap" --upstream $up \
	--l2-wait 5 && err_has "names --l2" "--l2-wait needs --l2"
expect "a URL with a password: exit 2" 2 "$bin" serve "$T/s.snap" --upstream $up \
	--l2 redis://admin:hunter2@127.0.0.1:6379 --listen 127.0.0.1:0 &&
	err_has "says why" "password"
ok_if "the password is not echoed back" sh -c "! grep -q hunter2 '$T/err'"
expect "not a URL: exit 2" 2 "$bin" serve "$T/s.snap" --upstream $up --l2 127.0.0.1:6379 \
	--listen 127.0.0.1:0
expect "http://: exit 2" 2 "$bin" serve "$T/s.snap" --upstream $up --l2 http://127.0.0.1/ \
	--listen 127.0.0.1:0
expect "a port over 65535: exit 2" 2 "$bin" serve "$T/s.snap" --upstream $up \
	--l2 redis://127.0.0.1:70000 --listen 127.0.0.1:0
expect "--l2-wait 0: exit 2" 2 "$bin" serve "$T/s.snap" --upstream $up \
	--l2 redis://127.0.0.1:1 --l2-wait 0
expect "--l2-wait 5000: exit 2" 2 "$bin" serve "$T/s.snap" --upstream $up \
	--l2 redis://127.0.0.1:1 --l2-wait 5000
expect "--l2-prefix over 64 bytes: exit 2" 2 "$bin" serve "$T/s.snap" --upstream $up \
	--l2 redis://127.0.0.1:1 --l2-prefix "$(printf '%070d' 0)"
printf 'hunter2\n' >"$T/auth"
chmod 0644 "$T/auth"
expect "an AUTH file others can read: exit 2" 2 "$bin" serve "$T/s.snap" --upstream $up \
	--l2 redis://127.0.0.1:1 --l2-auth-file "$T/auth" --listen 127.0.0.1:0 &&
	err_has "names the file" "$T/auth"
if [ "$(id -u)" = 0 ]; then # chown needs root (CI runs as root)
	chmod 0600 "$T/auth"
	chown nobody "$T/auth"
	expect "an AUTH file of another user (mode 0600): exit 2" 2 "$bin" serve "$T/s.snap" \
		--upstream $up --l2 redis://127.0.0.1:1 --l2-auth-file "$T/auth" \
		--listen 127.0.0.1:0 &&
		err_has "names the file and its owner" "$T/auth: owned by uid $(id -u nobody), not by this user"
	chown 0 "$T/auth"
else
	echo "ok - # skip an AUTH file of another user: not root"
fi
expect "a missing AUTH file: exit 2" 2 "$bin" serve "$T/s.snap" --upstream $up \
	--l2 redis://127.0.0.1:1 --l2-auth-file "$T/none" --listen 127.0.0.1:0 &&
	err_has "names the file" "$T/none"
ok_if "no snapshot was written by a refused serve" [ ! -e "$T/s.snap" ]

# import --from
expect "import --from without -o: exit 2" 2 "$bin" import --from redis://127.0.0.1:1 &&
	err_has "asks for -o" "-o SNAP"
expect "import --from with a stream too: exit 2" 2 "$bin" import --from redis://127.0.0.1:1 \
	"$T/x.dnsx" -o "$T/i.snap"
expect "import --l2-prefix without --from: exit 2" 2 "$bin" import "$T/x.dnsx" -o "$T/i.snap" \
	--l2-prefix p:
cp "$snap" "$T/keep.snap"
expect "import --from an unreachable Redis: exit 2" 2 "$bin" import \
	--from redis://127.0.0.1:1 -o "$T/keep.snap" && err_has "names the URL" "redis://127.0.0.1:1"
ok_if "the snapshot at -o is untouched" cmp -s "$snap" "$T/keep.snap"
ok_if "nothing left beside it" sh -c "[ \$(ls '$T' | grep -c tmp) -eq 0 ]"

# export --to
expect "export --to with -o: exit 2" 2 "$bin" export "$snap" --to redis://127.0.0.1:1 \
	-o "$T/x.dnsx"
expect "export --to with --top: exit 2" 2 "$bin" export "$snap" --to redis://127.0.0.1:1 \
	--top 5
expect "export --to an unreachable Redis: exit 2" 2 "$bin" export "$snap" \
	--to redis://127.0.0.1:1 && err_has "names the URL" "redis://127.0.0.1:1"
expect "export --to a missing snapshot: exit 2" 2 "$bin" export "$T/none.snap" \
	--to redis://127.0.0.1:1 && err_has "names the file" "$T/none.snap"

# against a Redis of our own, on a port below the ephemeral range
if command -v redis-server >/dev/null; then
	lo=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
	rport=$((10000 + $(od -An -N2 -tu2 /dev/urandom) % (lo - 10000)))
	redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$T" >"$T/redis.log" 2>&1 &
	rpid=$!
	i=0
	until redis-cli -p "$rport" ping >/dev/null 2>&1 || [ $i -gt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	r=redis://127.0.0.1:$rport
	cp "$snap" "$T/warm.snap"
	expect "import --from an empty Redis: exit 1" 1 "$bin" import --from "$r" -o "$T/warm.snap" &&
		err_has "says the file is kept" "left as it was"
	ok_if "the snapshot is untouched" cmp -s "$snap" "$T/warm.snap"
	now=2023-11-14T22:14:00Z
	expect "export --to, the vector snapshot" 0 "$bin" export "$snap" --to "$r" --now $now
	expect "import --from a mistyped prefix: exit 1" 1 "$bin" import --from "$r" \
		--l2-prefix dnsanp: -o "$T/warm.snap" --now $now
	ok_if "the snapshot is still untouched" cmp -s "$snap" "$T/warm.snap"
	expect "import --from the right prefix: exit 0" 0 "$bin" import --from "$r" \
		-o "$T/back.snap" --now $now
	expect "the round trip: dnsnap diff says equal" 0 "$bin" diff "$snap" "$T/back.snap"
	bad=spec/vectors/invalid/402-snapshot-value-check.snap
	expect "export --to of a damaged snapshot: exit 2" 2 "$bin" export "$bad" --to "$r" \
		--now $now --json && err_has "counts the damaged" "1 damaged entry skipped"
	ok_if "... and its summary is printed (damaged 1)" grep -q '"damaged":1' "$T/out"
else
	echo "not ok - redis-server is missing (make deps installs it)"
	fails=$((fails + 1))
fi

[ "$fails" -eq 0 ] || { echo "# $fails failed"; exit 1; }

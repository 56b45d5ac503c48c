#!/bin/sh
# l2_client.sh: libdnsnap-l2, the Redis client (engine/l2), against real
# Redis 7 servers started here on loopback, driven by tests/helpers/l2drive
# (the client in the library's thread, or with --loop in a poll() loop of
# l2drive's as an embedder drives it, through its "session" commands; the
# bulk calls through fill/scan):
#   - one server: SET PXAT then GET (the key's PTTL is the one asked); a
#     GET to a SIGSTOPped Redis ends in a timeout, the breaker opens, and
#     closes once it runs again; Redis killed: errors, the breaker opens,
#     GETs refused; restarted: reconnected, the breaker closes;
#   - the embedder's loop (--loop): SET, GET, a miss, a stopped Redis's
#     timeout and the breaker, a SET queued at dnsnap_l2_free() sent;
#   - values that are not values: a 10 MB string and a list are errors,
#     the next GET is answered; SCAN skips them, and escapes the prefix's
#     glob characters;
#   - AUTH: NOAUTH without a password (logged), a 0600 file works, a 0644
#     one is refused;
#   - a 3-master cluster: keys spread over the masters, every one read back
#     through the slot map, scanned once each; ASK during a manual slot
#     migration and MOVED after it; a redis-cli reshard while GETs run.
# Usage (from the repository root): tests/e2e/l2_client.sh BUILD
build=${1:-build}
. tests/e2e/lib.sh
need "$build/l2drive"
for t in redis-server redis-cli; do
	command -v $t >/dev/null || { echo "# $t missing (redis-server, redis-tools)"; exit 77; }
done

# redis PORT [ARGS]: a Redis on PORT (its PID in $rpid), answering
redis() {
	_p=$1
	shift
	mkdir -p "$tmp/r-$_p" # its own: a replica writes dump.rdb there, others would load it
	redis-server --port "$_p" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
		--dir "$tmp/r-$_p" "$@" >>"$tmp/redis-$_p.log" 2>&1 &
	rpid=$!
	e2e_procs="$e2e_procs $rpid"
	wait_for 10 redis_up "$_p"
}
redis_up() { redis-cli -p "$1" ping 2>&1 | grep -q -e PONG -e NOAUTH; }
# free_port [BELOW]: a port where nothing listens (below BELOW: a cluster
# node's bus port is its port + 10000)
free_port() {
	while :; do
		_fp=$(pick_port)
		[ "$_fp" -lt "${1:-40000}" ] || continue
		redis-cli -p "$_fp" ping >/dev/null 2>&1 || redis-cli -p $((_fp + 10000)) ping \
			>/dev/null 2>&1 || break
	done
	echo "$_fp"
}

# session NAME URL [OPTIONS]: l2drive session, commands through ask
session() {
	_s=$1
	shift
	rm -f "$tmp/$_s.in"
	mkfifo "$tmp/$_s.in"
	: >"$tmp/$_s.out"
	"$build/l2drive" session "$@" <"$tmp/$_s.in" >>"$tmp/$_s.out" 2>"$tmp/$_s.err" &
	e2e_procs="$e2e_procs $!"
	exec 3>"$tmp/$_s.in"
	cur=$_s
}
end_session() { echo quit >&3; exec 3>&-; wait_for 10 grep -q '^quit' "$tmp/$cur.out"; }
grown() { [ "$(wc -l <"$tmp/$cur.out")" -gt "$_n" ]; }
# ask COMMAND: its answer line in $a
ask() {
	_n=$(wc -l <"$tmp/$cur.out")
	echo "$*" >&3
	wait_for 60 grown || bail "l2drive answers '$*'" "$tmp/$cur.err"
	a=$(sed -n "$((_n + 1))p" "$tmp/$cur.out")
}
# stat NAME: the last "stats" answer's NAME=
stat() { echo "$a" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
is() { [ "$1" = "$2" ] || { echo "#   got '$1', not '$2'"; return 1; }; }
gt() { [ "${1:-0}" -gt "$2" ] || { echo "#   got '$1', not more than $2"; return 1; }; }

# ---------------------------------------------------------- one server
P=$(free_port)
redis "$P" || bail "redis-server on $P starts" "$tmp/redis-$P.log"
R=$rpid
U=redis://127.0.0.1:$P
session one "$U" --wait 20
ask put k v 60000
ask drain 5000
ok_if "SET is answered" is "$a" "drain ok"
ask get k
ok_if "GET after SET: a hit" is "$(echo "$a" | cut -d' ' -f1-4)" "get hit 1 v"
pttl=$(redis-cli -p "$P" pttl dnsnap:k)
ok_if "PXAT sets the expiry asked (PTTL $pttl)" sh -c "[ $pttl -gt 50000 ] && [ $pttl -le 60000 ]"

kill -STOP "$R"
ask get k
ok_if "a stopped Redis: the GET times out" is "$(echo "$a" | cut -d' ' -f2)" timeout
ms=$(echo "$a" | cut -d' ' -f3)
echo "# GET to a stopped Redis ended after $ms ms (--wait 20)"
ok_if "... without waiting for Redis" [ "$ms" -lt 2000 ]
ask until open 5000
ok_if "timeouts open the breaker" is "$a" "until open ok"
kill -CONT "$R"
ask until closed 20000
ok_if "Redis again: the breaker closes" is "$a" "until closed ok"

kill -KILL "$R"
ask gets x 10
ok_if "Redis killed: errors" is "$(echo "$a" | cut -d' ' -f2-3)" "hit=0 miss=0"
ask until open 5000
ok_if "errors open the breaker" is "$a" "until open ok"
ask get k
ok_if "open: a GET is refused" is "$(echo "$a" | cut -d' ' -f2)" refused
redis "$P" || bail "redis-server restarts on $P" "$tmp/redis-$P.log"
R=$rpid
ask until closed 30000
ok_if "Redis restarted: the breaker closes" is "$a" "until closed ok"
ask stats
ok_if "... reconnected" gt "$(stat reconnects)" 0
ok_if "... one node up" is "$(stat nodes)" 1
ok_if "... errors and refusals counted" gt "$(stat refused)" 0
ok_if "a log line says why" grep -q "l2: redis 127.0.0.1:$P: " "$tmp/one.err"

end_session

# values that are not values, read by the thread (a bound of 5 s: the 10 MB
# are read whole, then refused)
head -c 10000000 /dev/zero | tr '\0' x | redis-cli -p "$P" -x set dnsnap:huge >/dev/null
redis-cli -p "$P" rpush dnsnap:list a >/dev/null
redis-cli -p "$P" set dnsnap:k2 v2 >/dev/null
session big "$U" --wait 5000
ask get huge
ok_if "a 10 MB value: an error" is "$(echo "$a" | cut -d' ' -f2)" error
echo "# $a"
ask get list
ok_if "a list: an error" is "$(echo "$a" | cut -d' ' -f2)" error
ask get k2
ok_if "... the next GET is answered" is "$(echo "$a" | cut -d' ' -f1-4)" "get hit 2 v2"
end_session

# a replica takes the reads; down, the primary does
PR=$(free_port)
redis "$PR" --replicaof 127.0.0.1 "$P" || bail "a replica starts" "$tmp/redis-$PR.log"
RR=$rpid
replicated() { redis-cli -p "$PR" info replication | grep -q 'master_link_status:up'; }
wait_for 30 replicated || bail "the replica follows" "$tmp/redis-$PR.log"
session rep "$U" --replica "redis://127.0.0.1:$PR" --wait 1000
ask put r1 one 60000
ask drain 5000
wait_for 10 sh -c "redis-cli -p $PR exists dnsnap:r1 | grep -q 1"
redis-cli -p "$P" set dnsnap:onlyprimary x >/dev/null
redis-cli -p "$PR" config set replica-read-only no >/dev/null
redis-cli -p "$PR" set dnsnap:onlyreplica y >/dev/null
ask get onlyreplica
ok_if "a replica: GETs go there" is "$(echo "$a" | cut -d' ' -f1-4)" "get hit 1 y"
ask stats
ok_if "... SETs to the primary" is "$(stat writes)" 1
stop "$RR"
ask get r1
ask until closed 10000
ask get onlyprimary
ok_if "... the replica down: GETs go to the primary" \
	is "$(echo "$a" | cut -d' ' -f1-4)" "get hit 1 x"
end_session

# a Unix socket and a database
redis "$(free_port)" --unixsocket "$tmp/r.sock" --unixsocketperm 700 ||
	bail "redis-server on a Unix socket starts"
session unix "unix://$tmp/r.sock?db=3" --wait 1000
ask put u1 uv 60000
ask drain 5000
ask get u1
ok_if "unix:///PATH?db=3: SET and GET" is "$(echo "$a" | cut -d' ' -f1-4)" "get hit 2 uv"
ask put u2 queued-at-quit 60000
end_session
ok_if "... in database 3" is "$(redis-cli -s "$tmp/r.sock" -n 3 get dnsnap:u1)" uv
ok_if "a SET queued at dnsnap_l2_free() is sent" \
	is "$(redis-cli -s "$tmp/r.sock" -n 3 get dnsnap:u2)" queued-at-quit

# the embedder's loop: l2drive's own thread polls dnsnap_l2_fd() and calls
# dnsnap_l2_process(); the hooks run there, dnsnap_l2_free() too
session loop "$U" --wait 20 --loop
ask put l1 lv 60000
ask drain 5000
ok_if "--loop: SET is answered" is "$a" "drain ok"
ask get l1
ok_if "--loop: GET after SET, a hit" is "$(echo "$a" | cut -d' ' -f1-4)" "get hit 2 lv"
ask get nothing-here
ok_if "--loop: a missing key, a miss" is "$(echo "$a" | cut -d' ' -f2)" miss
kill -STOP "$R"
ask get l1
ok_if "--loop: a stopped Redis, the GET times out" is "$(echo "$a" | cut -d' ' -f2)" timeout
ask until open 5000
ok_if "--loop: timeouts open the breaker" is "$a" "until open ok"
kill -CONT "$R"
ask until closed 20000
ok_if "--loop: Redis again, the breaker closes" is "$a" "until closed ok"
ask put l2 queued-at-quit 60000
end_session
ok_if "--loop: a SET queued at dnsnap_l2_free() is sent" \
	is "$(redis-cli -p "$P" get dnsnap:l2)" queued-at-quit
ok_if "--loop: no failure of dnsnap_l2_process()" not_grep -q 'process failed' "$tmp/loop.err"

# bulk: fill and scan, under a prefix with glob characters
"$build/l2drive" fill "$U" 2500 20 --prefix 'b*:' >"$tmp/fill" 2>&1
ok_if "bulk: 2500 SETs" grep -q '^filled 2500$' "$tmp/fill"
redis-cli -p "$P" set 'bx:other' 1 >/dev/null
head -c 2000000 /dev/zero | tr '\0' y | redis-cli -p "$P" -x set 'b*:big' >/dev/null
redis-cli -p "$P" rpush 'b*:list' a >/dev/null
"$build/l2drive" scan "$U" --prefix 'b*:' >"$tmp/scan" 2>&1
ok_if "bulk: scan finds the 2500, skips the 2 MB value and the list" \
	grep -q '^scanned 2500 skipped 2$' "$tmp/scan"
ok_if "... and not bx:other (the '*' escaped)" not_grep -q '^other ' "$tmp/scan"
ok_if "... keys without the prefix" grep -q '^key2499 20$' "$tmp/scan"
ttl=$(redis-cli -p "$P" pttl 'b*:key7')
ok_if "... with the expiry given (PTTL $ttl)" sh -c "[ $ttl -gt 500000 ] && [ $ttl -le 600000 ]"

# --------------------------------------------------------------- AUTH
PA=$(free_port)
redis "$PA" --requirepass s3cret || bail "redis-server with a password starts"
session noauth "redis://127.0.0.1:$PA" --wait 50
ask get k
ok_if "AUTH: none given: an error" is "$(echo "$a" | cut -d' ' -f2)" error
end_session
ok_if "... logged with Redis's reason" grep -q NOAUTH "$tmp/noauth.err"
printf 's3cret\n' >"$tmp/auth"
chmod 600 "$tmp/auth"
session auth "redis://127.0.0.1:$PA" --wait 50 --auth-file "$tmp/auth"
ask get k
ok_if "AUTH from a 0600 file" is "$(echo "$a" | cut -d' ' -f2)" miss
end_session
chmod 644 "$tmp/auth"
"$build/l2drive" scan "redis://127.0.0.1:$PA" --auth-file "$tmp/auth" >"$tmp/a644" 2>&1
ok_if "a 0644 AUTH file is refused" grep -q 'chmod 600' "$tmp/a644"

# ------------------------------------------------------------ cluster
C1=$(free_port 22000)
C2=$(free_port 22000)
C3=$(free_port 22000)
for p in $C1 $C2 $C3; do
	redis "$p" --cluster-enabled yes --cluster-config-file "$tmp/nodes-$p.conf" ||
		bail "cluster node $p starts" "$tmp/redis-$p.log"
done
redis-cli --cluster create "127.0.0.1:$C1" "127.0.0.1:$C2" "127.0.0.1:$C3" --cluster-yes \
	>"$tmp/create" 2>&1 || bail "redis-cli --cluster create" "$tmp/create"
cluster_ok() {
	for p in $C1 $C2 $C3; do
		redis-cli -p "$p" cluster info | grep -q 'state:ok' || return 1
	done
}
wait_for 30 cluster_ok || bail "the cluster is up"
CU=redis-cluster://127.0.0.1:$C2
"$build/l2drive" fill "$CU" 3000 >"$tmp/cfill" 2>&1
ok_if "cluster: 3000 SETs" grep -q '^filled 3000$' "$tmp/cfill"
spread=1
for p in $C1 $C2 $C3; do
	n=$(redis-cli -p "$p" dbsize)
	echo "# node $p: $n keys"
	[ "$n" -gt 500 ] || spread=0
done
ok_if "... spread over the 3 masters" [ "$spread" = 1 ]
"$build/l2drive" scan "$CU" >"$tmp/cscan" 2>&1
ok_if "... scanned on every master" grep -q '^scanned 3000 skipped 0$' "$tmp/cscan"
ok_if "... each key once" is "$(grep '^key' "$tmp/cscan" | sort -u | wc -l | tr -d ' ')" 3000

session cl "$CU" --wait 1000
ask gets key 3000
ok_if "cluster: every key read back" is "$a" "gets hit=3000 miss=0 timeout=0 error=0 refused=0"
# ASK: key0's slot half-way from its owner to another node
slot=$(redis-cli -p "$C1" cluster keyslot dnsnap:key0)
src=""
for p in $C1 $C2 $C3; do
	redis-cli -p "$p" get dnsnap:key0 | grep -q MOVED || src=$p
done
dst=$C1
[ "$src" = "$C1" ] && dst=$C2
sid=$(redis-cli -p "$src" cluster myid)
did=$(redis-cli -p "$dst" cluster myid)
redis-cli -p "$dst" cluster setslot "$slot" importing "$sid" >/dev/null
redis-cli -p "$src" cluster setslot "$slot" migrating "$did" >/dev/null
redis-cli -p "$src" migrate 127.0.0.1 "$dst" "" 0 5000 keys dnsnap:key0 >/dev/null
ask get key0
ok_if "a key being migrated: read through ASK" is "$(echo "$a" | cut -d' ' -f1-3)" "get hit 16"
ask stats
ok_if "... ASK followed" gt "$(stat ask)" 0
"$build/l2drive" fill "$CU" 1 >"$tmp/askfill" 2>&1
ok_if "bulk: a SET to the migrating slot follows ASK" grep -q '^filled 1$' "$tmp/askfill"
"$build/l2drive" scan "$CU" >"$tmp/askscan" 2>&1
ok_if "bulk: the scan reads the migrated key (MOVED, then ASK)" \
	grep -q '^scanned 3000 skipped 0$' "$tmp/askscan"
ok_if "... key0 among them" grep -q '^key0 16$' "$tmp/askscan"
for p in $C1 $C2 $C3; do
	redis-cli -p "$p" cluster setslot "$slot" node "$did" >/dev/null
done
moved0=$(stat moved)
ask get key0
ok_if "the slot moved: read through MOVED" is "$(echo "$a" | cut -d' ' -f1-3)" "get hit 16"
ask stats
ok_if "... MOVED followed" gt "$(stat moved)" "$moved0"
# a reshard while GETs run
redis-cli --cluster reshard "127.0.0.1:$C1" --cluster-from "$(redis-cli -p "$C3" cluster myid)" \
	--cluster-to "$(redis-cli -p "$C1" cluster myid)" --cluster-slots 500 --cluster-yes \
	>"$tmp/reshard" 2>&1 &
rs=$!
e2e_procs="$e2e_procs $rs"
rounds=0
while running "$rs" && [ $rounds -lt 200 ]; do
	ask gets key 3000
	rounds=$((rounds + 1))
done
wait "$rs"
ok_if "redis-cli reshard ran" [ $? -eq 0 ]
echo "# $rounds rounds of 3000 GETs during the reshard"
# MIGRATE blocks a node for a while: GETs may time out meanwhile (a slow host,
# a sanitizer), enough to open the breaker
ask until closed 60000
ask gets key 3000
ok_if "after the reshard: every key read" is "$a" "gets hit=3000 miss=0 timeout=0 error=0 refused=0"
ask stats
echo "# $a"
ok_if "... redirections followed (moved $(stat moved), ask $(stat ask))" \
	gt "$(stat moved)" "$moved0"
ok_if "... 3 nodes up" is "$(stat nodes)" 3
end_session

# AUTH on every node
for p in $C1 $C2 $C3; do
	redis-cli -p "$p" config set requirepass cl-s3cret >/dev/null
done
printf 'cl-s3cret\n' >"$tmp/clauth"
chmod 600 "$tmp/clauth"
session clauth "$CU" --wait 1000 --auth-file "$tmp/clauth"
ask gets key 3000
ok_if "cluster with AUTH: every key read" is "$a" "gets hit=3000 miss=0 timeout=0 error=0 refused=0"
end_session
session clnoauth "$CU" --wait 1000
ask get key1
ok_if "... without it: an error" is "$(echo "$a" | cut -d' ' -f2)" error
end_session
finish

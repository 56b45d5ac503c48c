# bench/lib.sh: what the benchmark scripts share (sourced, after they set
# tmp, the directory they own, and pids, the processes their cleanup stops):
# ports, waiting for listeners, stopping, and NSD serving a zone. Ports are
# drawn below the kernel's ephemeral range (32768-60999), which clients take:
# a server of ours there could be handed to a client socket (tests/e2e/lib.sh,
# pick_port, says why).

# A port free for UDP and TCP on 127.0.0.1 (others may run servers here too).
free_port() {
	while :; do
		p=$(shuf -i 20000-32767 -n 1)
		[ -z "$(ss -Hanut "( sport = :$p )")" ] && { echo "$p"; return; }
	done
}

# wait_udp PORT N: until N UDP sockets listen on PORT (a server's threads or
# processes); exit 1 after 3,000 tries
wait_udp() {
	i=0
	while [ "$(ss -Hlnu "( sport = :$1 )" | wc -l)" -lt "$2" ]; do
		i=$((i + 1))
		[ $i -lt 3000 ] || { echo "$0: nothing listens on $1" >&2; exit 1; }
		sleep 0.005
	done
}

# stop PID: SIGTERM, and wait until it is gone (or a zombie: its parent may
# be gone); SIGKILL after 3,000 tries
stop() {
	kill "$1" 2>/dev/null || return 0
	i=0
	while [ -e /proc/$1 ] && [ "$(awk '{print $3}' /proc/$1/stat 2>/dev/null)" != Z ]; do
		i=$((i + 1))
		[ $i -lt 3000 ] || { kill -9 "$1" 2>/dev/null; break; }
		sleep 0.005
	done
}

# nsd_start ZONE ZONEFILE PORT LOG QNAME QTYPE: NSD on 127.0.0.1@PORT serving
# ZONE from ZONEFILE (its files in $tmp/nsd, its log LOG; rate limits off),
# its pid in $nsd_pid and added to $pids; returns once QNAME QTYPE is
# answered NOERROR (exit 1, the log shown, after 60 s)
nsd_start() {
	mkdir -p "$tmp/nsd"
	cat >"$tmp/nsd/nsd.conf" <<NSDCONF
server:
	ip-address: 127.0.0.1@$3
	server-count: 1
	username: ""
	chroot: ""
	zonesdir: "$tmp"
	database: ""
	zonelistfile: "$tmp/nsd/zone.list"
	xfrdfile: "$tmp/nsd/xfrd.state"
	xfrdir: "$tmp/nsd"
	pidfile: "$tmp/nsd/nsd.pid"
	logfile: "$4"
	minimal-responses: yes
	hide-version: yes
	rrl-ratelimit: 0
	rrl-whitelist-ratelimit: 0
remote-control:
	control-enable: no
zone:
	name: "$1"
	zonefile: "$2"
NSDCONF
	nsd -d -c "$tmp/nsd/nsd.conf" 2>>"$4" &
	nsd_pid=$!
	pids="$pids $nsd_pid"
	i=0
	until dig +tries=1 +time=1 @127.0.0.1 -p "$3" "$5" "$6" 2>/dev/null |
		grep -q 'status: NOERROR'; do
		i=$((i + 1))
		[ $i -lt 600 ] || { cat "$4" >&2; exit 1; }
		sleep 0.1
	done
}

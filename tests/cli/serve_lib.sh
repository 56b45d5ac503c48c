# serve_lib.sh: dnsnap serve started, stopped and asked by the CLI tests of
# running servers (test_control.sh, test_control_hostile.sh; test_serve_ops.sh
# takes poll and a_of), and a flood of unique names. Sourced after lib.sh;
# needs $bin and $T, and adds each server's pid to $pids, which the test's
# cleanup kills.
# shellcheck shell=sh disable=SC2154,SC2034 # bin, T: the caller's; spid, sport: for it

# poll FILE TEXT [TENTHS]: FILE holds TEXT within TENTHS tenths of a second (50)
poll() {
	i=0
	while [ $i -lt "${3:-50}" ]; do
		grep -qF -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}
# start NAME ARGS...: dnsnap serve ARGS on a free port, its output in
# $T/NAME.out and its log in $T/NAME.log; $spid and $sport once it is ready
start() {
	_n=$1
	shift
	"$bin" serve "$@" --listen 127.0.0.1:0 --threads 1 >"$T/$_n.out" 2>"$T/$_n.log" &
	spid=$!
	pids="$pids $spid"
	poll "$T/$_n.log" "ready: answering" ||
		{ echo "not ok - $_n: not ready"; sed 's/^/#   /' "$T/$_n.log"; return 1; }
	sport=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$T/$_n.log" | head -1)
}
# stop PID: SIGTERM, wait for it; its exit status
stop() {
	kill -TERM "$1"
	wait "$1"
}
# a_of PORT NAME: the A records the server on PORT answers for NAME, on one line
a_of() { dig @127.0.0.1 -p "$1" +short +tries=1 +time=3 "$2" A 2>/dev/null | tr '\n' ' '; }
# rcode_of PORT NAME: the rcode of its answer
rcode_of() {
	dig @127.0.0.1 -p "$1" +tries=1 +time=3 "$2" A 2>/dev/null |
		sed -n 's/.*status: \([A-Z]*\),.*/\1/p'
}
# flood PORT N SUFFIX: N queries for unique names uN.SUFFIX A sent to PORT over
# UDP, paced (200 at a time) and their replies read and dropped
flood() {
	python3 - "$1" "$2" "$3" <<'EOF'
import socket, struct, sys, time
port, n, suffix = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.0)
def q(i, name):
    m = struct.pack(">HHHHHH", i & 0xffff, 0x0100, 1, 0, 0, 0)
    for l in name.split("."):
        m += bytes([len(l)]) + l.encode()
    return m + b"\0" + struct.pack(">HH", 1, 1)
for i in range(n):
    s.sendto(q(i, "u%d.%s" % (i, suffix)), ("127.0.0.1", port))
    if i % 200 == 199:
        time.sleep(0.02)
        try:
            while True:
                s.recv(4096)
        except OSError:
            pass
EOF
}

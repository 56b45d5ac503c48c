#!/usr/bin/env python3
"""fakeup.py: a scriptable fake upstream resolver for tests/e2e/forward_faults.sh.

    fakeup.py serve --listen ADDR:PORT [--port-file F] [--log F] [--control F]
                    [--mode MODE] [--addr A] [--ttl N] [--delay MS] [--tcp tc|close]
    fakeup.py burst --server ADDR:PORT --name NAME [--type A] [--count N] [--wait S]

serve answers on UDP and TCP of ADDR:PORT (port 0: one free for both, written
to --port-file when both are bound). Each query received is logged to --log,
a line "udp|tcp NAME TYPE" (NAME as received, case kept), flushed at once:
the log's line count is the number of queries. What it does is MODE, or what
the --control file says when it exists (read at every query; "key=value"
words: mode=, addr=, ttl=, delay=, tcp=), so a test switches behaviour
without restarting it:

  answer          NOERROR: A ADDR (AAAA ::ffff:ADDR, TXT "fakeup ADDR") with
                  TTL; a first label "nx": NXDOMAIN; other types: NODATA;
                  the question copied byte for byte (case kept)
  silent          no reply (TCP: the connection is held open, unanswered)
  slow            answer after --delay ms
  servfail        SERVFAIL
  garbage         the right ID, QR=1 and question, then an answer record cut
                  short (a malformed reply that matches the query)
  tc              TC=1 and no records, always; over TCP TC=1 too (tcp=tc) or
                  the connection closed unanswered (tcp=close)
  other           a reply with the right ID for another name ("other-" + NAME)
  lowercase-reply the answer with the question (and owners) lower-cased
  forge           forged replies (A 6.6.6.6) before the right one: from
                  127.0.0.2 (same port as ours) and from 127.0.0.1 at another
                  port, each right in ID and question; from our socket with a
                  wrong ID, then the right ID with another question; then,
                  100 ms later, the right answer
  forge-only      as forge, without the right answer

burst sends --count copies of one question at once, each from its own
socket with its own ID, and waits up to --wait s for the replies; it prints
"sent N answered K" and a line "rcode R: N" per rcode seen, and "addr A: N"
per A record seen. Only the Python standard library.
"""
import argparse
import os
import random
import socket
import struct
import sys
import threading
import time

FORGED = "6.6.6.6"
T_A, T_AAAA, T_TXT, T_SOA, T_OPT = 1, 28, 16, 6, 41


def parse_query(msg):
    """(id, flags, qname wire, qname text, qtype, qclass, question end, do bit)"""
    if len(msg) < 12:
        return None
    qid, flags, qd, an, ns, ar = struct.unpack("!HHHHHH", msg[:12])
    if qd != 1:
        return None
    i = 12
    labels = []
    while True:
        if i >= len(msg):
            return None
        n = msg[i]
        if n == 0:
            i += 1
            break
        if n & 0xC0 or i + 1 + n > len(msg):
            return None
        labels.append(msg[i + 1:i + 1 + n].decode("latin-1"))
        i += 1 + n
    qwire = msg[12:i]
    if i + 4 > len(msg):
        return None
    qtype, qclass = struct.unpack("!HH", msg[i:i + 4])
    qend = i + 4
    do = False
    # the OPT record, if it is the first additional record after the question
    j = qend
    if ar >= 1 and an == 0 and ns == 0 and j + 11 <= len(msg) and msg[j] == 0:
        rtype, _, ttl = struct.unpack("!HHI", msg[j + 1:j + 9])
        if rtype == T_OPT:
            do = bool(ttl & 0x8000)
    return qid, flags, qwire, ".".join(labels) + ".", qtype, qclass, qend, do, ar > 0


def name_wire(text):
    out = b""
    for lab in text.rstrip(".").split("."):
        if lab:
            b = lab.encode("latin-1")
            out += bytes([len(b)]) + b
    return out + b"\0"


def lower_wire(w):
    return bytes(c + 32 if 65 <= c <= 90 else c for c in w)


class Upstream:
    def __init__(self, a):
        self.a = a
        self.lock = threading.Lock()
        self.log = open(a.log, "a") if a.log else None

    def conf(self):
        c = {"mode": self.a.mode, "addr": self.a.addr, "ttl": str(self.a.ttl),
             "delay": str(self.a.delay), "tcp": self.a.tcp}
        if self.a.control and os.path.exists(self.a.control):
            with open(self.a.control) as f:
                for w in f.read().split():
                    if "=" in w:
                        k, v = w.split("=", 1)
                        c[k] = v
        return c

    def note(self, proto, q):
        if self.log:
            with self.lock:
                self.log.write("%s %s %d\n" % (proto, q[3], q[4]))
                self.log.flush()

    def reply(self, q, c, rcode=0, tc=False, qwire=None, addr=None, qid=None):
        """A reply to query q as wire bytes."""
        qid0, flags, qw, qtext, qtype, qclass, _, do, edns = q
        qwire = qw if qwire is None else qwire
        addr = c["addr"] if addr is None else addr
        ttl = int(c["ttl"])
        rd_cd = flags & 0x0110
        first = qtext.split(".")[0].lower()
        if rcode == 0 and first == "nx":
            rcode = 3
        answers = []
        if rcode == 0 and not tc and qclass == 1:
            if qtype == T_A:
                answers.append((T_A, socket.inet_aton(addr)))
            elif qtype == T_AAAA:
                answers.append((T_AAAA, socket.inet_pton(socket.AF_INET6, "::ffff:" + addr)))
            elif qtype == T_TXT:
                t = ("fakeup " + addr).encode()
                answers.append((T_TXT, bytes([len(t)]) + t))
        auth = []
        if rcode == 3 or (rcode == 0 and not answers and not tc):
            soa = name_wire("ns.fake.") + name_wire("host.fake.") + struct.pack(
                "!IIIII", 1, 3600, 600, 86400, ttl)
            auth.append((name_wire("fake."), T_SOA, soa))
        hflags = 0x8000 | 0x0080 | rd_cd | rcode | (0x0200 if tc else 0)
        out = struct.pack("!HHHHHH", qid0 if qid is None else qid, hflags, 1, len(answers),
                          len(auth), 1 if edns else 0)
        out += qwire + struct.pack("!HH", qtype, qclass)
        for t, rd in answers:
            out += qwire + struct.pack("!HHIH", t, 1, ttl, len(rd)) + rd
        for owner, t, rd in auth:
            out += owner + struct.pack("!HHIH", t, 1, ttl, len(rd)) + rd
        if edns:
            out += b"\0" + struct.pack("!HHIH", T_OPT, 1232, 0x8000 if do else 0, 0)
        return out

    def garbage(self, q):
        qid, flags, qw, _, qtype, qclass, _, _, _ = q
        out = struct.pack("!HHHHHH", qid, 0x8180 | (flags & 0x0110), 1, 1, 0, 0)
        out += qw + struct.pack("!HHH", qtype, qclass, 0xC0FF)  # a pointer past the end
        return out + bytes(random.getrandbits(8) for _ in range(5))

    def responses(self, q, c, proto):
        """[(delay s, bytes, how)]: how is "main" (our socket), "other-addr",
        "other-port"; bytes None: close (TCP)."""
        mode = c["mode"]
        if mode == "silent":
            return []
        if mode == "answer":
            return [(0, self.reply(q, c), "main")]
        if mode == "slow":
            return [(int(c["delay"]) / 1000.0, self.reply(q, c), "main")]
        if mode == "servfail":
            return [(0, self.reply(q, c, rcode=2), "main")]
        if mode == "garbage":
            return [(0, self.garbage(q), "main")]
        if mode == "tc":
            if proto == "tcp" and c["tcp"] == "close":
                return [(0, None, "main")]
            return [(0, self.reply(q, c, tc=True), "main")]
        if mode == "other":
            return [(0, self.reply(q, c, qwire=name_wire("other-" + q[3])), "main")]
        if mode == "lowercase-reply":
            return [(0, self.reply(q, c, qwire=lower_wire(q[2])), "main")]
        if mode in ("forge", "forge-only"):
            wrong_id = (q[0] + 1 + random.randrange(65534)) % 65536
            r = [(0, self.reply(q, c, addr=FORGED), "other-addr"),
                 (0, self.reply(q, c, addr=FORGED), "other-port"),
                 (0, self.reply(q, c, addr=FORGED, qid=wrong_id), "main"),
                 (0, self.reply(q, c, addr=FORGED, qwire=name_wire("forged-" + q[3])),
                  "main")]
            if proto == "tcp":  # one stream: only what comes on it counts
                r = [x for x in r if x[2] == "main"]
            if mode == "forge":
                r.append((0.1, self.reply(q, c), "main"))
            return r
        sys.stderr.write("fakeup: unknown mode %r\n" % mode)
        return []


def serve(a):
    up = Upstream(a)
    host, port = a.listen.rsplit(":", 1)
    port = int(port)
    for _ in range(50):
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind((host, port))
        p = u.getsockname()[1]
        t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            t.bind((host, p))
            break
        except OSError:
            u.close()
            t.close()
            if port:
                raise
    else:
        sys.exit("fakeup: no port free for both UDP and TCP")
    t.listen(64)
    # the forgers: another address (127.0.0.2, our port when free) and another port
    other_addr = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        other_addr.bind(("127.0.0.2", p))
    except OSError:
        other_addr.bind(("127.0.0.2", 0))
    other_port = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    other_port.bind((host, 0))
    senders = {"main": u, "other-addr": other_addr, "other-port": other_port}
    if a.port_file:
        with open(a.port_file + ".tmp", "w") as f:
            f.write("%d\n" % p)
        os.rename(a.port_file + ".tmp", a.port_file)

    def send_later(items, dest):
        for delay, data, how in items:
            if delay:
                time.sleep(delay)
            try:
                senders[how].sendto(data, dest)
            except OSError:
                pass

    def udp_loop():
        while True:
            msg, src = u.recvfrom(65535)
            q = parse_query(msg)
            if q is None:
                continue
            up.note("udp", q)
            items = [x for x in up.responses(q, up.conf(), "udp") if x[1] is not None]
            if items and all(d == 0 for d, _, _ in items):
                send_later(items, src)
            elif items:
                threading.Thread(target=send_later, args=(items, src), daemon=True).start()

    def tcp_conn(s):
        try:
            while True:
                hdr = b""
                while len(hdr) < 2:
                    b = s.recv(2 - len(hdr))
                    if not b:
                        return
                    hdr += b
                n = struct.unpack("!H", hdr)[0]
                msg = b""
                while len(msg) < n:
                    b = s.recv(n - len(msg))
                    if not b:
                        return
                    msg += b
                q = parse_query(msg)
                if q is None:
                    return
                up.note("tcp", q)
                c = up.conf()
                items = up.responses(q, c, "tcp")
                if c["mode"] == "silent":
                    while s.recv(4096):
                        pass
                    return
                for delay, data, _ in items:
                    if delay:
                        time.sleep(delay)
                    if data is None:
                        return
                    s.sendall(struct.pack("!H", len(data)) + data)
        except OSError:
            pass
        finally:
            s.close()

    threading.Thread(target=udp_loop, daemon=True).start()
    while True:
        s, _ = t.accept()
        threading.Thread(target=tcp_conn, args=(s,), daemon=True).start()


def burst(a):
    host, port = a.server.rsplit(":", 1)
    qtype = {"A": T_A, "AAAA": T_AAAA, "TXT": T_TXT}[a.type.upper()]
    socks = {}
    for _ in range(a.count):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect((host, int(port)))
        qid = random.randrange(65536)
        while qid in socks:
            qid = random.randrange(65536)
        socks[qid] = s
    msgs = {qid: struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + name_wire(a.name) +
            struct.pack("!HH", qtype, 1) for qid in socks}
    for qid, s in socks.items():
        s.send(msgs[qid])
    rcodes, addrs, answered = {}, {}, 0
    pending = dict(socks)
    deadline = time.time() + a.wait
    import select
    while pending and time.time() < deadline:
        r, _, _ = select.select(list(pending.values()), [], [], max(0, deadline - time.time()))
        for s in r:
            data = s.recv(65535)
            qid = struct.unpack("!H", data[:2])[0] if len(data) >= 12 else -1
            if qid not in pending or pending[qid] is not s:
                continue
            del pending[qid]
            answered += 1
            rc = struct.unpack("!H", data[2:4])[0] & 15
            rcodes[rc] = rcodes.get(rc, 0) + 1
            an = struct.unpack("!H", data[6:8])[0]
            q = parse_query(data)
            i = q[6] if q else len(data)
            for _ in range(an):  # owner: a pointer or our name; then type..rdlength
                if i < len(data) and data[i] & 0xC0 == 0xC0:
                    i += 2
                else:
                    while i < len(data) and data[i]:
                        i += 1 + data[i]
                    i += 1
                t, _, _, rdl = struct.unpack("!HHIH", data[i:i + 10])
                if t == T_A and rdl == 4:
                    ip = socket.inet_ntoa(data[i + 10:i + 14])
                    addrs[ip] = addrs.get(ip, 0) + 1
                i += 10 + rdl
    print("sent %d answered %d" % (a.count, answered))
    for rc in sorted(rcodes):
        print("rcode %d: %d" % (rc, rcodes[rc]))
    for ip in sorted(addrs):
        print("addr %s: %d" % (ip, addrs[ip]))


def main():
    p = argparse.ArgumentParser(description="a scriptable fake upstream resolver")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve")
    s.add_argument("--listen", default="127.0.0.1:0")
    s.add_argument("--port-file")
    s.add_argument("--log")
    s.add_argument("--control")
    s.add_argument("--mode", default="answer")
    s.add_argument("--addr", default="192.0.2.1")
    s.add_argument("--ttl", type=int, default=300)
    s.add_argument("--delay", type=int, default=300)
    s.add_argument("--tcp", default="tc", choices=["tc", "close"])
    b = sub.add_parser("burst")
    b.add_argument("--server", required=True)
    b.add_argument("--name", required=True)
    b.add_argument("--type", default="A")
    b.add_argument("--count", type=int, default=100)
    b.add_argument("--wait", type=float, default=5)
    a = p.parse_args()
    try:
        serve(a) if a.cmd == "serve" else burst(a)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""tcphog.py: hostile and ordinary TCP clients of a DNS server, for
tests/e2e/hostile.sh and bench/hostile/.

  tcphog.py hog --server IP:PORT --source ADDR --conns N --every S --status FILE
      holds N connections from ADDR open (each one closed by the server is
      opened again, a second later at most), and sends a query on each every
      S seconds (--no-reopen: those closed stay closed); writes
      "open K max M opened T answers A" to FILE each second.
      Runs until killed (SIGTERM) or --seconds.
  tcphog.py probe --server IP:PORT --source ADDR --count N [--gap S]
      sends N queries, each on a new connection (as dig +tcp does), each
      given --timeout seconds (connect and answer); prints
      "answered A of N".
  tcphog.py ask --server IP:PORT [--tcp] QNAME TYPE CLASS...
      one query per TYPE/CLASS pair (numbers), RD=1 with EDNS (1232), over
      UDP or TCP; prints "TYPE CLASS RCODE" per pair (RCODE a number, or
      "none": no reply in --timeout seconds).
  tcphog.py slowhttp --server IP:PORT --conns N --status FILE
      holds N HTTP connections open, each sending a request one byte a
      second (a slowloris); each one closed is opened again.

The query: QNAME (--qname, default www.example.test) type A, RD=1.
"""
import argparse
import os
import random
import selectors
import socket
import struct
import sys
import time


def query(qname, qid, qtype=1, qclass=1, edns=False):
    q = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 1 if edns else 0)
    for label in qname.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    q += b"\x00" + struct.pack(">HH", qtype, qclass)
    if edns:
        q += b"\x00" + struct.pack(">HHIH", 41, 1232, 0, 0)
    return q


def ask(a):
    server = hostport(a.server)
    pairs = a.args[1:]
    for k in range(0, len(pairs) - 1, 2):
        qtype, qclass = int(pairs[k]), int(pairs[k + 1])
        qid = random.randrange(65536)
        q = query(a.args[0], qid, qtype, qclass, edns=True)
        rcode = "none"
        try:
            if a.tcp:
                s = connect(server, a.source, a.timeout)
                s.sendall(struct.pack(">H", len(q)) + q)
                buf = b""
                while len(buf) < 2 or len(buf) < 2 + struct.unpack(">H", buf[:2])[0]:
                    d = s.recv(65536)
                    if not d:
                        break
                    buf += d
                r = buf[2:]
            else:
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.settimeout(a.timeout)
                s.sendto(q, server)
                r = s.recv(65536)
            s.close()
            if len(r) >= 12 and r[:2] == struct.pack(">H", qid):
                rcode = str(r[3] & 15)
        except OSError:
            pass
        print(qtype, qclass, rcode)
    return 0


def hostport(s):
    h, p = s.rsplit(":", 1)
    return h.strip("[]"), int(p)


def connect(server, source, timeout):
    s = socket.socket(socket.AF_INET6 if ":" in server[0] else socket.AF_INET,
                      socket.SOCK_STREAM)
    if source:
        s.bind((source, 0))
    s.settimeout(timeout)
    s.connect(server)
    return s


def write_status(path, text):
    tmp = path + ".tmp"
    try:
        with open(tmp, "w") as f:
            f.write(text + "\n")
        os.replace(tmp, path)
    except OSError:  # the test's directory gone: the test ended
        sys.exit(0)


class Held:
    """One held connection: its socket, what it read, when it last asked."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.next = time.monotonic()


def hog(a):
    server = hostport(a.server)
    sel = selectors.DefaultSelector()
    held = []
    opened = answers = peak = 0
    end = time.monotonic() + a.seconds if a.seconds else None
    last_open = last_status = 0.0
    while end is None or time.monotonic() < end:
        now = time.monotonic()
        if len(held) < a.conns and now - last_open >= 1.0 and \
                not (a.no_reopen and opened >= a.conns):
            last_open = now
            for _ in range(a.conns - len(held)):
                try:
                    s = connect(server, a.source, 1.0)
                except OSError:
                    break
                s.setblocking(False)
                h = Held(s)
                h.next = now + random.uniform(0, a.every)
                held.append(h)
                sel.register(s, selectors.EVENT_READ, h)
                opened += 1
        peak = max(peak, len(held))
        for h in list(held):
            if now >= h.next:
                h.next = now + a.every
                q = query(a.qname, random.randrange(65536))
                try:
                    h.sock.send(struct.pack(">H", len(q)) + q)
                except OSError:
                    sel.unregister(h.sock)
                    h.sock.close()
                    held.remove(h)
        for key, _ in sel.select(timeout=0.05):
            h = key.data
            try:
                data = h.sock.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(h.sock)
                h.sock.close()
                held.remove(h)
                continue
            h.buf += data
            while len(h.buf) >= 2 and len(h.buf) >= 2 + struct.unpack(">H", h.buf[:2])[0]:
                n = struct.unpack(">H", h.buf[:2])[0]
                h.buf = h.buf[2 + n:]
                answers += 1
        if a.status and now - last_status >= 1.0:
            last_status = now
            write_status(a.status, "open %d max %d opened %d answers %d"
                         % (len(held), peak, opened, answers))
    return 0


def probe(a):
    server = hostport(a.server)
    answered = 0
    for i in range(a.count):
        t0 = time.monotonic()
        try:
            s = connect(server, a.source, a.timeout)
            q = query(a.qname, i & 0xffff)
            s.sendall(struct.pack(">H", len(q)) + q)
            buf = b""
            while time.monotonic() - t0 < a.timeout:
                s.settimeout(max(0.01, a.timeout - (time.monotonic() - t0)))
                d = s.recv(65536)
                if not d:
                    break
                buf += d
                if len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
                    if buf[2:4] == struct.pack(">H", i & 0xffff):
                        answered += 1
                    break
            s.close()
        except OSError:
            pass
        rest = a.gap - (time.monotonic() - t0)
        if rest > 0:
            time.sleep(rest)
    print("answered %d of %d" % (answered, a.count))
    return 0


def slowhttp(a):
    server = hostport(a.server)
    req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100000
    held = []
    opened = 0
    end = time.monotonic() + a.seconds if a.seconds else None
    last_status = 0.0
    while end is None or time.monotonic() < end:
        while len(held) < a.conns:
            try:
                s = connect(server, a.source, 1.0)
            except OSError:
                break
            s.setblocking(False)
            held.append([s, 0])
            opened += 1
        for h in list(held):
            try:
                h[0].send(req[h[1]:h[1] + 1])
                h[1] += 1
                if h[0].recv(1, socket.MSG_PEEK) == b"":
                    raise OSError
            except BlockingIOError:
                pass
            except OSError:
                h[0].close()
                held.remove(h)
        now = time.monotonic()
        if a.status and now - last_status >= 1.0:
            last_status = now
            write_status(a.status, "open %d opened %d" % (len(held), opened))
        time.sleep(1.0)
    return 0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["hog", "probe", "slowhttp", "ask"])
    p.add_argument("args", nargs="*")
    p.add_argument("--tcp", action="store_true")
    p.add_argument("--no-reopen", action="store_true")
    p.add_argument("--server", required=True)
    p.add_argument("--source", default="")
    p.add_argument("--conns", type=int, default=128)
    p.add_argument("--every", type=float, default=3.0)
    p.add_argument("--seconds", type=float, default=0)
    p.add_argument("--status", default="")
    p.add_argument("--count", type=int, default=72)
    p.add_argument("--gap", type=float, default=0.1)
    p.add_argument("--timeout", type=float, default=2.0)
    p.add_argument("--qname", default="www.example.test")
    a = p.parse_intermixed_args()
    return {"hog": hog, "probe": probe, "slowhttp": slowhttp, "ask": ask}[a.mode](a)


if __name__ == "__main__":
    sys.exit(main())

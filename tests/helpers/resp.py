#!/usr/bin/env python3
"""resp.py: a minimal Redis client for the e2e tests (RESP2 over TCP, the
standard library only: the tests must not depend on a redis module).
redis-cli reads and prints binary keys and values awkwardly; this one takes
and prints them as hex.

    resp.py [--host H] PORT call ARG...      one command; the reply printed
    resp.py [--host H] PORT scan PATTERN     every key matching PATTERN, a
                                             line each, in hex (SCAN loop)
    resp.py [--host H] PORT get HEXKEY FILE  the value of a key into FILE
                                             (exit 1: no such key)

An ARG is sent as it is written, unless it starts with "x:" (the bytes of
the hex after it) or "@" (the bytes of the file named after it). A reply
prints as: a status or an integer as it is, a bulk string as hex (or "(nil)"),
an array as its elements a line each; an error reply prints "(error) MSG" on
standard error and the exit status is 1. Bad usage or a failed connection: exit 2.
"""
import argparse
import socket
import sys


class RespError(Exception):
    pass


class Conn:
    def __init__(self, host, port, timeout=10.0):
        self.s = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""

    def send(self, args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            out.append(b"$%d\r\n" % len(a))
            out.append(a)
            out.append(b"\r\n")
        self.s.sendall(b"".join(out))

    def _fill(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(1 << 20)
            if not chunk:
                raise ConnectionError("connection closed by the server")
            self.buf += chunk

    def _line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                line, self.buf = self.buf[:i], self.buf[i + 2:]
                return line
            self._fill(len(self.buf) + 1)

    def reply(self):
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest.decode("latin-1")
        if kind == b"-":
            return RespError(rest.decode("latin-1"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            self._fill(n + 2)
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v
        if kind == b"*":
            n = int(rest)
            if n < 0:
                return None
            return [self.reply() for _ in range(n)]
        raise ConnectionError("not a RESP reply: %r" % line[:40])

    def call(self, *args):
        self.send([a if isinstance(a, bytes) else a.encode() for a in args])
        return self.reply()


def arg_bytes(a):
    if a.startswith("x:"):
        return bytes.fromhex(a[2:])
    if a.startswith("@"):
        with open(a[1:], "rb") as f:
            return f.read()
    return a.encode()


def show(v, out):
    """print a reply; True when it was (or held) an error"""
    if isinstance(v, RespError):
        print("(error) %s" % v, file=sys.stderr)
        return True
    if v is None:
        out.append("(nil)")
    elif isinstance(v, bytes):
        out.append(v.hex())
    elif isinstance(v, list):
        err = False
        for x in v:
            err = show(x, out) or err
        return err
    else:
        out.append(str(v))
    return False


def main():
    p = argparse.ArgumentParser(description="a minimal Redis client (hex in and out)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("port", type=int)
    p.add_argument("cmd", choices=["call", "scan", "get"])
    p.add_argument("args", nargs="*")
    a = p.parse_args()
    try:
        c = Conn(a.host, a.port)
        if a.cmd == "call":
            if not a.args:
                p.error("call needs a command")
            out = []
            err = show(c.call(*[arg_bytes(x) for x in a.args]), out)
            if out:
                print("\n".join(out))
            return 1 if err else 0
        if a.cmd == "scan":
            if len(a.args) != 1:
                p.error("scan PATTERN")
            cursor = b"0"
            while True:
                r = c.call("SCAN", cursor, "MATCH", arg_bytes(a.args[0]), "COUNT", "1000")
                if isinstance(r, RespError):
                    print("(error) %s" % r, file=sys.stderr)
                    return 1
                cursor, keys = r
                for k in keys:
                    print(k.hex())
                if cursor == b"0":
                    return 0
        if len(a.args) != 2:
            p.error("get HEXKEY FILE")
        r = c.call(b"GET", bytes.fromhex(a.args[0]))
        if isinstance(r, RespError):
            print("(error) %s" % r, file=sys.stderr)
            return 1
        if r is None:
            return 1
        with open(a.args[1], "wb") as f:
            f.write(r)
        return 0
    except (OSError, ConnectionError, ValueError) as e:
        print("resp.py: 127.0.0.1:%d: %s" % (a.port, e), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

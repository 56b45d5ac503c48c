#!/usr/bin/env python3
"""redistool.py: the Redis side of the fleet benchmark (bench/fleet/run.sh).

    redistool.py used PORT
        INFO memory's used_memory and DBSIZE: "USED KEYS"
    redistool.py stats PORT [--match PREFIX] [--sample N]
        the keys whose name starts with PREFIX (SCAN MATCH, glob characters
        escaped), at most N of them taken in SCAN order (default 2000): the
        MEMORY USAGE of each (SAMPLES 0: every byte counted), the key's length
        and STRLEN of its value; one JSON object: keys seen, sample size,
        mean and median of each, used_memory and DBSIZE
    redistool.py names PORT --prefix PREFIX -o NAMES
        every dnsnap key under PREFIX (spec/FORMAT.md "The cache key": the
        name with its labels in reverse order, Qtype, Qclass, Flags, Tag_Len,
        Tag) back to "NAME TYPE" lines (dnsperf's format), for Qclass IN, no
        CD and no tag; prints the count
    redistool.py unbound PORT --names NAMES --unbound UBPORT [--secret S]
        the same names stored as Unbound's cachedb module stores them
        (Unbound's cachedb/cachedb.c calc_hash() and prep_data(), redis.c
        redis_store(): read, not copied): the key is the SHA-256 of the query name (wire form), QTYPE
        and QCLASS (big-endian) and the secret (cachedb-secret, "default"),
        as 64 upper-case hex digits; the value is the reply as Unbound
        encodes it for the module (the whole message, ID 0, an OPT record with
        DO set), then two big-endian 64-bit numbers, the time it was stored
        and that time plus the reply's smallest TTL; SET with EX the smallest
        TTL (redis-expire-records: yes). Debian's Unbound is built without
        cachedb, so the reply is asked of the Unbound at UBPORT over UDP with
        EDNS DO=1 (its answer to a client goes through the same encoder,
        reply_info_answer_encode()) and the ID set to 0; prints
        "stored N of M"

Only the Python standard library: a small RESP client over TCP to
127.0.0.1:PORT.
"""
import argparse
import hashlib
import json
import socket
import statistics
import struct
import sys
import time


class Redis:
    """A blocking RESP2 client: commands as lists of bytes or str."""

    def __init__(self, port, host="127.0.0.1"):
        self.s = socket.create_connection((host, port), timeout=30)
        self.buf = b""

    @staticmethod
    def encode(args):
        out = [b"*%d\r\n" % len(args)]
        for a in args:
            if isinstance(a, str):
                a = a.encode()
            elif isinstance(a, int):
                a = b"%d" % a
            out.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(out)

    def _line(self):
        while b"\r\n" not in self.buf:
            self._more()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _more(self):
        d = self.s.recv(1 << 20)
        if not d:
            raise EOFError("redis closed the connection")
        self.buf += d

    def reply(self):
        line = self._line()
        t, rest = line[:1], line[1:]
        if t == b"+":
            return rest
        if t == b"-":
            raise RuntimeError("redis: " + rest.decode(errors="replace"))
        if t == b":":
            return int(rest)
        if t == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._more()
            v, self.buf = self.buf[:n], self.buf[n + 2:]
            return v
        if t == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise RuntimeError("redis: unexpected reply %r" % line[:40])

    def cmd(self, *args):
        self.s.sendall(self.encode(args))
        return self.reply()

    def pipeline(self, cmds, batch=1000):
        """Every command of cmds, sent in batches; the replies in order."""
        out = []
        for i in range(0, len(cmds), batch):
            part = cmds[i:i + batch]
            self.s.sendall(b"".join(self.encode(c) for c in part))
            out.extend(self.reply() for _ in part)
        return out

    def used_memory(self):
        info = self.cmd("INFO", "memory").decode()
        for line in info.splitlines():
            if line.startswith("used_memory:"):
                return int(line.split(":", 1)[1])
        raise RuntimeError("redis: no used_memory in INFO memory")

    def scan(self, match, limit=None):
        """Keys matching the glob match, at most limit (SCAN order)."""
        keys, cur = [], b"0"
        while True:
            cur, batch = self.cmd("SCAN", cur, "MATCH", match, "COUNT", 1000)
            keys.extend(batch)
            if cur == b"0" or (limit is not None and len(keys) >= limit):
                return keys if limit is None else keys[:limit]


def glob_escape(prefix):
    b = prefix.encode() if isinstance(prefix, str) else prefix
    return b"".join(b"\\" + bytes([c]) if c in b"*?[]\\" else bytes([c]) for c in b)


# ---------------------------------------------------------------- used, stats

def cmd_used(a):
    r = Redis(a.port)
    print(r.used_memory(), r.cmd("DBSIZE"))


def cmd_stats(a):
    r = Redis(a.port)
    allkeys = r.scan(glob_escape(a.match) + b"*")
    sample = allkeys[:a.sample]
    usage = r.pipeline([("MEMORY", "USAGE", k, "SAMPLES", 0) for k in sample])
    vlen = r.pipeline([("STRLEN", k) for k in sample])
    pairs = [(k, u, v) for k, u, v in zip(sample, usage, vlen) if u is not None]

    def mm(xs):
        return (round(statistics.mean(xs), 1), statistics.median(xs)) if xs else (None, None)
    mu, ml = mm([u for _, u, _ in pairs])
    ku, kl = mm([len(k) for k, _, _ in pairs])
    vu, vl = mm([v for _, _, v in pairs])
    print(json.dumps({"keys": len(allkeys), "sample": len(pairs),
                      "memory_usage_mean": mu, "memory_usage_median": ml,
                      "key_bytes_mean": ku, "key_bytes_median": kl,
                      "value_bytes_mean": vu, "value_bytes_median": vl,
                      "used_memory": r.used_memory(), "dbsize": r.cmd("DBSIZE")}))


# ---------------------------------------------------------------- names

TYPES = {1: "A", 28: "AAAA", 16: "TXT"}
TYPE_CODES = {v: k for k, v in TYPES.items()}


def key_to_question(k):
    """(name text, qtype) of a dnsnap key, or None (class, flags, tag, damage)."""
    labels, i = [], 0
    while True:
        if i >= len(k):
            return None
        n = k[i]
        if n == 0:
            i += 1
            break
        if n > 63 or i + 1 + n > len(k):
            return None
        labels.append(k[i + 1:i + 1 + n])
        i += 1 + n
    if len(k) != i + 6:
        return None  # a tag, or not a key
    qtype, qclass, flags, tag_len = struct.unpack("!HHBB", k[i:i + 6])
    if qclass != 1 or flags != 0 or tag_len != 0:
        return None
    name = ".".join(lab.decode("latin-1") for lab in reversed(labels)) + "."
    return name, qtype


def cmd_names(a):
    r = Redis(a.port)
    pre = a.prefix.encode()
    n = 0
    with open(a.o, "w") as f:
        for k in r.scan(glob_escape(pre) + b"*"):
            q = key_to_question(k[len(pre):])
            if q is None or q[1] not in TYPES:
                continue
            f.write("%s %s\n" % (q[0], TYPES[q[1]]))
            n += 1
    print(n)


# ---------------------------------------------------------------- unbound

def name_wire(text):
    out = b""
    for lab in text.rstrip(".").split("."):
        if lab:
            out += bytes([len(lab)]) + lab.encode("latin-1")
    return out + b"\0"


def query_msg(qid, name, qtype):
    # RD, one question, an OPT record: UDP size 1232, DO set
    return (struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 1) + name_wire(name) +
            struct.pack("!HH", qtype, 1) + b"\0" + struct.pack("!HHIH", 41, 1232, 0x8000, 0))


def skip_name(m, i):
    while True:
        n = m[i]
        if n & 0xC0 == 0xC0:
            return i + 2
        i += 1 + n
        if n == 0:
            return i


def min_ttl(m):
    """The smallest TTL of the records of m (not the OPT), or None."""
    _, _, qd, an, ns, ar = struct.unpack("!HHHHHH", m[:12])
    i = 12
    for _ in range(qd):
        i = skip_name(m, i) + 4
    ttls = []
    for _ in range(an + ns + ar):
        i = skip_name(m, i)
        t, _, ttl, rdl = struct.unpack("!HHIH", m[i:i + 10])
        if t != 41:
            ttls.append(ttl)
        i += 10 + rdl
    return min(ttls) if ttls else None


def ask_tcp(port, q):
    """One query over TCP (a reply cut over UDP): the reply, or None."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as t:
        t.sendall(struct.pack("!H", len(q)) + q)
        buf = b""
        while len(buf) < 2 or len(buf) < 2 + struct.unpack("!H", buf[:2])[0]:
            d = t.recv(65535)
            if not d:
                return None
            buf += d
        return buf[2:2 + struct.unpack("!H", buf[:2])[0]]


def ask_all(port, questions, window=64, tries=4):
    """Replies of the Unbound at port to every (name, qtype): {index: bytes}.
    A window of queries at a time: a burst of hundreds overflows the receive
    buffer of a one-thread Unbound's socket. A reply with TC set is asked
    again over TCP: the module stores the whole message."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("127.0.0.1", port))
    s.settimeout(0.2)
    got = {}
    tc = [0]
    t0 = time.time()
    for k in range(tries):
        todo = [i for i in range(len(questions)) if i not in got]
        for w in range(0, len(todo), window):
            part = todo[w:w + window]
            for i in part:
                s.send(query_msg(i & 0xFFFF, *questions[i]))
            want = {i & 0xFFFF: i for i in part}
            while want:
                try:
                    d = s.recv(65535)
                except socket.timeout:
                    break
                qid = struct.unpack("!H", d[:2])[0]
                if qid in want and d[3] & 15 == 0:
                    i = want.pop(qid)
                    if d[2] & 0x02:
                        d = ask_tcp(port, query_msg(qid, *questions[i]))
                        tc[0] += 1
                    if d is not None and d[3] & 15 == 0:
                        got[i] = d
        sys.stderr.write("redistool: round %d: %d of %d replies (%d over TCP), %.2f s\n" %
                         (k + 1, len(got), len(questions), tc[0], time.time() - t0))
        if len(got) == len(questions):
            break
    return got


def cmd_unbound(a):
    questions = []
    with open(a.names) as f:
        for line in f:
            w = line.split()
            if len(w) == 2 and w[1].upper() in TYPE_CODES:
                questions.append((w[0].lower(), TYPE_CODES[w[1].upper()]))
    replies = ask_all(a.unbound, questions)
    now = int(time.time())
    secret = a.secret.encode()
    cmds = []
    for i, m in sorted(replies.items()):
        name, qtype = questions[i]
        try:
            ttl = min_ttl(m)
        except (IndexError, struct.error):
            ttl = None  # a reply cut short: not stored
        if not ttl:
            continue  # Unbound's cachedb stores no TTL 0 reply
        key = hashlib.sha256(name_wire(name) + struct.pack("!HH", qtype, 1) +
                             secret).hexdigest().upper()
        value = b"\0\0" + m[2:] + struct.pack("!QQ", now, now + ttl)
        cmds.append(("SET", key, value, "EX", ttl))
    r = Redis(a.port)
    bad = [x for x in r.pipeline(cmds) if x != b"OK"]
    print("stored %d of %d" % (len(cmds) - len(bad), len(questions)))


def main():
    p = argparse.ArgumentParser(description="the fleet benchmark's Redis side")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("used")
    s.add_argument("port", type=int)
    s = sub.add_parser("stats")
    s.add_argument("port", type=int)
    s.add_argument("--match", default="")
    s.add_argument("--sample", type=int, default=2000)
    s = sub.add_parser("names")
    s.add_argument("port", type=int)
    s.add_argument("--prefix", default="dnsnap:")
    s.add_argument("-o", required=True)
    s = sub.add_parser("unbound")
    s.add_argument("port", type=int)
    s.add_argument("--names", required=True)
    s.add_argument("--unbound", type=int, required=True)
    s.add_argument("--secret", default="default")
    a = p.parse_args()
    {"used": cmd_used, "stats": cmd_stats, "names": cmd_names, "unbound": cmd_unbound}[a.cmd](a)


if __name__ == "__main__":
    try:
        main()
    except (OSError, EOFError, RuntimeError) as e:
        sys.exit("redistool: %s" % e)

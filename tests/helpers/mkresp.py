#!/usr/bin/env python3
"""mkresp.py: DNS responses with awkward data, TCP-framed on stdout, for
tests/cli/test_print.sh (dnsnap load reads them). Names are given as lists of
raw labels (bytes), so a label may hold a dot, a space or any byte.

Each response: ID 0, QR RD RA (AD when signed), one question, the records,
an OPT of 1232 bytes (DO when signed)."""
import struct
import sys

A, NS, CNAME, SOA, MX, TXT, AAAA, SRV, DS, OPT, RRSIG, NSEC, DNSKEY, NSEC3, CAA = \
    1, 2, 5, 6, 15, 16, 28, 33, 43, 41, 46, 47, 48, 50, 257


def name(labels):
    return b"".join(bytes([len(l)]) + l for l in labels) + b"\0"


def dn(s):
    """a plain name: "www.example.net" (no escapes)"""
    return [l.encode() for l in s.split(".") if l]


def rr(owner, rtype, ttl, rdata):
    return name(owner) + struct.pack(">HHIH", rtype, 1, ttl, len(rdata)) + rdata


def strings(*ss):
    return b"".join(bytes([len(s)]) + s for s in ss)


def response(qname, qtype, answer=(), authority=(), rcode=0, signed=False, ede=None):
    flags = 0x8180 | rcode | (0x20 if signed else 0)
    opts = b"" if ede is None else struct.pack(">HHH", 15, 2 + len(ede[1]), ede[0]) + ede[1]
    opt = b"\0" + struct.pack(">HHIH", OPT, 1232, 0x8000 if signed else 0, len(opts)) + opts
    hdr = struct.pack(">HHHHHH", 0, flags, 1, len(answer), len(authority), 1)
    msg = hdr + name(qname) + struct.pack(">HH", qtype, 1)
    msg += b"".join(answer) + b"".join(authority) + opt
    return struct.pack(">H", len(msg)) + msg


def rrsig(covered, signer, labels):
    sig = bytes((i * 37 + 11) % 256 for i in range(100))
    return struct.pack(">HBBIIIH", covered, 13, labels, 3600, 1702592000, 1700000000,
                       40000) + name(signer) + sig


net = dn("example.net")
soa = name(dn("ns1.example.net")) + name(dn("hostmaster.example.net")) + \
    struct.pack(">IIIII", 2023111401, 7200, 3600, 1209600, 300)
out = [
    # a CNAME chain into another zone
    response(dn("www.example.net"), A, [
        rr(dn("www.example.net"), CNAME, 300, name(dn("a.example.net"))),
        rr(dn("a.example.net"), CNAME, 300, name(dn("b.example.org"))),
        rr(dn("b.example.org"), A, 300, bytes([192, 0, 2, 7]))]),
    # NXDOMAIN with the zone's SOA
    response(dn("nx.example.net"), A, [], [rr(net, SOA, 300, soa)], rcode=3),
    # a signed answer, asked with DO
    response(dn("signed.example.net"), A, [
        rr(dn("signed.example.net"), A, 3600, bytes([192, 0, 2, 9])),
        rr(dn("signed.example.net"), RRSIG, 3600, rrsig(A, net, 3))], signed=True),
    # TXT strings with a TAB, quotes, a backslash, byte 0xff, ';', a space, '@', '$'
    response(dn("txt.example.net"), TXT, [
        rr(dn("txt.example.net"), TXT, 300,
           strings(b"a\tb", b'say "hi"', b"back\\slash", b"\xff\x00\x7f", b"semi;colon",
                   b"sp ace", b"at@dollar$(paren)"))]),
    response(dn("v6.example.net"), AAAA, [
        rr(dn("v6.example.net"), AAAA, 300, bytes.fromhex("20010db8000000000000000000000001"))]),
    response(dn("mx.example.net"), MX, [
        rr(dn("mx.example.net"), MX, 300, struct.pack(">H", 10) + name(dn("mail.example.net")))]),
    # owners and targets whose labels need escaping: a dot, a space, '"', ';',
    # '(', ')', '@', '$', '\\', a TAB, byte 0xff
    response([b"a.b", b"c d"] + net, CNAME, [
        rr([b"a.b", b"c d"] + net, CNAME, 300,
           name([b'q"t;(p)', b"@$\\", b"t\tf\xff"] + net))]),
]
key = bytes((i * 53 + 7) % 256 for i in range(68))
h3 = "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom"  # an NSEC3 owner: base32hex
out += [
    # the DNSSEC types and a few others, to compare their presentation with dig's
    response(net, DS, [rr(net, DS, 3600, struct.pack(">HBB", 12345, 13, 2) +
                          bytes((i * 29 + 3) % 256 for i in range(32)))]),
    response(net, DNSKEY, [rr(net, DNSKEY, 3600, struct.pack(">HBB", 257, 3, 13) + key)]),
    response(dn("nsec.example.net"), NSEC, [
        rr(dn("nsec.example.net"), NSEC, 300, name(dn("z.example.net")) +
           bytes([0, 6, 0x40, 0x01, 0, 0, 0, 0x03]))]),
    response(dn(h3 + ".example.net"), NSEC3, [
        rr(dn(h3 + ".example.net"), NSEC3, 300, bytes([1, 0]) + struct.pack(">H", 10) +
           bytes([4, 0xaa, 0xbb, 0xcc, 0xdd]) + bytes([20]) + bytes(range(20)) +
           bytes([0, 1, 0x40]))]),
    response(dn("_sip._tcp.example.net"), SRV, [
        rr(dn("_sip._tcp.example.net"), SRV, 300,
           struct.pack(">HHH", 10, 60, 5060) + name(dn("sip.example.net")))]),
    response(dn("caa.example.net"), CAA, [
        rr(dn("caa.example.net"), CAA, 300, bytes([128, 5]) + b"issue" + b'ca; "x"\tz')]),
    # an answer with an Extended DNS Error (3, Stale Answer) whose text has a TAB
    response(dn("stale.example.net"), A, [
        rr(dn("stale.example.net"), A, 30, bytes([192, 0, 2, 30]))], ede=(3, b"old\tdata")),
]
if len(sys.argv) > 1:  # one message, unframed: mkresp.py N
    sys.stdout.buffer.write(out[int(sys.argv[1])][2:])
else:
    sys.stdout.buffer.write(b"".join(out))

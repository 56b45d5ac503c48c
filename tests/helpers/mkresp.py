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


def ipv4(s):
    return bytes(int(x) for x in s.split("."))


def svc(prio, target, *params):
    """SVCB/HTTPS rdata: params are (key, value bytes), in key order"""
    return struct.pack(">H", prio) + name(dn(target)) + \
        b"".join(struct.pack(">HH", k, len(v)) + v for k, v in params)


def bitmap(*types):
    """an NSEC-style type bitmap (window 0 only)"""
    bits = bytearray(32)
    for t in types:
        bits[t // 8] |= 0x80 >> (t % 8)
    n = max(t // 8 for t in types) + 1
    return bytes([0, n]) + bytes(bits[:n])


def loc(lat_s, lon_s, alt_cm):
    return bytes([0, 0x12, 0x16, 0x13]) + struct.pack(">III", 2**31 + lat_s, 2**31 + lon_s,
                                                      10000000 + alt_cm)


blob = bytes((i * 71 + 5) % 256 for i in range(40))
wks_bits = bytearray(11)
for port in (25, 80):
    wks_bits[port // 8] |= 0x80 >> (port % 8)
# (label, type number, rdata): one response each, owner LABEL.types.example.net,
# compared with dig's presentation by test_print.sh (mkresp.py typelist)
TYPES = [
    ("svcb", 64, svc(1, "svc.example.net", (0, struct.pack(">HH", 1, 3)),
                     (1, strings(b"h2", b"h3")), (2, b""), (3, struct.pack(">H", 8443)),
                     (4, ipv4("192.0.2.1") + ipv4("192.0.2.2")), (5, blob[:20]),
                     (6, bytes.fromhex("20010db8000000000000000000000001") +
                      bytes.fromhex("20010db8000000000000000000000002")),
                     (7, b"/dns-query{?dns}"), (65000, b"abc"))),
    ("https", 65, svc(1, "www.example.net", (1, strings(b"h2")), (3, struct.pack(">H", 443)))),
    ("httpsalpn", 65, svc(2, "x.example.net", (1, strings(b"h2,x", b"h3")), (65001, b""))),
    ("httpsesc", 65, svc(3, "x.example.net", (1, strings(b'a\\b"c\x01,', b"\xff")),
                         (65002, b'q"\\,\x01\xff z'))),
    ("httpsalias", 65, svc(0, "alias.example.net")),
    ("loc", 29, loc((52 * 3600 + 22 * 60 + 23) * 1000, (4 * 3600 + 53 * 60 + 32) * 1000, -200)),
    ("locsouth", 29, loc(-(33 * 3600 + 51 * 60 + 54) * 1000 - 520,
                         -(151 * 3600 + 12 * 60 + 35) * 1000 - 5, 123456)),
    ("wks", 11, ipv4("192.0.2.1") + bytes([6]) + bytes(wks_bits)),
    ("nid", 104, struct.pack(">H", 10) + bytes.fromhex("00144fffff20ee64")),
    ("l64", 106, struct.pack(">H", 10) + bytes.fromhex("2001000000000db8")),
    ("l32", 105, struct.pack(">H", 10) + ipv4("10.1.2.3")),
    ("lp", 107, struct.pack(">H", 10) + name(dn("l64.example.net"))),
    ("eui48", 108, bytes.fromhex("00005e0053ff")),
    ("eui64", 109, bytes.fromhex("00005efffe0053ff")),
    ("afsdb", 18, struct.pack(">H", 1) + name(dn("afs.example.net"))),
    ("rt", 21, struct.pack(">H", 10) + name(dn("relay.example.net"))),
    ("x25", 19, strings(b"311061700956")),
    ("isdn", 20, strings(b"150862028003217", b"004")),
    ("px", 26, struct.pack(">H", 10) + name(dn("net2.example.net")) + name(dn("prmd.example.net"))),
    ("gpos", 27, strings(b"-32.6882", b"116.8652", b"10.0")),
    ("nsap", 22, bytes.fromhex("47000580005a0000000001e133ffffff00016100")),
    ("kx", 36, struct.pack(">H", 10) + name(dn("kx.example.net"))),
    ("dhcid", 49, blob[:35]),
    ("hip", 55, bytes([16, 2]) + struct.pack(">H", 40) + blob[:16] + blob[:40] +
     name(dn("rvs.example.net"))),
    ("smimea", 53, bytes([3, 1, 1]) + blob[:32]),
    ("tlsa", 52, bytes([3, 1, 1]) + blob[:32]),
    ("cds", 59, struct.pack(">HBB", 12345, 13, 2) + blob[:32]),
    ("cdnskey", 60, struct.pack(">HBB", 257, 3, 13) + key),
    ("talink", 58, name(dn("prev.example.net")) + name(dn("next.example.net"))),
    ("ninfo", 56, strings(b"info one", b"two")),
    ("rkey", 57, struct.pack(">HBB", 0, 3, 13) + key[:32]),
    ("spf", 99, strings(b"v=spf1 -all")),
    ("caa2", 257, bytes([0, 9]) + b"issuewild" + b";"),
    ("amtrelay", 260, bytes([10, 0x83]) + name(dn("amt.example.net"))),
    ("amtrelay4", 260, bytes([10, 0x01]) + ipv4("192.0.2.5")),
    ("sshfp", 44, bytes([4, 2]) + blob[:32]),
    ("cert", 37, struct.pack(">HHB", 1, 12345, 8) + blob[:30]),
    ("ipseckey", 45, bytes([10, 1, 2]) + ipv4("192.0.2.38") + blob[:20]),
    ("naptr", 35, struct.pack(">HH", 100, 10) + strings(b"S", b"SIP+D2U", b"") +
     name(dn("_sip._udp.example.net"))),
    ("apl", 42, struct.pack(">HBB", 1, 24, 3) + bytes([192, 0, 2]) +
     struct.pack(">HBB", 2, 32, 0x84) + bytes.fromhex("20010db8")),
    ("openpgpkey", 61, blob[:30]),
    ("csync", 62, struct.pack(">IH", 66, 3) + bitmap(1, 2, 28)),
    ("zonemd", 63, struct.pack(">IBB", 2023111401, 1, 1) + blob[:40] + blob[:8]),
    ("uri", 256, struct.pack(">HH", 10, 1) + b"https://www.example.net/"),
    ("hinfo", 13, strings(b"INTEL-386", b"Linux")),
    ("minfo", 14, name(dn("rm.example.net")) + name(dn("em.example.net"))),
    ("rp", 17, name(dn("admin.example.net")) + name(dn("tx.example.net"))),
    ("ptr", 12, name(dn("host.example.net"))),
    ("dname", 39, name(dn("example.org"))),
    ("ns", 2, name(dn("ns1.example.net"))),
    ("null", 10, b"\x01\x02"),
    ("unknown", 65280, b"\xab\xcd"),
    ("doa", 259, struct.pack(">IIB", 0, 1, 2) + strings(b"text/plain") + b"hello"),
    ("atma", 34, bytes([1]) + b"16175551212"),
    ("eid", 31, bytes.fromhex("89abcdef")),
    ("nimloc", 32, bytes.fromhex("32")),
    ("sink", 40, bytes([1, 2]) + b"data"),
    ("a6", 38, bytes([0]) + bytes.fromhex("20010db8000000000000000000000001")),
    ("a6p", 38, bytes([64]) + bytes.fromhex("0000000000000001") + name(dn("pfx.example.net"))),
    ("locsmall", 29, bytes([0, 0x11, 0x00, 0x99]) + struct.pack(
        ">III", 2**31, 2**31 + 1, 10000000))[:16],
    ("uinfo", 100, strings(b"u info")),
    ("uid", 101, struct.pack(">I", 1000)),
    ("gid", 102, struct.pack(">I", 100)),
    ("unspec", 103, b"\x01\x02abc"),
    ("avc", 258, strings(b"app:1", b"x")),
    ("resinfo", 261, strings(b"qnamemin", b"exterr=15-17")),
    ("wallet", 262, strings(b"BTC", b"addr")),
    ("ta", 32768, struct.pack(">HBB", 12345, 8, 2) + blob[:32]),
    ("dlv", 32769, struct.pack(">HBB", 12345, 8, 2) + blob[:32]),
    ("nsec3param", 51, bytes([1, 0]) + struct.pack(">H", 10) + bytes([4, 0xaa, 0xbb, 0xcc, 0xdd])),
    ("key", 25, struct.pack(">HBB", 256, 3, 8) + key[:36]),
    ("sig", 24, struct.pack(">HBBIIIH", 1, 8, 3, 3600, 1702592000, 1700000000, 40000) +
     name(net) + blob[:40]),
    ("nxt", 30, name(dn("next.example.net")) + bytes([0x62, 0x01])),
    ("nsapptr", 23, name(dn("nsap.example.net"))),
    ("md", 3, name(dn("md.example.net"))),
    ("mb", 7, name(dn("mb.example.net"))),
    ("ipseckey3", 45, bytes([10, 3, 2]) + name(dn("gw.example.net")) + blob[:20]),
    ("ipseckey6", 45, bytes([10, 2, 2]) + bytes.fromhex("20010db8000000000000000000000001") +
     blob[:20]),
    ("ipseckey0", 45, bytes([10, 0, 2]) + blob[:20]),
    ("atma0", 34, bytes([0]) + bytes.fromhex("47000580ffde0000000001e133ffffff00016100")),
    ("doaempty", 259, struct.pack(">IIB", 1, 2, 1) + strings(b"")),
    ("sink2", 40, bytes([1, 2, 3]) + blob[:9]),
    ("hip2", 55, bytes([4, 2]) + struct.pack(">H", 8) + blob[:4] + blob[:8]),
    ("caaupper", 257, bytes([0, 5]) + b"Issue" + b"ca.example.net"),
    ("cert2", 37, struct.pack(">HHB", 65280, 1, 200) + blob[:8]),
    ("cert3", 37, struct.pack(">HHB", 3, 7, 13) + blob * 3),
    ("cert4", 37, struct.pack(">HHB", 8, 7, 253) + blob[:4]),
    ("cert5", 37, struct.pack(">HHB", 254, 7, 3) + blob[:4]),
    ("doalong", 259, struct.pack(">IIB", 1, 2, 1) + strings(b"a/b") + blob * 3),
    ("hiplong", 55, bytes([32, 2]) + struct.pack(">H", 120) + blob[:32] + blob * 3 +
     name(dn("rvs1.example.net")) + name(dn("rvs2.example.net"))),
    ("rkeylong", 57, struct.pack(">HBB", 0, 3, 8) + blob * 3),
    ("openpgplong", 61, blob * 3),
    ("tlsalong", 52, bytes([3, 1, 2]) + blob + blob[:24]),
    ("amtrelay0", 260, bytes([0, 0x80])),
    ("amtrelay6", 260, bytes([255, 0x02]) + bytes.fromhex("20010db8000000000000000000000005")),
    ("atma2", 34, bytes([2]) + b"xyz"),
    ("svcbech", 64, svc(1, ".", (5, blob * 3))),
]
if len(sys.argv) > 1 and sys.argv[1] == "typelist":  # LABEL TYPE-NUMBER lines
    sys.stdout.write("".join("%s %d\n" % (t[0], t[1]) for t in TYPES))
    sys.exit(0)
if len(sys.argv) > 1 and sys.argv[1] == "types":  # one response per TYPES row
    out = [response(dn(lbl + ".types.example.net"), t,
                    [rr(dn(lbl + ".types.example.net"), t, 300, rd)]) for lbl, t, rd in TYPES]
    sys.stdout.buffer.write(b"".join(out))
    sys.exit(0)
if len(sys.argv) > 1:  # one message, unframed: mkresp.py N
    sys.stdout.buffer.write(out[int(sys.argv[1])][2:])
else:
    sys.stdout.buffer.write(b"".join(out))

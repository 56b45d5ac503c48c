#!/bin/sh
# contrib/unbound/dnsnap.py outside Unbound: imported as a plain module, with
# a stand-in for Unbound's unboundmodule (the names it defines), over BUILD's
# libdnsnap.so.1. What tests/e2e/unbound_module.sh cannot reach or show
# alone:
#   - the library loads with dlopen() (ctypes), as it must inside Unbound: a
#     shared libdnsnap with an initial-exec TLS variable did not ("cannot
#     allocate memory in static TLS block");
#   - every structure and constant the module declares with ctypes has the
#     size and offsets the C compiler gives engine/dnsnap.h's (BUILD/mkabi);
#   - the settings file: defaults, each key, bad values and unknown keys
#     named by file and line, DNSNAP_UNBOUND_SNAP over the file;
#   - an Unbound reply (a reply_info stand-in: RRsets with their records'
#     TTLs and rdata, RRSIGs after the data) through reply_wire(), the
#     library's insert and lookup, to the RFC 3597 text handed to Unbound:
#     ldns-read-zone reads those lines back as the records put in, written
#     here as zone text (names compressed by the library in NS, SOA, MX,
#     CNAME, PTR rdata come out whole);
#   - an exception in operate() is logged and the query passed on; the
#     validator's second ask after a bogus answer, and a question dnsnap
#     answered a moment ago, go to the iterator.
# Usage: tests/cli/test_unbound_module.sh BUILD
set -u
build=${1:-build}
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
# A sanitizer build's library needs its runtime loaded first, which python3 is not
if nm -D "$build/libdnsnap.so.1" 2>/dev/null | grep -q ' U __asan_'; then
	echo "ok - # SKIP $build/libdnsnap.so.1 is built with ASan: python3 cannot load it"
	exit 0
fi
for f in "$build/libdnsnap.so.1" "$build/mkabi"; do
	[ -e "$f" ] || { echo "not ok - $f is not built (make test builds it)"; exit 1; }
done
command -v ldns-read-zone >/dev/null || { echo "not ok - ldns-read-zone missing (ldnsutils)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/mkabi" >"$tmp/abi" || { echo "not ok - mkabi"; exit 1; }

# The names of Unbound's unboundmodule the module uses (pythonmod/interface.i)
cat >"$tmp/unboundmodule.py" <<'EOF'
import socket
LOG = []
def log_info(s): LOG.append(("info", s))
def log_err(s): LOG.append(("error", s))
def log_warn(s): LOG.append(("warning", s))
(MODULE_STATE_INITIAL, MODULE_WAIT_REPLY, MODULE_WAIT_MODULE, MODULE_RESTART_NEXT,
 MODULE_WAIT_SUBQUERY, MODULE_ERROR, MODULE_FINISHED) = range(7)
(MODULE_EVENT_NEW, MODULE_EVENT_PASS, MODULE_EVENT_REPLY, MODULE_EVENT_NOREPLY,
 MODULE_EVENT_CAPSFAIL, MODULE_EVENT_MODDONE, MODULE_EVENT_ERROR) = range(7)
RCODE_NOERROR = 0
PKT_QR, PKT_AA, PKT_TC, PKT_RD, PKT_CD, PKT_RA, PKT_AD = 1, 2, 4, 8, 16, 32, 64
sec_status_unchecked, sec_status_bogus = 0, 1
def ntohs(x): return socket.ntohs(x)
def strmodulevent(e): return "module_event_%d" % e
def storeQueryInCache(qstate, qinfo, rep, is_referral): return 1
class DNSMessage:
    def __init__(self, rr_name, rr_type, rr_class=1, query_flags=0, default_ttl=0):
        self.rr_name, self.answer, self.authority, self.additional = rr_name, [], [], []
EOF

PYTHONPATH="$tmp:$(pwd)/contrib/unbound" python3 - "$build" "$tmp" <<'EOF'
import ctypes, os, socket, struct, subprocess, sys
build, tmp = sys.argv[1], sys.argv[2]
import unboundmodule
import dnsnap as m
fails = 0
def check(what, cond, detail=""):
    global fails
    print(("ok - " if cond else "not ok - ") + what)
    if not cond:
        fails += 1
        for line in str(detail).splitlines()[:40]:
            print("#   " + line)

# ------------------------------------------------------------ the library
try:
    lib = m.load_library(os.path.join(build, "libdnsnap.so.1"))
    check("libdnsnap.so.1 loads with dlopen() (ctypes), its functions typed", True)
except OSError as e:
    check("libdnsnap.so.1 loads with dlopen() (ctypes)", False, e)
    sys.exit(1)

# ------------------------------------------------------------ the ABI
abi = {}
for line in open(os.path.join(tmp, "abi")):
    k, *v = line.split()
    abi[k] = int(v[-1])
bad = []
for cls in m.STRUCTS:
    n = cls.__name__
    if ctypes.sizeof(cls) != abi.get(n, -1):
        bad.append("%s: ctypes %d bytes, C %s" % (n, ctypes.sizeof(cls), abi.get(n)))
    for f, _ in cls._fields_:
        k = "%s.%s" % (n, f)
        if k in abi and getattr(cls, f).offset != abi[k]:
            bad.append("%s at %d, C %d" % (k, getattr(cls, f).offset, abi[k]))
fields = sum(1 for k in abi if "." in k)
for k in ("PUBLISH_DROP_DAMAGED", "PUBLISH_REPLACE_BAD", "OK", "ENOTFOUND", "KEY_MAX",
          "ENTRY_MAX"):
    if getattr(m, k) != abi[k]:
        bad.append("%s: %d, C %d" % (k, getattr(m, k), abi[k]))
check("the %d structures (%d fields) and 6 constants are C's" % (len(m.STRUCTS), fields),
      not bad and all(c.__name__ in abi for c in m.STRUCTS), "\n".join(bad))

# ------------------------------------------------------------ settings
conf, probs = m.read_settings({})
check("no DNSNAP_UNBOUND_CONF: the defaults, nothing said",
      conf == {"snapshot": "/var/lib/unbound/dnsnap.snap", "publish-interval": 300,
               "max-bytes": 256 << 20} and not probs, (conf, probs))
p = os.path.join(tmp, "dnsnap.conf")
with open(p, "w") as f:
    f.write("# the module's settings\nsnapshot: /srv/c.snap\npublish-interval: 60  # a minute\n"
            "max-bytes: 64M\n\n")
conf, probs = m.read_settings({"DNSNAP_UNBOUND_CONF": p})
check("each key read (comments, blank lines, units)",
      conf == {"snapshot": "/srv/c.snap", "publish-interval": 60, "max-bytes": 64 << 20}
      and not probs, (conf, probs))
conf, probs = m.read_settings({"DNSNAP_UNBOUND_CONF": p, "DNSNAP_UNBOUND_SNAP": "/x.snap"})
check("DNSNAP_UNBOUND_SNAP names the snapshot over the file", conf["snapshot"] == "/x.snap")
with open(p, "w") as f:
    f.write("snapshot:\npublish-interval: soon\nmax-bytes: 12K\nmaxbytes: 1G\nsnapshot /a\n")
conf, probs = m.read_settings({"DNSNAP_UNBOUND_CONF": p})
want = ["%s:1: snapshot: '' is empty; /var/lib/unbound/dnsnap.snap is used" % p,
        "%s:2: publish-interval: 'soon' is not a number of seconds; 300 is used" % p,
        "%s:3: max-bytes: '12K' is less than 1M (the index alone takes more); 268435456 is "
        "used" % p,
        "%s:4: unknown setting 'maxbytes' (known: snapshot, publish-interval, max-bytes)" % p,
        "%s:5: unknown setting 'snapshot /a' (known: snapshot, publish-interval, max-bytes)" % p]
check("bad values and unknown keys: one line each, by file and line, defaults kept",
      probs == want and conf["publish-interval"] == 300, "\n".join(probs))
conf, probs = m.read_settings({"DNSNAP_UNBOUND_CONF": "contrib/unbound/dnsnap.conf"})
check("contrib/unbound/dnsnap.conf reads without a complaint, as the defaults",
      not probs and conf == m.read_settings({})[0], (conf, probs))
conf, probs = m.read_settings({"DNSNAP_UNBOUND_CONF": os.path.join(tmp, "none.conf")})
check("a settings file that is not there: said, the defaults used",
      probs == ["%s: No such file or directory; the defaults are used"
                % os.path.join(tmp, "none.conf")], probs)

# ------------------------------------------- a reply through the library
def name(text):
    if text == ".":
        return b"\x00"
    return b"".join(bytes([len(l)]) + l.encode() for l in text.rstrip(".").split(".")) + b"\x00"

class Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)

def rrset(owner, rtype, ttl, rdatas, sigs=()):
    rd = [struct.pack("!H", len(r)) + r for r in list(rdatas) + list(sigs)]
    data = Obj(count=len(rdatas), rrsig_count=len(sigs), rr_ttl=[ttl] * len(rd), rr_data=rd)
    return Obj(rk=Obj(dname=name(owner), type=rtype, rrset_class=1), entry=Obj(data=data))

ip = socket.inet_aton
sig = (struct.pack("!HBBIIIH", 1, 13, 3, 3600, 2000000000, 1900000000, 4711)
       + name("example.test") + b"\xab" * 64)
sets = [
    rrset("c.example.test", 5, 600, [name("www.example.test")]),
    rrset("www.example.test", 1, 300, [ip("192.0.2.1"), ip("192.0.2.2")], [sig]),
    rrset("example.test", 2, 3600, [name("ns1.example.test"), name("ns2.example.test")]),
    rrset("example.test", 6, 3600, [name("ns1.example.test") + name("hostmaster.example.test")
                                    + struct.pack("!5I", 7, 7200, 3600, 1209600, 300)]),
    rrset("example.test", 15, 3600, [struct.pack("!H", 10) + name("mail.example.test")]),
    rrset("1.2.0.192.in-addr.arpa", 12, 3600, [name("www.example.test")]),
    rrset("ns1.example.test", 1, 3600, [ip("192.0.2.53")]),
]
rep = Obj(an_numrrsets=2, ns_numrrsets=4, rrset_count=7, flags=0x8180, rrsets=sets)
wire = m.reply_wire(name("c.example.test"), 1, 1, 0x0100, rep, ntohs_=lambda x: x)
conf, _ = m.read_settings({"DNSNAP_UNBOUND_SNAP": os.path.join(tmp, "c.snap")})
st = m.Dnsnap(conf, lib, 86400)
check("reply_wire(): the library takes it (dnsnap_cache_insert)", st.insert(wire))
# the client's spelling (0x20), RD and CD=1: the CD=0 entry answers
qname = name("C.ExAmple.TEST")
ans = st.lookup(qname, 1, 1, 0x0110)
check("the lookup of the client's spelling, CD=1, is a hit", ans is not None)
flags, secs, types = m.answer_sections(ans, len(qname))
check("the answer's rcode is NOERROR, not a referral",
      flags & 0xF == 0 and not m.is_referral(flags, types), hex(flags))
zone = os.path.join(tmp, "a.zone")
with open(zone, "w") as f:
    f.write("\n".join(secs[0] + secs[1] + secs[2]) + "\n")
got = subprocess.run(["ldns-read-zone", "-c", zone], capture_output=True, text=True)
# what ldns makes of the records put in (its canonical form: owners lower case)
want_zone = """c.example.test. 600 IN CNAME www.example.test.
www.example.test. 300 IN A 192.0.2.1
www.example.test. 300 IN A 192.0.2.2
www.example.test. 300 IN RRSIG A 13 3 3600 20330518033320 20300317174640 4711 example.test. %s
example.test. 3600 IN NS ns1.example.test.
example.test. 3600 IN NS ns2.example.test.
example.test. 3600 IN SOA ns1.example.test. hostmaster.example.test. 7 7200 3600 1209600 300
example.test. 3600 IN MX 10 mail.example.test.
1.2.0.192.in-addr.arpa. 3600 IN PTR www.example.test.
ns1.example.test. 3600 IN A 192.0.2.53
""" % __import__("base64").b64encode(b"\xab" * 64).decode()
with open(os.path.join(tmp, "want.zone"), "w") as f:
    f.write(want_zone)
exp = subprocess.run(["ldns-read-zone", "-c", os.path.join(tmp, "want.zone")],
                     capture_output=True, text=True)
norm = lambda t: sorted(" ".join(l.split()).lower() for l in t.splitlines() if l.strip())
check("the text handed to Unbound reads (ldns) as the records put in, TTLs and all",
      got.returncode == 0 and exp.returncode == 0 and norm(got.stdout) == norm(exp.stdout)
      and len(norm(got.stdout)) == 10,
      got.stderr + exp.stderr + "\n".join(secs[0] + secs[1] + secs[2]))
check("owners elided by the library come back in the client's spelling",
      secs[0][0].startswith("C.ExAmple.TEST. "), secs[0][0])
check("a miss is None (another type)", st.lookup(qname, 28, 1, 0x0100) is None)
st.close()
check("close(): the stop's publish wrote the snapshot",
      os.path.getsize(os.path.join(tmp, "c.snap")) > 0)

# ------------------------------------------------------------ exceptions
class QState:
    def __init__(self, qname):
        self.ext_state = [None] * 3
        self.return_msg = None
        self.qinfo = Obj(qname=name(qname), qtype=1, qclass=1)
        self.query_flags = 0x0100
    no_cache_lookup = is_priming = 0
class Broken(QState):
    @property
    def qinfo(self):
        raise RuntimeError("no qinfo")
    @qinfo.setter
    def qinfo(self, v):
        pass
m.state = m.Dnsnap(conf, lib, 0)
del unboundmodule.LOG[:]
q = Broken("x.test")
r = m.operate(1, unboundmodule.MODULE_EVENT_NEW, q, {})
errs = [s for lvl, s in unboundmodule.LOG if lvl == "error"]
check("an exception in operate(): True returned, the query passed on, one line logged",
      r is True and q.ext_state[1] == unboundmodule.MODULE_WAIT_MODULE and len(errs) == 1
      and "RuntimeError: no qinfo" in errs[0], (r, q.ext_state, unboundmodule.LOG))
# the validator asking again (it left MODULE_RESTART_NEXT): to the iterator, not dnsnap
q = QState("c.example.test")
q.ext_state[0] = unboundmodule.MODULE_RESTART_NEXT
r = m.operate(1, unboundmodule.MODULE_EVENT_PASS, q, {})
check("the validator's second ask goes to the iterator (dnsnap not asked), counted",
      r is True and q.ext_state[1] == unboundmodule.MODULE_WAIT_MODULE
      and m.state.counts == dict(hits=0, misses=0, again=1, inserts=0, refused=0),
      (q.ext_state, m.state.counts))
# a question dnsnap answered a moment ago, back: Unbound doubts it
m.state.answered[0][(name("c.example.test"), 1, 1, 0)] = True
q = QState("C.example.TEST")
r = m.operate(1, unboundmodule.MODULE_EVENT_NEW, q, {})
q2 = QState("c.example.test")
q2.query_flags |= 0x0010
m.operate(1, unboundmodule.MODULE_EVENT_NEW, q2, {})
check("a question dnsnap answered lately, back (any case): passed on; with CD=1: looked up",
      q.ext_state[1] == unboundmodule.MODULE_WAIT_MODULE
      and m.state.counts == dict(hits=0, misses=1, again=2, inserts=0, refused=0),
      m.state.counts)
m.state.close()
sys.exit(1 if fails else 0)
EOF

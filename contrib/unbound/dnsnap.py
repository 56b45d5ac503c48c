"""
dnsnap.py: libdnsnap as a module of stock Unbound, so that its cache survives
restarts and upgrades.

Unbound's python module interface (Debian's python3-unbound) runs this file in
the position of Unbound's own cachedb module, below the validator and above the
iterator:

    server:
        module-config: "validator python iterator"
    python:
        python-script: "/usr/local/share/dnsnap/unbound/dnsnap.py"

- A query Unbound's own cache could not answer reaches operate() (NEW, or PASS
  from the validator): it is looked up in a libdnsnap cache with the snapshot
  mapped under it. A hit becomes Unbound's return message, stored in Unbound's
  cache (the next query is Unbound's own hit) and handed up unvalidated, as
  cachedb hands up what it fetched: the validator checks it as if the iterator
  had brought it, so a bogus answer stays bogus. A miss goes to the iterator.
- The iterator's answer comes back up (MODDONE): it is rebuilt in wire form and
  inserted (each record's own TTL; a negative answer with its SOA), then goes
  on to the validator.
- The snapshot is published (libdnsnap's safe publish: the writers' lock, a
  merge with the file at the path, written beside it, synced, renamed) every
  publish-interval seconds by a thread of this module, when a file PATH.publish
  appears (it is removed), and at deinit: Unbound's stop, restart and reload.

The library is libdnsnap.so.1, loaded by its soname through ctypes (the one
installed, or the build's through LD_LIBRARY_PATH). Settings come from the
file named by DNSNAP_UNBOUND_CONF ("key: value" lines; see SETTINGS); without
it, the defaults. DNSNAP_UNBOUND_SNAP names the snapshot over the file's.

Nothing here makes Unbound fail: a missing, damaged or foreign snapshot is a
cold start with one log line; a missing library leaves the module passing every
query on; an exception is logged (at most once a second) and its query passed
on. contrib/unbound/README.md says how to install it.
"""
import ctypes
import errno
import os
import re
import struct
import threading
import time

try:
    log_info  # noqa: B018 -- Unbound runs this file with unboundmodule's names defined
except NameError:
    from unboundmodule import *  # noqa: F401,F403 -- imported as a plain module (tests)

# ------------------------------------------------------------------ settings

# name: (default, parser); the file's keys
SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _size(text):
    m = re.fullmatch(r"([0-9]+)([KMG]?)", text.strip().upper())
    if m is None:
        raise ValueError("not a size (a number, with K, M or G)")
    v = int(m.group(1)) * SIZE_UNITS[m.group(2)]
    if v < (1 << 20):
        raise ValueError("less than 1M (the index alone takes more)")
    return v


def _seconds(text):
    if not re.fullmatch(r"[0-9]+", text.strip()):
        raise ValueError("not a number of seconds")
    return int(text)


def _path(text):
    if not text.strip():
        raise ValueError("empty")
    return text.strip()


SETTINGS = {
    "snapshot": ("/var/lib/unbound/dnsnap.snap", _path),   # the snapshot file
    "publish-interval": (300, _seconds),                   # 0: at stop and on demand only
    "max-bytes": (256 << 20, _size),                       # the in-memory cache's limit
}


def read_settings(env=None):
    """The settings, and the complaints about the file (one line each)."""
    env = os.environ if env is None else env
    conf = {k: v[0] for k, v in SETTINGS.items()}
    problems = []
    path = env.get("DNSNAP_UNBOUND_CONF")
    if path:
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError) as e:
            problems.append("%s: %s; the defaults are used" % (path, getattr(e, "strerror", e)))
            lines = []
        for n, line in enumerate(lines, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            key, sep, value = line.partition(":")
            key = key.strip()
            if not sep or key not in SETTINGS:
                problems.append("%s:%d: unknown setting '%s' (known: %s)"
                                % (path, n, key, ", ".join(SETTINGS)))
                continue
            try:
                conf[key] = SETTINGS[key][1](value)
            except ValueError as e:
                problems.append("%s:%d: %s: '%s' is %s; %s is used"
                                % (path, n, key, value.strip(), e, conf[key]))
    if env.get("DNSNAP_UNBOUND_SNAP"):
        conf["snapshot"] = env["DNSNAP_UNBOUND_SNAP"]
    return conf, problems


# ------------------------------------------------------- libdnsnap (ctypes)
# The structures of engine/dnsnap.h the module passes, field for field. Their
# layout is the soname's promise (a change is a new libdnsnap.so.N);
# tests/cli/test_unbound_module.sh checks it against the C compiler's.

c_u8, c_u16, c_u32, c_u64 = ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32, ctypes.c_uint64
c_size, c_int, c_p = ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p
KEY_MAX = 511
ENTRY_MAX = 18 + 2 + 65535 + 65535
OK, ENOTFOUND = 0, -1005


class Diag(ctypes.Structure):
    _fields_ = [("offset", c_size), ("msg", ctypes.c_char * 256)]


class Query(ctypes.Structure):
    _fields_ = [("msg", c_p), ("len", c_size), ("id", c_u16), ("flags", c_u16),
                ("qname_off", c_size), ("qname_len", c_size), ("question_end", c_size),
                ("qtype", c_u16), ("qclass", c_u16), ("edns", c_int), ("udp_size", c_u16),
                ("do_bit", c_int), ("key", c_u8 * KEY_MAX), ("key_len", c_size)]


class Lookup(ctypes.Structure):
    _fields_ = [("now", c_u32), ("max_size", c_u16), ("stale_window", c_u32), ("tier", c_int),
                ("stale", c_int), ("cd_fallback", c_int)]


class CacheOpts(ctypes.Structure):
    _fields_ = [("max_bytes", c_size), ("max_entries", c_size), ("min_ttl", c_u32),
                ("max_ttl", c_u32), ("max_neg_ttl", c_u32), ("serve_stale", c_int),
                ("stale_window", c_u32), ("rotate", c_int), ("our_udp_size", c_u16)]


class Encoded(ctypes.Structure):
    _fields_ = [("key", c_u8 * KEY_MAX), ("key_len", c_size), ("entry_len", c_size),
                ("qname_off", c_u16), ("qname_len", c_u16), ("ttl", c_u32),
                ("entry", c_u8 * ENTRY_MAX)]


class CacheStats(ctypes.Structure):
    _fields_ = [("entries", c_size), ("bytes", c_size), ("hits", c_u64), ("misses", c_u64),
                ("inserts", c_u64), ("evictions", c_u64), ("expired", c_u64),
                ("stale_served", c_u64), ("kept", c_u64)]


class SnapInfo(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint), ("minor", ctypes.c_uint), ("created_at", c_u64),
                ("entry_count", c_u64), ("digest", c_u64), ("file_size", c_u64),
                ("writer", ctypes.c_char * 128)]


class WriteStats(ctypes.Structure):
    _fields_ = [("entries", c_u64), ("skipped", c_u64), ("entry_bytes", c_u64),
                ("file_size", c_u64), ("longest_pause_ms", ctypes.c_double),
                ("from_base", c_u64), ("replaced", c_u64), ("base_expired", c_u64),
                ("base_bad", c_u64), ("stream_bytes", c_u64)]


class PublishOpts(ctypes.Structure):
    _fields_ = [("now", c_u32), ("stale_window", c_u32), ("wait_seconds", c_int),
                ("flags", ctypes.c_uint), ("max_bytes", ctypes.c_uint64), ("exclude", c_p),
                ("exclude_arg", c_p)]


class PublishStats(ctypes.Structure):
    _fields_ = [("write", WriteStats), ("base_merged", c_int), ("base_err", c_int),
                ("base_msg", ctypes.c_char * 256), ("excluded", ctypes.c_uint64),
                ("over_bound", ctypes.c_uint64), ("stale", ctypes.c_uint64),
                ("base_refused", ctypes.c_uint64)]


PUBLISH_DROP_DAMAGED, PUBLISH_REPLACE_BAD = 2, 4
STRUCTS = (Diag, Query, Lookup, CacheOpts, Encoded, CacheStats, SnapInfo, WriteStats,
           PublishOpts, PublishStats)

_P = ctypes.POINTER
PROTOS = {
    "dnsnap_strerror": (ctypes.c_char_p, [c_int]),
    "dnsnap_cache_opts_default": (None, [_P(CacheOpts)]),
    "dnsnap_cache_new": (c_int, [_P(CacheOpts), _P(c_p)]),
    "dnsnap_cache_free": (None, [c_p]),
    "dnsnap_cache_stats": (None, [c_p, _P(CacheStats)]),
    "dnsnap_query_parse": (c_int, [ctypes.c_char_p, c_size, c_p, c_size, _P(Query), _P(Diag)]),
    "dnsnap_cache_lookup": (c_int, [c_p, _P(Query), _P(Lookup), c_p, c_size, _P(c_size)]),
    "dnsnap_cache_insert": (c_int, [c_p, ctypes.c_char_p, c_size, c_u32, c_p, c_size,
                                    _P(Encoded), _P(Diag)]),
    "dnsnap_snap_open": (c_int, [ctypes.c_char_p, _P(c_p), _P(Diag)]),
    "dnsnap_snap_close": (None, [c_p]),
    "dnsnap_snap_info": (None, [c_p, _P(SnapInfo)]),
    "dnsnap_snap_check_hash": (c_int, [c_p, _P(Diag)]),
    "dnsnap_snap_same_file": (c_int, [c_p, ctypes.c_char_p]),
    "dnsnap_cache_attach": (None, [c_p, c_p, _P(c_p)]),
    "dnsnap_snap_publish": (c_int, [c_p, ctypes.c_char_p, _P(PublishOpts), _P(c_p),
                                    _P(PublishStats), _P(Diag)]),
}


# The calls of the query path: a microsecond each, made holding Python's lock
# (ctypes.PyDLL). Released around each (ctypes.CDLL), the lock went to the
# other Unbound thread waiting for it and came back only when that thread
# let go: an insert measured 16 us of a miss's 50, most of it that wait.
QUICK = ("dnsnap_query_parse", "dnsnap_cache_lookup", "dnsnap_cache_insert",
         "dnsnap_cache_stats")


def load_library(name="libdnsnap.so.1"):
    """libdnsnap by its soname, its functions typed: lib.quick for the query
    path (holding Python's lock), the library itself (ctypes.CDLL, which
    releases it) for the long calls: a publish, or an open that reads the
    whole file, does not stop Unbound's threads."""
    lib = ctypes.CDLL(name)
    lib.quick = ctypes.PyDLL(name)
    for fn, (res, args) in PROTOS.items():
        for h in (lib, lib.quick) if fn in QUICK else (lib,):
            f = getattr(h, fn)
            f.restype, f.argtypes = res, args
    return lib


# ------------------------------------------------------------ DNS messages

QR, AA, TC, RD, RA, AD, CD = 0x8000, 0x0400, 0x0200, 0x0100, 0x0080, 0x0020, 0x0010
T_NS, T_SOA, T_MX, T_MINFO, T_OPT, T_RRSIG = 2, 6, 15, 14, 41, 46
# Types whose rdata names dnsnap_answer_build() compresses (engine/dnsnap.h):
# NS MD MF CNAME MB MG MR PTR hold one name, SOA and MINFO two, MX one after 2 bytes.
ONE_NAME = {2, 3, 4, 5, 7, 8, 9, 12}
# OPT: root owner, type 41, payload 65535, DO set: every DNSSEC record comes back,
# for the validator (Unbound strips them for clients without DO)
OPT_DO = b"\x00\x00\x29\xff\xff\x00\x00\x80\x00\x00\x00"


def query_wire(qname, qtype, qclass, qflags):
    """The query dnsnap is asked: Unbound's question (name as the first client
    spelled it), its RD and CD, DO=1."""
    return (struct.pack("!6H", 0, qflags & (RD | CD), 1, 0, 0, 1) + qname
            + struct.pack("!HH", qtype, qclass) + OPT_DO)


def unpack_name(msg, pos):
    """The name at msg[pos] uncompressed, and the offset after it in place.
    Pointers must point backwards (so a loop cannot be followed)."""
    out = bytearray()
    end = None
    while True:
        n = msg[pos]
        if n >= 0xC0:
            ptr = ((n & 0x3F) << 8) | msg[pos + 1]
            if ptr >= pos:
                raise ValueError("a compression pointer that does not point backwards")
            if end is None:
                end = pos + 2
            pos = ptr
            continue
        if n > 63:
            raise ValueError("a bad label type")
        out += msg[pos:pos + 1 + n]
        if len(out) > 255 or pos + 1 + n > len(msg):
            raise ValueError("a name over 255 bytes or past the message")
        if n == 0:
            return bytes(out), (pos + 1 if end is None else end)
        pos += 1 + n


def expand_rdata(msg, pos, rdlen, rtype):
    """The rdata at msg[pos:pos+rdlen] with its names uncompressed."""
    end = pos + rdlen
    if rtype in ONE_NAME:
        n, p = unpack_name(msg, pos)
        out = n
    elif rtype in (T_SOA, T_MINFO):
        a, p = unpack_name(msg, pos)
        b, p = unpack_name(msg, p)
        out = a + b + msg[p:end]
        p = end if rtype == T_SOA and end - p == 20 else p
    elif rtype == T_MX:
        n, p = unpack_name(msg, pos + 2)
        out = msg[pos:pos + 2] + n
    else:
        return msg[pos:end]
    if p != end:
        raise ValueError("rdata of type %d does not end where its length says" % rtype)
    return out


PLAIN_LABEL = re.compile(rb"[A-Za-z0-9_*/+-]*\Z")
ESCAPED = ["\\%03d" % c if c <= 0x20 or c >= 0x7F or chr(c) in '.\\"();@$' else chr(c)
           for c in range(256)]


def name_text(wire):
    """A wire name in presentation form, absolute (every byte that could be
    misread as \\DDD)."""
    labels = []
    pos = 0
    while wire[pos]:
        lab = wire[pos + 1:pos + 1 + wire[pos]]
        if PLAIN_LABEL.match(lab):
            labels.append(lab.decode("ascii"))
        else:
            labels.append("".join(ESCAPED[c] for c in lab))
        pos += 1 + wire[pos]
    return ".".join(labels) + "." if labels else "."


def answer_sections(ans, qlen):
    """dnsnap's answer (wire) as (flags, [answer], [authority], [additional]),
    each record "OWNER TTL CLASSn TYPEn \\# LEN HEX" (RFC 3597), the text
    Unbound's set_return_msg() reads; OPT left out."""
    flags, _, an, ns, ar = struct.unpack_from("!5H", ans, 2)
    pos = 12 + qlen + 4
    secs = ([], [], [])
    types = ([], [], [])
    for i in range(an + ns + ar):
        s = 0 if i < an else (1 if i < an + ns else 2)
        owner, pos = unpack_name(ans, pos)
        rtype, rclass, ttl, rdlen = struct.unpack_from("!HHIH", ans, pos)
        pos += 10
        if pos + rdlen > len(ans):
            raise ValueError("a record past the end of the answer")
        if rtype != T_OPT:
            rd = expand_rdata(ans, pos, rdlen, rtype)
            secs[s].append("%s %d CLASS%d TYPE%d \\# %d %s"
                           % (name_text(owner), ttl, rclass, rtype, len(rd), rd.hex()))
            types[s].append(rtype)
        pos += rdlen
    return flags, secs, types


def is_referral(flags, types):
    """NOERROR, no answer, NS and no SOA in authority: where the iterator
    goes on, not a final answer."""
    return (flags & 0xF) == 0 and not types[0] and T_NS in types[1] and T_SOA not in types[1]


def swap16(x):
    """ntohs() on a little-endian host, without a call into Unbound."""
    return ((x & 0xFF) << 8) | (x >> 8)


NTOHS = swap16 if struct.pack("=H", 1) == b"\x01\x00" else (lambda x: x)


def reply_wire(qname, qtype, qclass, qflags, rep, ntohs_=NTOHS):
    """Unbound's reply (a reply_info: flags and RRsets, each with its records'
    TTLs and rdata, RRSIGs after the data) as the DNS response it stands for,
    names uncompressed: what dnsnap_cache_insert() takes. The RRset key's type
    and class are in network order (ntohs_)."""
    n_an, n_ns = rep.an_numrrsets, rep.ns_numrrsets
    counts = [0, 0, 0]
    body = []
    rrsets = rep.rrsets
    for i in range(rep.rrset_count):
        s = 0 if i < n_an else (1 if i < n_an + n_ns else 2)
        rr = rrsets[i]
        rk = rr.rk
        d = rr.entry.data
        owner = rk.dname
        cls = ntohs_(rk.rrset_class)
        head = owner + struct.pack("!HH", ntohs_(rk.type), cls)
        sig = owner + struct.pack("!HH", T_RRSIG, cls)
        nd = d.count
        total = nd + d.rrsig_count
        ttls, datas = d.rr_ttl, d.rr_data
        for j in range(total):
            # rr_data holds each record's rdlength and rdata
            body.append((head if j < nd else sig) + struct.pack("!I", ttls[j]) + datas[j])
        counts[s] += total
    flags = QR | (rep.flags & (AA | RA | 0xF)) | (qflags & (RD | CD))
    return (struct.pack("!6H", 0, flags, 1, counts[0], counts[1], counts[2]) + qname
            + struct.pack("!HH", qtype, qclass) + b"".join(body))


# ------------------------------------------------------------- the module

class Buffers(threading.local):
    """What each of Unbound's threads uses for its own calls (the cache itself
    is shared and thread-safe)."""

    def __init__(self):
        self.q = Query()
        self.lk = Lookup()
        self.lk.max_size = 65535
        self.out = (c_u8 * 65535)()
        self.out_len = c_size()
        self.diag = Diag()
        self.scratch = Encoded()
        # the pointers passed, made once (a byref() a call costs as much as a field)
        self.q_p, self.lk_p, self.len_p = (ctypes.byref(self.q), ctypes.byref(self.lk),
                                           ctypes.byref(self.out_len))
        self.diag_p, self.scratch_p = ctypes.byref(self.diag), ctypes.byref(self.scratch)


def _msg(diag, rc, lib):
    m = diag.msg.decode("utf-8", "replace")
    return m if m else lib.dnsnap_strerror(rc).decode()


RECENT_S = 10


class Dnsnap:
    """The cache, its snapshot and its publisher: one per module instance."""

    def __init__(self, conf, lib, max_ttl):
        self.lib = lib
        self.quick = lib.quick
        self.path = conf["snapshot"]
        self.bpath = self.path.encode()
        self.interval = conf["publish-interval"]
        self.tls = Buffers()
        self.cache = c_p()
        self.snap = c_p()
        self.mu = threading.Lock()   # publishes, swaps of the map
        self.seen = None             # the path's (dev, ino, size, mtime) last taken in
        self.published = 0           # the cache's inserts at the last publish
        self.last_err = None
        self.counts = {"hits": 0, "misses": 0, "again": 0, "inserts": 0, "refused": 0}
        # the questions dnsnap answered lately, in two generations of RECENT_S
        # seconds (swapped by the publisher: no dict is walked while threads add)
        self.answered = ({}, {})
        o = CacheOpts()
        lib.dnsnap_cache_opts_default(ctypes.byref(o))
        o.max_bytes = conf["max-bytes"]
        self.max_bytes = conf["max-bytes"]
        if max_ttl > 0:
            o.max_ttl = max_ttl      # cache-max-ttl: no answer lives longer than Unbound's
        rc = lib.dnsnap_cache_new(ctypes.byref(o), ctypes.byref(self.cache))
        if rc != OK:
            raise OSError("dnsnap_cache_new: %s" % lib.dnsnap_strerror(rc).decode())
        self.stop = threading.Event()
        self.thread = None

    # -- the snapshot

    def _stat(self):
        try:
            st = os.stat(self.path)
            return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        except OSError:
            return None

    def _swap(self, fresh):
        old = c_p()
        self.lib.dnsnap_cache_attach(self.cache, fresh, ctypes.byref(old))
        self.snap = fresh
        self.lib.dnsnap_snap_close(old)   # waits for lookups still in it

    def open_snapshot(self):
        """Map the file at the path under the cache. @return (mapped, what to
        log); a file that does not open changes nothing."""
        self.seen = self._stat()
        d = Diag()
        fresh = c_p()
        rc = self.lib.dnsnap_snap_open(self.bpath, ctypes.byref(fresh), ctypes.byref(d))
        if rc == -errno.ENOENT:
            return False, "%s: no snapshot yet" % self.path
        if rc != OK:
            return False, _msg(d, rc, self.lib)
        info = SnapInfo()
        self.lib.dnsnap_snap_info(fresh, ctypes.byref(info))
        hd = Diag()
        hrc = self.lib.dnsnap_snap_check_hash(fresh, ctypes.byref(hd))
        with self.mu:
            self._swap(fresh)
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(info.created_at))
        line = "%s: %d entries, written %s by %s" % (
            self.path, info.entry_count, when, info.writer.decode("utf-8", "replace"))
        if hrc != OK:
            line += "; damaged (%s): each entry is checked, damaged ones are misses" % (
                _msg(hd, hrc, self.lib))
        return True, line

    def publish(self, why, wait):
        """The safe publish of the cache at the path; the new file mapped.
        Nothing inserted since the last one: nothing to do. @return a log line
        or None (nothing done)"""
        with self.mu:
            st = CacheStats()
            self.lib.dnsnap_cache_stats(self.cache, ctypes.byref(st))
            if st.inserts == self.published:
                return None
            t0 = time.monotonic()
            # at most what the in-memory cache may hold: evicted entries do not
            # live on in the file
            o = PublishOpts(now=int(time.time()), wait_seconds=wait,
                            flags=PUBLISH_DROP_DAMAGED | PUBLISH_REPLACE_BAD,
                            max_bytes=self.max_bytes)
            ps = PublishStats()
            d = Diag()
            fresh = c_p()
            rc = self.lib.dnsnap_snap_publish(self.cache, self.bpath, ctypes.byref(o),
                                              ctypes.byref(fresh), ctypes.byref(ps),
                                              ctypes.byref(d))
            if rc != OK:
                err = "snapshot not published (%s): %s" % (why, _msg(d, rc, self.lib))
                if rc in (-1000, -1001):   # EMAGIC, EVERSION: never replaced
                    err += "; the file is left as it is"
                return err
            self.published = st.inserts
            if fresh.value:
                self._swap(fresh)
            self.seen = self._stat()
        w = ps.write
        line = "%s: published (%s): %d entries (%d from memory, %d kept from the file), %.3f s" % (
            self.path, why, w.entries, w.entries - w.from_base, w.from_base,
            time.monotonic() - t0)
        if ps.base_err:
            line += "; the file there was replaced: %s" % ps.base_msg.decode("utf-8", "replace")
        return line

    def recent(self, key):
        a = self.answered
        return key in a[0] or key in a[1]

    def tick(self, now):
        """Once a second, from the publisher: on demand (PATH.publish), every
        interval, and a file another writer put at the path taken in."""
        if now >= self.forget_at:
            self.answered = ({}, self.answered[0])
            self.forget_at = now + RECENT_S
        lines = []
        trigger = self.path + ".publish"
        if os.path.exists(trigger):
            try:
                os.unlink(trigger)
            except OSError:
                pass
            lines.append(self.publish("on demand", 60) or
                         "%s: not published (on demand): nothing new" % self.path)
        elif self.interval and now >= self.next_at:
            lines.append(self.publish("periodic", 60))
        if self.interval and now >= self.next_at:
            self.next_at = now + self.interval
        key = self._stat()
        if key is not None and key != self.seen:
            with self.mu:
                same = self.snap.value and self.lib.dnsnap_snap_same_file(self.snap, self.bpath)
            if not same:
                ok, what = self.open_snapshot()
                lines.append(("taken in (replaced by another writer): " + what) if ok else
                             ("the file at the path changed and was not taken in: %s; the "
                              "snapshot mapped before stays" % what))
            self.seen = key
        return [x for x in lines if x]

    def run(self):
        self.next_at = time.monotonic() + self.interval
        self.forget_at = time.monotonic() + RECENT_S
        while not self.stop.wait(1.0):
            try:
                for line in self.tick(time.monotonic()):
                    self.log(line)
            except Exception as e:   # the thread must live on
                self.log("publisher: %s: %s" % (type(e).__name__, e))

    def log(self, line):
        # one failing publish a minute apart is one line, not one a minute
        if line.startswith("snapshot not published"):
            if line == self.last_err:
                return
            self.last_err = line
            log_err("dnsnap: " + line)
            return
        if "published" in line:
            self.last_err = None
        log_info("dnsnap: " + line)

    def start(self):
        self.thread = threading.Thread(target=self.run, name="dnsnap-publish")
        self.thread.start()

    def close(self):
        """At deinit: the publisher stopped, the last publish, the cache and the
        map freed (Unbound's threads are done by then)."""
        if self.thread is not None:
            self.stop.set()
            self.thread.join()
        line = self.publish("Unbound's stop or reload", 30)
        if line:
            self.log(line)
        c = self.counts
        log_info("dnsnap: %s: %d answers from dnsnap, %d queries passed on (and %d asked "
                 "again by the validator), %d answers inserted, %d not inserted"
                 % (self.path, c["hits"], c["misses"], c["again"], c["inserts"], c["refused"]))
        self.lib.dnsnap_cache_free(self.cache)
        self.lib.dnsnap_snap_close(self.snap)
        self.cache = c_p()
        self.snap = c_p()

    # -- the query path

    def lookup(self, qname, qtype, qclass, qflags):
        """dnsnap's answer (wire) to Unbound's question, or None: fresh entries
        only (stale_window 0), no size limit but the message's."""
        b = self.tls
        msg = query_wire(qname, qtype, qclass, qflags)
        if self.quick.dnsnap_query_parse(msg, len(msg), None, 0, b.q_p, b.diag_p) != OK:
            return None
        b.lk.now = int(time.time())
        if self.quick.dnsnap_cache_lookup(self.cache, b.q_p, b.lk_p, b.out, 65535,
                                          b.len_p) != OK:
            return None
        return bytes(memoryview(b.out)[:b.out_len.value])

    def insert(self, wire):
        b = self.tls
        return self.quick.dnsnap_cache_insert(self.cache, wire, len(wire), int(time.time()),
                                              None, 0, b.scratch_p, b.diag_p) == OK


state = None                # the module's Dnsnap, None when it could not start
errors_logged = [0.0, 0]    # when the last exception was logged, how many since


def log_exception(where, e):
    now = time.monotonic()
    errors_logged[1] += 1
    if now - errors_logged[0] >= 1.0:
        log_err("dnsnap: %s: %s: %s (%d since the last line); the query goes on without "
                "dnsnap" % (where, type(e).__name__, e, errors_logged[1]))
        errors_logged[0] = now
        errors_logged[1] = 0


def init(id, cfg):
    global state
    conf, problems = read_settings()
    for p in problems:
        log_err("dnsnap: " + p)
    try:
        lib = load_library()
    except OSError as e:
        log_err("dnsnap: %s; every query goes on without dnsnap (install libdnsnap, or "
                "set LD_LIBRARY_PATH)" % e)
        return True
    try:
        state = Dnsnap(conf, lib, cfg.max_ttl if cfg is not None else 0)
        ok, what = state.open_snapshot()
        log_info("dnsnap: %s: %s" % (what, "a warm start" if ok else "a cold start"))
        state.start()
    except Exception as e:
        log_err("dnsnap: %s: %s; every query goes on without dnsnap" % (type(e).__name__, e))
        state = None
    return True


def deinit(id):
    global state
    if state is not None:
        try:
            state.close()
        except Exception as e:
            log_err("dnsnap: at stop: %s: %s" % (type(e).__name__, e))
        state = None
    return True


def inform_super(id, qstate, superqstate, qdata):
    return True


def handle_query(id, qstate):
    """NEW or PASS: answer from dnsnap, or pass on to the iterator.

    Passed on without asking dnsnap: the validator asking again after a bogus answer (it left MODULE_RESTART_NEXT;
    cachedb looks at qstate->blacklist, which the python interface does not
    show); and a question dnsnap answered in the last 10 to 20 seconds. Unbound
    keeps what dnsnap gives in its own cache, so the same question back so
    soon is Unbound doubting that answer: the validator fetching a DS or
    DNSKEY again with the cache blacklisted, which arrives as a new query."""
    if state is None or qstate.no_cache_lookup or qstate.is_priming:
        qstate.ext_state[id] = MODULE_WAIT_MODULE
        return
    qi = qstate.qinfo
    qname = qi.qname
    key = (qname.lower(), qi.qtype, qi.qclass, qstate.query_flags & CD)
    if (id > 0 and qstate.ext_state[id - 1] == MODULE_RESTART_NEXT) or state.recent(key):
        state.counts["again"] += 1
        qstate.ext_state[id] = MODULE_WAIT_MODULE
        return
    ans = state.lookup(qname, qi.qtype, qi.qclass, qstate.query_flags)
    if ans is not None:
        flags, secs, types = answer_sections(ans, len(qname))
        if not is_referral(flags, types):
            # QR and RA, as the iterator leaves its replies (RD and CD are the
            # client's, added when Unbound answers)
            m = DNSMessage(name_text(qname), qi.qtype, qi.qclass, PKT_QR | PKT_RA)
            m.answer, m.authority, m.additional = secs
            if m.set_return_msg(qstate):
                rep = qstate.return_msg.rep
                rep.flags = (rep.flags & ~0xF) | (flags & 0xF)
                qstate.return_rcode = RCODE_NOERROR
                # in Unbound's cache, unchecked: the validator's store overrides it
                storeQueryInCache(qstate, qstate.return_msg.qinfo, rep, 0)
                state.answered[0][key] = True
                state.counts["hits"] += 1
                qstate.ext_state[id] = MODULE_FINISHED
                return
            qstate.return_msg = None
    state.counts["misses"] += 1
    qstate.ext_state[id] = MODULE_WAIT_MODULE


def handle_response(id, qstate):
    """MODDONE: the iterator's answer into dnsnap, then on to the validator."""
    qstate.ext_state[id] = MODULE_FINISHED
    msg = qstate.return_msg
    if state is None or msg is None or qstate.no_cache_store or qstate.is_priming:
        return
    rep = msg.rep
    if rep is None or (rep.flags & 0xF) not in (0, 3) or rep.ttl == 0 \
            or rep.security == sec_status_bogus:
        return
    qi = qstate.qinfo
    wire = reply_wire(qi.qname, qi.qtype, qi.qclass, qstate.query_flags, rep)
    state.counts["inserts" if state.insert(wire) else "refused"] += 1


def operate(id, event, qstate, qdata):
    try:
        if event in (MODULE_EVENT_NEW, MODULE_EVENT_PASS):
            handle_query(id, qstate)
        elif event == MODULE_EVENT_MODDONE:
            handle_response(id, qstate)
        else:
            qstate.ext_state[id] = MODULE_ERROR
    except Exception as e:
        log_exception("operate(%s)" % strmodulevent(event), e)
        if event in (MODULE_EVENT_NEW, MODULE_EVENT_PASS):
            qstate.return_msg = None
            qstate.ext_state[id] = MODULE_WAIT_MODULE
        else:
            qstate.ext_state[id] = MODULE_FINISHED
    return True

#!/usr/bin/env python3
"""specread.py: a reader of dnsnap's bytes written from spec/FORMAT.md alone.

A test aid: it knows no C of dnsnap, only the spec's text (the cache key, the entry's
Validation, the snapshot's Opening, Searching a tree, Lookups, Scans, The deep check,
the index record, the export stream and its framing, the L2 value; "Reporting damage"
for the order, codes and offsets). xxHash's XXH3-64 and zstd's decoder, which the
format names, come from the system's libxxhash and libzstd through ctypes. Python 3's
standard library only.

  specread.py vectors DIR              every vector of DIR (spec/vectors) but the DNS
                                       messages: what this reader says against its
                                       .err, .txt-less checks for the valid ones
  specread.py sweep MKREPORT N SEED FILE...
                                       N single-bit flips of each snapshot FILE, each
                                       read here and by the library (MKREPORT, the
                                       build's mkreport), which must agree line for
                                       line; every bit of each L2 value vector given
                                       as FILE.l2; N flips of the content of each
                                       export stream given as FILE.dnsx, compressed
                                       again and imported by the library
Exit status 0 when all agree, 1 when one does not (each named on stderr).
"""
import ctypes
import ctypes.util
import os
import random
import struct
import subprocess
import sys
import tempfile

# --------------------------------------------------------------- libraries

def _lib(name, soname):
    path = ctypes.util.find_library(name) or soname
    return ctypes.CDLL(path)


_xxh = _lib("xxhash", "libxxhash.so.0")
_xxh.XXH3_64bits.restype = ctypes.c_uint64
_xxh.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
_xxh.XXH3_64bits_withSeed.restype = ctypes.c_uint64
_xxh.XXH3_64bits_withSeed.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]


def xxh3(b, seed=None):
    b = bytes(b)
    if seed is None:
        return _xxh.XXH3_64bits(b, len(b))
    return _xxh.XXH3_64bits_withSeed(b, len(b), seed)


def value_check(key, obj):
    """Value_Check: the low 32 bits of XXH3 of the object, seeded with XXH3 of the key."""
    return xxh3(obj, xxh3(key)) & 0xffffffff


_zstd = _lib("zstd", "libzstd.so.1")


class _ZBuf(ctypes.Structure):
    _fields_ = [("p", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


_zstd.ZSTD_createDCtx.restype = ctypes.c_void_p
_zstd.ZSTD_freeDCtx.argtypes = [ctypes.c_void_p]
_zstd.ZSTD_decompressStream.restype = ctypes.c_size_t
_zstd.ZSTD_decompressStream.argtypes = [ctypes.c_void_p, ctypes.POINTER(_ZBuf),
                                        ctypes.POINTER(_ZBuf)]
_zstd.ZSTD_isError.restype = ctypes.c_uint
_zstd.ZSTD_isError.argtypes = [ctypes.c_size_t]
_zstd.ZSTD_compress.restype = ctypes.c_size_t
_zstd.ZSTD_compress.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                ctypes.c_size_t, ctypes.c_int]
_zstd.ZSTD_compressBound.restype = ctypes.c_size_t
_zstd.ZSTD_compressBound.argtypes = [ctypes.c_size_t]


def zstd_frame(content):
    """One zstd frame of @content (for the sweep's streams: any valid frame will do)."""
    out = ctypes.create_string_buffer(_zstd.ZSTD_compressBound(len(content)))
    n = _zstd.ZSTD_compress(out, len(out), bytes(content), len(content), 3)
    assert not _zstd.ZSTD_isError(n)
    return out.raw[:n]

# ------------------------------------------------------------------- codes

CODES = {"EMAGIC": -1000, "EVERSION": -1001, "ETRUNC": -1002, "ECHECKSUM": -1003,
         "ERESERVED": -1004, "ENOTFOUND": -1005, "ELMDB": -1006, "EZSTD": -1007,
         "ELABEL": -1008, "ENAME": -1009, "EPOINTER": -1010, "ECOUNT": -1011,
         "ERDLEN": -1012, "ERDATA": -1013, "EOPT": -1014, "ENOTCACHE": -1015,
         "ETOOBIG": -1016, "EFIELD": -1017}


class Bad(Exception):
    """A reader's failure: the code's name (without DNSNAP_) and the offset."""

    def __init__(self, code, off):
        super().__init__(code, off)
        assert code in CODES, code
        self.code, self.off = code, off

    def word(self):
        return "DNSNAP_" + self.code


def u16(b, o): return struct.unpack_from("<H", b, o)[0]
def u32(b, o): return struct.unpack_from("<I", b, o)[0]
def u64(b, o): return struct.unpack_from("<Q", b, o)[0]
def be16(b, o): return struct.unpack_from(">H", b, o)[0]


def key_cmp(a, b):
    """Order: memcmp over the common length, the shorter first."""
    n = min(len(a), len(b))
    if a[:n] != b[:n]:
        return -1 if a[:n] < b[:n] else 1
    return (len(a) > len(b)) - (len(a) < len(b))

# -------------------------------------------------------------------- names

def name_check(b, start, end):
    """Names: label by label; returns the name's length. A cut name raises
    Bad("ETRUNC", start); the caller reports a cut where its object says."""
    n = 0
    while True:
        if start + n >= end:
            raise Bad("ETRUNC", start)
        L = b[start + n]
        if L >= 0x40:
            raise Bad("ELABEL", start + n)
        if L == 0:
            return n + 1
        if n + 1 + L + 1 > 255:
            raise Bad("ENAME", start + n)
        if start + n + 1 + L > end:
            raise Bad("ETRUNC", start)
        n += 1 + L

# ---------------------------------------------------------------------- key

def key_decode(k):
    """The cache key, in field order; the name's labels each checked whole,
    then for upper case, before the next."""
    if len(k) > 511:
        raise Bad("ETOOBIG", 0)
    n = 0
    while True:
        if n >= len(k):
            raise Bad("ETRUNC", 0)
        L = k[n]
        if L >= 0x40:
            raise Bad("ELABEL", n)
        if L == 0:
            break
        if n + 1 + L + 1 > 255:
            raise Bad("ENAME", n)
        if n + 1 + L > len(k):
            raise Bad("ETRUNC", 0)
        for j in range(n + 1, n + 1 + L):
            if 0x41 <= k[j] <= 0x5a:
                raise Bad("EFIELD", j)
        n += 1 + L
    N = n + 1
    for off, size in ((N, 2), (N + 2, 2), (N + 4, 1)):
        if len(k) < off + size:
            raise Bad("ETRUNC", off)
    if k[N + 4] & 0xfe:
        raise Bad("ERESERVED", N + 4)
    if len(k) < N + 6:
        raise Bad("ETRUNC", N + 5)
    tag_len = k[N + 5]
    if len(k) - (N + 6) < tag_len:
        raise Bad("ETRUNC", N + 5)
    if len(k) != N + 6 + tag_len:
        raise Bad("EFIELD", N + 6 + tag_len)

# -------------------------------------------------------------------- entry

# Rdata layouts of the name-holding types: N a name, S a character-string,
# a digit that many fixed bytes, R the rest.
LAYOUT = {}
for _t in (2, 3, 4, 5, 7, 8, 9, 12, 39):
    LAYOUT[_t] = "N"
LAYOUT[6] = "NN" + "4" * 5
for _t in (14, 17, 58):
    LAYOUT[_t] = "NN"
for _t in (15, 18, 21, 36, 107):
    LAYOUT[_t] = "2N"
LAYOUT[26] = "2NN"
LAYOUT[33] = "6N"
LAYOUT[35] = "4SSSN"
for _t in (24, 46):
    LAYOUT[_t] = "9" + "9" + "N" + "R"   # 18 fixed bytes, a name, the rest
for _t in (30, 47, 249):
    LAYOUT[_t] = "NR"
for _t in (64, 65):
    LAYOUT[_t] = "2NR"


def rdata_check(e, typ, start, end):
    """Per-type checks: ERDATA at the rdata's first byte; a name's own error at
    its label (a cut name is ERDATA)."""
    n = end - start
    if typ == 1 and n != 4 or typ == 28 and n != 16:
        raise Bad("ERDATA", start)
    lay = LAYOUT.get(typ)
    if lay is None:
        return
    i = start
    for c in lay:
        if c == "R":
            return
        if c == "N":
            try:
                i += name_check(e, i, end)
            except Bad as b:
                if b.code == "ETRUNC":
                    raise Bad("ERDATA", start)
                raise
        elif c == "S":
            if i >= end or end - i - 1 < e[i]:
                raise Bad("ERDATA", start)
            i += 1 + e[i]
        else:
            if end - i < int(c):
                raise Bad("ERDATA", start)
            i += int(c)
    if i != end:
        raise Bad("ERDATA", start)


def records(e, rec, auth, addl):
    """Step 9 of Validation: each record; yields (offset, type) of each."""
    end_all = len(e)
    prev = None          # (section, owner, type, class, ttl) of the previous record
    owners = []          # per record: ("qname",) or ("name", offset) of its owner
    targets = []         # per record: offset of its rdata name, or None
    i = 0
    p = rec
    while p < end_all:
        if end_all - p < 2:
            raise Bad("ETRUNC", p)
        rl = u16(e, p)
        if rl == 0 or p + 2 + rl > end_all:
            raise Bad("ETRUNC", p)
        end = p + 2 + rl
        flags = e[p + 2]
        r = p - rec
        sec = 0 if r < auth else 1 if r < addl else 2
        if flags & 0xf0:
            raise Bad("ERESERVED", p + 2)
        if flags & 0x04:
            if i == 0 or flags & 0x0b or prev[0] != sec:
                raise Bad("EFIELD", p + 2)
            owner, typ = owners[i - 1], prev[2]
            q = p + 3
        else:
            if end - (p + 3) < 2:
                raise Bad("ETRUNC", p + 3)
            typ = u16(e, p + 3)
            q = p + 5
            if flags & 0x08:
                if end - q < 2:
                    raise Bad("ETRUNC", q)
                if u16(e, q) == 1:
                    raise Bad("EFIELD", q)
                q += 2
            if end - q < 4:
                raise Bad("ETRUNC", q)
            if u32(e, q) > 0x7fffffff:
                raise Bad("EFIELD", q)
            q += 4
            mode = flags & 0x03
            if mode == 0:
                owner = ("qname",)
            elif mode in (1, 3):
                if end - q < 1:
                    raise Bad("ETRUNC", q)
                k = e[q]
                if k >= i or k >= 64:
                    raise Bad("EFIELD", q)
                owner = owners[k] if mode == 1 else (
                    ("name", targets[k]) if targets[k] is not None else None)
                if owner is None or owner == ("qname",):
                    raise Bad("EFIELD", q)
                q += 1
            else:
                owner = ("name", q)
                q += name_check(e, q, end)
        if typ in (41, 250):
            raise Bad("EFIELD", p + 3)
        rdata_check(e, typ, q, end)
        owners.append(owner)
        targets.append(q if typ in (2, 5, 12, 39) and _is_one_name(e, q, end) else None)
        prev = (sec, owner, typ)
        yield p, typ
        i += 1
        p = end


def _is_one_name(e, q, end):
    try:
        return name_check(e, q, end) == end - q
    except Bad:
        return False


def entry_validate(e):
    """Validation, steps 1 to 11, in that order."""
    for off, size in ((0, 4), (4, 4), (8, 4), (12, 2), (14, 2), (16, 2)):
        if len(e) < off + size:
            raise Bad("ETRUNC", off)
    flags, auth, addl = u16(e, 12), u16(e, 14), u16(e, 16)
    if flags & 0xf000:
        raise Bad("ERESERVED", 12)
    rec, ext = 18, None
    if flags & 0x0100:
        if len(e) < 20 or 20 + u16(e, 18) > len(e):
            raise Bad("ETRUNC", 18)
        if u16(e, 18) == 0:
            raise Bad("EFIELD", 18)
        ext = (20, 20 + u16(e, 18))
        rec = ext[1]
    if len(e) - rec > 65535:
        raise Bad("ETOOBIG", rec)
    if addl > len(e) - rec:
        raise Bad("EFIELD", 16)
    if auth > addl:
        raise Bad("EFIELD", 14)
    if (u32(e, 4) - u32(e, 0)) & 0xffffffff > 0x7fffffff:
        raise Bad("EFIELD", 4)
    if ext:
        t = ext[0]
        while t < ext[1]:
            if ext[1] - t < 3 or t + 3 + u16(e, t + 1) > ext[1]:
                raise Bad("ETRUNC", t)
            if e[t] == 1 and u16(e, t + 1) < 2:
                raise Bad("EFIELD", t)
            t += 3 + u16(e, t + 1)
    rcode, kind = flags & 0x0f, (flags >> 5) & 3
    if (kind == 1) != (rcode == 3) or kind in (2, 3) and rcode != 0:
        raise Bad("EFIELD", 12)
    starts, dnssec = set(), False
    for p, typ in records(e, rec, auth, addl):
        starts.add(p - rec)
        dnssec |= typ in (46, 47, 50)
    end = len(e) - rec
    if auth != end and auth not in starts:
        raise Bad("EFIELD", 14)
    if addl != end and addl not in starts:
        raise Bad("EFIELD", 16)
    if dnssec != bool(flags & 0x80):
        raise Bad("EFIELD", 12)

# ---------------------------------------------------------------- snapshot

P_BRANCH, P_LEAF, P_OVERFLOW, P_META = 1, 2, 4, 8
F_BIGDATA, F_SUBDATA = 1, 2
NONE = (1 << 64) - 1
ENTRY_MAX = 18 + 2 + 65535 + 65535


class Damage(Exception):
    """Damage met by a search (Searching a tree)."""


class Snap:
    """An opened snapshot: its bytes and what opening read."""

    def __init__(self, b):
        self.b = b


def h16(b, o): return u16(b, o)   # LMDB's fields: the host's order (the vectors': LE)
def h32(b, o): return u32(b, o)
def h64(b, o): return u64(b, o)


def db_record(b, o):
    return {"at": o, "flags": h16(b, o + 4), "depth": h16(b, o + 6),
            "entries": h64(b, o + 32), "root": h64(b, o + 40)}


def sane(s, db):
    if db["root"] == NONE:
        return db["depth"] == 0
    return 1 <= db["depth"] <= 32 and db["root"] < s.npages


def page(s, n, kind):
    """The page checks; None when the page fails them."""
    if n < 2 or n >= s.npages:
        return None
    o = n * s.P
    b = s.b
    if h64(b, o) != n or (h16(b, o + 10) & ~0x10) != kind:
        return None
    if kind == P_OVERFLOW:
        return o
    lower, upper = h16(b, o + 12), h16(b, o + 14)
    if lower < 18 or lower > upper or upper > s.P or (lower - 16) % 2:
        return None
    return o


def nkeys(s, o):
    return (h16(s.b, o + 12) - 16) // 2


def node(s, o, i):
    """The node checks: (node offset, key) or None."""
    off = h16(s.b, o + 16 + 2 * i)
    if off < h16(s.b, o + 14) or off + 8 > s.P:
        return None
    ks = h16(s.b, o + off + 6)
    if off + 8 + ks > s.P:
        return None
    return o + off, s.b[o + off + 8:o + off + 8 + ks]


def node_or_damage(s, o, i):
    n = node(s, o, i)
    if n is None:
        raise Damage()
    return n


def value(s, o, x, kl, want):
    """Step 4 of Searching a tree: (offset, bytes) of node x's value, or None."""
    b = s.b
    dsize, flags = h32(b, x), h16(b, x + 4)
    data = x + 8 + kl
    room = s.P - (data - o)
    if flags == F_BIGDATA and want == 0:
        if room < 8:
            return None
        op = h64(b, data)
        po = page(s, op, P_OVERFLOW)
        if po is None:
            return None
        pages = h32(b, po + 12)
        if pages == 0 or pages > s.npages - op or dsize > pages * s.P - 16:
            return None
        return po + 16, b[po + 16:po + 16 + dsize]
    if flags != want or dsize > room:
        return None
    return data, b[data:data + dsize]


def branch_pick(s, o, key):
    lo, hi, pick = 1, nkeys(s, o), 0
    while lo < hi:
        mid = lo + (hi - lo) // 2
        _, k = node_or_damage(s, o, mid)
        if key_cmp(k, key) <= 0:
            pick, lo = mid, mid + 1
        else:
            hi = mid
    return pick


def leaf_seek(s, o, key):
    lo, hi = 0, nkeys(s, o)
    while lo < hi:
        mid = lo + (hi - lo) // 2
        _, k = node_or_damage(s, o, mid)
        if key_cmp(k, key) < 0:
            lo = mid + 1
        else:
            hi = mid
    return lo


def child(s, x):
    b = s.b
    return h16(b, x) | h16(b, x + 2) << 16 | h16(b, x + 4) << 32


def search(s, db, key, want):
    """Searching a tree: the value (offset, bytes), None when not found, Damage."""
    if db["root"] == NONE:
        return None
    n = db["root"]
    for _ in range(db["depth"] - 1):
        o = page(s, n, P_BRANCH)
        if o is None:
            raise Damage()
        x, _ = node_or_damage(s, o, branch_pick(s, o, key))
        n = child(s, x)
    o = page(s, n, P_LEAF)
    if o is None:
        raise Damage()
    i = leaf_seek(s, o, key)
    if i == nkeys(s, o):
        return None
    x, k = node_or_damage(s, o, i)
    if k != key:
        return None
    v = value(s, o, x, len(k), want)
    if v is None:
        raise Damage()
    return v


def lookup_status(s, db, key, want):
    try:
        return "ok", search(s, db, key, want)
    except Damage:
        return "damage", None


def open_snap(b):
    """Opening a snapshot, checks 1-19: a Snap, or Bad."""
    s = Snap(b)
    size = len(b)
    if size == 0:
        raise Bad("EMAGIC", 0)
    if size < 168 or h32(b, 16) != 0xBEEFC0DE:
        raise Bad("EMAGIC", 16)
    if h32(b, 20) != 1:
        raise Bad("EVERSION", 20)
    P = h32(b, 40)
    if P < 512 or P > 65536 or P & (P - 1):
        raise Bad("EFIELD", 40)
    s.P = P
    trailer = size >= 2 * P + 24 and b[size - 24:size - 20] == b"\xd5NST"
    if trailer:
        t = size - 24
        if u32(b, t + 4) != 0:
            raise Bad("ERESERVED", size - 20)
        if u64(b, t + 8) != size - 24 or u64(b, t + 8) % P:
            raise Bad("ETRUNC", size - 16)
        s.data_len, s.file_hash = u64(b, t + 8), u64(b, t + 16)
    else:
        s.data_len = size // P * P
    if s.data_len < 2 * P:
        raise Bad("ETRUNC", size)
    for i in (0, 1):
        o = i * P
        if (h16(b, o + 10) & ~0x10) != P_META or h32(b, o + 16) != 0xBEEFC0DE or \
                h32(b, o + 20) != 1:
            raise Bad("ECHECKSUM", o)
    C = P if h64(b, P + 144) > h64(b, 144) else 0
    last = h64(b, C + 136)
    if last >= s.data_len // P:
        raise Bad("ETRUNC", C + 136)
    s.npages = last + 1
    main = db_record(b, C + 88)
    if main["flags"] != 0 or not sane(s, main):
        raise Bad("ECHECKSUM", C + 88)
    e1 = lookup_status(s, main, b"entries", F_SUBDATA)
    e2 = lookup_status(s, main, b"meta", F_SUBDATA)
    if e1 == ("ok", None) or e2 == ("ok", None) or main["entries"] != 2:
        raise Bad("EMAGIC", C + 88)
    if e1[0] != "ok" or e2[0] != "ok" or len(e1[1][1]) != 48 or len(e2[1][1]) != 48:
        raise Bad("ECHECKSUM", main["root"] * P)
    meta_db, ent_db = db_record(b, e2[1][0]), db_record(b, e1[1][0])
    for db in (meta_db, ent_db):
        if db["flags"] != 0:
            raise Bad("EFIELD", db["at"])
        if not sane(s, db):
            raise Bad("ECHECKSUM", db["at"])
    if not trailer:
        raise Bad("ETRUNC", size)
    meta_at = meta_db["at"] if meta_db["root"] == NONE else meta_db["root"] * P
    st, v = lookup_status(s, meta_db, b"meta", 0)
    if st == "ok" and v is None:
        raise Bad("EMAGIC", meta_at)
    if st != "ok" or len(v[1]) < 4 or meta_db["entries"] < 1:
        raise Bad("ECHECKSUM", meta_at)
    M, rec = v[0], v[1][:-4]
    if len(rec) > 65536:
        raise Bad("ETOOBIG", M)
    read_meta(s, rec, u32(v[1], len(rec)), M)
    if ent_db["entries"] != s.entry_count:
        raise Bad("ECHECKSUM", ent_db["at"] + 32)
    s.entries, s.M = ent_db, M
    s.index = open_index(s, meta_db, meta_at)
    return s


def read_meta(s, m, check, M):
    """Meta record, steps 1 to 8, reported at M + the field's offset."""
    if len(m) < 8 or m[:4] != b"\xd5NSP":
        raise Bad("EMAGIC", M)
    if u16(m, 4) != 2:
        raise Bad("EVERSION", M + 4)
    if value_check(b"meta", m) != check:
        raise Bad("ECHECKSUM", M + len(m))
    if len(m) < 39:
        raise Bad("ETRUNC", M + len(m))
    hs, wl = u16(m, 8), m[38]
    if hs < 39 + wl or hs > len(m):
        raise Bad("ETRUNC", M + 8)
    if u16(m, 10) != 0:
        raise Bad("ERESERVED", M + 10)
    if m[28] != 1:
        raise Bad("EFIELD", M + 28)
    if m[29] != 8:
        raise Bad("EFIELD", M + 29)
    o = hs
    while o < len(m):
        if len(m) - o < 3 or o + 3 + u16(m, o + 1) > len(m):
            raise Bad("ETRUNC", M + o)
        o += 3 + u16(m, o + 1)
    s.entry_count, s.digest = u64(m, 20), u64(m, 30)


class Index:
    pass


def open_index(s, meta_db, meta_at):
    """Step 19: the index record's header; an Index (x.why: noted, ignored) or None."""
    st, v = lookup_status(s, meta_db, b"index", 0)
    if st == "ok" and v is None:
        return None
    x = Index()
    x.why = None
    if st != "ok":
        x.why = meta_at
        return x
    I, r = v
    x.I, x.len = I, len(r)
    e = s.entries
    if len(r) < 44:
        x.why = I
    elif r[:4] != b"\xd5NSI":
        x.why = I
    elif r[4] != 1:
        x.why = I + 4
    elif r[5] != 1:
        x.why = I + 5
    else:
        hs, slots, count = u16(r, 6), u64(r, 16), u64(r, 24)
        body = len(r) - 4 - hs if hs <= len(r) - 4 else -1
        if hs < 40 or hs % 8 or hs > len(r) - 4:
            x.why = I + 6
        elif slots < 8 or slots & (slots - 1) or body % 8 or slots != body // 8:
            x.why = I + 16
        elif count != e["entries"] or count >= slots:
            x.why = I + 24
        elif u64(r, 32) != e["root"]:
            x.why = I + 32
        else:
            x.seed, x.slots, x.count, x.hs = u64(r, 8), slots, count, hs
    x.rec = r
    return x


def slot(s, x, pos):
    return u64(s.b, x.I + x.hs + 8 * pos)


def index_get(s, x, key):
    """Index record, Lookup: ("ok", value|None) or ("damage",) or ("btree",)."""
    h = xxh3(key, x.seed)
    pos, fp = h & (x.slots - 1), h >> 48
    for _ in range(min(x.count, x.slots - 1) + 1):
        sl = slot(s, x, pos)
        if sl & 0xffffffff == 0:
            return ("ok", None)
        if sl >> 48 == fp:
            o = page(s, sl & 0xffffffff, P_LEAF)
            i = sl >> 32 & 0xffff
            nd = node(s, o, i) if o is not None and i < nkeys(s, o) else None
            if nd is not None and nd[1] == key:
                v = value(s, o, nd[0], len(key), 0)
                return ("ok", v) if v is not None else ("damage",)
        pos = (pos + 1) & (x.slots - 1)
    return ("btree",)


def get(s, key):
    """Lookups: found, miss or damaged."""
    st = ("btree",)
    if s.index is not None and s.index.why is None:
        st = index_get(s, s.index, key)
    if st[0] == "btree":
        try:
            st = ("ok", search(s, s.entries, key, 0))
        except Damage:
            st = ("damage",)
    if st[0] == "damage":
        return "damaged"
    if st[1] is None:
        return "miss"
    v = st[1][1]
    if len(v) < 4 or len(v) - 4 > ENTRY_MAX or value_check(key, v[:-4]) != u32(v, len(v) - 4):
        return "damaged"
    try:
        entry_validate(v[:-4])
    except Bad:
        return "damaged"
    return "found"


class Walk:
    def __init__(self, s):
        self.s, self.visits, self.good, self.damaged = s, 0, 0, 0
        self.first, self.last, self.handed = None, None, []

    def damage(self, code, off):
        if self.first is None:
            self.first = Bad(code, off)


class Stop(Exception):
    pass


def scan_page(w, n, level, lo, hi, holder):
    s = w.s
    leaf = level + 1 == s.entries["depth"]
    at = n * s.P if n < s.npages else holder
    w.visits += 1
    if w.visits > s.npages:
        w.damage("ECHECKSUM", at)
        raise Stop()
    o = page(s, n, P_LEAF if leaf else P_BRANCH)
    if o is None:
        w.damage("ECHECKSUM", at)
        return
    cnt = nkeys(s, o)
    if not leaf and not branch_keys_ok(s, o, cnt, lo, hi):
        w.damage("ECHECKSUM", at)
        return
    for i in range(cnt):
        nd = node(s, o, i)
        if nd is None:
            if leaf:
                w.damaged += 1
            w.damage("ECHECKSUM", at)
            continue
        x, k = nd
        if leaf:
            scan_node(w, o, i, x, k, lo, hi)
            continue
        clo = k if i > 0 else lo
        chi = node(s, o, i + 1)[1] if i + 1 < cnt else hi
        scan_page(w, child(s, x), level + 1, clo, chi, x)


def branch_keys_ok(s, o, cnt, lo, hi):
    prev = lo
    for i in range(1, cnt):
        nd = node(s, o, i)
        if nd is None:
            return False
        k = nd[1]
        if prev is not None and key_cmp(prev, k) >= 0 and not (i == 1 and prev == k):
            return False
        prev = k
    return prev is None or hi is None or key_cmp(prev, hi) < 0


def scan_node(w, o, i, x, k, lo, hi):
    s = w.s
    v = value(s, o, x, len(k), 0)
    code = None
    if v is None or len(v[1]) < 4 or len(v[1]) - 4 > ENTRY_MAX:
        code = "ECHECKSUM"
    elif value_check(k, v[1][:-4]) != u32(v[1], len(v[1]) - 4):
        code = "ECHECKSUM"
    else:
        try:
            key_decode(k)
            entry_validate(v[1][:-4])
        except Bad as b:
            code = b.code
    if code is None:
        in_range = (lo is None or key_cmp(lo, k) <= 0) and (hi is None or key_cmp(k, hi) < 0)
        try:
            lands = leaf_seek(s, o, k) == i
        except Damage:
            lands = False
        if not in_range or (w.last is not None and key_cmp(w.last, k) >= 0) or not lands:
            code = "EFIELD"
    if code is not None:
        w.damaged += 1
        w.damage(code, x)
        return
    w.good += 1
    w.last = k
    w.handed.append((k, v[1][:-4]))


def scan(s):
    """A whole scan: the Walk (good, damaged, first, handed)."""
    w = Walk(s)
    if s.entries["root"] != NONE:
        try:
            scan_page(w, s.entries["root"], 0, None, None, 0)
        except Stop:
            pass
    seen = w.good + w.damaged
    if seen != s.entry_count:
        if seen < s.entry_count:
            w.damaged += s.entry_count - seen
        w.damage("ECHECKSUM", s.M + 20)
    return w


def verify(s, w):
    """The deep check, steps 1-4: None or Bad."""
    if xxh3(s.b[:s.data_len]) != s.file_hash:
        return Bad("ECHECKSUM", s.data_len + 16)
    if w.first is not None:
        return w.first
    frames = b"".join(struct.pack("<HI", len(k), len(e)) + k + e for k, e in w.handed)
    if xxh3(frames) != s.digest:
        return Bad("ECHECKSUM", s.M + 30)
    x = s.index
    if x is None:
        return None
    if x.why is not None:
        return Bad("ECHECKSUM", x.why)
    if value_check(b"index", x.rec[:-4]) != u32(x.rec, len(x.rec) - 4):
        return Bad("ECHECKSUM", x.I + len(x.rec) - 4)
    taken = set()
    for pg, i, xo, k in leaves(s):
        h = xxh3(k, x.seed)
        want = pg | i << 32 | (h >> 48) << 48
        pos, ok = h & (x.slots - 1), False
        for _ in range(min(x.count, x.slots - 1) + 1):
            if pg > 0xffffffff:
                break
            sl = slot(s, x, pos)
            if sl == want and pos not in taken:
                taken.add(pos)
                ok = True
                break
            if sl & 0xffffffff == 0:
                break
            pos = (pos + 1) & (x.slots - 1)
        if not ok:
            return Bad("ECHECKSUM", xo)
    for pos in range(x.slots):
        if slot(s, x, pos) & 0xffffffff and pos not in taken:
            return Bad("ECHECKSUM", x.I + x.hs + 8 * pos)
    return None


def leaves(s):
    """Every leaf node in key order, from the root: (page, index, offset, key). After a
    scan that passed, every page and node here passed the checks."""
    def walk(n, level):
        o = page(s, n, P_LEAF if level + 1 == s.entries["depth"] else P_BRANCH)
        for i in range(nkeys(s, o)):
            x, k = node(s, o, i)
            if level + 1 == s.entries["depth"]:
                yield n, i, x, k
            else:
                yield from walk(child(s, x), level + 1)
    if s.entries["root"] != NONE:
        yield from walk(s.entries["root"], 0)


def snap_report(b, keys):
    """The lines of a snapshot vector's .err, without messages."""
    try:
        s = open_snap(b)
    except Bad as e:
        return ["open %s %d" % (e.word(), e.off)]
    out = ["open DNSNAP_OK"]
    w = scan(s)
    if w.first is None:
        out.append("scan DNSNAP_OK - entries %d damaged %d" % (w.good, w.damaged))
    else:
        out.append("scan %s %d entries %d damaged %d" % (w.first.word(), w.first.off, w.good,
                                                        w.damaged))
    v = verify(s, w)
    out.append("verify DNSNAP_OK" if v is None else "verify %s %d" % (v.word(), v.off))
    for k in keys:
        out.append("get %s %s" % (k.hex(), get(s, k)))
    return out

# ------------------------------------------------------------------ L2 value

def l2_open(key, v):
    """L2 value, steps 1-8."""
    if len(v) < 4:
        raise Bad("ETRUNC", 0)
    if v[:4] != b"\xd5NSL":
        raise Bad("EMAGIC", 0)
    if len(v) < 6:
        raise Bad("ETRUNC", len(v))
    if v[4] != 1:
        raise Bad("EVERSION", 4)
    if len(v) > 6 + ENTRY_MAX + 8:
        raise Bad("ETOOBIG", 6 + ENTRY_MAX + 8)
    if len(v) < 6 + 18 + 8:
        raise Bad("ETRUNC", len(v))
    if xxh3(v[:-8], xxh3(key)) != u64(v, len(v) - 8):
        raise Bad("ECHECKSUM", len(v) - 8)
    try:
        entry_validate(v[6:-8])
    except Bad as e:
        raise Bad(e.code, e.off + 6)


def l2_report(f):
    kl = u16(f, 0)
    try:
        l2_open(f[2:2 + kl], f[2 + kl:])
    except Bad as e:
        return "%s %d" % (e.word(), e.off)
    return "DNSNAP_OK"

# ------------------------------------------------------------------- stream

class Content:
    """Stream framing: the content of the frames, in order, and how it ends:
    end is "whole", "cut" (the file ends inside a frame) or "zstd" (refused)."""

    def __init__(self, z):
        self.data, self.end = bytearray(), "whole"
        if len(z) == 0:
            return
        if not (z[:4] == b"\x28\xb5\x2f\xfd" or (len(z) >= 4 and z[0] & 0xf0 == 0x50 and
                z[1:4] == b"\x2a\x4d\x18") or (len(z) < 4 and z == b"\x28\xb5\x2f\xfd"[:len(z)])):
            self.end = "zstd"
            return
        dc = _zstd.ZSTD_createDCtx()
        src = ctypes.create_string_buffer(bytes(z), len(z))
        out = ctypes.create_string_buffer(1 << 17)
        ib = _ZBuf(ctypes.cast(src, ctypes.c_void_p), len(z), 0)
        left = 0
        while True:
            ob = _ZBuf(ctypes.cast(out, ctypes.c_void_p), len(out), 0)
            r = _zstd.ZSTD_decompressStream(dc, ctypes.byref(ob), ctypes.byref(ib))
            if _zstd.ZSTD_isError(r):
                self.data += out.raw[:ob.pos]
                self.end = "zstd"
                break
            self.data += out.raw[:ob.pos]
            left = r
            if ib.pos == ib.size and ob.pos < len(out):
                self.end = "whole" if left == 0 else "cut"
                break
        _zstd.ZSTD_freeDCtx(dc)


def stream_check(z):
    """The export stream's checks on the content, then the framing's end: None or Bad
    (EZSTD with off None: not pinned)."""
    c = Content(z)
    d = bytes(c.data)
    n = len(d)

    def cut(at):
        # content cut short: a refusal by zstd first, else a cut
        if c.end == "zstd":
            return Bad("EZSTD", 0)
        return Bad("ETRUNC", at)
    if n < 4:
        return cut(0)
    if d[:4] != b"\xd5NSX":
        return Bad("EMAGIC", 0)
    if n < 12:
        return cut(0)
    if u16(d, 4) != 1:
        return Bad("EVERSION", 4)
    hs = u16(d, 8)
    if hs < 12:
        return Bad("EFIELD", 8)
    if u16(d, 10) != 0:
        return Bad("ERESERVED", 10)
    o, announced = 12, None
    while o < hs:
        if hs - o < 3:
            return Bad("ETRUNC", o)
        if n < o + 3:
            return cut(o)
        ln = u16(d, o + 1)
        if o + 3 + ln > hs:
            return Bad("ETRUNC", o + 1)
        if n < o + 3 + ln:
            return cut(o)
        if d[o] in (1, 3) and ln != 8:
            return Bad("EFIELD", o + 1)
        if d[o] == 3:
            announced = u64(d, o + 3)
        o += 3 + ln
    count, frames, prev = 0, bytearray(), None
    while True:
        r = o
        if n - r < 2:
            return cut(r)
        kl = u16(d, r)
        if kl == 0:
            if n - r < 18:
                return cut(r)
            if u64(d, r + 2) != count:
                return Bad("ECHECKSUM", r + 2)
            if u64(d, r + 10) != xxh3(frames):
                return Bad("ECHECKSUM", r + 10)
            if announced is not None and announced != count:
                return Bad("ECHECKSUM", r + 2)
            if n > r + 18:
                return Bad("EFIELD", r + 18)
            if c.end == "zstd":
                return Bad("EZSTD", None)
            if c.end == "cut":
                return Bad("ETRUNC", n)
            return None
        if kl == 0xffff:
            if n - r < 8 or n - r - 8 < u32(d, r + 4):
                return cut(r)
            o = r + 8 + u32(d, r + 4)
            continue
        if kl > 511:
            return Bad("ERESERVED", r)
        if n - r < 6:
            return cut(r)
        el = u32(d, r + 2)
        if el < 18 or el > ENTRY_MAX:
            return Bad("EFIELD", r + 2)
        if n - r < 6 + kl + el:
            return cut(r)
        k, e = d[r + 6:r + 6 + kl], d[r + 6 + kl:r + 6 + kl + el]
        try:
            key_decode(k)
        except Bad as b:
            return Bad(b.code, r + 6 + b.off)
        try:
            entry_validate(e)
        except Bad as b:
            return Bad(b.code, r + 6 + kl + b.off)
        if prev is not None and key_cmp(prev, k) >= 0:
            return Bad("EFIELD", r)
        prev = k
        frames += d[r:r + 6 + kl + el]
        count += 1
        o = r + 6 + kl + el

# ------------------------------------------------------------------ vectors

def err_of(path):
    with open(path[:path.rindex(".")] + ".err") as f:
        return f.read()


def words(line, n):
    return " ".join(line.split()[:n])


def check_bin(path, fails):
    f = open(path, "rb").read()
    kl = u16(f, 0)
    try:
        key_decode(f[2:2 + kl])
    except Bad as b:
        got = "%s key %d" % (b.word(), b.off)
    else:
        try:
            entry_validate(f[2 + kl:])
            got = "DNSNAP_OK"
        except Bad as b:
            got = "%s entry %d" % (b.word(), b.off)
    want = err_of(path).strip() if "/invalid/" in path else "DNSNAP_OK"
    if got != want:
        fails.append("%s: the spec says %s, the vector %s" % (path, got, want))


def check_snap(path, fails):
    b = open(path, "rb").read()
    if "/invalid/" in path:
        want = err_of(path).splitlines()
        keys = [bytes.fromhex(l.split()[1]) for l in want if l.startswith("get ")]
        got = snap_report(b, keys)
        want = [words(l, 3) if l.split()[0] in ("open", "verify") and
                l.split()[1] != "DNSNAP_OK" else l for l in want]
        if got != want:
            fails.append("%s: the spec says\n  %s\nthe vector\n  %s" % (
                path, "\n  ".join(got), "\n  ".join(want)))
        return
    try:
        s = open_snap(b)
    except Bad as e:
        fails.append("%s: valid, the spec says open %s %d" % (path, e.word(), e.off))
        return
    w = scan(s)
    v = verify(s, w)
    bad = [k for k, _ in w.handed if get(s, k) != "found"]
    if w.first or v or bad or w.good != s.entry_count:
        fails.append("%s: valid, the spec says scan %s, verify %s, %d keys not found" % (
            path, w.first and (w.first.word(), w.first.off), v and (v.word(), v.off),
            len(bad)))


def check_l2(path, fails):
    got = l2_report(open(path, "rb").read())
    want = err_of(path).strip() if "/invalid/" in path else "DNSNAP_OK"
    if got != want:
        fails.append("%s: the spec says %s, the vector %s" % (path, got, want))


def check_stream(path, fails):
    got = stream_check(open(path, "rb").read())
    if "/valid/" in path:
        if got is not None:
            fails.append("%s: valid, the spec says %s %s" % (path, got.word(), got.off))
        return
    want = err_of(path).split()
    if got is None or got.word() != want[0] or (want[1] != "zstd" and str(got.off) != want[1]):
        fails.append("%s: the spec says %s, the vector %s" % (
            path, got and "%s %s" % (got.word(), got.off), " ".join(want[:2])))


def vectors(d):
    fails, n = [], 0
    kinds = {".bin": check_bin, ".snap": check_snap, ".l2": check_l2, ".dnsx": check_stream}
    for sub in ("valid", "invalid"):
        for name in sorted(os.listdir(os.path.join(d, sub))):
            ext = name[name.rfind("."):]
            if ext in kinds:
                kinds[ext](os.path.join(d, sub, name), fails)
                n += 1
    for f in fails:
        print("specread: " + f, file=sys.stderr)
    print("specread: %d vectors, %d agree with the spec's reader" % (n, n - len(fails)))
    return 1 if fails else 0

# -------------------------------------------------------------------- sweep

def library(mkreport, keyfile, files):
    """mkreport's lines per file, messages dropped."""
    out = subprocess.run([mkreport, "snap", keyfile] + files, check=True,
                         capture_output=True, text=True).stdout
    rep, cur = {}, None
    for line in out.splitlines():
        if line.startswith("file "):
            cur = line[5:]
            rep[cur] = []
        else:
            w = line.split()
            rep[cur].append(words(line, 3) if w[0] in ("open", "verify") and
                            w[1] != "DNSNAP_OK" else line)
    return rep


def sweep(mkreport, n, seed, files):
    rnd = random.Random(seed)
    fails, total, kinds = [], 0, {}
    with tempfile.TemporaryDirectory(prefix="specread") as tmp:
        for f in files:
            if f.endswith(".l2"):
                total += sweep_l2(mkreport, f, tmp, fails, kinds)
                continue
            if f.endswith(".dnsx"):
                total += sweep_stream(mkreport, f, n, rnd, tmp, fails, kinds)
                continue
            b = open(f, "rb").read()
            s = open_snap(b)
            keys = [k for k, _ in scan(s).handed]
            if len(keys) > 47:  # mkreport takes 64 keys: a spread of them
                keys = [keys[i * len(keys) // 47] for i in range(47)]
            keys.append(b"\x3f" + b"z" * 63 + b"\0\0\1\0\1\0\0")
            keyfile = os.path.join(tmp, "keys")
            with open(keyfile, "w") as kf:
                kf.write("".join(k.hex() + "\n" for k in keys))
            # half the flips anywhere, half in bytes that are not zero (structure)
            nonzero = [i for i, x in enumerate(b) if x]
            paths, flips = [], []
            for i in range(n):
                at = rnd.randrange(len(b)) if i % 2 == 0 else rnd.choice(nonzero)
                bit = rnd.randrange(8)
                m = bytearray(b)
                m[at] ^= 1 << bit
                p = os.path.join(tmp, "%d.snap" % i)
                with open(p, "wb") as out:
                    out.write(m)
                paths.append(p)
                flips.append((at, bit, bytes(m)))
            lib = library(mkreport, keyfile, paths)
            for p, (at, bit, m) in zip(paths, flips):
                mine = snap_report(m, keys)
                total += 1
                first = mine[0] if mine[0] != "open DNSNAP_OK" else (
                    mine[1] if "DNSNAP_OK" not in mine[1] else mine[2])
                kind = " ".join(first.split()[:2])
                kinds[kind] = kinds.get(kind, 0) + 1
                if mine != lib[p]:
                    fails.append("%s, byte %d bit %d: the spec says\n  %s\nthe library\n  %s" % (
                        f, at, bit, "\n  ".join(mine), "\n  ".join(lib[p])))
    for x in fails:
        print("specread: " + x, file=sys.stderr)
    print("specread: %d flips, %d agree with the library (%s)" % (
        total, total - len(fails), ", ".join("%s %d" % kv for kv in sorted(kinds.items()))))
    return 1 if fails else 0


def sweep_l2(mkreport, f, tmp, fails, kinds):
    """Every bit of an L2 value vector's value flipped."""
    b = open(f, "rb").read()
    kl = u16(b, 0)
    paths, mine = [], {}
    for at in range(2 + kl, len(b)):
        for bit in range(8):
            m = bytearray(b)
            m[at] ^= 1 << bit
            p = os.path.join(tmp, "l2-%d-%d.l2" % (at, bit))
            with open(p, "wb") as out:
                out.write(m)
            paths.append(p)
            mine[p] = (at - 2 - kl, bit, l2_report(bytes(m)))
    out = subprocess.run([mkreport, "l2"] + paths, check=True, capture_output=True,
                         text=True).stdout.splitlines()
    lib = dict(zip(out[0::2], out[1::2]))
    for p, (at, bit, got) in mine.items():
        kinds["l2 " + got.split()[0]] = kinds.get("l2 " + got.split()[0], 0) + 1
        if lib.get("file " + p) != got:
            fails.append("%s, value byte %d bit %d: the spec says %s, the library %s" % (
                f, at, bit, got, lib.get("file " + p)))
    return len(paths)


def sweep_stream(mkreport, f, n, rnd, tmp, fails, kinds):
    """@n single-bit flips of an export stream's content, each compressed again."""
    c = Content(open(f, "rb").read())
    assert c.end == "whole"
    paths, mine = [], {}
    for i in range(n):
        at, bit = rnd.randrange(len(c.data)), rnd.randrange(8)
        m = bytearray(c.data)
        m[at] ^= 1 << bit
        z = zstd_frame(m)
        p = os.path.join(tmp, "s-%d.dnsx" % i)
        with open(p, "wb") as out:
            out.write(z)
        paths.append(p)
        got = stream_check(z)
        mine[p] = (at, bit, "DNSNAP_OK" if got is None else "%s %s" % (got.word(), got.off))
    out = subprocess.run([mkreport, "stream", tmp] + paths, check=True, capture_output=True,
                         text=True).stdout.splitlines()
    lib = dict(zip(out[0::2], out[1::2]))
    for p, (at, bit, got) in mine.items():
        kinds["stream " + got.split()[0]] = kinds.get("stream " + got.split()[0], 0) + 1
        if lib.get("file " + p) != got:
            fails.append("%s, content byte %d bit %d: the spec says %s, the library %s" % (
                f, at, bit, got, lib.get("file " + p)))
    return n


def main(argv):
    if len(argv) == 3 and argv[1] == "vectors":
        return vectors(argv[2])
    if len(argv) >= 6 and argv[1] == "sweep":
        return sweep(argv[2], int(argv[3]), int(argv[4]), argv[5:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

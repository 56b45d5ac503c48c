#!/usr/bin/env python3
"""report.py: the fleet benchmark's tables and JSON, from the raw files that
bench/fleet/run.sh leaves in OUT/raw.

    report.py OUT

Writes OUT/results.md (printed too) and OUT/results.json. A part that was not
run (this dnsnap has no serve --l2 or import --from) is reported as not
measured, never as zero.
"""
import json
import os
import re
import sys


def load_meta(raw):
    m = {}
    with open(os.path.join(raw, "meta.env")) as f:
        for line in f:
            if "=" in line:
                k, v = line.rstrip("\n").split("=", 1)
                m[k] = v
    return m


def counters(raw, name):
    """The host's counters (SIGUSR1) once its stream ended: the last line with
    the event "counters" (at exit the upstreams are gone), or None."""
    path = os.path.join(raw, name + ".jsonl")
    if not os.path.exists(path):
        return None
    last = None
    with open(path) as f:
        for line in f:
            try:
                o = json.loads(line)
            except ValueError:
                continue
            if o.get("event") == "counters":
                last = o
    return last


def host_figures(c):
    """queries, local hits, L2 hits, hit ratio, upstream queries of one host."""
    q = c.get("queries", 0)
    local = c.get("hits_memory", 0) + c.get("hits_map", 0) + c.get("stale", 0)
    l2 = c.get("hits_l2", (c.get("l2") or {}).get("hits", 0))
    up = sum(u.get("queries", 0) for u in c.get("upstreams", []))
    return {"queries": q, "hits_local": local, "hits_l2": l2,
            "hit_ratio": round((local + l2) / q, 4) if q else None,
            "misses": c.get("misses", 0), "upstream_queries": up,
            "l2": c.get("l2")}


def zipf_summary(raw, name):
    path = os.path.join(raw, name + ".zipf.txt")
    if not os.path.exists(path):
        return None
    t = open(path).read()
    m = re.search(r"(\d+) sent in ([\d.]+) s \(([\d.]+) q/s\), (\d+) answered, (\d+) lost", t)
    if not m:
        return {"text": t.strip()}
    return {"sent": int(m.group(1)), "seconds": float(m.group(2)),
            "answered": int(m.group(4)), "lost": int(m.group(5))}


def kv(path):
    if not os.path.exists(path):
        return None
    out = {}
    for w in open(path).read().split():
        if "=" in w:
            k, v = w.split("=", 1)
            try:
                out[k] = float(v) if "." in v else int(v)
            except ValueError:
                out[k] = v
    return out


def jload(path):
    try:
        with open(path) as f:
            return json.loads(f.read())
    except (OSError, ValueError):
        return None


def hist_pct(h, p):
    """The bucket bound (us) under which fraction p of serve's histogram h
    falls: a ceiling, as coarse as the buckets; ">MAX" past the last."""
    if not h or not h.get("count"):
        return None
    need, cum = p * h["count"], 0
    for i, c in enumerate(h["counts"]):
        cum += c
        if cum >= need:
            return h["le_us"][i] if i < len(h["le_us"]) else ">%d" % h["le_us"][-1]
    return None


def hist_add(hs):
    """The sum of serve histograms hs (None when there are none)."""
    hs = [h for h in hs if h]
    if not hs:
        return None
    return {"le_us": hs[0]["le_us"], "counts": [sum(x) for x in zip(*(h["counts"] for h in hs))],
            "count": sum(h["count"] for h in hs), "sum_us": sum(h["sum_us"] for h in hs)}


def hist_text(h):
    if not h or not h.get("count"):
        return "-"
    return "<= %s / <= %s (%d)" % (hist_pct(h, 0.5), hist_pct(h, 0.99), h["count"])


def pct(x):
    return "-" if x is None else "%.1f%%" % (100 * x)


def num(x):
    return "not measured" if x is None else str(x)


def main():
    out = sys.argv[1]
    raw = os.path.join(out, "raw")
    m = load_meta(raw)
    res = {"date": m.get("date"), "names": int(m["names"]), "rate_per_host": int(m["rate"]),
           "seconds": int(m["secs"]), "new_host_seconds": int(m["newsecs"]),
           "machine": {"nproc": int(m["nproc"]), "cpu": m.get("cpu"),
                       "loadavg_start": m.get("load_start"), "loadavg_end": m.get("load_end")},
           "versions": {"dnsnap": m.get("v_dnsnap"), "unbound": m.get("v_unbound"),
                        "redis": m.get("v_redis")},
           "serve_l2": m.get("has_l2") == "yes", "l2_args": m.get("l2_args"), "import_from": m.get("has_from") == "yes"}

    # 1. the fleet
    fleet = {}
    for label in ("local", "shared"):
        hosts = []
        for h in (1, 2, 3):
            c = counters(raw, "%s-%d" % (label, h))
            if c is None:
                break
            f = host_figures(c)
            f["stream"] = zipf_summary(raw, "%s-%d" % (label, h))
            hosts.append(f)
        if len(hosts) < 3:
            fleet[label] = None
            continue
        q = sum(h["queries"] for h in hosts)
        hits = sum(h["hits_local"] + h["hits_l2"] for h in hosts)
        fleet[label] = {"hosts": hosts, "queries": q,
                        "hit_ratio": round(hits / q, 4) if q else None,
                        "upstream_unbound": int(m["%s_upstream" % label]),
                        "upstream_hosts": sum(h["upstream_queries"] for h in hosts)}
    res["fleet"] = fleet
    if fleet.get("local") and fleet.get("shared"):
        a, b = fleet["local"]["upstream_unbound"], fleet["shared"]["upstream_unbound"]
        res["fleet_upstream_ratio_shared_over_local"] = round(b / a, 3) if a else None

    # 2. the fourth host
    new = {}
    for label in ("new-cold", "new-imported", "new-l2"):
        c = counters(raw, label)
        if c is None:
            new[label] = None
            continue
        f = host_figures(c)
        f["upstream_unbound"] = int(m["%s_upstream" % label])
        f["stream"] = zipf_summary(raw, label)
        new[label] = f
    res["new_host"] = new
    res["import"] = {"ms": int(m["import_ms"]) if "import_ms" in m else None,
                     "entries": int(m["import_entries"]) if m.get("import_entries") else None,
                     "json": jload(os.path.join(raw, "import.json"))}

    # 3. latency
    lat = {}
    kinds = {"upstream": ("lat-fwd", "misses"), "memory": ("lat-fwd", "hits_memory"),
             "map": ("lat-map", "hits_map"), "l2": ("lat-l2", "hits_l2")}
    for k, (srv, counter) in kinds.items():
        p = kv(os.path.join(raw, "lat-%s.txt" % k))
        c = counters(raw, srv)
        if p is None or c is None:
            lat[k] = None
            continue
        n = c.get(counter, 0)
        if counter == "hits_l2" and "hits_l2" not in c:
            n = (c.get("l2") or {}).get("hits", 0)
        hist = (c.get("answer_latency_l2") if k == "l2"
                else c.get("answer_latency_cache") if k in ("memory", "map")
                else c.get("answer_latency_upstream"))
        lat[k] = {"p50_us": p.get("p50_us"), "p99_us": p.get("p99_us"),
                  "p999_us": p.get("p999_us"), "max_us": p.get("max_us"),
                  "answered": p.get("answered"), "lost": p.get("lost"), "hits": p.get("hits"),
                  "server_counter": counter, "server_count": n,
                  "server_histogram": hist,
                  "server_p50_us_bound": hist_pct(hist, 0.5),
                  "server_p99_us_bound": hist_pct(hist, 0.99)}
    res["latency"] = {"names": int(m.get("lat_names", 0)), "method":
                      "client side: peers_dnsprobe lat -c 1 -n (one query in flight, each name "
                      "once), send to receive; server side: serve's histograms (query received "
                      "to reply sent), the bucket bounds", "kinds": lat}
    # the shared fleet's own histograms, under its load (cold hosts: no map,
    # so the cache's histogram is memory hits)
    if fleet.get("shared"):
        cs = [counters(raw, "shared-%d" % h) for h in (1, 2, 3)]
        res["latency"]["fleet_shared_histograms"] = {
            "memory": hist_add([c.get("answer_latency_cache") for c in cs]),
            "l2": hist_add([c.get("answer_latency_l2") for c in cs]),
            "upstream": hist_add([c.get("answer_latency_upstream") for c in cs])}

    # 4. memory
    mem = {}
    d = jload(os.path.join(raw, "mem-dnsnap.json"))
    if d:
        keys = int(m["redis_keys_full"])
        d["used_memory_growth"] = int(m["redis_used_full"]) - int(m["redis_used_empty"])
        d["used_memory_per_key"] = round(d["used_memory_growth"] / keys, 1) if keys else None
    mem["dnsnap"] = d
    u = jload(os.path.join(raw, "mem-unbound.json"))
    if u:
        keys = int(m["ub_redis_keys_full"])
        u["used_memory_growth"] = int(m["ub_redis_used_full"]) - int(m["ub_redis_used_empty"])
        u["used_memory_per_key"] = round(u["used_memory_growth"] / keys, 1) if keys else None
        u["how"] = ("rebuilt (Debian's Unbound has no cachedb module): Unbound's reply to a "
                    "DO=1 query, ID 0, + 16-byte trailer; key sha256 hex of qname|type|class|"
                    "secret; SET EX min TTL")
        u["stored"] = open(os.path.join(raw, "unbound-store.txt")).read().strip()
    mem["unbound_cachedb"] = u
    if d and u and u.get("memory_usage_mean"):
        mem["ratio_memory_usage_mean"] = round(d["memory_usage_mean"] / u["memory_usage_mean"], 3)
        if u.get("used_memory_per_key"):
            mem["ratio_used_memory_per_key"] = round(
                d["used_memory_per_key"] / u["used_memory_per_key"], 3)
    res["redis_memory"] = mem
    res["elapsed_s"] = int(m.get("elapsed_s", 0))

    # ------------------------------------------------------------ markdown
    L = []
    L.append("Fleet benchmark (issue 14), %s: %s names (Big Pineapple mix), Zipf s = 1, "
             "%s q/s per host for %s s; %s CPUs (%s), load %s at the start, %s at the end. "
             "dnsnap %s, Unbound %s, Redis %s. Each host: dnsnap serve --threads 1, cold "
             "(no snapshot) at start; the shared tier: `%s`." % (m.get("date"), m["names"], m["rate"], m["secs"],
                                        m["nproc"], m.get("cpu"), m.get("load_start"),
                                        m.get("load_end"), m.get("v_dnsnap"),
                                        m.get("v_unbound"), m.get("v_redis"),
                                        m.get("l2_args", "--l2 redis://...").replace(
                                            "redis://127.0.0.1:" + m.get("redis_port", ""),
                                            "redis://...")))
    L.append("")
    L.append("1. Three hosts, one stream split over them (the same streams both times)")
    L.append("")
    L.append("| | host 1 | host 2 | host 3 | fleet |")
    L.append("|---|---|---|---|---|")
    for label, what in (("local", "without the shared tier"), ("shared", "with --l2 (one Redis)")):
        f = fleet.get(label)
        if f is None:
            L.append("| hit ratio, %s | not measured | | | |" % what)
            continue
        cells = []
        for h in f["hosts"]:
            c = pct(h["hit_ratio"])
            if label == "shared":
                c += " (L2 %s)" % pct(h["hits_l2"] / h["queries"] if h["queries"] else None)
            cells.append(c)
        L.append("| hit ratio, %s | %s | %s |" % (what, " | ".join(cells), pct(f["hit_ratio"])))
        L.append("| upstream queries, %s | %s | %d (Unbound's count) |" % (
            what, " | ".join(str(h["upstream_queries"]) for h in f["hosts"]),
            f["upstream_unbound"]))
        L.append("| queries answered / sent, %s | %s | %d |" % (
            what, " | ".join("%s / %s" % ((h["stream"] or {}).get("answered", "?"),
                                          (h["stream"] or {}).get("sent", "?"))
                             for h in f["hosts"]), f["queries"]))
    sh = fleet.get("shared")
    if sh:
        l2s = [h["l2"] or {} for h in sh["hosts"]]
        for key in ("misses", "timeouts", "bad", "errors", "refused", "writes", "write_drops"):
            L.append("| L2 %s | %s | %d |" % (key, " | ".join(str(x.get(key, "-")) for x in l2s),
                                              sum(x.get(key, 0) for x in l2s)))
    if "fleet_upstream_ratio_shared_over_local" in res:
        L.append("")
        L.append("Upstream queries with the shared tier / without: %s." %
                 res["fleet_upstream_ratio_shared_over_local"])
    L.append("")
    L.append("2. A fourth host, after the fleet: one stream of %s s at %s q/s" %
             (m["newsecs"], m["rate"]))
    L.append("")
    L.append("| | cold | from import --from | cold, with --l2 |")
    L.append("|---|---|---|---|")
    cols = [new.get(k) for k in ("new-cold", "new-imported", "new-l2")]
    L.append("| hit ratio over its first queries | %s |" % " | ".join(
        "not measured" if c is None else "%s of %d" % (pct(c["hit_ratio"]), c["queries"])
        for c in cols))
    L.append("| L2 hits | %s |" % " | ".join(
        "not measured" if c is None else str(c["hits_l2"]) for c in cols))
    L.append("| upstream queries (Unbound's count) | %s |" % " | ".join(
        "not measured" if c is None else str(c["upstream_unbound"]) for c in cols))
    L.append("| L2 timeouts / refused (breaker open) / write drops | %s |" % " | ".join(
        "not measured" if c is None else "-" if not c["l2"] else "%s / %s / %s" % (
            c["l2"].get("timeouts"), c["l2"].get("refused"), c["l2"].get("write_drops"))
        for c in cols))
    imp = res["import"]
    if imp["ms"] is not None:
        L.append("")
        L.append("`dnsnap import --from`: %s entries in %s ms (wall clock, the command)." %
                 (imp["entries"], imp["ms"]))
    L.append("")
    L.append("3. A first answer's latency, client side (dnsprobe, one query in flight, each of "
             "%s names once), us" % m.get("lat_names"))
    L.append("")
    L.append("| | upstream (Unbound, warm) | memory hit | map hit | L2 hit |")
    L.append("|---|---|---|---|---|")
    ks = [lat.get(k) for k in ("upstream", "memory", "map", "l2")]
    L.append("| client side, p50 / p99 | %s |" % " | ".join(
        "not measured" if x is None else "%s / %s" % (x["p50_us"], x["p99_us"]) for x in ks))
    L.append("| serve's histogram, p50 / p99 bucket bound (count) | %s |" % " | ".join(
        "-" if x is None else hist_text(x["server_histogram"]) for x in ks))
    fh = res["latency"].get("fleet_shared_histograms")
    if fh:
        L.append("| the same, the 3 shared hosts under the fleet's streams | %s |" % " | ".join(
            hist_text(fh[k]) if k in fh else "-" for k in ("upstream", "memory", "map", "l2")))
    L.append("| answers of that kind (serve's counter) | %s |" % " | ".join(
        "-" if x is None else "%s / %s (%s)" % (x["server_count"], x["answered"],
                                                 x["server_counter"]) for x in ks))
    L.append("")
    L.append("4. Redis memory per entry, bytes")
    L.append("")
    L.append("| | dnsnap (serve --l2) | Unbound cachedb form (rebuilt) |")
    L.append("|---|---|---|")
    dd, uu = mem.get("dnsnap") or {}, mem.get("unbound_cachedb") or {}
    for key, what in (("keys", "keys"), ("sample", "keys measured (MEMORY USAGE)"),
                      ("key_bytes_mean", "key, mean"), ("value_bytes_mean", "value, mean"),
                      ("memory_usage_mean", "MEMORY USAGE, mean"),
                      ("memory_usage_median", "MEMORY USAGE, median"),
                      ("used_memory_per_key", "used_memory growth / keys")):
        L.append("| %s | %s | %s |" % (what, num(dd.get(key)), num(uu.get(key))))
    if "ratio_memory_usage_mean" in mem:
        L.append("")
        L.append("dnsnap / Unbound's form: MEMORY USAGE %s, used_memory per key %s." % (
            mem["ratio_memory_usage_mean"], mem.get("ratio_used_memory_per_key")))
    L.append("")
    L.append("Whole run: %s s." % res["elapsed_s"])
    md = "\n".join(L) + "\n"
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(md)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    sys.stdout.write(md)
    print("(also %s; logs in %s)" % (os.path.join(out, "results.json"),
                                     os.path.join(out, "logs")))


if __name__ == "__main__":
    main()

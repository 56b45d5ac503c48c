#!/usr/bin/env python3
"""bench/unbound/report.py OUT: the Unbound module benchmark's tables, from
what bench/unbound/run.sh left in OUT (meta.env; runs/steady.txt; runs/dump.env,
load.env; runs/first-VARIANT.txt from peers_dnsprobe first; per restart
runs/VARIANT.jsonl from zipfload, VARIANT.pcap from tcpdump, VARIANT.env).

1. Plain Unbound and Unbound with the module: the miss pass (q/s, Unbound's
   CPU per miss, dnsperf's average latency) and cached throughput (q/s, CPU
   per query), medians of the rounds; the module's added cost per miss.
2. The restarts (cold, load_cache, module): time to the first answer from
   cache (NSD down), hit ratio (answered - upstream) / sent in the stream's
   first seconds (t = 0: the second the start begins; a query lost, or sent
   before Unbound listened, is no hit), upstream queries and lost queries over
   the whole stream.
Writes OUT/results.md and OUT/results.json, prints the markdown. Standard
library only (and bench/deploy/report.py's pcap reader).
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deploy"))
from report import pcap_times, read_env  # noqa: E402 -- bench/deploy/report.py

VARIANTS = ("cold", "load_cache", "module")
LABEL = {
    "cold": "plain Unbound, restarted (cold)",
    "load_cache": "plain Unbound, restarted, `load_cache` of its own `dump_cache`",
    "module": "Unbound with dnsnap.py, restarted on its snapshot",
}
SECONDS_SHOWN = 5


def kv_lines(path):
    rows = []
    with open(path) as f:
        for line in f:
            rows.append(dict(w.split("=", 1) for w in line.split() if "=" in w))
    return rows


def steady(out):
    rows = kv_lines(os.path.join(out, "runs", "steady.txt"))
    res = {}
    for v in ("plain", "module"):
        mine = [r for r in rows if r["variant"] == v]
        hz = float(mine[0]["hz"])
        med = lambda f: statistics.median(f(r) for r in mine)  # noqa: E731
        res[v] = {
            "rounds": len(mine),
            "miss_qps": med(lambda r: float(r["miss_qps"])),
            "miss_cpu_us": med(lambda r: int(r["miss_cpu_ticks"]) / hz * 1e6 / int(r["miss_n"])),
            "miss_latency_ms": med(lambda r: float(r["miss_lat_s"]) * 1e3),
            "hit_qps": med(lambda r: float(r["hit_qps"])),
            "hit_cpu_us": med(lambda r: int(r["hit_cpu_ticks"]) / hz * 1e6 / int(r["hit_n"])),
            "hit_qps_all": [float(r["hit_qps"]) for r in mine],
            "miss_cpu_us_all": [round(int(r["miss_cpu_ticks"]) / hz * 1e6 / int(r["miss_n"]), 1)
                                for r in mine],
        }
    return res


def restart(out, v):
    runs = os.path.join(out, "runs")
    env = read_env(os.path.join(runs, v + ".env"))
    origin = float(env["origin"])
    buckets = {}
    with open(os.path.join(runs, v + ".jsonl")) as f:
        for line in f:
            b = json.loads(line)
            buckets[int(round(b["t"]))] = b
    up = {}
    for t in pcap_times(os.path.join(runs, v + ".pcap")):
        s = int((t - origin) // 1)
        up[s] = up.get(s, 0) + 1
    secs = []
    for t in sorted(buckets):
        b = buckets[t]
        u = up.get(t, 0)
        secs.append({"t": t, "sent": b["sent"], "answered": b["answered"], "lost": b["lost"],
                     "upstream": u,
                     # answered without an upstream query, of all sent (a query
                     # lost, or sent before Unbound listened, is no hit)
                     "hit_ratio": (max(0, b["answered"] - u) / b["sent"]) if b["sent"] else None,
                     "p50_us": b["p50_us"], "p99_us": b["p99_us"]})
    first = kv_lines(os.path.join(runs, "first-%s.txt" % v))
    fh = first[0].get("first_hit_us", "none") if first else "none"
    return {
        "first_answer_us": None if fh == "none" else float(fh),
        "seconds": secs,
        "upstream_total": sum(up.get(s["t"], 0) for s in secs),
        "sent_total": sum(s["sent"] for s in secs),
        "lost_total": sum(s["lost"] for s in secs),
    }


def fmt_us(us):
    if us is None:
        return "none"
    return "%.0f ms" % (us / 1e3) if us >= 1e4 else "%.1f ms" % (us / 1e3)


def main():
    out = sys.argv[1]
    meta = read_env(os.path.join(out, "meta.env"))
    st = steady(out)
    rs = {v: restart(out, v) for v in VARIANTS}
    dump = read_env(os.path.join(out, "runs", "dump.env"))
    load = read_env(os.path.join(out, "runs", "load.env")) if os.path.exists(
        os.path.join(out, "runs", "load.env")) else {}
    p, m = st["plain"], st["module"]
    md = []
    md.append("Measured %s, %s names, %s CPUs (%s), load %s at the start; Unbound %s, NSD %s, "
              "dnsnap %s." % (meta["date"], meta["names"], meta["nproc"], meta["cpu"],
                              meta["load_start"], meta["v_unbound"], meta["v_nsd"],
                              meta["v_dnsnap"]))
    md.append("")
    md.append("| Unbound (2 threads) | misses q/s | CPU per miss | miss latency (mean) "
              "| cached q/s | CPU per cached query |")
    md.append("|---|---|---|---|---|---|")
    for v, lab in (("plain", "plain (`validator iterator`)"),
                   ("module", "with dnsnap.py (`validator python iterator`)")):
        s = st[v]
        md.append("| %s | %.0f | %.0f us | %.2f ms | %.0f | %.1f us |" % (
            lab, s["miss_qps"], s["miss_cpu_us"], s["miss_latency_ms"], s["hit_qps"],
            s["hit_cpu_us"]))
    md.append("")
    md.append("The module's cost per miss: %.0f us of Unbound's CPU (%.0f against %.0f), "
              "%.2f ms of latency; cached q/s %.2fx plain (rounds: plain %s, module %s)."
              % (m["miss_cpu_us"] - p["miss_cpu_us"], m["miss_cpu_us"], p["miss_cpu_us"],
                 m["miss_latency_ms"] - p["miss_latency_ms"], m["hit_qps"] / p["hit_qps"],
                 " ".join("%.0f" % x for x in p["hit_qps_all"]),
                 " ".join("%.0f" % x for x in m["hit_qps_all"])))
    md.append("")
    head = " | ".join("hits t=%d" % t for t in range(SECONDS_SHOWN))
    md.append("| restart, %s names cached | first answer from cache | %s | upstream in %s s "
              "| lost |" % (meta["names"], head, meta["after"]))
    md.append("|---|---|" + "---|" * SECONDS_SHOWN + "---|---|")
    for v in VARIANTS:
        r = rs[v]
        by_t = {s["t"]: s for s in r["seconds"]}
        cells = []
        for t in range(SECONDS_SHOWN):
            s = by_t.get(t)
            cells.append("%.1f%%" % (100 * s["hit_ratio"]) if s and s["hit_ratio"] is not None
                         else "-")
        md.append("| %s | %s | %s | %d | %d of %d |" % (
            LABEL[v], fmt_us(r["first_answer_us"]), " | ".join(cells), r["upstream_total"],
            r["lost_total"], r["sent_total"]))
    md.append("")
    md.append("Stream: %s q/s, Zipf s = 1 over the names, %s s from the start. `dump_cache`: "
              "%s messages, %s bytes, %.1f s; `load_cache` of it: %s s."
              % (meta["rate"], meta["after"], dump.get("dump_msgs", "?"),
                 dump.get("dump_bytes", "?"), float(dump.get("dump_s", 0)),
                 load.get("load_s", "?")))
    text = "\n".join(md) + "\n"
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"meta": meta, "steady": st, "restarts": rs, "dump": dump, "load": load}, f,
                  indent=1, sort_keys=True)
    print(text)
    print("(also %s; logs in %s)" % (os.path.join(out, "results.json"),
                                      os.path.join(out, "logs")))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""bench/deploy/report.py OUT: the deploy benchmark's tables and JSON, from what
bench/deploy/run.sh left in OUT (meta.env; runs/steady.txt; per restarted
server runs/NAME.jsonl from zipfload, runs/NAME.pcap from tcpdump, runs/NAME.env).

Per server, seconds t = -3..9 around the restart (t = 0 starts with it): the
client's sent, answered, lost, p50 and p99 (zipfload), the queries tcpdump saw
reaching the component behind the server ("upstream"), and the hit ratio
1 - upstream / sent. Writes OUT/results.md and OUT/results.json, prints the
markdown. Standard library only.
"""
import json
import math
import os
import statistics
import struct
import sys

FIRST, LAST = -3, 9  # the seconds shown
LABEL = {
    "dnsnap": "(a) dnsnap serve --upstream Unbound, restarted",
    "dnsnap-deploy": "(a') dnsnap serve --upstream Unbound, two-process deploy",
    "unbound": "(b) Unbound, restarted",
    "kresd": "(c) Knot Resolver (2 kresd, LMDB cache), restarted",
    "dnsdist": "(d) dnsdist, packet cache, in front of Unbound, restarted",
}
BEHIND = {"dnsnap": "Unbound", "dnsnap-deploy": "Unbound", "dnsdist": "Unbound",
          "unbound": "NSD", "kresd": "NSD"}


def read_env(path):
    env = {}
    with open(path) as f:
        for line in f:
            k, sep, v = line.rstrip("\n").partition("=")
            if sep:
                env[k] = v
    return env


def pcap_times(path):
    """Timestamps (Unix seconds) of the packets in a pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        return []
    magic = data[:4]
    for endian in "<>":
        m = struct.unpack(endian + "I", magic)[0]
        if m in (0xA1B2C3D4, 0xA1B23C4D):
            scale = 1e-6 if m == 0xA1B2C3D4 else 1e-9
            break
    else:
        raise SystemExit(f"report: {path}: not a pcap file (magic {magic.hex()})")
    times, off = [], 24
    rec = struct.Struct(endian + "IIII")
    while off + 16 <= len(data):
        sec, frac, incl, _ = rec.unpack_from(data, off)
        times.append(sec + frac * scale)
        off += 16 + incl
    return times


def restart(out, name):
    env = read_env(os.path.join(out, "runs", name + ".env"))
    origin = float(env["origin"])
    with open(os.path.join(out, "runs", name + ".jsonl")) as f:
        buckets = {int(round(b["t"])): b for b in map(json.loads, f)}
    up = {}
    for t in pcap_times(os.path.join(out, "runs", name + ".pcap")):
        s = math.floor(t - origin)
        up[s] = up.get(s, 0) + 1
    seconds = []
    for t in range(FIRST, LAST + 1):
        b = buckets.get(t, {"sent": 0, "answered": 0, "lost": 0, "errors": 0,
                            "p50_us": None, "p99_us": None, "max_us": None})
        u = up.get(t, 0)
        hr = 1 - u / b["sent"] if b["sent"] else None
        ha = max(0.0, 1 - u / b["answered"]) if b["answered"] else None
        seconds.append({"t": t, "sent": b["sent"], "answered": b["answered"], "lost": b["lost"],
                        "errors": b["errors"], "upstream": u,
                        "hit_ratio": None if hr is None else round(hr, 4),
                        "hit_ratio_answered": None if ha is None else round(ha, 4),
                        "p50_us": b["p50_us"], "p99_us": b["p99_us"], "max_us": b["max_us"]})
    before = [s for s in seconds if s["t"] < 0]
    first = next(s for s in seconds if s["t"] == 0)
    sent_b = sum(s["sent"] for s in before)
    hr_before = 1 - sum(s["upstream"] for s in before) / sent_b if sent_b else None
    p99s = [s["p99_us"] for s in before if s["p99_us"] is not None]
    p99_steady = statistics.median(p99s) if p99s else None
    whole = list(buckets.values())
    down = env.get("down_ms", "null")
    return {
        "seconds": seconds,
        "origin": origin,
        "restart_s": round(float(env["restart_end"]) - float(env["restart_begin"]), 3),
        "down_ms": None if down in ("", "null") else float(down),
        "hit_ratio_before": None if hr_before is None else round(hr_before, 4),
        "hit_ratio_first_second": first["hit_ratio"],
        "p99_us_steady": p99_steady,
        "p99_us_first_second": first["p99_us"],
        "lost_first_second": first["lost"],
        "lost_shown_seconds": sum(s["lost"] for s in seconds),
        "lost_whole_stream": sum(b["lost"] for b in whole),
        "sent_whole_stream": sum(b["sent"] for b in whole),
        "errors_whole_stream": sum(b["errors"] for b in whole),
        "udp_noports": int(env.get("udp_noports", 0)),
        "udp_rcvbuf_errors": int(env.get("udp_rcvbuf_errors", 0)),
        "tcpdump": env.get("tcpdump", ""),
        "zipfload": env.get("zipfload", ""),
    }


def steady(out):
    rows = {}
    path = os.path.join(out, "runs", "steady.txt")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        for line in f:
            n, r, q, done, lost, ok, ticks, hz = line.split()
            cpu = int(ticks) * 1e6 / int(hz) / int(done) if int(done) else None
            rows.setdefault(n, []).append({"round": int(r), "qps": float(q), "completed": int(done),
                                           "lost": int(lost), "noerror": int(ok),
                                           "cpu_us_per_query": cpu})
    res = {}
    for n, rs in rows.items():
        cpus = [x["cpu_us_per_query"] for x in rs if x["cpu_us_per_query"] is not None]
        res[n] = {"qps": round(statistics.median(x["qps"] for x in rs)),
                  "qps_rounds": [round(x["qps"]) for x in rs],
                  "cpu_us_per_query": round(statistics.median(cpus), 2) if cpus else None,
                  "cpu_rounds": [None if x["cpu_us_per_query"] is None
                                 else round(x["cpu_us_per_query"], 2) for x in rs],
                  "lost": sum(x["lost"] for x in rs),
                  "noerror_pct_lowest": round(min(100.0 * x["noerror"] / x["completed"]
                                                  if x["completed"] else 0 for x in rs), 2)}
    return res


def fmt(v, spec="{}", none="-"):
    return none if v is None else spec.format(v)


def main():
    out = sys.argv[1]
    meta = read_env(os.path.join(out, "meta.env"))
    systems = meta["systems"].split()
    res = {n: restart(out, n) for n in systems
           if os.path.exists(os.path.join(out, "runs", n + ".jsonl"))}
    st = steady(out)
    md = []
    md.append(f"Deploy benchmark, {meta['date']}: {meta['names']} names (Big Pineapple mix), "
              f"Zipf s = 1, {meta['rate']} q/s over UDP;")
    md.append(f"{meta['nproc']} CPUs ({meta['cpu']}), shared by the servers and the clients "
              f"(zipfload, dnsperf, tcpdump) and whatever else runs: load average "
              f"{meta['load_start']} at the start, {meta.get('load_end', '?')} at the end.")
    md.append(f"dnsnap {meta['v_dnsnap']}, Unbound {meta['v_unbound']}, Knot Resolver "
              f"{meta['v_kresd']}, dnsdist {meta['v_dnsdist']}, NSD {meta['v_nsd']}, "
              f"dnsperf {meta['v_dnsperf']}. Every server 2 threads (kresd: 2 processes)."
              + (f" dnsnap serve's extra options: {meta['dnsnap_args']}."
                 if meta.get('dnsnap_args') else ""))
    md.append("")
    md.append("Per second of send time, t = 0 the second that starts with the restart. upstream: "
              "queries (QR = 0) reaching the component behind the server (tcpdump); hit ratio = "
              "1 - upstream / sent, one upstream query per miss (Unbound and kresd may send more "
              "than one for a miss: for them a floor); (of answered) = 1 - upstream / answered, "
              "since a lost query is neither a hit nor a miss to the client. lost: no answer "
              "within 2 s.")
    md.append("")
    for n, r in res.items():
        md.append(f"### {LABEL.get(n, n)}")
        md.append("")
        down = "never down" if r["down_ms"] is None else f"down {r['down_ms']:.0f} ms"
        md.append(f"Restart took {r['restart_s']:.3f} s ({down}); upstream = queries reaching "
                  f"{BEHIND.get(n, '?')}; whole stream: {r['sent_whole_stream']} sent, "
                  f"{r['lost_whole_stream']} lost, {r['errors_whole_stream']} non-NOERROR; "
                  f"the machine's UDP counters meanwhile: {r['udp_noports']} datagrams to a "
                  f"closed port, {r['udp_rcvbuf_errors']} dropped on a full receive buffer.")
        md.append("")
        md.append("| t (s) | sent | answered | lost | upstream | hit ratio | (of answered) "
                  "| p50 us | p99 us |")
        md.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for s in r["seconds"]:
            hr, ha = (fmt(None if v is None else 100 * v, "{:.1f}%")
                      for v in (s["hit_ratio"], s["hit_ratio_answered"]))
            md.append(f"| {s['t']} | {s['sent']} | {s['answered']} | {s['lost']} | {s['upstream']} "
                      f"| {hr} | {ha} | {fmt(s['p50_us'])} | {fmt(s['p99_us'])} |")
        md.append("")
    md.append("### Steady state: cache hits, dnsperf -c 4 -T 1 -q 200, "
              f"{meta['secs']} s, median of {meta['rounds']} interleaved rounds")
    md.append("")
    md.append("| server | hit q/s (rounds) | server CPU us/query (rounds) | lost | NOERROR |")
    md.append("|---|---:|---:|---:|---:|")
    for n, s in st.items():
        md.append(f"| {n} | {s['qps']} ({', '.join(str(q) for q in s['qps_rounds'])}) "
                  f"| {fmt(s['cpu_us_per_query'])} ({', '.join(fmt(c) for c in s['cpu_rounds'])}) "
                  f"| {s['lost']} | {s['noerror_pct_lowest']}% |")
    md.append("")
    targets = {}
    peers = {n: s for n, s in st.items() if n != "dnsnap"}
    if "dnsnap" in res:
        r = res["dnsnap"]
        if r["hit_ratio_before"] is not None and r["hit_ratio_first_second"] is not None:
            d = 100 * (r["hit_ratio_before"] - r["hit_ratio_first_second"])
            targets["hit_ratio_first_second_within_1_point"] = {
                "before": r["hit_ratio_before"], "first_second": r["hit_ratio_first_second"],
                "points_lower": round(d, 2), "met": d <= 1.0}
    for n in ("dnsnap", "dnsnap-deploy"):
        if n in res and res[n]["p99_us_steady"] and res[n]["p99_us_first_second"] is not None:
            r = res[n]
            x = r["p99_us_first_second"] / r["p99_us_steady"]
            targets[f"p99_first_second_at_most_2x_steady ({n})"] = {
                "steady_us": r["p99_us_steady"], "first_second_us": r["p99_us_first_second"],
                "ratio": round(x, 2), "met": x <= 2.0}
    if "dnsnap-deploy" in res:
        lost = res["dnsnap-deploy"]["lost_whole_stream"]
        targets["two_process_deploy_loses_0"] = {"lost": lost, "met": lost == 0}
    if "dnsnap" in st and peers:
        best = max(peers, key=lambda p: peers[p]["qps"])
        x = st["dnsnap"]["qps"] / peers[best]["qps"] if peers[best]["qps"] else None
        targets["hit_throughput_at_least_1.5x_best_peer"] = {
            "dnsnap_qps": st["dnsnap"]["qps"], "best_peer": best,
            "best_peer_qps": peers[best]["qps"],
            "ratio": None if x is None else round(x, 2), "met": x is not None and x >= 1.5}
        cpu = st["dnsnap"]["cpu_us_per_query"]
        pc = {p: s["cpu_us_per_query"] for p, s in peers.items()}
        targets["cpu_per_query_below_every_peer"] = {
            "dnsnap_us": cpu, "peers_us": pc,
            "met": cpu is not None and all(c is not None and cpu < c for c in pc.values())}
    if targets:
        md.append("### Targets (issue 12)")
        md.append("")
        for k, v in targets.items():
            detail = ", ".join(f"{a} {b}" for a, b in v.items() if a != "met")
            md.append(f"- {k}: {'met' if v['met'] else 'NOT met'} ({detail})")
        md.append("")
    pause = None
    pp = os.path.join(out, "pause", "pause.json")
    if os.path.exists(pp):
        with open(pp) as f:
            pause = json.load(f)
        md.append("### Snapshot while serving (bench/deploy/pause.sh)")
        md.append("")
        md.append(f"{pause['entries']} entries in memory, a snapshot of {pause['snapshot_bytes']} "
                  f"bytes written on SIGUSR2 in {fmt(pause['write_s_from_log'])} s (dnsnap's log: "
                  f"`{pause['log_line']}`), hits at {pause['rate_qps']} q/s meanwhile. "
                  "Worst answer "
                  f"latency: {fmt(pause['worst_latency_us_during_write'])} us during the write, "
                  f"{fmt(pause['worst_latency_us_outside'])} us outside it (p99 of the worst per "
                  f"10 ms outside: {fmt(pause['p99_of_10ms_worst_us_outside'])} us); lost "
                  f"{pause['lost_during_write']} during the write, {pause['lost_whole_stream']} "
                  "in all. 10 ms buckets whose worst answer took over 5, 10, 20 ms: "
                  f"{pause.get('buckets_over_5_10_20ms_during_write')} of "
                  f"{pause.get('buckets_during_write')} during the write, "
                  f"{pause.get('buckets_over_5_10_20ms_outside')} of "
                  f"{pause.get('buckets_outside')} outside it; the median bucket's worst "
                  f"{fmt(pause.get('median_of_10ms_worst_us_during_write'))} us during, "
                  f"{fmt(pause.get('median_of_10ms_worst_us_outside'))} us outside.")
        md.append("")
    md.append(f"Whole run: {meta.get('elapsed_s', '?')} s.")
    text = "\n".join(md) + "\n"
    doc = {
        "date": meta["date"], "names": int(meta["names"]), "rate_qps": int(meta["rate"]),
        "zipf_s": 1.0,
        "machine": {"nproc": int(meta["nproc"]), "cpu": meta["cpu"],
                    "loadavg_start": meta["load_start"], "loadavg_end": meta.get("load_end"),
                    "note": "clients and servers share the machine's cores"},
        "versions": {k[2:]: v for k, v in meta.items() if k.startswith("v_")},
        "hit_ratio": "1 - queries reaching the component behind / queries the client sent, "
                     "per second of send time",
        "restarts": res,
        "steady": {"dnsperf": f"-c 4 -T 1 -q 200 -l {meta['secs']}",
                   "rounds": int(meta["rounds"]), "servers": st},
        "targets": targets,
        "snapshot_pause": pause,
        "elapsed_s": int(meta["elapsed_s"]) if meta.get("elapsed_s") else None,
    }
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    sys.stdout.write(text)
    print(f"(also {os.path.join(out, 'results.json')}; logs in {os.path.join(out, 'logs')})")


if __name__ == "__main__":
    main()

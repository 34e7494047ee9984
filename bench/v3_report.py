"""bench_v3.py's output: PREFIX.csv (machine-readable, '# ' comment lines
first) and PREFIX.md (the tables for bench/RESULTS.md, with the issue's
targets beside the measured values). Stdlib only."""
import csv
import io

NWB = "nwbzarr-j%d"
FIELDS = ["codec", "variant", "threads", "wall_s", "mb_per_s", "cpu_s", "peak_rss_mib",
          "startup_s", "stored_mb", "vs_nwbzarr_j2", "layout_ok", "data_ok", "status"]


def status(r):
    if r.get("status"):
        return r["status"]
    if r.get("layout_ok") and r.get("data_ok"):
        return "ok"
    return "check failed: " + "; ".join(r.get("problems", ["?"]))


def wall(rows, codec, variant):
    """Best wall time of a variant that ran and passed its checks; else None."""
    r = rows.get((codec, variant))
    return r["wall"] if r and status(r) == "ok" else None


def comments(a, info):
    m, v = info["machine"], info["versions"]
    return [
        "nwbzarr bench/bench_v3.sh, %s" % info["started"],
        "input: %d s x %d ch x 30 kHz int16 (%d bytes), inner chunks (%d, %d), shards (%d, %d), "
        "blosc byte shuffle typesize 2, codecs %s, best of %d"
        % ((a.seconds, a.channels, info["bytes"]) + a.chunks + a.shards
           + (" and ".join("%s clevel %d" % c for c in a.codecs), a.reps)),
        "machine: %d cores, %s, %s GiB RAM, %s, Linux %s, c-blosc %s, libzstd %s%s"
        % (m["cores"], m["cpu"], m["ram_gib"], m["disk"], m["kernel"], m["blosc"], m.get("zstd", "?"),
           " (and %s in the rows named '(zstd %s)': bench_v3.sh ZSTD_BUILD)"
           % (m["zstd_alt"], m["zstd_alt"]) if m.get("zstd_alt") else ""),
        "load average: %s at start, %s at end" % (info["load_start"], info["load_end"]),
        "versions: " + ", ".join("%s %s" % kv for kv in sorted(v.items())),
        "settings: " + "; ".join("%s %s" % (p, ", ".join("%s=%s" % kv for kv in s.items()))
                                 for p, s in sorted(info["settings"].items())),
    ]


def table_rows(a, info, rows):
    out = []
    for (codec, variant), r in rows.items():
        ok = status(r) == "ok"
        ref = wall(rows, codec, NWB % a.threads)
        out.append({
            "codec": codec, "variant": variant, "threads": r["threads"],
            "wall_s": "%.2f" % r["wall"] if ok else "",
            "mb_per_s": "%.0f" % (r["bytes"] / 1e6 / r["wall"]) if ok else "",
            "cpu_s": "%.2f" % r["cpu"] if ok else "",
            "peak_rss_mib": "%.1f" % (r["rss"] / 1024) if r["runs"] else "",
            "startup_s": "%.2f" % info["startup"][variant]
            if info["startup"].get(variant) is not None else "",
            "stored_mb": "%.1f" % (r["stored"] / 1e6) if "stored" in r else "",
            "vs_nwbzarr_j2": "%.2f" % (r["wall"] / ref) if ok and ref else "",
            "layout_ok": r.get("layout_ok", ""), "data_ok": r.get("data_ok", ""),
            "status": status(r)})
    return out


def targets(a, rows):
    """(target, measured, verdict) for each of the issue's targets; for the
    zstd codecs again with the other libzstd's rows (a.alt) when measured."""
    out = []
    alt = getattr(a, "alt", "")
    for codec in ("%s:%d" % c for c in a.codecs):
        for suffix in ("", alt) if alt and codec.startswith("zstd") else ("",):
            out += codec_targets(a, rows, codec, suffix)
    for (codec, variant), r in rows.items():
        for suffix in ("", alt) if alt else ("",):
            if variant == NWB % a.threads + suffix:
                rss = r["rss"] / 1024 if r["runs"] and status(r) == "ok" else None
                out.append(judge(rows, "%s: -j%d%s peak RSS <= 256 MiB" % (codec, a.threads, suffix),
                                 rss, 256, "%.1f MiB", "<=", codec, variant))
    if not a.big_seconds:
        out.append(("-j%d peak RSS <= 256 MiB with a 10x longer input" % a.threads, "-",
                    "not measured: BIG_SECONDS not set"))
    return out


def why(rows, codec, *variants):
    """Why a target could not be judged: the first missing variant's status."""
    for v in variants:
        r = rows.get((codec, v))
        if not r or status(r) != "ok":
            return "not measured: %s %s" % (v, status(r).split(" (")[0] if r else "not run")
    return "not measured"


def judge(rows, text, value, limit, fmt, better, codec, *variants):
    if value is None:
        return (text, "-", why(rows, codec, *variants))
    ok = value <= limit if better == "<=" else value >= limit
    return (text, fmt % value, "**met**" if ok else "**not met**")


def codec_targets(a, rows, codec, suffix):
    """The per-codec targets, for nwbzarr's and the bare loop's rows named
    with `suffix` ("" or another libzstd's " (zstd X.Y.Z)")."""
    j1, j2 = NWB % 1 + suffix, NWB % a.threads + suffix
    bare = "bare_shard-j%d%s" % (a.threads, suffix)
    t1, t2 = "-j1" + suffix, "-j%d%s" % (a.threads, suffix)  # as the targets' text names them
    out = []

    def ratio(num, den):
        x, y = wall(rows, codec, num), wall(rows, codec, den)
        return x / y if x and y else None

    peers = {p: wall(rows, codec, p) for p in ("zarr-python", "tensorstore", "acquire-zarr")}
    me = wall(rows, codec, j2)
    fastest = min((t, p) for p, t in peers.items() if t) if any(peers.values()) else None
    if me and fastest:
        out.append(("%s: %s ahead of every peer" % (codec, t2),
                    "%.2f s vs %s %.2f s" % (me, fastest[1], fastest[0]),
                    "**met**" if me < fastest[0] else "**not met**"))
    else:
        out.append(("%s: %s ahead of every peer" % (codec, t2), "-", why(rows, codec, j2, *peers)))
    for peer, limit in (("zarr-python", 0.5), ("tensorstore", 0.9), ("acquire-zarr", 0.9)):
        out.append(judge(rows, "%s: %s time / %s <= %.1f" % (codec, t2, peer, limit),
                         ratio(j2, peer), limit, "%.2f", "<=", codec, j2, peer))
    out.append(judge(rows, "%s: %s time / %s <= 1.3" % (codec, t2, bare),
                     ratio(j2, bare), 1.3, "%.2f", "<=", codec, j2, bare))
    if codec.startswith("zstd"):
        out.append(judge(rows, "%s: %s time / %s >= 1.7" % (codec, t1, t2),
                         ratio(j1, j2), 1.7, "%.2f", ">=", codec, j1, j2))
    return out


def markdown(a, info, rows):
    lines = ["## Zarr v3 sharded write, %d s x %d ch (%.2f GB), run of %s"
             % (a.seconds, a.channels, info["bytes"] / 1e9, info["started"]), ""]
    lines += ["- " + c for c in comments(a, info)[1:]]
    lines += ["- wall time: best of %d interleaved runs, from the start of the process until "
              "`sync -f` of the output returns; CPU s of that run; peak RSS the largest of all "
              "runs; `startup` is the Python peers' interpreter start and imports alone (it is "
              "inside their wall time)." % a.reps, ""]
    trows = table_rows(a, info, rows)
    for codec in dict.fromkeys(t["codec"] for t in trows):
        lines += ["### %s" % codec, "",
                  "| variant | threads | wall s | MB/s | CPU s | peak RSS MiB | startup s | "
                  "stored MB | time / nwbzarr-j%d | check |" % a.threads,
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for t in trows:
            if t["codec"] != codec:
                continue
            if not t["wall_s"]:
                lines.append("| %s | %s | %s | | | %s | | %s | | |" % (
                    t["variant"], t["threads"], t["status"], t["peak_rss_mib"], t["stored_mb"]))
                continue
            lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                t["variant"], t["threads"], t["wall_s"], t["mb_per_s"], t["cpu_s"],
                t["peak_rss_mib"], t["startup_s"] or "-", t["stored_mb"],
                t["vs_nwbzarr_j2"] or "-", t["status"]))
        lines.append("")
    lines += ["### Targets (issue 11)", "", "| target | measured | result |", "|---|---|---|"]
    lines += ["| %s | %s | %s |" % t for t in targets(a, rows)]
    return "\n".join(lines) + "\n"


def write(a, info, rows, prefix):
    buf = io.StringIO()
    for c in comments(a, info):
        buf.write("# %s\n" % c)
    w = csv.DictWriter(buf, FIELDS, lineterminator="\n")
    w.writeheader()
    w.writerows(table_rows(a, info, rows))
    with open(prefix + ".csv", "w") as f:
        f.write(buf.getvalue())
    with open(prefix + ".md", "w") as f:
        f.write(markdown(a, info, rows))

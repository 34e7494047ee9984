"""bench/v3_report.py judges the issue's targets from the measured rows: a
ratio on the wrong side of its limit is "not met", a missing or failed
variant is "not measured" naming it (never a number), and the CSV carries
no time for a variant that failed its checks."""
import argparse
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "bench"))
import v3_report  # noqa: E402


def row(codec, variant, threads, wall, rss_mib=100, **extra):
    r = {"codec": codec, "variant": variant, "threads": threads, "runs": 1, "rss": rss_mib * 1024,
         "bytes": 10**9, "wall": wall, "cpu": wall, "stored": 5 * 10**8, "layout_ok": True,
         "data_ok": True, "problems": []}
    r.update(extra)
    return (codec, variant), r


a = argparse.Namespace(threads=2, codecs=[("lz4", 5), ("zstd", 3)], big_seconds=0)
rows = dict([
    row("lz4:5", "nwbzarr-j1", 1, 2.0), row("lz4:5", "nwbzarr-j2", 2, 1.0),
    row("lz4:5", "bare_shard-j2", 2, 0.8),           # 1.25 <= 1.3: met
    row("lz4:5", "zarr-python", 2, 2.5),             # 0.40 <= 0.5: met
    row("lz4:5", "tensorstore", 2, 1.05),            # 0.95 > 0.9: not met
    row("lz4:5", "acquire-zarr", 2, 0.9),            # faster than nwbzarr: not ahead
    row("zstd:3", "nwbzarr-j1", 1, 10.0), row("zstd:3", "nwbzarr-j2", 2, 6.0, rss_mib=300),
    row("zstd:3", "bare_shard-j2", 2, 5.0),
    row("zstd:3", "zarr-python", 2, 20.0),
    row("zstd:3", "tensorstore", 2, 9.0, layout_ok=False, problems=["chunk_grid is [1], not [2]"]),
])
rows[("zstd:3", "acquire-zarr")] = {"codec": "zstd:3", "variant": "acquire-zarr", "threads": 2,
                                   "runs": 0, "rss": 0, "bytes": 10**9,
                                   "status": "not available (no such codec)"}
def check_targets(args, want):
    """v3_report.targets judges exactly `want` ({text: (measured, verdict)})."""
    got = {t[0]: (t[1], t[2]) for t in v3_report.targets(args, rows)}
    assert got == want, "\n".join("%s: got %s, want %s" % (k, got.get(k), want.get(k))
                                  for k in sorted(set(got) | set(want)) if got.get(k) != want.get(k))


want = {
    "lz4:5: -j2 ahead of every peer": ("1.00 s vs acquire-zarr 0.90 s", "**not met**"),
    "lz4:5: -j2 time / zarr-python <= 0.5": ("0.40", "**met**"),
    "lz4:5: -j2 time / tensorstore <= 0.9": ("0.95", "**not met**"),
    "lz4:5: -j2 time / acquire-zarr <= 0.9": ("1.11", "**not met**"),
    "lz4:5: -j2 time / bare_shard-j2 <= 1.3": ("1.25", "**met**"),
    "zstd:3: -j2 ahead of every peer": ("6.00 s vs zarr-python 20.00 s", "**met**"),
    "zstd:3: -j2 time / zarr-python <= 0.5": ("0.30", "**met**"),
    "zstd:3: -j2 time / tensorstore <= 0.9": ("-", "not measured: tensorstore check failed: chunk_grid is [1], not [2]"),
    "zstd:3: -j2 time / acquire-zarr <= 0.9": ("-", "not measured: acquire-zarr not available"),
    "zstd:3: -j2 time / bare_shard-j2 <= 1.3": ("1.20", "**met**"),
    "zstd:3: -j1 time / -j2 >= 1.7": ("1.67", "**not met**"),
    "lz4:5: -j2 peak RSS <= 256 MiB": ("100.0 MiB", "**met**"),
    "zstd:3: -j2 peak RSS <= 256 MiB": ("300.0 MiB", "**not met**"),
    "-j2 peak RSS <= 256 MiB with a 10x longer input": ("-", "not measured: BIG_SECONDS not set"),
}
check_targets(a, want)
info = {"startup": {"zarr-python": 0.4}}
table = {(t["codec"], t["variant"]): t for t in v3_report.table_rows(a, info, rows)}
ts = table[("zstd:3", "tensorstore")]
assert ts["wall_s"] == "" and ts["vs_nwbzarr_j2"] == "" and ts["status"].startswith("check failed"), ts
assert table[("zstd:3", "acquire-zarr")]["wall_s"] == "", table[("zstd:3", "acquire-zarr")]
assert table[("lz4:5", "zarr-python")]["vs_nwbzarr_j2"] == "2.50"
assert table[("lz4:5", "zarr-python")]["startup_s"] == "0.40"

# With another libzstd's rows (bench_v3.sh ZSTD_BUILD): the zstd targets are
# judged again from those rows, by their own names; the others stay as they were.
alt = " (zstd 1.5.7)"
b = argparse.Namespace(threads=2, codecs=a.codecs, big_seconds=0, alt=alt)
rows.update([
    row("zstd:3", "nwbzarr-j1" + alt, 1, 7.0), row("zstd:3", "nwbzarr-j2" + alt, 2, 3.5),
    row("zstd:3", "bare_shard-j2" + alt, 2, 3.0),
])
check_targets(b, dict(want, **{
    "zstd:3: -j2 (zstd 1.5.7) ahead of every peer": ("3.50 s vs zarr-python 20.00 s", "**met**"),
    "zstd:3: -j2 (zstd 1.5.7) time / zarr-python <= 0.5": ("0.17", "**met**"),
    "zstd:3: -j2 (zstd 1.5.7) time / tensorstore <= 0.9":
        ("-", "not measured: tensorstore check failed: chunk_grid is [1], not [2]"),
    "zstd:3: -j2 (zstd 1.5.7) time / acquire-zarr <= 0.9": ("-", "not measured: acquire-zarr not available"),
    "zstd:3: -j2 (zstd 1.5.7) time / bare_shard-j2 (zstd 1.5.7) <= 1.3": ("1.17", "**met**"),
    "zstd:3: -j1 (zstd 1.5.7) time / -j2 (zstd 1.5.7) >= 1.7": ("2.00", "**met**"),
    "zstd:3: -j2 (zstd 1.5.7) peak RSS <= 256 MiB": ("100.0 MiB", "**met**"),
}))
table = {(t["codec"], t["variant"]): t for t in v3_report.table_rows(b, info, rows)}
assert table[("zstd:3", "nwbzarr-j2" + alt)]["vs_nwbzarr_j2"] == "0.58", table[("zstd:3", "nwbzarr-j2" + alt)]
m = {"cores": 2, "cpu": "x", "ram_gib": 8, "disk": "d", "kernel": "k", "blosc": "1.21.3", "zstd": "1.5.4",
     "zstd_alt": "1.5.7"}
c = argparse.Namespace(seconds=1, channels=2, chunks=(1, 1), shards=(1, 1), codecs=a.codecs, reps=1)
line = v3_report.comments(c, {"machine": m, "versions": {}, "settings": {}, "started": "t", "bytes": 1,
                              "load_start": "0", "load_end": "0"})[2]
assert "libzstd 1.5.4 (and 1.5.7 in the rows named '(zstd 1.5.7)'" in line, line
print("ok")

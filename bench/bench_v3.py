"""Driver of bench_v3.sh (run that): one generated recording written as one
sharded Zarr v3 array by nwbzarr and its peers, same codec chain, inner
chunks and shards, in one run; a CSV and a markdown table.

usage: bench_v3.py --build BUILD --py VENV_PYTHON --work DIR --out PREFIX
                   [--seconds 60] [--channels 384] [--chunks 30000,64]
                   [--shards 300000,384] [--codecs lz4:5,zstd:3] [--reps 3]
                   [--threads 2] [--big-seconds N] [--sample] [--zstd-build DIR]

Stdlib only, and kept small on purpose: a child's peak RSS starts from its
parent's on Linux, so every variant runs under /usr/bin/time (a tiny
process) which reports the child's own peak. One timing is:
  input read into the page cache (cat), output removed, `sync`; then, timed,
  the writer and `sync -f OUT` (the data on disk before the clock stops).
Repetitions are interleaved (every variant once, then again), best wall time
kept, with that run's CPU seconds; peak RSS is the largest of all runs.
After each variant's first run (not timed) bench/v3_check.py checks that the
output has the asked layout and reads back equal to the input with
zarr-python. A variant that fails, or whose program says it cannot do this
(nz_write_raw exits 3 when the library refuses the layout), is reported as
"not available (reason)": never a number.
--zstd-build DIR (a build tree configured with -DNZ_ZSTD_ROOT, e.g. Debian
13's libzstd on Debian 12) adds, for the zstd codecs, bare_shard-j1/-jN and
nwbzarr-j1/-jN of that tree, named with the libzstd they run
("nwbzarr-j2 (zstd 1.5.7)"), in the same rounds as the others.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = ("zarr-python", "tensorstore", "acquire-zarr")


def pair(text):
    a, b = text.split(",")
    return int(a), int(b)


def codec_list(text):
    out = []
    for item in text.split(","):
        cname, clevel = item.split(":")
        out.append((cname, int(clevel)))
    return out


def sh(*cmd):
    return subprocess.run(cmd, capture_output=True, text=True).stdout.strip()


def libzstd(build):
    """The libzstd version a build's CLI runs with (`nwbzarr --version`)."""
    line = sh(os.path.join(build, "src", "cli", "nwbzarr"), "--version").splitlines()[-1:]
    for item in (line[0].split(": ", 1)[-1].split(", ") if line else []):
        if item.startswith("zstd "):
            return item.split()[1]
    return "?"


def machine(work, build, zstd_build):
    """Cores, CPU model, RAM, the work directory's disk, kernel, c-blosc,
    the libzstd of each build."""
    model = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                  if ln.startswith("model name")), "?")
    ram = next(int(ln.split()[1]) for ln in open("/proc/meminfo") if ln.startswith("MemTotal"))
    dev, fstype = (sh("df", "--output=source,fstype", work).splitlines() + ["? ?"])[1].split()[:2]
    disk = sh("lsblk", "-dno", "MODEL,SIZE,ROTA", dev).split()
    kind = " ".join(disk[:-1]) + (", rotational" if disk[-1:] == ["1"] else ", not rotational") \
        if disk else "?"
    return {"cores": os.cpu_count(), "cpu": model, "ram_gib": round(ram / 2**20, 1),
            "disk": "%s (%s; %s)" % (dev, fstype, kind), "kernel": platform.release(),
            "blosc": sh("pkg-config", "--modversion", "blosc") or "?",
            "zstd": libzstd(build), "zstd_alt": libzstd(zstd_build) if zstd_build else ""}


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


class Bench:
    def __init__(self, args):
        self.a = args
        self.raw = os.path.join(args.work, "rec.raw")
        self.out = os.path.join(args.work, "out")
        self.rows = {}  # (codec, variant) -> result dict
        self.versions = {}
        self.settings = {}
        self.alt = args.alt

    def variants(self, cname, clevel):
        """(name, threads, argv, array dir inside OUT): what is run per codec."""
        a = self.a
        shape, codec = self.layout(cname, clevel)
        out = self.own(a.build, "", cname, clevel)
        if a.zstd_build and cname == "zstd":
            out += self.own(a.zstd_build, self.alt, cname, clevel)
        for p in PEERS:
            out.append((p, a.threads, [a.py, os.path.join(HERE, "v3_peers.py"), p, self.raw,
                                       self.out] + shape + codec + ["--threads", str(a.threads)],
                        ""))
        return out

    def layout(self, cname, clevel):
        """The arguments every writer gets: shape, chunks, shards; codec."""
        a = self.a
        return (["--channels", str(a.channels), "--chunks", "%d,%d" % a.chunks,
                 "--shards", "%d,%d" % a.shards], ["--cname", cname, "--clevel", str(clevel)])

    def own(self, build, suffix, cname, clevel):
        """bare_shard and nwbzarr at -j1 and -jN from one build tree."""
        a, b = self.a, os.path.join(build, "bench")
        shape, codec = self.layout(cname, clevel)
        out = []
        for j in (1, a.threads):
            out.append(("bare_shard-j%d%s" % (j, suffix), j, [os.path.join(b, "bare_shard"), self.raw,
                        self.out] + shape + codec + ["-j", str(j)], ""))
        for j in (1, a.threads):
            out.append(("nwbzarr-j%d%s" % (j, suffix), j, [os.path.join(b, "nz_write_raw"), self.raw,
                        self.out] + shape + codec + ["--zarr-format", "3", "-j", str(j), "--quiet"],
                        "data"))
        return out

    def timed(self, argv, sync_dir):
        """One timing: wall s (incl. `sync -f`), CPU s, peak RSS KiB, rc, stdout, stderr."""
        tf, so, se = (os.path.join(self.a.work, n) for n in ("time.txt", "stdout.txt", "stderr.txt"))
        script = '"$0" "$@" > "$NZ_SO" 2> "$NZ_SE" && { [ -z "$NZ_SYNC" ] || sync -f "$NZ_SYNC"; }'
        env = dict(os.environ, NZ_SO=so, NZ_SE=se, NZ_SYNC=sync_dir)
        t0 = time.perf_counter()
        rc = subprocess.call(["/usr/bin/time", "-f", "%M %U %S", "-o", tf, "sh", "-c", script]
                             + argv, env=env)
        wall = time.perf_counter() - t0
        rss, user, sys_ = open(tf).read().split("\n")[-2].split()
        return {"wall": wall, "cpu": float(user) + float(sys_), "rss": int(rss), "rc": rc,
                "stdout": open(so).read(), "stderr": open(se).read()}

    def prepare(self):
        subprocess.check_call(["cat", self.raw], stdout=subprocess.DEVNULL)
        shutil.rmtree(self.out, ignore_errors=True)
        subprocess.check_call(["sync"])

    def check(self, cname, clevel, array_dir, sample):
        a = self.a
        cmd = [a.py, os.path.join(HERE, "v3_check.py"), array_dir, self.raw,
               "--channels", str(a.channels), "--chunks", "%d,%d" % a.chunks,
               "--shards", "%d,%d" % a.shards, "--cname", cname, "--clevel", str(clevel)]
        r = subprocess.run(cmd + (["--sample"] if sample else []), capture_output=True, text=True)
        try:
            return json.loads(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"layout_ok": False, "data_ok": False,
                    "problems": ["v3_check.py failed: %s" % (r.stderr.strip()[-300:] or r.returncode)]}

    def run_one(self, label, codec, v, sample=False):
        """One timing of variant v; label names the input and codec in the table."""
        name, threads, argv, sub = v
        row = self.rows.setdefault((label, name), {
            "codec": label, "variant": name, "threads": threads, "runs": 0, "rss": 0,
            "bytes": os.path.getsize(self.raw)})
        if row.get("status"):
            return  # failed before: not repeated
        self.prepare()
        t = self.timed(argv, self.out)
        if t["rc"] != 0:
            reason = (t["stderr"].strip().splitlines() or ["exit status %d" % t["rc"]])[-1]
            row["status"] = "not available (%s)" % reason[:200]
            print("  %-14s %-8s %s" % (name, row["codec"], row["status"]), flush=True)
            return
        row["runs"] += 1
        row["rss"] = max(row["rss"], t["rss"])
        if "wall" not in row or t["wall"] < row["wall"]:
            row["wall"], row["cpu"] = t["wall"], t["cpu"]
        if t["stdout"].strip().startswith("{"):
            info = json.loads(t["stdout"].strip().splitlines()[-1])
            if "peer" in info:
                self.versions[info["peer"]] = info["version"]
                self.settings[info["peer"]] = info["settings"]
        if row["runs"] == 1:
            array_dir = os.path.join(self.out, sub) if sub else self.out
            row["stored"] = sum(os.path.getsize(os.path.join(d, f))
                                for d, _, fs in os.walk(array_dir) for f in fs)
            row.update(self.check(codec[0], codec[1], array_dir, sample or self.a.sample))
        print("  %-14s %-8s %7.2f s  %7.1f MiB  %s" % (
            name, row["codec"], t["wall"], t["rss"] / 1024,
            "ok" if row.get("layout_ok") and row.get("data_ok") else
            "CHECK FAILED: %s" % "; ".join(row.get("problems", []))), flush=True)

    def startup(self):
        """Each Python peer's interpreter start and imports, timed the same way."""
        out = {}
        for p in PEERS:
            best = None
            for _ in range(self.a.reps):
                t = self.timed([self.a.py, os.path.join(HERE, "v3_peers.py"), p, "--startup"], "")
                if t["rc"] == 0 and (best is None or t["wall"] < best):
                    best = t["wall"]
            out[p] = best
        return out

    def big(self):
        """nwbzarr -j THREADS (and the bare loop) on a longer input: peak RSS
        must not grow with it."""
        a = self.a
        os.remove(self.raw)
        subprocess.check_call([os.path.join(a.build, "bench", "gen_ephys"), self.raw,
                               str(a.big_seconds), str(a.channels)], stdout=subprocess.DEVNULL)
        codec = a.codecs[0]
        for v in self.variants(*codec):
            if v[0] in ("nwbzarr-j%d" % a.threads, "bare_shard-j%d" % a.threads):
                # checked on a sample: reading it all back would take minutes
                self.run_one("%s:%d, %d s" % (codec + (a.big_seconds,)), codec, v, sample=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", required=True)
    p.add_argument("--py", required=True, help="python of the bench venv (zarr, tensorstore, acquire-zarr)")
    p.add_argument("--work", required=True)
    p.add_argument("--out", required=True, help="writes PREFIX.csv and PREFIX.md")
    p.add_argument("--seconds", type=int, default=60)
    p.add_argument("--channels", type=int, default=384)
    p.add_argument("--chunks", type=pair, default=(30000, 64))
    p.add_argument("--shards", type=pair, default=(300000, 384))
    p.add_argument("--codecs", type=codec_list, default=[("lz4", 5), ("zstd", 3)])
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--big-seconds", type=int, default=0)
    p.add_argument("--sample", action="store_true", help="check a sample of chunks, not all")
    p.add_argument("--zstd-build", help="a build tree with another libzstd (-DNZ_ZSTD_ROOT): "
                   "its nwbzarr and bare_shard rows too, for the zstd codecs")
    a = p.parse_args()
    a.build, a.work = os.path.abspath(a.build), os.path.abspath(a.work)
    a.zstd_build = os.path.abspath(a.zstd_build) if a.zstd_build else None
    a.alt = " (zstd %s)" % libzstd(a.zstd_build) if a.zstd_build else ""
    os.makedirs(a.work, exist_ok=True)
    b = Bench(a)
    info = {"started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load_start": loadavg(), "machine": machine(a.work, a.build, a.zstd_build)}
    print("# load average at start: %s" % info["load_start"], flush=True)
    subprocess.check_call([os.path.join(a.build, "bench", "gen_ephys"), b.raw, str(a.seconds),
                           str(a.channels)], stdout=subprocess.DEVNULL)
    info["bytes"] = os.path.getsize(b.raw)
    for rep in range(a.reps):
        print("# round %d of %d" % (rep + 1, a.reps), flush=True)
        for codec in a.codecs:
            for v in b.variants(*codec):
                b.run_one("%s:%d" % codec, codec, v)
    info["startup"] = b.startup()
    if a.big_seconds:
        print("# %d s input: peak RSS" % a.big_seconds, flush=True)
        b.big()
    shutil.rmtree(b.out, ignore_errors=True)
    os.remove(b.raw)
    info["load_end"] = loadavg()
    # the peers' interpreter: this driver runs in the same venv
    info["versions"] = dict(b.versions, python=platform.python_version())
    info["settings"] = b.settings
    import v3_report
    v3_report.write(a, info, b.rows, a.out)
    print("# wrote %s.csv and %s.md" % (a.out, a.out))


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()

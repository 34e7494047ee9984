"""Plot bench_scaling.sh's CSV: write throughput (MB/s) against jobs, one
line per variant, the machine and load in the caption.

usage: plot_scaling.py SCALING.csv OUT.png [--peers V3.csv]
       plot_scaling.py SCALING.csv --markdown   (README.md's block: table, machine, load)
       plot_scaling.py SCALING.csv --update-readme README.md   (rewrite that block)

The CSV starts with '# ' comment lines (run, input, machine, load), then
variant,jobs,wall_s,mb_per_s,cpu_s. Needs matplotlib (Debian's
python3-matplotlib) only to plot.

--peers V3.csv overlays bench_v3.sh's results (its first codec): the Zarr v3
sharded writers, the peers as single points at their thread count, nwbzarr
and the bare loop as lines. Rows that did not run or failed their checks
are left out (the CSV says why). The Markdown block is not affected."""
import csv
import re
import sys

LABELS = {
    "bare_loop": "bare loop (read + blosc + one file per chunk: the machine's limit)",
    "nwbzarr": "nwbzarr engine (bench/nz_write_raw)",
    "convert": "nwbzarr convert (whole NWB file, incl. final sync)",
    "zarr-python": "zarr-python 2.13 (BLOSC_NTHREADS = jobs)",
}
ORDER = ["bare_loop", "nwbzarr", "convert", "zarr-python"]


def load(path):
    comments, rows = [], []
    with open(path) as f:
        lines = [ln for ln in f if ln.strip()]
    comments = [ln[2:].strip() for ln in lines if ln.startswith("# ")]
    for r in csv.DictReader(ln for ln in lines if not ln.startswith("#")):
        rows.append({"variant": r["variant"], "jobs": int(r["jobs"]),
                     "wall_s": float(r["wall_s"]), "mb_per_s": float(r["mb_per_s"]),
                     "cpu_s": float(r["cpu_s"])})
    if not rows:
        raise SystemExit("%s: no data rows" % path)
    return comments, rows


def variants(rows):
    seen = {r["variant"] for r in rows}
    return [v for v in ORDER if v in seen] + sorted(seen - set(ORDER))


def markdown(rows):
    jobs = sorted({r["jobs"] for r in rows})
    by = {(r["variant"], r["jobs"]): r for r in rows}
    out = ["| variant | " + " | ".join("-j %d MB/s" % j for j in jobs) + " |",
           "|---|" + "---:|" * len(jobs)]
    for v in variants(rows):
        cells = ["%.0f" % by[v, j]["mb_per_s"] if (v, j) in by else "-" for j in jobs]
        out.append("| %s | %s |" % (v, " | ".join(cells)))
    return "\n".join(out)


BEGIN = "<!-- scaling table:"
END = "<!-- end of scaling table -->"


def readme_block(comments, rows):
    """The table, then the machine, input and load of the run (from the
    CSV's comments), with a warning when the machine was busy."""
    info = dict(c.split(": ", 1) for c in comments if ": " in c)
    lines = [markdown(rows), ""]
    if "machine" in info:
        lines.append("Machine: %s." % info["machine"])
    if "input" in info:
        inp = re.sub(r", chunks .*(best of \d+)$", r", \1", info["input"])
        lines.append("Input: %s." % inp)
    load = info.get("load average", "")
    lines.append("Load average %s." % load)
    m = re.match(r"machine: (\d+) cores", "machine: " + info.get("machine", ""))
    # The load at the start tells whether other work shared the machine; the
    # load at the end is mostly the benchmark's own.
    loads = [float(x) for x in re.findall(r"[0-9.]+(?= at)", load)]
    if m and loads and loads[0] > 0.5 * int(m.group(1)):
        lines.append("**The machine was busy with other work during this run: differences under "
                     "about 1.5x are noise; rerun on a quiet machine before quoting them.**")
    return "\n".join(lines)


def update_readme(path, block):
    with open(path) as f:
        text = f.read()
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < b:
        raise SystemExit("%s: no '%s ... %s' block" % (path, BEGIN, END))
    b = text.index("\n", b) + 1
    with open(path, "w") as f:
        f.write(text[:b] + block + "\n" + text[e:])


PEER_STYLE = {"zarr-python": "s", "tensorstore": "^", "acquire-zarr": "D"}


def load_peers(path):
    """bench_v3.sh's CSV: (caption line, [(label, style, [(jobs, MB/s)])])."""
    with open(path) as f:
        lines = [ln for ln in f if ln.strip()]
    comments = [ln[2:].strip() for ln in lines if ln.startswith("# ")]
    rows = [r for r in csv.DictReader(ln for ln in lines if not ln.startswith("#"))]
    if not rows:
        raise SystemExit("%s: no data rows" % path)
    codec = rows[0]["codec"]
    versions = dict(v.split(" ", 1) for c in comments if c.startswith("versions: ")
                    for v in c[len("versions: "):].split(", ") if " " in v)
    series = {}
    for r in rows:
        if r["codec"] != codec or r["status"] != "ok":
            continue
        base = r["variant"].rsplit("-j", 1)[0]
        series.setdefault(base, []).append((int(r["threads"]), float(r["mb_per_s"])))
    out = []
    for base, pts in series.items():
        if base in PEER_STYLE:
            label = "%s %s, v3 sharded (%s threads)" % (base, versions.get(base, ""),
                                                         pts[0][0])
            out.append((label, PEER_STYLE[base], sorted(pts)))
        else:
            out.append(("%s, v3 sharded" % base, "-." if base == "bare_shard" else "-",
                        sorted(pts)))
    run = comments[0].split(", ", 1)[-1] if comments else ""
    machine = next((c for c in comments if c.startswith("machine: ")), "")
    caption = "v3 points: %s, %s, run of %s, %s" % (path.rsplit("/", 1)[-1], codec, run, machine)
    return caption, out


def plot(comments, rows, png, peers=None):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5.6) if not peers else (12.5, 5.6))
    for v in variants(rows):
        pts = sorted((r["jobs"], r["mb_per_s"]) for r in rows if r["variant"] == v)
        style = "--" if v == "bare_loop" else "-"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, marker="o", label=LABELS.get(v, v))
    if peers:
        for label, style, pts in peers[1]:
            xs, ys = [p[0] for p in pts], [p[1] for p in pts]
            if style in PEER_STYLE.values():
                ax.plot(xs, ys, linestyle="none", marker=style, markersize=8, label=label)
            else:
                ax.plot(xs, ys, style, marker="x", label=label)
        comments = comments + [peers[0]]
    jobs = sorted({r["jobs"] for r in rows})
    machine = next((c for c in comments if c.startswith("machine:")), "")
    m = re.match(r"machine: (\d+) cores", machine)
    if m:  # past the core count, more jobs cannot add throughput
        ax.axvline(int(m.group(1)), color="grey", linestyle=":", linewidth=1)
        ax.annotate("%s cores" % m.group(1), (int(m.group(1)), 0), xytext=(4, 4),
                    textcoords="offset points", fontsize=8, color="grey")
    ax.set_xticks(jobs)
    ax.set_xlabel("jobs (-j)")
    ax.set_ylabel("write throughput, MB/s of raw samples")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    if peers:  # more series than fit over the lines: the legend goes beside the axes
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    else:
        ax.legend(fontsize=8, loc="upper left")
    title = next((c for c in comments if c.startswith("input:")), "")
    ax.set_title("NWB-Zarr write throughput vs jobs\n" + title.replace("input: ", ""), fontsize=9)
    caption = "\n".join(c for c in comments if not c.startswith("input:"))
    fig.text(0.01, 0.01, caption, fontsize=7, va="bottom", ha="left", family="monospace")
    fig.subplots_adjust(bottom=0.2, top=0.88, right=0.66 if peers else 0.9)
    fig.savefig(png, dpi=100)


def main():
    if len(sys.argv) == 4 and sys.argv[2] == "--update-readme":
        update_readme(sys.argv[3], readme_block(*load(sys.argv[1])))
        return
    peers = None
    if len(sys.argv) == 5 and sys.argv[3] == "--peers":
        peers = load_peers(sys.argv[4])
    elif len(sys.argv) != 3:
        raise SystemExit(__doc__)
    comments, rows = load(sys.argv[1])
    if sys.argv[2] == "--markdown" and not peers:
        print(readme_block(comments, rows))
    else:
        plot(comments, rows, sys.argv[2], peers)


if __name__ == "__main__":
    main()

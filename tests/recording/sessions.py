"""Whole sessions from the real metadata of tests/data/recordings: each
case's streams get generated int16 data files, `nwbzarr convert SESSION`
writes one NWB file, and pynwb 4.2 + hdmf-zarr read it back: series names
(neuroconv's), shapes, rates, starting times, volts per count (conversion
or channel_conversion), the electrodes table (one row per electrode shared
by AP and LF, groups per shank, rel_x/rel_y from the probe geometry), sync
and NIDQ TimeSeries, and the data column by column. nwbinspector 0.7.2 on
every output converted with the flags a user gives for DANDI (USER_FLAGS and
--location CA1): no CRITICAL and no BEST_PRACTICE_VIOLATION; without
--location, only check_electrodes_location_allen_ccf, and a note says so."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import warnings

import numpy as np

cli, ref = os.environ["NZ_CLI"], pathlib.Path(os.environ["NZ_REF"]) / "recordings"
tmp = pathlib.Path(os.environ["NZ_TMP"]) / "rec_sessions"
shutil.rmtree(tmp, ignore_errors=True)
tmp.mkdir(parents=True)

try:
    from hdmf_zarr import NWBZarrIO as IO
except ImportError:  # pragma: no cover
    from hdmf_zarr import NWBZarrV2IO as IO
from hdmf_zarr import NWBZarrV2IO
from nwbinspector import Importance, inspect_nwbfile_object


def frames_for(rate, cols):
    # ~10 ms, and more frames than channels (nwbinspector checks orientation)
    return max(int(rate // 100), 2 * cols + 1)


def pattern(frames, cols, seed):
    f = np.arange(frames, dtype=np.int64)[:, None]
    c = np.arange(cols, dtype=np.int64)[None, :]
    return ((f * 7 + c * 13 + seed * 101) % 2001 - 1000).astype("<i2")


def meta_value(text, key):
    m = re.search(r"^" + re.escape(key) + r"=(.*?)\s*$", text, re.M)
    return m.group(1) if m else None


def sglx_case(name, files, probes=1, seconds=None):
    """files: [(source .meta, name in the run)]; writes <run>/<name>.meta+.bin
    (seconds: of data, instead of frames_for's)."""
    run = tmp / name
    run.mkdir()
    data = {}
    for i, (src, dst) in enumerate(files):
        text = (ref / "spikeglx" / src).read_bytes()
        (run / dst).write_bytes(text)
        t = text.decode("latin-1")
        cols = int(meta_value(t, "nSavedChans"))
        rate = float(meta_value(t, "imSampRate") or meta_value(t, "niSampRate"))
        x = pattern(int(rate * seconds) if seconds else frames_for(rate, cols), cols, i)
        x.tofile(run / dst.replace(".meta", ".bin"))
        data[dst.split(".", 1)[1].rsplit(".meta", 1)[0]] = (x, t, rate)
    return run, data


# The flags a user converting for DANDI gives (docs/recordings.md).
USER_FLAGS = ["--subject-id", "m1", "--species", "Mus musculus", "--sex", "M", "--age", "P90D",
              "--experimenter", "Doe, Jane", "--institution", "Test U", "--lab", "ephys"]


def convert(session, out, extra=(), location=("--location", "CA1"), quiet=True):
    cmd = [cli, "convert", str(session), "-o", str(out), *(["-q"] if quiet else []), *USER_FLAGS,
           *location, *extra]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, f"{cmd}: {r.returncode} {r.stderr}"
    return r


def open_nwb(out):
    for cls in (IO, NWBZarrV2IO):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                io = cls(str(out), "r")
                return io, io.read()
        except Exception as e:  # the other layout
            last = e
    raise last


def inspect(nwb, out):
    bad = [m for m in inspect_nwbfile_object(nwb)
           if m.importance in (Importance.CRITICAL, Importance.BEST_PRACTICE_VIOLATION)]
    assert not bad, f"{out}: nwbinspector: " + "; ".join(f"{m.check_function_name}: {m.message}" for m in bad)


def volts(es):
    d = es.data[:].astype(np.float64) * es.conversion
    if es.channel_conversion is not None:
        d = d * np.asarray(es.channel_conversion[:], dtype=np.float64)[None, :]
    return d


def check_es(es, x, neural_cols, rate, vpc, start=0.0):
    assert es.data.shape == (x.shape[0], len(neural_cols)), (es.name, es.data.shape)
    assert np.array_equal(es.data[:], x[:, neural_cols]), f"{es.name}: data differ"
    assert abs(es.rate - rate) < 1e-9 * rate, (es.name, es.rate, rate)
    assert abs(es.starting_time - start) < 1e-9, (es.name, es.starting_time, start)
    got = volts(es)
    want = x[:, neural_cols].astype(np.float64) * np.asarray(vpc)[None, :]
    assert np.allclose(got, want, rtol=1e-6, atol=0), f"{es.name}: volts differ"


def first_times(d):
    """starting_time of each stream: firstSample / rate, the earliest at 0."""
    ft = {k: float(meta_value(t, "firstSample") or 0) / r for k, (x, t, r) in d.items()}
    t0 = min(ft.values())
    return {k: v - t0 for k, v in ft.items()}


def sglx_vpc(text, band, n):
    rng = float(meta_value(text, "imAiRangeMax"))
    maxint = float(meta_value(text, "imMaxInt") or 512)
    imro = meta_value(text, "~imroTbl")
    entries = re.findall(r"\(([\d ]+)\)", imro)
    hdr = imro[1:imro.index(")")].split(",")
    vals = [list(map(int, e.split())) for e in entries]
    gains = []
    for ch in range(n):
        if hdr[0] == "1110":
            g = float(hdr[4 if band == "lf" else 3])
        elif len(vals[0]) >= 5 and meta_value(text, "imDatPrb_type") in (None, "0"):
            g = vals[ch][4 if band == "lf" else 3]
        else:
            g = float(meta_value(text, "imChan0apGain") or 80)
        gains.append(rng / maxint / g)
    return gains


# --- SpikeGLX: one NP1.0 probe, AP + LF + NIDQ (one real session) -----------
run, d = sglx_case("np1_session", [
    ("sample3B_g0_t0.imec1.ap.meta", "s_g0_t0.imec0.ap.meta"),
    ("sample3B_g0_t0.imec1.lf.meta", "s_g0_t0.imec0.lf.meta"),
    ("sample3B_g0_t0.nidq.meta", "s_g0_t0.nidq.meta")])
out = tmp / "np1_session.nwb.zarr"
convert(run, out)
io, nwb = open_nwb(out)
acq = nwb.acquisition
assert set(acq) == {"ElectricalSeriesAP", "ElectricalSeriesLF", "TimeSeriesImec0Sync",
                    "TimeSeriesNIDQ", "TimeSeriesNIDQDigital"}, sorted(acq)
st = first_times(d)
x, t, rate = d["imec0.ap"]
check_es(acq["ElectricalSeriesAP"], x, list(range(384)), rate, sglx_vpc(t, "ap", 384),
         st["imec0.ap"])
x, t, rate = d["imec0.lf"]
check_es(acq["ElectricalSeriesLF"], x, list(range(384)), rate, sglx_vpc(t, "lf", 384),
         st["imec0.lf"])
el = nwb.electrodes
assert len(el) == 384, len(el)
assert el["channel_name"][0] == "AP0,LF0" and el["group_name"][0] == "NeuropixelsImec0"
assert list(el["rel_x"][:4]) == [27, 59, 11, 43] and list(el["rel_y"][:4]) == [0, 0, 20, 20]
assert np.array_equal(acq["ElectricalSeriesAP"].electrodes.data[:], np.arange(384))
assert np.array_equal(acq["ElectricalSeriesLF"].electrodes.data[:], np.arange(384))
sy = acq["TimeSeriesImec0Sync"]
assert np.array_equal(sy.data[:], d["imec0.ap"][0][:, [384]]) or np.array_equal(sy.data[:], d["imec0.ap"][0][:, 384])
xn, tn, rn = d["nidq"]
ni = acq["TimeSeriesNIDQ"]
assert ni.unit == "volts" and abs(ni.conversion - 5 / 32768) < 1e-15 and abs(ni.rate - rn) < 1e-9
assert np.array_equal(np.asarray(ni.data[:]).reshape(-1), xn[:, 0])
assert np.array_equal(np.asarray(acq["TimeSeriesNIDQDigital"].data[:]).reshape(-1), xn[:, 1])
assert nwb.session_start_time.isoformat().startswith(meta_value(d["imec0.ap"][1], "fileCreateTime"))
assert nwb.subject.subject_id == "m1"
inspect(nwb, out)
io.close()

# Without --location: 'unknown' (neuroconv's default), a note naming the
# flag, and for a mouse exactly one nwbinspector finding, the Allen CCF check
out = tmp / "np1_noloc.nwb.zarr"
r = convert(run, out, location=(), quiet=False)
assert "--location" in r.stderr and "Allen CCF" in r.stderr, r.stderr
io, nwb = open_nwb(out)
assert set(nwb.electrodes["location"][:]) == {"unknown"}
bad = {m.check_function_name for m in inspect_nwbfile_object(nwb)
       if m.importance in (Importance.CRITICAL, Importance.BEST_PRACTICE_VIOLATION)}
assert bad == {"check_electrodes_location_allen_ccf"}, bad
io.close()

# --streams: only the AP band; naming a file of the run finds the same run
out = tmp / "np1_ap.nwb.zarr"
convert(run / "s_g0_t0.imec0.lf.meta", out, ["--streams", "imec0.ap"])
io, nwb = open_nwb(out)
assert set(nwb.acquisition) == {"ElectricalSeriesAP", "TimeSeriesImec0Sync"}, sorted(nwb.acquisition)
assert nwb.electrodes["channel_name"][0] == "AP0"
io.close()

# only the LF band: its sync channel, from the LF file's shared read
out = tmp / "np1_lf.nwb.zarr"
convert(run, out, ["--streams", "imec0.lf"])
io, nwb = open_nwb(out)
assert set(nwb.acquisition) == {"ElectricalSeriesLF", "TimeSeriesImec0Sync"}, sorted(nwb.acquisition)
assert np.array_equal(np.asarray(nwb.acquisition["TimeSeriesImec0Sync"].data[:]).reshape(-1),
                      d["imec0.lf"][0][:, 384])
assert np.array_equal(nwb.acquisition["ElectricalSeriesLF"].data[:], d["imec0.lf"][0][:, :384])
io.close()

# --- one parallel write of every stream: -j 1 and -j 3 give the same bytes
# (0.25 s: 6 MB, past the engine's 1 MiB inline limit, so threads run) ------
run, d = sglx_case("np1_jobs", [
    ("sample3B_g0_t0.imec1.ap.meta", "j_g0_t0.imec0.ap.meta"),
    ("sample3B_g0_t0.imec1.lf.meta", "j_g0_t0.imec0.lf.meta"),
    ("sample3B_g0_t0.nidq.meta", "j_g0_t0.nidq.meta")], seconds=0.25)
outs = []
for j in (1, 3):
    outs.append(tmp / f"np1_j{j}.nwb.zarr")
    r = subprocess.run([cli, "convert", str(run), "-o", str(outs[-1]), "--json", "-j", str(j),
                        "--seed", "11", "--create-date", "2024-01-01T00:00:00Z"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["jobs"] == j, r.stdout  # one write: all its workers
files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
assert len(files) > 20 and files == sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
for f in files:
    assert (outs[0] / f).read_bytes() == (outs[1] / f).read_bytes(), f
io, nwb = open_nwb(outs[1])
x, t, rate = d["imec0.ap"]
check_es(nwb.acquisition["ElectricalSeriesAP"], x, list(range(384)), rate, sglx_vpc(t, "ap", 384),
         first_times(d)["imec0.ap"])
io.close()

# --- SpikeGLX: two probes (NP2.0 four-shank + NP1.0 subset) ----------------
run, d = sglx_case("two_probes", [
    ("NP2_4_shanks_save_different_electrodes.imec0.ap.meta", "t_g0_t0.imec0.ap.meta"),
    ("NP1_saved_only_subset_of_channels.meta", "t_g0_t0.imec1.ap.meta")])
out = tmp / "two_probes.nwb.zarr"
convert(run, out)
io, nwb = open_nwb(out)
acq = nwb.acquisition
assert set(acq) == {"ElectricalSeriesAPImec0", "ElectricalSeriesAPImec1", "TimeSeriesImec0Sync",
                    "TimeSeriesImec1Sync"}, sorted(acq)
st = first_times(d)
x, t, rate = d["imec0.ap"]
check_es(acq["ElectricalSeriesAPImec0"], x, list(range(384)), rate, sglx_vpc(t, "ap", 384),
         st["imec0.ap"])
x, t, rate = d["imec1.ap"]
chans = [int(m) for m in re.findall(r"\(AP(\d+);", meta_value(t, "~snsChanMap"))]
assert len(chans) == 151
es = acq["ElectricalSeriesAPImec1"]
check_es(es, x, list(range(151)), rate, [sglx_vpc(t, "ap", 384)[c] for c in chans],
         st["imec1.ap"])
el = nwb.electrodes
assert len(el) == 384 + 151
groups = set(el["group_name"][:])
assert {g for g in groups if g.startswith("NeuropixelsImec0Shank")} and "NeuropixelsImec1" in groups, groups
# imroTbl (0 3 1 0 576): shank 3, electrode 576 -> x = 3*250 + 27, y = 288*15
imro = meta_value(d["imec0.ap"][1], "~imroTbl")
e0 = list(map(int, re.findall(r"\(([\d ]+)\)", imro)[0].split()))
assert el["shank_ids"][0] == str(e0[1]) and el["rel_x"][0] == e0[1] * 250 + (59 if e0[4] % 2 else 27)
assert el["rel_y"][0] == (e0[4] // 2) * 15 and el["electrode_name"][0] == f"s{e0[1]}e{e0[4]}"
assert np.array_equal(es.electrodes.data[:], np.arange(384, 384 + 151))
inspect(nwb, out)
io.close()

# --- SpikeGLX: every other real .meta as a one-probe run --------------------
for k, (src, band) in enumerate([("phase3a.imec.ap.meta", "ap"), ("sample3A_g0_t0.imec.lf.meta", "lf"),
                  ("Noise_g0_t0.imec0.ap.meta", "ap"), ("sample3B_version202304.ap.meta", "ap"),
                  ("p2_g0_t0.imec0.ap.meta", "ap"), ("NP2_4_shanks.imec0.ap.meta", "ap"),
                  ("sampleNP2.4_4shanks_while_acquiring_incomplete.ap.meta", "ap"),
                  ("NP2_2013_all_channels.imec0.ap.meta", "ap"),
                  ("NP2_2013_subset_channels.imec0.ap.meta", "ap"),
                  ("sampleNP2.4_4shanks_appVersion20230905.ap.meta", "ap"),
                  ("NP2020_sample_g0_t0.imec0.ap.meta", "ap"),
                  ("NP1110_bank0_g0_t0.imec0.ap.meta", "ap")]):
    tag = f"{k}_{src.split('.')[0]}"
    name = f"r_g0_t0.imec0.{band}.meta"
    run, d = sglx_case("one_" + tag, [(src, name)])
    out = tmp / f"one_{tag}.nwb.zarr"
    convert(run / name, out)
    io, nwb = open_nwb(out)
    x, t, rate = d[f"imec0.{band}"]
    names = re.findall(r"\((\w\w)(\d+);", meta_value(t, "~snsChanMap"))
    neural = [i for i, (k, _) in enumerate(names) if k in ("AP", "LF")]
    sync = [i for i, (k, _) in enumerate(names) if k == "SY"]
    es = nwb.acquisition[f"ElectricalSeries{band.upper()}"]
    vpc_all = sglx_vpc(t, band, 1 + max(int(names[i][1]) for i in neural))
    check_es(es, x, neural, rate, [vpc_all[int(names[i][1])] for i in neural])
    sy = nwb.acquisition["TimeSeriesImec0Sync"]
    assert np.array_equal(np.asarray(sy.data[:]).reshape(x.shape[0], -1), x[:, sync])
    el = nwb.electrodes
    assert len(el) == len(neural)
    assert not np.isnan(np.asarray(el["rel_x"][:], dtype=float)).any()
    geo = meta_value(t, "~snsGeomMap")
    if geo:  # SpikeGLX's own positions, shank pitch added
        hdr = geo[1:geo.index(")")].split(",")
        ents = [e.split(":") for e in re.findall(r"\(([\d.:]+)\)", geo)]
        want_x = [float(e[1]) + int(e[0]) * float(hdr[2]) for e in ents]
        assert np.allclose(el["rel_x"][:], want_x) and np.allclose(el["rel_y"][:], [float(e[2]) for e in ents])
    inspect(nwb, out)
    io.close()

# --- Open Ephys: every real structure.oebin ---------------------------------
def oe_case(case):
    src = ref / "openephys" / case
    dst = tmp / ("oe_" + case)
    shutil.copytree(src, dst)
    data = {}
    import json
    for oebin in sorted(dst.rglob("structure.oebin")):
        doc = json.loads(oebin.read_text())
        for i, st in enumerate(doc["continuous"]):
            folder = oebin.parent / "continuous" / st["folder_name"]
            folder.mkdir(parents=True, exist_ok=True)
            x = pattern(frames_for(st["sample_rate"], st["num_channels"]), st["num_channels"], i)
            x.tofile(folder / "continuous.dat")
            data[(oebin.parents[2].name, st.get("stream_name"))] = (x, st)
    return dst, data


for case, expect in [
        ("probeinterface-OE_Neuropix-PXI-NP1-binary", {"ElectricalSeriesProbeA"}),
        ("probeinterface-OE_Neuropix-PXI-NP2-multishank-binary",
         {"ElectricalSeriesProbeA", "TimeSeriesProbeASync"}),
        ("probeinterface-OE_OneBox-NP2014-binary",
         {"ElectricalSeriesProbeA", "TimeSeriesProbeASync", "TimeSeriesOneBoxADC"}),
        ("open-ephys-python-tools-v0.6.7_Binary",
         {"ElectricalSeriesexample_dataRecordNode101", "ElectricalSeriesexample_dataRecordNode105"})]:
    session, data = oe_case(case)
    out = tmp / f"{case}.nwb.zarr"
    convert(session, out)
    io, nwb = open_nwb(out)
    assert set(nwb.acquisition) == expect, (case, sorted(nwb.acquisition))
    rows = 0
    for (node, sname), (x, st) in data.items():
        neural = [i for i, c in enumerate(st["channels"]) if "SYNC" not in c["channel_name"]]
        scale = 1.0 if "ADC" in sname else 1e-6
        vpc = [st["channels"][i]["bit_volts"] * scale for i in neural]
        if "ADC" in sname:
            ts = nwb.acquisition["TimeSeriesOneBoxADC"]
            assert np.array_equal(ts.data[:], x) and abs(ts.conversion - vpc[0]) < 1e-15
            continue
        es = [s for n, s in nwb.acquisition.items() if n.startswith("ElectricalSeries") and
              (len(data) == 1 or "ADC" in "".join(k[1] for k in data) or node.replace(" ", "") in n)][0]
        check_es(es, x, neural, st["sample_rate"], vpc)
        rows += len(neural)
    assert len(nwb.electrodes) == rows
    assert nwb.session_start_time.tzinfo is not None
    inspect(nwb, out)
    io.close()
print("ok")

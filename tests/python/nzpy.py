"""Helpers shared by the Python package's tests."""

import datetime
import os
import shutil
import sys

import numpy as np
from pynwb import NWBFile, TimeSeries

START = datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
FAILED = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        FAILED.append(what)


def recording(frames=120_000, channels=64, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.normal(0, 200, (frames, channels)).cumsum(axis=0) % 3000).astype(np.int16)


def nwbfile(data, name="ts"):
    f = NWBFile(session_description="nwbzarr test", identifier="nwbzarr-test", session_start_time=START,
                file_create_date=[START])
    f.add_acquisition(TimeSeries(name=name, data=data, unit="uV", rate=30000.0))
    return f


def scratch(name):
    """A fresh folder under NZ_TMP; returns a function naming files in it."""
    root = os.path.join(os.environ["NZ_TMP"], name)
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    return lambda fn: os.path.join(root, fn)


def finish():
    print(f"{len(FAILED)} failed" if FAILED else "all checks passed")
    sys.exit(1 if FAILED else 0)

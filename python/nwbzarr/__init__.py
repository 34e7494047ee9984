"""nwbzarr: NWB files in Zarr, written in parallel by a C engine.

``from nwbzarr import NWBZarrIO`` is a drop-in for hdmf-zarr 0.14's
NWBZarrIO whose ``write(nwbfile, number_of_jobs=N)`` and ``export(src_io,
number_of_jobs=N)`` fill every large dataset on N threads. The commands of
the ``nwbzarr`` program are functions here too: convert, export, verify,
info, upgrade. See docs/python.md.
"""

from . import _nwbzarr
from ._cli import convert, export, info, upgrade, verify
from ._io import NWBZarrIO
from ._lib import NWBZarrError

__version__ = _nwbzarr.version
#: the compression libraries the extension runs with (nz_codec_versions())
libraries = _nwbzarr.libraries

EINVAL = _nwbzarr.EINVAL
ECANCELED = _nwbzarr.ECANCELED
EINCOMPLETE = _nwbzarr.EINCOMPLETE
EUNSUPPORTED = _nwbzarr.EUNSUPPORTED
INCOMPLETE_MARKER = _nwbzarr.INCOMPLETE_MARKER

__all__ = ["NWBZarrIO", "NWBZarrError", "convert", "export", "info", "upgrade", "verify"]

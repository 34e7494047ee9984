"""The C extension, its exception type and the job-count rule shared by the package."""

import os

from . import _nwbzarr

#: Raised for every failure of the C library: ``code`` is the library's
#: negative nz_error_code (``nwbzarr.EINVAL`` ...), ``message`` its message,
#: which names the file or object and the problem.
NWBZarrError = _nwbzarr.Error
NWBZarrError.code = property(lambda self: self.args[0])
NWBZarrError.message = property(lambda self: self.args[1])
NWBZarrError.__str__ = lambda self: str(self.args[1]) if len(self.args) > 1 else str(self.args[0])
NWBZarrError.__module__ = "nwbzarr"
NWBZarrError.__qualname__ = NWBZarrError.__name__ = "NWBZarrError"


def resolve_jobs(number_of_jobs):
    """hdmf-zarr's number_of_jobs (1 = serial) as threads, joblib-style for
    negative values: -1 every core this process may use, -2 all but one, ..."""
    if isinstance(number_of_jobs, bool) or not isinstance(number_of_jobs, int):
        raise TypeError(f"number_of_jobs must be an int, not {type(number_of_jobs).__name__}")
    if number_of_jobs == 0:
        raise ValueError("number_of_jobs must be >= 1, or negative to count back from all cores (-1)")
    if number_of_jobs < 0:
        return max(1, _nwbzarr.ncores() + 1 + number_of_jobs)
    return number_of_jobs


def cli_path():
    """The nwbzarr program installed inside the package (or $NZ_CLI)."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nwbzarr")
    if os.access(here, os.X_OK):
        return here
    env = os.environ.get("NZ_CLI")
    if env and os.access(env, os.X_OK):
        return env
    raise FileNotFoundError(f"the nwbzarr program is not installed beside the package ({here})")

"""schedlab: Batsim-compatible HPC job schedulers and a Batsim-faithful embedded engine."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("schedlab")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+source"

__all__ = ["__version__"]

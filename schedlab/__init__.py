"""schedlab: Batsim-compatible HPC job schedulers and a Batsim-faithful embedded engine."""

#: The package version (pyproject.toml reads it from here; a constant keeps start-up free of
#: importlib.metadata, which `schedlab simulate` would otherwise load first).
__version__ = "0.1.0"

__all__ = ["__version__"]

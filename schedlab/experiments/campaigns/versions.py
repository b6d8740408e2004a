"""The library versions a study's figures may depend on, as the installed distributions say
(nothing is imported): recorded with every run, factory and study (docs/design.md, "Library
versions", says which were measured to matter)."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    """The versions a run's figures may depend on (the libraries of the learning schedulers too),
    read from the installed distributions (nothing imported)."""
    import platform
    from importlib import metadata

    def version(*names: str) -> str:
        for name in names:  # xgboost's CPU-only wheel is another distribution
            try:
                return metadata.version(name)
            except metadata.PackageNotFoundError:
                continue
        return "absent"

    return {"python": platform.python_version(), "numpy": version("numpy"), "pandas": version("pandas"),
            "scikit-learn": version("scikit-learn"), "xgboost": version("xgboost", "xgboost-cpu")}

"""pybatsim entry files (see adapter.py)."""

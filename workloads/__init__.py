"""schedlab.workloads (see docs/design.md)."""

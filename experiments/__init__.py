"""schedlab.experiments (see docs/design.md)."""

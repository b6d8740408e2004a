"""schedlab.platforms (see docs/design.md)."""

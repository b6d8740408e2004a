"""schedlab.predictors (see docs/design.md)."""

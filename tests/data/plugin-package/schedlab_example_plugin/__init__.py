"""An example schedlab scheduler plugin (test fixture)."""

"""Comparisons with papers: a campaign's `[compare]` and `[[claims]]`, the paper rows, measured
causes, committed evidence, and the table of record (`schedlab reproductions`)."""

"""The campaign framework: campaign files, their expansion into runs, the runners (a process pool,
Dask), study files read with line numbers, the study kinds' registry, and the campaign report."""

"""What several test modules share: data paths and small workloads (`data`), schedule invariants
(`invariants`), real Batsim runs (`real_batsim`), shared workloads and files (`workloads`), the
command line in-process (`cli`), schedulers made to fail (`schedulers`). Test modules import from
here, never from one another or from conftest.py (which holds fixtures and Hypothesis profiles)."""

"""The optional passes that run after the timing, only when asked, each leaving the run's counts
as a run without it reports: `kernels_profile.py` (the profiler over the timed call, kernels
joined to snippet lines) and `guard_what_if.py` (recompiles under torch's guard filter and
tries skipping guard evaluation).
"""

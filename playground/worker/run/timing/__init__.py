"""How long each side takes, and whether to believe it.

`steady_state.py` alternates eager and compiled blocks until the figures settle, `machine.py`
reads what other processes took of our CPUs meanwhile, `timing.py` turns both into the report's
`Timings` and says when a speedup is not to be believed, and `guard_cost.py` times the timed
call's guard checks on their own.
"""

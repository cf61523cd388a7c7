"""The compiler bisector's own process (`python -m playground.worker.run.bisection.bisect`):
`bisect.py` is the driver (its command line, its channel, its signals), `rechecks.py` judges the
first verdict again before any step and the culprit's configurations after, `search.py` runs
torch's bisector with a fresh process's verdict as its test, `forks.py` holds those fresh
processes, `verdict.py` one step's verdict, `culprit.py` what the culprit names (its workaround,
its op's line), `bisect_snippet.py` loads the snippet as a module the way a run does and holds
the rule on one leaf, and `diverging.py` finds the first intermediate value where compiled and
eager part.
"""

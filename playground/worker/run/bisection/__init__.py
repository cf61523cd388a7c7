"""The compiler bisector's own process (`python -m playground.worker.run.bisection.bisect`):
`bisect.py` forks and judges each step with our verdict, `bisect_snippet.py` loads the snippet
as a module the way a run does and holds the rule on one leaf, and `diverging.py` finds the first
intermediate value where compiled and eager part.
"""

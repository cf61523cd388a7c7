"""One run in the child, in rooms by the question a reader has.

`spine/` is the run itself: the request, its context, loading the snippet, making the calls and
the experiment that orders the phases; `compare/` says whether eager and compiled agree (value by
value, tensors, gradients, the eager reference process); `timing/` measures both sides and says
when to believe it; `passes/` are the optional passes after the timing; `programs/` runs a whole
program instead of a snippet; `bisection/` is the compiler bisector's process; `ranks.py` joins the
ranks' process group. The rooms import each other only as `pyproject.toml`'s contracts allow.
"""

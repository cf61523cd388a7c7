"""The torch side: the worker process and everything it runs.

Only this package imports torch. `python -m playground.worker` starts the template process
(`main`), which forks one child per run; the child runs the experiment (`experiment`), a
sequence of phases: load the snippet (`loading`), compile and run its calls (`calls`), read
torch's own diagnostics (`capture`, with `call_entries` and `compile_phases`; `diagnostics`, with every private torch name in `compat`),
compare eager with compiled (`checking`, `equivalence`, `gradients`) and time both (`timed`). Nothing outside this package imports
it: the client starts it by module name and talks to it over a pipe (import-linter checks).
"""

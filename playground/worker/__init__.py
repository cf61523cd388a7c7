"""The torch side: the worker process and everything it runs.

Only this package imports torch. `python -m playground.worker` starts the template process
(`main`), which forks one child per run; the child runs the snippet (`runner`), captures
torch's own diagnostics (`capture`, with every private torch name in `compat`), compares eager
with compiled (`equivalence`) and times both (`timing`). Nothing outside this package imports
it: the client starts it by module name and talks to it over a pipe (import-linter checks).
"""

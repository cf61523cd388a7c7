"""The torch side: the worker process and everything it runs.

Only this package imports torch. `python -m playground.worker` starts the template process
(`main`); every private torch name lives in `compat`. The folders hold one kind of thing each:

- `process/`: the processes and what keeps them safe to fork: the template and its request loop,
  the run's child, the spare child forked ahead, re-exec, memory, the host's limits, stragglers,
  the snippet's output, the channel to the client.
- `run/`: one run, a sequence of phases that each return a value: load the snippet (`loading`),
  compile and run its calls (`calls`), compare eager with compiled (`equivalence`, with
  `comparison` and `gradients`), time both (`timing`, with `steady_state`).
- `capture/`: torch's own records of a run (`records`), and what is read from them: the
  diagnostics, the cache entry of each call, the compile time per phase.
- `dynamo_code/`: the code Dynamo wrote, collected under depyf in a second child.

Nothing outside this package imports it: the client starts it by module name and talks to it
over a pipe (import-linter checks).
"""

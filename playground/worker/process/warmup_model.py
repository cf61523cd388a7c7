"""A small model for Dynamo to trace in the template, once, between a session's first run and
its next: what a real model's first trace otherwise pays again in every run's child and findings
lane. Worker-side.

Every run's child and findings lane is a fork of a template that never traced a model: Dynamo's
tracer then runs for the first time in that process through the code paths a model takes
(modules and their hooks, a ModuleList walked in a loop, keyword arguments, dict outputs,
attention, a loss, a recompile on a new batch size), which Python specializes as it first runs
them, and FakeTensor and each operator fill their dispatch caches as they first meet an op. A
fork of a template that traced this model inherits all of it (the small Llama's first trace in
a fork: median 0.93 s -> 0.81 s, 0.55-0.59 s warm; docs/performance.md. Whole saves through the
findings lane were too noisy on a shared 2-core machine to show it either way).

What it leaves is what a run leaves, cleared as after one (Dynamo's caches and counters);
Dynamo's process-wide counters get their values back (compat.process_counters_kept: the numbers
in the names of the globals it installs, `G['__builtins_dict___16']`, are in a report's guards,
and a fresh process numbers them from where the template's own warm-up left them), and its cache
of cleaned bytecode is emptied (compat.forget_cleaned_bytecode: an entry depends on a config
switch a snippet may set). It traces on one torch thread, so that no op
starts a thread pool a forked child could not use (the template's fork probe checks after it),
with torch's random state given back. The snippet never runs here: this is our model.

Not before the first run (the template's start would wait 1.2-1.4 s for it, longer than the
first trace saves), not for a one-shot `check`, not with a request waiting or memory short. It
costs the template about 20 MiB (measured after the template's own warm-up: RSS 334 -> 354 MiB),
which COMPILE_PLAYGROUND_MODEL_WARMUP=0 (or COMPILE_PLAYGROUND_WARMUP=0) saves.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playground.worker.process.channel import Channel
    from playground.worker.run.spine.request import WorkerRequest

#: COMPILE_PLAYGROUND_MODEL_WARMUP=0 leaves it out (benchmarks/findings_latency.py's comparison).
SWITCH_ENV = "COMPILE_PLAYGROUND_MODEL_WARMUP"
#: A file the template appends one JSON line to when it has traced the model (for the tests).
LOG_ENV = "COMPILE_PLAYGROUND_MODEL_WARMUP_LOG"

#: The vocabulary and sequence length of the warm-up's tokens.
_VOCAB = 64
_SEQ = 8


@dataclass(frozen=True)
class _Config:
    width: int = 32
    heads: int = 4
    layers: int = 2
    dropout: float = 0.0


def _model(torch):  # noqa: ANN001, ANN202 - torch comes in as the caller imported it
    nn = torch.nn
    functional = torch.nn.functional

    class Block(nn.Module):
        def __init__(self, config: _Config) -> None:
            super().__init__()
            self.heads = config.heads
            self.norm1 = nn.LayerNorm(config.width)
            self.norm2 = nn.RMSNorm(config.width) if hasattr(nn, "RMSNorm") else nn.LayerNorm(config.width)
            self.qkv = nn.Linear(config.width, 3 * config.width)
            self.proj = nn.Linear(config.width, config.width, bias=False)
            self.mlp = nn.Sequential(
                nn.Linear(config.width, 2 * config.width), nn.SiLU(), nn.Linear(2 * config.width, config.width)
            )
            self.drop = nn.Dropout(config.dropout)

        def forward(self, x, mask=None):  # noqa: ANN001, ANN202
            batch, seq, width = x.shape
            q, k, v = self.qkv(self.norm1(x)).split(width, dim=-1)
            q, k, v = (t.view(batch, seq, self.heads, width // self.heads).transpose(1, 2) for t in (q, k, v))
            scores = (q @ k.transpose(-2, -1)) / (width // self.heads) ** 0.5
            if mask is not None:
                scores = scores.masked_fill(mask, float("-inf"))
            attended = functional.softmax(scores, dim=-1) @ v
            x = x + self.drop(self.proj(attended.transpose(1, 2).reshape(batch, seq, width)))
            return x + self.mlp(self.norm2(x))

    class Model(nn.Module):
        def __init__(self, config: _Config) -> None:
            super().__init__()
            self.config = config
            self.embed = nn.Embedding(_VOCAB, config.width)
            self.blocks = nn.ModuleList([Block(config) for _ in range(config.layers)])
            self.head = nn.Linear(config.width, _VOCAB, bias=False)

        def forward(self, ids, labels=None):  # noqa: ANN001, ANN202
            seq = ids.shape[1]
            mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool), diagonal=1)
            x = self.embed(ids)
            for block in self.blocks:
                x = block(x, mask=mask)
            logits = self.head(x).float()
            out = {"logits": logits}
            if labels is not None:
                flat = logits[:, :-1].reshape(-1, logits.size(-1))
                out["loss"] = functional.cross_entropy(flat, labels[:, 1:].reshape(-1))
            return out

    return Model(_Config())


def enabled() -> bool:
    """On unless turned off, by its own switch or with the template's whole warm-up."""
    return os.environ.get(SWITCH_ENV, "1") != "0" and os.environ.get("COMPILE_PLAYGROUND_WARMUP", "1") != "0"


def trace() -> float:
    """Dynamo's trace of the model (backend eager) and its calls, then forgotten; its seconds."""
    import torch

    from playground.worker import compat

    started = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with compat.process_counters_kept(), torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            model = _model(torch)
            compiled = torch.compile(lambda ids: model(ids, labels=ids)["loss"], backend="eager")
            tokens = torch.Generator().manual_seed(0)
            for batch in (2, 3):  # the second a recompile: Dynamo's guard failure and its reasons
                compiled(torch.randint(0, _VOCAB, (batch, _SEQ), generator=tokens)).backward()
    finally:
        torch.set_num_threads(threads)
        compat.clear_run_state()
        compat.forget_cleaned_bytecode()
    seconds = time.perf_counter() - started
    _log(seconds)
    return seconds


#: In the template: whether the trace has been made (once per template).
_DONE: list[bool] = []


def between_runs(channel: Channel, drop_spare: Callable[[], None], pending: Collection[WorkerRequest]) -> None:
    """The trace in the template, once, after a run of a session that goes on and with no
    request waiting (memory short: after a later run): the spare forked before it dropped, the
    heap frozen after it, and the template started over without it (with the `pending`
    requests) if a forked child can no longer run a parallel op. A failure only costs speed."""
    from playground.worker.process import limits, reexec, warmup

    if _DONE or pending or not enabled() or limits.memory_short():
        return
    _DONE.append(True)
    drop_spare()  # forked before it
    try:
        trace()
    except Exception as exc:  # noqa: BLE001 - a warm-up failure only costs speed
        print(f"compile-playground: the model warm-up failed: {exc!r}", file=sys.stderr)
    warmup.freeze()
    if not warmup.fork_probe():
        reexec.restart_unwarmed(channel, SWITCH_ENV, list(pending))


def _log(seconds: float) -> None:
    path = os.environ.get(LOG_ENV)
    if not path:
        return
    try:
        with open(path, "a") as fh:
            fh.write(json.dumps({"pid": os.getpid(), "seconds": round(seconds, 4)}) + "\n")
    except OSError:
        pass

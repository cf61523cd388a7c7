"""The kernels profile: Inductor's profiling options, the profiler's event names, a profiled call."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

#: Inductor options for the kernels profile (2.13 and 2.14; dotted keys accepted in options):
#: each C++ kernel opens a profiler record named `graph_<id>_<kernel>`, and the trace carries,
#: per output module, which FX nodes each kernel holds and their user stacks. Both are part of
#: the FX-graph cache key and change the output code, so only a run that asks has them.
KERNEL_PROFILE_OPTIONS: dict[str, Any] = {"cpp.enable_kernel_profile": True, "trace.provenance_tracking_level": 1}


#: Profiler event names (torch.profiler, CPU activity; the same on 2.13 and 2.14).
EVENT_REGION = "Torch-Compiled Region"


EVENT_LOOKUP = "TorchDynamo Cache Lookup"


EVENT_CALL_GRAPH = "## Call CompiledFxGraph"


def profiled(fn: Callable[[], None], calls: int, device: str, marker: str) -> list[Any]:
    """`fn` called `calls` times under torch's profiler, each call inside a record named
    `marker`; the profiler's events (FunctionEvent: name, time_range, cpu_parent)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    activities = [ProfilerActivity.CPU]
    if device.startswith("cuda") and torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as prof:
        for _ in range(calls):
            with record_function(marker):
                fn()
            if device.startswith("cuda"):
                torch.cuda.synchronize()
    return list(prof.events())

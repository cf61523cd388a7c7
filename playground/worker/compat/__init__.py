"""Every private torch name the worker touches, in one package, with a version check.

torch.compile's diagnostics live behind private modules that drift between releases. Keeping
them here means a torch upgrade breaks this package (and its test), not the whole engine; each
module holds one kind of hook. Imported only by the worker process. The names are re-exported
here, so callers write `compat.cache_entries(...)` whichever module holds it.
"""

from __future__ import annotations

from playground.worker.compat.backends import (
    LADDER_DEBUG_BACKENDS,
    current_compile_id,
    eager_graph_code,
    error_on_graph_break,
    list_backends,
    real_backend,
)
from playground.worker.compat.bisector import bisect_in, bisect_progress
from playground.worker.compat.break_registry import (
    graph_break_hint_categories,
    graph_break_ids_by_type,
    graph_break_registry,
)
from playground.worker.compat.cache_entries import (
    cache_entries,
    cache_entry_ids,
    describe_value,
    entry_accepts,
    frame_locals,
    guard_locals,
    inline_wrapped,
    target_code,
)
from playground.worker.compat.config import ANATOMY_CONFIG_MODULES, CONFIG_MODULES, config_not_default
from playground.worker.compat.depyf_dump import depyf_version, dynamo_code_dumped, transformed_code_recorded
from playground.worker.compat.guards import (
    GUARD_FILTERS,
    filter_entry_fields,
    guard_check,
    guard_count,
    guard_filter,
    skip_guard_eval,
)
from playground.worker.compat.inductor_start import forget_probes_if_config_changed, start_inductor
from playground.worker.compat.logs import (
    ARTIFACT_ALIASES,
    ARTIFACTS,
    artifact_logs_off,
    artifact_of,
    enable_artifact_logs,
    keep_capture_through_set_logs,
    log_torch_version,
    registered_logger_names,
    torch_log_formatter,
    trace_filenames,
    trace_logger,
    trace_string_table,
)
from playground.worker.compat.phase_times import phase_times
from playground.worker.compat.profiler import (
    EVENT_CALL_GRAPH,
    EVENT_LOOKUP,
    EVENT_REGION,
    KERNEL_PROFILE_OPTIONS,
    profiled,
)
from playground.worker.compat.rendezvous import env_rendezvous_in
from playground.worker.compat.run_state import (
    cache_counts,
    clear_run_state,
    compile_caches_disabled,
    counters,
    deterministic_inductor_rng,
    dynamo_frames,
    forget_cleaned_bytecode,
    forget_compile_threads,
    process_counters_kept,
)
from playground.worker.compat.tracer import dynamo_tracing_at
from playground.worker.compat.version import TESTED_VERSIONS, torch_version, version_warning

__all__ = [
    "bisect_in",
    "bisect_progress",
    "dynamo_frames",
    "ANATOMY_CONFIG_MODULES",
    "ARTIFACTS",
    "ARTIFACT_ALIASES",
    "CONFIG_MODULES",
    "EVENT_CALL_GRAPH",
    "EVENT_LOOKUP",
    "EVENT_REGION",
    "GUARD_FILTERS",
    "KERNEL_PROFILE_OPTIONS",
    "LADDER_DEBUG_BACKENDS",
    "TESTED_VERSIONS",
    "artifact_logs_off",
    "artifact_of",
    "cache_counts",
    "cache_entries",
    "cache_entry_ids",
    "clear_run_state",
    "compile_caches_disabled",
    "config_not_default",
    "counters",
    "current_compile_id",
    "depyf_version",
    "describe_value",
    "deterministic_inductor_rng",
    "dynamo_code_dumped",
    "dynamo_tracing_at",
    "eager_graph_code",
    "enable_artifact_logs",
    "env_rendezvous_in",
    "keep_capture_through_set_logs",
    "log_torch_version",
    "entry_accepts",
    "error_on_graph_break",
    "filter_entry_fields",
    "forget_cleaned_bytecode",
    "process_counters_kept",
    "forget_compile_threads",
    "forget_probes_if_config_changed",
    "frame_locals",
    "graph_break_hint_categories",
    "graph_break_ids_by_type",
    "graph_break_registry",
    "guard_check",
    "guard_count",
    "guard_filter",
    "guard_locals",
    "inline_wrapped",
    "list_backends",
    "phase_times",
    "profiled",
    "real_backend",
    "registered_logger_names",
    "skip_guard_eval",
    "start_inductor",
    "target_code",
    "torch_log_formatter",
    "torch_version",
    "trace_filenames",
    "trace_logger",
    "trace_string_table",
    "transformed_code_recorded",
    "version_warning",
]

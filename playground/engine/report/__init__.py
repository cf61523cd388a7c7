"""The report of one run as frozen values, built from the contract's JSON object.

The JSON dict is the wire format (../shared/contract.md); these dataclasses are how the CLI's
text view and the Textual panes read it. Torch-free. Keys beyond the contract are extensions:
a consumer of the contract may ignore them.

One module per part of the report, the codec (`Wire`) in `wire`; every name is re-exported
here, so `from playground.engine.report import Report` is the one import path callers use.
"""

from __future__ import annotations

from playground.engine.report.anatomy import CompiledModule, ConfigSetting, GraphAnatomy
from playground.engine.report.breaks import BreakSite, GraphBreak
from playground.engine.report.dynamo_code import DynamoCode
from playground.engine.report.equivalence import VERDICTS, Comparison, Equivalence
from playground.engine.report.error import RunError
from playground.engine.report.explanation import (
    CallEntry,
    DynamoFrames,
    EntryGuards,
    Explanation,
    GuardDetail,
    LimitDetail,
    ReasonRow,
    RecompileDetail,
    ShapeSymbol,
    Specialization,
    SymbolGuard,
)
from playground.engine.report.fixes import FIX_EQUIVALENCE, Fix, FixAdvice, FixAfter, FixTarget
from playground.engine.report.graphs import Graph
from playground.engine.report.guard_cost import EntryGuardCount, GuardCost
from playground.engine.report.guard_what_if import FilterPreview, GuardWhatIf
from playground.engine.report.guards import GuardSet
from playground.engine.report.kernels import KernelsProfile, KernelTime, OpTime
from playground.engine.report.logs import Logs
from playground.engine.report.output import Output
from playground.engine.report.phases import PHASE_KEYS, CompilePhase, PhaseTotals
from playground.engine.report.program import CompiledCallable, ProgramException, ProgramExit, ProgramRun, Stopped
from playground.engine.report.ranks import DdpBuckets, Divergence
from playground.engine.report.recompiles import GuardFailure, Recompile
from playground.engine.report.run import Report
from playground.engine.report.save_waterfall import INSIDE_PHASES, WATERFALL_PHASES, SaveWaterfall, WaterfallPhase
from playground.engine.report.timings import Machine, Timings
from playground.engine.report.wire import STRICT_ENV, Wire, WireTypeError, strict_by_default, wire
from playground.engine.report.worker_info import WorkerInfo

__all__ = [
    "FIX_EQUIVALENCE",
    "Fix",
    "FixAdvice",
    "FixAfter",
    "FixTarget",
    "DdpBuckets",
    "Divergence",
    "CompiledCallable",
    "ProgramException",
    "ProgramExit",
    "ProgramRun",
    "Stopped",
    "PHASE_KEYS",
    "STRICT_ENV",
    "VERDICTS",
    "BreakSite",
    "CallEntry",
    "CompilePhase",
    "CompiledModule",
    "Comparison",
    "ConfigSetting",
    "DynamoCode",
    "EntryGuardCount",
    "EntryGuards",
    "Equivalence",
    "DynamoFrames",
    "Explanation",
    "FilterPreview",
    "Graph",
    "GraphAnatomy",
    "GraphBreak",
    "GuardCost",
    "GuardDetail",
    "GuardFailure",
    "GuardSet",
    "GuardWhatIf",
    "KernelTime",
    "KernelsProfile",
    "LimitDetail",
    "Logs",
    "Machine",
    "OpTime",
    "Output",
    "PhaseTotals",
    "ReasonRow",
    "Recompile",
    "RecompileDetail",
    "Report",
    "RunError",
    "ShapeSymbol",
    "Specialization",
    "SymbolGuard",
    "Timings",
    "SaveWaterfall",
    "WaterfallPhase",
    "WATERFALL_PHASES",
    "INSIDE_PHASES",
    "Wire",
    "WireTypeError",
    "WorkerInfo",
    "strict_by_default",
    "wire",
]

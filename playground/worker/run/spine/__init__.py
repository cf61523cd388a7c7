"""The spine of a run: what every run does, in order.

The frozen `WorkerRequest` (`request.py`) and the run's `RunContext` (`context.py`), the snippet
loaded and its target picked (`loading.py`), the calls made on each side with their outputs and
the module state they changed (`calls.py`, `module_state.py`, `built.py`), the switches and
config a run is made under (`switches.py`, `decomp_table.py`), how a phase fails (`failures.py`,
`safe_text.py`), the save's waterfall (`waterfall.py`), what the trace met (`trace_met.py`), and
`experiment.py`, the sequence of phases that turns a request into a report.
"""

"""Each section of a report in words, once, for every view: the app's panes (`tui/panes/`),
`check`'s text report (`playground/cli/textreport.py`) and the Markdown export
(`playground/engine/exports.py`). Torch-free, and free of Rich and Textual: a section becomes
plain values here (`Line`s of tagged pieces, or a section's own frozen rows) and each view only
lays them out. A fact shown in every view is one function in one module of this package:

- `phases`: compile time per phase, the one list of the phases' names for the views
- `timings`: the speedup, its spread, why it is far from 1x, the machine and the memory
- `equivalence`: the verdicts and the compared leaves
- `explained`: torch's explanations of recompiles: limits, which entry ran each call, shape
  symbols and specializations
- `breaks`: graph break sites
- `errors`: the run's error: a break fullgraph=True refused, a backend's missing package
"""

"""Fixes tried: for each break site and each recompiling function of a run, the remedies torch
itself offers (a config key its hint names, a decorator its programming model documents for an
untraceable helper, `dynamic=True` or `mark_dynamic` for a recompile, reorderable logging for a
print), each run as a variant of the same save: a fresh run forked from the template like every
run, the same settings, the user's file untouched (a config key travels in the settings, a code
change is appended to the source text in memory, below the user's last line so every line keeps
its number). `candidates` proposes them from the run's typed report and the source; `variant`
turns one into the variant's request; `verdict` reads the variant's report into a `Fix` against
the run without the change (counts, equivalence, prints, module state, speedup, where a moved
break went). The template's side, which forks the variants side by side, is
process/fix_lanes.py. Torch-free.
"""

"""The torch-free engine API: what the front ends use to run a snippet and read the result.

The worker's client (`client`, with `sync` for blocking callers), the typed report
(`report`), the settings resolved once (`settings`), snippet loading (`snippet`), history,
the settings matrix and the ablation ladder (`matrix`), exports, the file watcher. It never
imports torch, the worker's modules, the app or the command line (import-linter checks).
"""

"""The gallery: one lesson per file, each a snippet that also runs on its own.

This file only makes the folder a package, so that the wheel ships it as
`playground.snippets` and `playground.snippets_dir()` finds it with importlib.resources.
The gallery lists `*.py` files and leaves out private ones (`_*.py`), this one included.
"""

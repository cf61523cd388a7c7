"""The command-line front ends: `check`, `watch`, `matrix`, and the app when no command is given.

They sit above the engine and the app (`main` opens `tui` lazily); nothing below imports them.
"""

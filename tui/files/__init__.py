"""The files the app reads and writes: the bundled gallery's copies and the `w`/`t` exports."""

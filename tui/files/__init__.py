"""The files the app reads and writes: the bundled gallery's copies, the `w`/`t` exports, and the
snippet handed to the user's editor."""

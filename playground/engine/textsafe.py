"""Control characters made visible, so text from a snippet or from torch never drives a terminal.

A snippet is untrusted input to the screen: anything it prints, raises or holds in a comment is
drawn by the app and printed by `check`. An ESC in that text is a terminal command: CSI can
wipe the screen, OSC can retitle the window or (OSC 52) write the clipboard, DCS and the
alternate-screen switch can push a full-screen app off its screen. Rich's `Text` keeps ESC,
so the escaping has to happen before the text reaches a renderer. Torch-free and dependency-free:
the app and the command-line reports share this one function.
"""

from __future__ import annotations

import re

#: C0 controls (but \t and \n, which keep their meaning), DEL and the C1 controls, plus a
#: CRLF pair, which is a line ending rather than two controls.
_CONTROL = re.compile(r"\r\n|[\x00-\x08\x0b-\x1f\x7f-\x9f]")

#: One cell each, so escaping does not disturb a layout much: U+2400.. "Control Pictures".
_DEL_PICTURE = "\u2421"  # ␡


def _picture(match: re.Match[str]) -> str:
    char = match.group()
    if char == "\r\n":
        return "\n"
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)  # ESC -> ␛, BEL -> ␇, CR -> ␍
    if code == 0x7F:
        return _DEL_PICTURE
    # C1 has no control pictures; an 8-bit CSI (0x9b) shows as \x9b.
    return f"\\x{code:02x}"


def visible(text: str) -> str:
    """`text` with every control character shown as a visible stand-in; \\n and \\t kept.

    ESC becomes ␛ (so `\\x1b[2J` reads `␛[2J`), other C0 controls their U+24xx picture, DEL ␡,
    C1 controls `\\x80`..`\\x9f`; a CRLF becomes a plain newline. Text without controls is
    returned as it is.
    """
    if not _CONTROL.search(text):
        return text
    return _CONTROL.sub(_picture, text)


def one_line(text: str) -> str:
    """`visible(text)` for a place that must stay one line (a stderr message that names a file):
    a newline shows as ␤ and a tab as ␉, so a file named `a\\nb.py` cannot split it."""
    return visible(text).replace("\n", "\u2424").replace("\t", "\u2409")

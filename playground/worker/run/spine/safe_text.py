"""Text about the user's values that never raises: a short repr that survives a hostile
`__repr__`, an exception in one line, control characters escaped (notes reach terminals, and
the snippet chose the text). Worker-side.
"""

from __future__ import annotations

import reprlib
from typing import Any

_repr = reprlib.Repr()
_repr.maxstring = 60
_repr.maxother = 60
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 6


def printable(text: str) -> str:
    """Control characters escaped: notes reach terminals, and the snippet chose the text."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def type_name(value: Any) -> str:
    try:
        return str(type(value).__name__)
    except BaseException:  # noqa: BLE001 - a metaclass may do anything
        return "object"


def safe_repr(value: Any) -> str:
    """A short repr that survives a raising or hostile __repr__."""
    try:
        text = _repr.repr(value)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned a non-string")
    except BaseException as exc:  # noqa: BLE001 - the user's __repr__ may raise anything
        text = f"<{type_name(value)} object; repr() raised {type_name(exc)}>"
    return printable(text)


def describe_exc(exc: BaseException) -> str:
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - an exception whose __str__ raises
        message = ""
    message = printable(message.splitlines()[0] if message else "")
    return f"{type_name(exc)}: {message}" if message else type_name(exc)

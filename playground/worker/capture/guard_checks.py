"""What a set of guards checks, without the numbers that are only the process's own.

Two processes that trace the same code (the findings lane and the run's child, both forked from
the template) write the same guards with different numbers in them: an identity guard names
the object's address, which differs for any object made after the fork (a module the snippet
imports, a class it defines), and Dynamo installs some globals under names it numbers from the
process's start (`G['__builtins_dict___24']`, `G['_140022041650864_c12']`), which a spare
child's warm-up advanced. `checked_as` is a digest of the guards with those numbers taken out:
the same for two guard sets that make the same checks. It is computed here, where torch's guard
text is read, so that the engine compares two typed strings (engine/findings.py).
"""

from __future__ import annotations

import hashlib
import re

#: An identity guard's object id.
_OBJECT_ID = re.compile(r"(___check_(?:obj|type)_id\(.*?, )\d+(\))")
#: A global Dynamo installs under a name numbered by a process-wide count.
_NUMBERED_GLOBAL = re.compile(r"(G\['__\w+?___)\d+('\])")
#: A global Dynamo installs under an object's address and a count.
_ID_GLOBAL = re.compile(r"G\['_\d+_c\d+'\]")


def as_checked(guard: str) -> str:
    """One guard line with the process's own numbers replaced by placeholders."""
    guard = _OBJECT_ID.sub(r"\1<id>\2", guard)
    guard = _ID_GLOBAL.sub("G['_<id>_cN']", guard)
    return _NUMBERED_GLOBAL.sub(r"\1N\2", guard)


def checked_as(guards: tuple[str, ...]) -> str:
    """A digest of what the guards check, in their order (sha256, 16 hex digits)."""
    text = "\n".join(as_checked(g) for g in guards)
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]

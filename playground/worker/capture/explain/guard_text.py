"""Torch's guard and reason text split into its parts: the check, the code line torch quoted, the
location, a note; the argument a check is about, named as the snippet names it."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: `check  # code  # file:line in fn (note)`: torch's comment on a guard or a recompile reason.
_LOCATION = re.compile(r"#\s*(?P<file>[^#\s][^#]*?):(?P<line>\d+) in (?P<fn>[\w<>.]+)(?P<note>\s*\(.*\))?\s*$", re.S)
_SOURCE = re.compile(r"\b[LG]\['(?P<name>[^']+)'\](?P<rest>(?:\.\w+|\[[^\]]*\]|\(\))*)")
_ATTR_DICT = re.compile(r"\._(?:modules|parameters|buffers)\['([^']+)'\]")
#: A child of a ModuleList or Sequential (`._modules['0']`): written `layer[0]` in Python.
_INDEX_DICT = re.compile(r"\._modules\['(\d+)'\]")
#: An identity guard: the entry was built for one object (or type), and another arrived.
ID_GUARD = re.compile(r"^___check_(?P<which>obj|type)_id\((?P<src>.+?), (?P<id>\d+)\)")
SIZE = re.compile(r"size\(\)\[(\d+)\]")
#: A global Dynamo installs under an object's address and a count of the graphs the process has
#: made (`G['_140022041650864_c12']`): both numbers are the process's own, not the snippet's.
#: With a prefix too: `___unnamed_scope_<addr>_c3`, `__optimizer_<addr>_<addr>_c2`.
_BY_ID = re.compile(r"(?<![0-9])((?:_\d{6,})+)_c\d+\b")


@dataclass(frozen=True)
class GuardText:
    """One guard or reason split at torch's comment: the check, the code line torch quoted, the
    location (torch shortens paths: `mp/h11/snip.py`), and any parenthesised note."""

    check: str
    code: str = ""
    file: str = ""
    line: int | None = None
    function: str = ""
    note: str = ""


def split_guard(text: str) -> GuardText:
    text = text.strip()
    parts = re.split(r"\s{2,}#\s?|\s#\s", text, maxsplit=1)
    check = parts[0].strip()
    comment = parts[1].strip() if len(parts) > 1 else ""
    if not comment:
        return GuardText(check)
    loc = _LOCATION.search("# " + comment)
    if loc is None:
        return GuardText(check, note=comment)
    code = ("# " + comment)[: loc.start()].lstrip("# ").strip()
    note = (loc["note"] or "").strip()[1:-1]
    # torch may append the framework frame that also added it: "(note) and (file:line in fn)".
    note = note.split(") and (")[0]
    return GuardText(check, code, loc["file"].strip(), int(loc["line"]), loc["fn"], note)


def user_name(source: str) -> str:
    """`L['lr']` -> `lr`, `L['self']._modules['l']._parameters['weight']` -> `self.l.weight`,
    `G['net']._modules['layer']._modules['0']` -> `net.layer[0]`,
    `G['__builtins_dict___13']['print']` -> `print` (Dynamo's alias for the builtins),
    `G['_140022041650864_c12']` -> `_<id>_cN` (a global Dynamo named by an address)."""
    text = _INDEX_DICT.sub(r"[\1]", source)
    text = _ATTR_DICT.sub(r".\1", text)
    text = re.sub(r"\b[LG]\['([^']+)'\]", r"\1", text)
    text = _BY_ID.sub(lambda m: "_<id>" * m.group(1).count("_") + "_cN", text)
    return re.sub(r"\b__builtins_dict___\d+\['([^']+)'\]", r"\1", text)


def guarded_arg(check: str) -> str:
    """The argument a guard or reason is about, as the user names it (`self.w`, `x`), or ""."""
    tensor = re.search(r"tensor '(.+?)'(?=\s|$)", check)  # ends at a quote before a space
    if tensor:
        return user_name(tensor.group(1)).split(".size(")[0]
    identity = ID_GUARD.match(check.strip())
    if identity:
        return user_name(identity["src"])
    match = _SOURCE.search(check)
    if match is None:
        bare = re.match(r"^\s*(?:\d+\s*<=\s*)?([A-Za-z_][\w.]*)", check)
        if bare is None or bare.group(1).startswith(("___", "torch", "utils_")):
            return ""
        return re.sub(r"\.(?:size|stride|storage_offset)$", "", bare.group(1))
    rest = re.sub(r"\.(?:size|stride|storage_offset)\(\)(?:\[\d+\])?.*$", "", match["rest"])
    return user_name(f"L['{match['name']}']{rest}")

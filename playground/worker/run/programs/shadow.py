"""The eager reference's file writes, kept out of the user's files.

The reference runs the program a second time, eagerly, and only as far as the compared calls
reach (`program_reference.run_reference`): left to write where the program says, it would
truncate and rewrite the program's own output (`open("results.txt", "w")`, a checkpoint) with a
shorter, eager run's, after the compiled run (the program as `python PROG` runs it) had written
it. So in the reference process a file the program opens for writing is a shadow in the
reference's private folder, and the program's later reads, renames and removals of that path
see the shadow. What goes through Python is covered: `open`, `io.open` (pathlib, `os.fdopen`),
`os.open`, `os.rename`/`os.replace`/`os.remove`/`os.unlink`, and `torch.save`/`torch.load` on a
path (torch's writer opens the file in C++). A write in C or in a subprocess is not.
"""

from __future__ import annotations

import builtins
import io
import itertools
import os
import shutil
from typing import Any

#: Paths written as they are: devices, the kernel's files and its shared memory (/dev/shm, where
#: processes meet), not a user's files.
_AS_THEY_ARE = ("/dev/", "/proc/", "/sys/")
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def _writes(mode: str) -> bool:
    return any(c in mode for c in "wax+")


class ShadowWrites:
    """While installed: the program's writes to files outside `ours` (the run's private folder)
    go to shadows in a folder of it."""

    def __init__(self, ours: str) -> None:
        self.ours = os.path.abspath(ours)
        self.folder = os.path.join(self.ours, "eager.files")
        self.shadows: dict[str, str] = {}
        self._numbers = itertools.count()
        self._saved: dict[tuple[Any, str], Any] = {}

    def _path(self, file: Any) -> str | None:
        """The absolute path a file argument names, or None where it is ours to leave (a
        descriptor, a file object, the run's private folder, a device)."""
        if isinstance(file, int) or not isinstance(file, (str, bytes, os.PathLike)):
            return None
        path = os.path.abspath(os.fsdecode(os.fspath(file)))
        if path == self.ours or path.startswith(self.ours + os.sep) or path.startswith(_AS_THEY_ARE):
            return None
        return path

    def _new(self, path: str) -> str:
        # The pid: the eager references of every rank may share the folder.
        shadow = os.path.join(self.folder, f"{os.getpid()}-{next(self._numbers)}-{os.path.basename(path)[:80]}")
        self.shadows[path] = shadow
        return shadow

    def shadow_for_write(self, path: str, keeps: bool) -> str:
        """The shadow a write goes to; `keeps` (append, r+): it starts as the file was."""
        if path in self.shadows:
            return self.shadows[path]
        shadow = self._new(path)
        if keeps and os.path.isfile(path):
            self._copy(path, shadow)
        return shadow

    def _copy(self, path: str, shadow: str) -> None:
        open_ = self._saved.get((builtins, "open"), builtins.open)
        with open_(path, "rb") as src, open_(shadow, "wb") as dst:
            shutil.copyfileobj(src, dst)

    def read_path(self, file: Any) -> Any:
        """Where a read of `file` goes: its shadow once the reference wrote it."""
        path = self._path(file)
        return self.shadows.get(path, file) if path is not None else file

    # The replacements, each calling the original it stands for.

    def _open(self, file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        original = self._saved[(builtins, "open")]
        path = self._path(file)
        if path is not None:
            if _writes(mode):
                file = self.shadow_for_write(path, keeps=not any(c in mode for c in "wx"))
            else:
                file = self.shadows.get(path, file)
        return original(file, mode, *args, **kwargs)

    def _os_open(self, file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        original = self._saved[(os, "open")]
        path = self._path(file) if kwargs.get("dir_fd") is None else None
        if path is not None:
            if flags & _WRITE_FLAGS:
                file = self.shadow_for_write(path, keeps=not flags & os.O_TRUNC)
            else:
                file = self.shadows.get(path, file)
        return original(file, flags, *args, **kwargs)

    def _rename(self, which: str) -> Any:
        def rename(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            source, target = self._path(src), self._path(dst)
            if source is None or target is None or args or kwargs:
                return self._saved[(os, which)](src, dst, *args, **kwargs)
            # The user's file stays; the target reads as the source did, the source as gone.
            moved = self.shadow_for_write(source, keeps=True)
            self.shadows.pop(source)
            self._new(source)
            self.shadows[target] = moved
            return None

        return rename

    def _remove(self, which: str) -> Any:
        def remove(file: Any, *args: Any, **kwargs: Any) -> None:
            path = self._path(file)
            if path is None or args or kwargs:
                return self._saved[(os, which)](file, *args, **kwargs)
            if not os.path.exists(self.shadows.get(path, path)):
                raise FileNotFoundError(2, "No such file or directory", os.fspath(file))
            shadow = self.shadows.get(path)
            if shadow is not None and os.path.exists(shadow):
                self._saved[(os, which)](shadow)
            self._new(path)  # gone from here on, for the reference
            return None

        return remove

    def _torch_save(self, obj: Any, f: Any, *args: Any, **kwargs: Any) -> Any:
        path = self._path(f)
        if path is not None:
            f = self.shadow_for_write(path, keeps=False)
        return self._saved[("torch", "save")](obj, f, *args, **kwargs)

    def _torch_load(self, f: Any, *args: Any, **kwargs: Any) -> Any:
        return self._saved[("torch", "load")](self.read_path(f), *args, **kwargs)

    def install(self) -> None:
        import torch

        os.makedirs(self.folder, exist_ok=True)
        plan: list[tuple[Any, str, Any]] = [
            (builtins, "open", self._open),
            (io, "open", self._open),
            (os, "open", self._os_open),
            (os, "rename", self._rename("rename")),
            (os, "replace", self._rename("replace")),
            (os, "remove", self._remove("remove")),
            (os, "unlink", self._remove("unlink")),
            (torch, "save", self._torch_save),
            (torch, "load", self._torch_load),
        ]
        for owner, name, replacement in plan:
            key = ("torch", name) if owner is torch else (owner, name)
            self._saved[key] = getattr(owner, name)
            setattr(owner, name, replacement)

    def uninstall(self) -> None:
        import torch

        for (owner, name), original in self._saved.items():
            setattr(torch if owner == "torch" else owner, name, original)
        self._saved.clear()

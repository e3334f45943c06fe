"""Atomic file writes for the file tools: the core's ``replace_atomically``, then the
written Python source's stale bytecode is dropped.

The core writes a temporary file and renames it over the target, relative to a folder
descriptor reached without following symlinks (:mod:`mycode_core.safeopen`), so a folder
swapped for a symlink after the boundary check cannot redirect the write.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from mycode_core.api import replace_atomically


def atomic_write(path: Path, data: bytes, *, create_parents: bool = False) -> None:
    """Write ``data`` to ``path`` atomically, keeping an existing file's permission bits.

    Readers see either the old or the new content, never a half-written file.
    """
    replace_atomically(path, data, create_parents=create_parents)
    forget_bytecode(path)


def forget_bytecode(path: Path) -> None:
    """Drop the cached bytecode of a Python source just written.

    CPython trusts ``__pycache__`` when the source's mtime (whole seconds) and size match, so
    an edit of the same length within the second of the last import would run the old code;
    removing the ``.pyc`` makes the next run compile the new source.
    """
    if path.suffix != ".py":
        return
    import importlib.util

    with contextlib.suppress(OSError, ValueError, NotImplementedError):
        cached = Path(importlib.util.cache_from_source(str(path)))
        folder = cached.parent
        stem = path.stem + "."
        if folder.is_dir():
            for entry in folder.iterdir():  # every interpreter's and optimisation's copy
                if entry.name.startswith(stem) and entry.suffix == ".pyc":
                    entry.unlink(missing_ok=True)

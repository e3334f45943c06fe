"""Listing the files of a tree the way a developer expects: ``.gitignore`` respected,
``.git``, ``node_modules`` and virtualenvs skipped. Uses ``rg --files`` when available,
else a Python walk with ``pathspec``.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import threading
from collections.abc import Iterator
from pathlib import Path

from mycode_builtin_tools.ripgrep import Stalled, rg_path, run_rg
from mycode_core.api import NOISE_DIRS

SKIP_DIRS = tuple(sorted(NOISE_DIRS))


def skip_dirs_for(pattern: str) -> list[str]:
    """The default skipped folders, minus any the pattern names explicitly."""
    parts = set(pattern.replace("\\", "/").split("/"))
    return [name for name in SKIP_DIRS if name not in parts]


def home_skip(base: Path, home: object) -> list[str]:
    """``["/REL"]`` when ``MYCODE_HOME`` (``home``) lies below ``base``, else ``[]``: mycode's
    own sessions and config are never part of the workspace (SPEC §2), so no listing or
    search shows them. A ``skip`` entry starting with ``/`` is a path anchored at ``base``."""
    if not home:
        return []
    base, mine = base.resolve(), Path(str(home)).resolve()
    return ["/" + mine.relative_to(base).as_posix()] if base in mine.parents else []


def rg_skip_args(skip: list[str]) -> list[str]:
    """``--glob '!name/'`` arguments excluding each folder in ``skip`` (``/path``: that one
    folder below the search root, its glob characters escaped)."""
    args: list[str] = []
    for name in skip:
        name = re.sub(r"([*?\[\]{}\\!])", r"\\\1", name) if name.startswith("/") else name
        args += ["--glob", f"!{name}/"]
    return args


def _rg_files(base: Path, skip: list[str], cancelled: threading.Event | None) -> list[str]:
    rg = rg_path()
    assert rg is not None
    cmd = [rg, "--files", "--hidden", "--no-require-git", "--no-messages", *rg_skip_args(skip)]
    _code, out, _err = run_rg(cmd, base, cancelled)
    return [os.fsdecode(raw) for raw in out.split(b"\n") if raw]


class _Ignores:
    """Nested ``.gitignore`` files, each applying below its own folder."""

    def __init__(self) -> None:
        self.specs: list[tuple[str, object]] = []

    def load(self, rel_dir: str, directory: Path) -> None:
        try:  # a FIFO or device is not opened (O_NONBLOCK, then fstat)
            fd = os.open(directory / ".gitignore", os.O_RDONLY | os.O_NONBLOCK)
        except OSError:
            return
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return
            os.set_blocking(fd, True)
            lines = fh.read().decode("utf-8", "replace").splitlines()
        import pathspec

        self.specs.append((rel_dir, pathspec.GitIgnoreSpec.from_lines(lines)))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        for prefix, spec in self.specs:
            if prefix and not rel.startswith(prefix + "/"):
                continue
            sub = rel[len(prefix) + 1 :] if prefix else rel
            if spec.match_file(sub + ("/" if is_dir else "")):  # type: ignore[attr-defined]
                return True
        return False


def python_files(base: Path, skip: list[str]) -> Iterator[str]:
    """Regular files under ``base`` (relative POSIX paths), honouring ``.gitignore`` and
    ``skip``."""
    ignores = _Ignores()
    skip_set = set(skip)
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        directory = base / rel_dir if rel_dir else base
        ignores.load(rel_dir, directory)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                is_file = entry.is_file(follow_symlinks=False)  # as rg: no link, FIFO, socket
            except OSError:
                continue
            if is_dir:
                if {entry.name, "/" + rel} & skip_set or ignores.ignored(rel, True):
                    continue
                stack.append(rel)
            elif is_file and not ignores.ignored(rel, False):
                yield rel


def list_files(base: Path, skip: list[str], cancelled: threading.Event | None = None) -> list[str]:
    """Files under ``base`` relative to it: ripgrep's listing if present, else Python's (also
    when ripgrep stalls on a FIFO ``.gitignore``; raises :class:`~.ripgrep.Stopped`).

    Virtualenvs under any name (folders holding ``pyvenv.cfg``) are left out too.
    """
    found = None
    if rg_path() is not None:
        with contextlib.suppress(Stalled):
            found = _rg_files(base, skip, cancelled)
    if found is None:
        found = list(python_files(base, skip))
    venvs = tuple(rel[: -len("pyvenv.cfg")] for rel in found if rel.endswith("/pyvenv.cfg"))
    if not venvs:
        return found
    return [rel for rel in found if not rel.startswith(venvs)]

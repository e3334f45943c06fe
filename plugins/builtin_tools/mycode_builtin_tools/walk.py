"""Listing the files of a tree the way a developer expects: ``.gitignore`` respected,
``.git``, ``node_modules`` and virtualenvs skipped. Uses ``rg --files`` when available,
else a Python walk with ``pathspec``.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

from mycode_builtin_tools.ripgrep import rg_path
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


def _rg_files(base: Path, skip: list[str]) -> Iterator[str]:
    rg = rg_path()
    assert rg is not None
    cmd = [rg, "--files", "--hidden", "--no-require-git", "--no-messages", *rg_skip_args(skip)]
    with subprocess.Popen(
        cmd, cwd=base, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL
    ) as proc:
        assert proc.stdout is not None
        for raw in proc.stdout:
            yield os.fsdecode(raw.rstrip(b"\n"))


class _Ignores:
    """Nested ``.gitignore`` files, each applying below its own folder."""

    def __init__(self) -> None:
        self.specs: list[tuple[str, object]] = []

    def load(self, rel_dir: str, directory: Path) -> None:
        ignore = directory / ".gitignore"
        if not ignore.is_file():
            return
        import pathspec

        try:
            lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return
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
    """Files under ``base`` (relative POSIX paths), honouring ``.gitignore`` and ``skip``."""
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
            except OSError:
                continue
            if is_dir:
                if {entry.name, "/" + rel} & skip_set or ignores.ignored(rel, True):
                    continue
                stack.append(rel)
            elif not ignores.ignored(rel, False):
                yield rel


def list_files(base: Path, skip: list[str]) -> list[str]:
    """Files under ``base`` relative to it: ripgrep's listing if present, else Python's.

    Virtualenvs under any name (folders holding ``pyvenv.cfg``) are left out too.
    """
    found = list(_rg_files(base, skip) if rg_path() is not None else python_files(base, skip))
    venvs = tuple(rel[: -len("pyvenv.cfg")] for rel in found if rel.endswith("/pyvenv.cfg"))
    if not venvs:
        return found
    return [rel for rel in found if not rel.startswith(venvs)]

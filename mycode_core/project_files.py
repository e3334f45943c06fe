"""Reading the project's instruction and configuration files (SPEC §8) from inside the
workspace only: no symlink leading out (except into the user's ``readable_dirs``), no FIFO,
socket or device; a refusal is a :class:`ProjectFileRefused` whose message is the notice."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mycode_core.paths import is_inside, open_beneath, resolved_paths
from mycode_core.safeopen import NotRegularFile

USER_LAYERS = ("default", "user", "env", "cli")  # may name readable_dirs: never the project
AGENTS_FILES = ("AGENTS.override.md", "AGENTS.md")  # a folder's first (Codex: the override wins)


class ProjectFileRefused(OSError):
    """A project file that is not read: outside the workspace, a symlink leading outside it,
    or not a regular file. The message is one readable line naming the file."""

    def __str__(self) -> str:
        """The message alone (no ``[Errno N]`` prefix)."""
        return str(self.strerror)


def allowed_dirs(settings: Any) -> list[Path]:
    """The resolved ``readable_dirs`` of the user's layers of ``settings`` (never a project's)."""
    named: list[str] = []
    for name, data in getattr(settings, "layers", None) or []:
        if name not in USER_LAYERS or not isinstance(data, dict):
            continue
        raw = data.get("readable_dirs")
        items = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
        named += [os.path.expanduser(item) for item in items if isinstance(item, str) and item]
    return resolved_paths(named)


def _leads_out(shown: str, real: Path, outside: bool = False) -> str:
    link = f"a symlink leading outside the workspace (to {real})"
    return (
        f"{shown} is not read: it is {'outside the workspace' if outside else link}; "
        "list the folder in readable_dirs of your user config to allow it"
    )


def read_project_bytes(
    workspace: Path, path: Path, *, allowed: Iterable[Path] = (), limit: int | None = None
) -> bytes:
    """The bytes (at most ``limit``) of the project file ``path`` (absolute or relative to
    ``workspace``); :class:`ProjectFileRefused` when it leads outside the workspace and every
    ``allowed`` folder or is not a regular file, :class:`FileNotFoundError` when absent."""
    root = Path(workspace).resolve()
    lexical = Path(os.path.abspath(Path(workspace) / path))  # an absolute ``path`` as it is
    bases = (root, Path(os.path.abspath(workspace)))
    base = next((b for b in bases if is_inside(lexical, b)), None)
    shown = str(lexical) if base is None else lexical.relative_to(base).as_posix()
    real = Path(os.path.realpath(lexical))  # outside: refused before its existence is probed
    holder = next((Path(d) for d in (root, *allowed) if is_inside(real, Path(d))), None)
    if holder is None:
        raise ProjectFileRefused(errno.EACCES, _leads_out(shown, real, base is None))
    if not os.path.lexists(lexical):
        raise FileNotFoundError(errno.ENOENT, f"{shown}: no such file")
    try:  # a FIFO or device is refused without blocking (safeopen.open_read)
        fd = open_beneath(holder, os.path.relpath(real, holder), os.O_RDONLY)
    except NotRegularFile:
        raise ProjectFileRefused(
            errno.EINVAL, f"{shown} is not read: it is not a regular file"
        ) from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):  # a symlink swapped in meanwhile
            raise ProjectFileRefused(errno.EACCES, f"{shown} is not read: {exc}") from None
        raise
    with os.fdopen(fd, "rb") as fh:
        return fh.read() if limit is None else fh.read(limit)


def read_project_text(
    workspace: Path, path: Path, *, allowed: Iterable[Path] = (), limit: int | None = None
) -> str:
    """:func:`read_project_bytes` decoded as UTF-8 (undecodable bytes replaced)."""
    data = read_project_bytes(workspace, path, allowed=allowed, limit=limit)
    return data.decode("utf-8", errors="replace")


def read_config_text(path: Path, workspace: Path | None = None) -> str:
    """A config file's text: a project file (``workspace`` given) via :func:`read_project_text`,
    a user file as it is (UTF-8); :class:`FileNotFoundError` when absent."""
    if workspace is not None:
        return read_project_text(workspace, path)
    return path.read_text(encoding="utf-8")


def folders_down_to(workspace: Path, current: Path | None) -> list[Path]:
    """``workspace`` and each folder below it down to ``current`` (if inside it), root first."""
    try:
        parts = current.resolve().relative_to(workspace).parts if current is not None else ()
    except (ValueError, OSError):
        parts = ()
    return [workspace.joinpath(*parts[:depth]) for depth in range(len(parts) + 1)]


def instruction_files(
    workspace: Path, current: Path | None, groups: tuple[tuple[str, ...], ...] = (AGENTS_FILES,)
) -> list[Path]:
    """In each of :func:`folders_down_to`, the first existing name of each of ``groups``
    (by default the AGENTS.md the core reads); a symlink counts too: reading it decides."""
    found = []
    for folder in folders_down_to(workspace, current):
        for names in groups:
            found += [p for p in (folder / n for n in names) if os.path.lexists(p)][:1]
    return found


def link_refusal(workspace: Path, folder: Path, *, allowed: Iterable[Path] = ()) -> str | None:
    """``None`` when ``folder`` (checked before listing it) stays inside the workspace or an
    ``allowed`` folder once symlinks are resolved, else the one-line notice why it is skipped."""
    real = Path(os.path.realpath(folder))
    if any(is_inside(real, Path(d)) for d in (Path(workspace).resolve(), *allowed)):
        return None
    folder, workspace = Path(os.path.abspath(folder)), Path(os.path.abspath(workspace))
    shown = (
        folder.relative_to(workspace).as_posix() if is_inside(folder, workspace) else str(folder)
    )
    return _leads_out(shown, real)

"""The workspace boundary, owned by the core: one implementation for every tool.

A path argument is resolved relative to the workspace root (or taken as absolute), with every
symlink followed, and refused when it ends up outside: ``../`` escapes, absolute paths
elsewhere, symlinks leading out, ``~``, NUL bytes and absurd lengths. Reads may also open
files under this session's artifacts folder (saved command output) and under the folders
plugins list in ``context.readable_roots`` (skill folders, for instance); writes never leave
the workspace.

Tools declare their path parameters (``ReadPath`` / ``WritePath`` or ``Tool.paths``) and the
core resolves them through :func:`resolve_in_workspace` before the handler runs; plugin code
that handles paths by itself calls the same function.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

MAX_PATH_CHARS = 4096
MAX_COMPONENT_BYTES = 255


class BoundaryError(ValueError):
    """A path argument that is invalid or outside the workspace; the message says why."""


def workspace_root(context: Any) -> Path:
    """The resolved workspace root of a run context."""
    cached = getattr(context, "_resolved_root", None)
    if cached is not None:
        return Path(cached)
    return Path(context.workspace).resolve()


def check_raw(raw: object) -> str:
    """``raw`` as a path string, or :class:`BoundaryError` (type, empty, NUL, length, ``~``)."""
    if isinstance(raw, os.PathLike):
        raw = os.fspath(raw)
    if not isinstance(raw, str):
        raise BoundaryError("path must be a string")
    if raw.strip() == "":
        raise BoundaryError("path is empty; give a path relative to the workspace root")
    if "\x00" in raw:
        raise BoundaryError("path contains a NUL byte")
    if len(raw) > MAX_PATH_CHARS:
        raise BoundaryError(f"path is too long ({len(raw)} characters, limit {MAX_PATH_CHARS})")
    for part in raw.split("/"):
        if len(part.encode("utf-8", "surrogatepass")) > MAX_COMPONENT_BYTES:
            raise BoundaryError(
                f"path component is too long ({len(part)} characters, limit {MAX_COMPONENT_BYTES})"
            )
    if raw.startswith("~"):
        raise BoundaryError(
            f"{raw!r} points into a home folder, which is outside the workspace; "
            "use a path relative to the workspace root"
        )
    return raw


def is_inside(path: Path, root: Path) -> bool:
    """True when ``path`` is ``root`` or below it (both already resolved)."""
    return path == root or root in path.parents


def resolve_strictly(candidate: Path, text: str) -> Path:
    """``candidate`` with every symlink resolved, or :class:`BoundaryError`.

    ``Path.resolve(strict=False)`` silently stops at a symlink loop and returns the rest
    unresolved, which could hide an escape; so the longest existing ancestor of the result is
    checked to be fully resolved.
    """
    try:
        resolved = candidate.resolve(strict=False)
        existing = resolved
        while not os.path.lexists(existing) and existing.parent != existing:
            existing = existing.parent
        if existing.resolve(strict=True) != existing:
            raise BoundaryError(f"cannot resolve {text!r}: a symlink loop or a broken symlink")
    except (OSError, RuntimeError) as exc:  # symlink loops, ENAMETOOLONG
        raise BoundaryError(f"cannot resolve {text!r}: {exc}") from None
    return resolved


def readable_roots(context: Any) -> list[Path]:
    """Folders outside the workspace whose files reads may open: the session's artifacts and
    ``context.readable_roots`` (resolved)."""
    roots = [(Path(context.home) / "artifacts").resolve()]
    for extra in getattr(context, "readable_roots", None) or ():
        try:
            roots.append(Path(extra).resolve())
        except (OSError, RuntimeError):
            continue
    return roots


def resolve_in_workspace(raw: object, context: Any, *, write: bool = False) -> Path:
    """Resolve ``raw`` (relative to the workspace, or absolute inside it), symlinks followed.

    Raises :class:`BoundaryError` with a readable message when the path is invalid or ends up
    outside the workspace. Reads (``write=False``) may also resolve into the session's
    artifacts folder and ``context.readable_roots``; writes only into the workspace.
    """
    text = check_raw(raw)
    root = workspace_root(context)
    candidate = Path(text)
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = resolve_strictly(candidate, text)
    if is_inside(resolved, root):
        return resolved
    if not write and any(is_inside(resolved, extra) for extra in readable_roots(context)):
        return resolved
    lexical = os.path.normpath(str(candidate))
    if is_inside(Path(lexical), root):
        why = "it is a symlink that leads outside the workspace"
    else:
        why = "it is outside the workspace"
    raise BoundaryError(
        f"{text!r} is refused: {why} ({root}). Only paths inside the workspace can be used."
    )


def relative(path: Path, context: Any) -> str:
    """``path`` relative to the workspace root (POSIX style), or absolute if outside."""
    root = workspace_root(context)
    try:
        rel = path.relative_to(root)
    except ValueError:
        return str(path)
    text = rel.as_posix()
    return text if text else "."

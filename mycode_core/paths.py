"""The workspace boundary, owned by the core: one implementation for every tool. Tools declare
path parameters (``ReadPath`` / ``WritePath``) and the core resolves them with
:func:`resolve_in_workspace`; plugin code handling paths itself calls the same function."""

from __future__ import annotations

import contextlib
import functools
import io
import os
from collections.abc import Iterable
from pathlib import Path, PosixPath
from typing import IO, Any

from mycode_core import safeopen

MAX_PATH_CHARS = 4096
MAX_COMPONENT_BYTES = 255


class BoundaryError(ValueError):
    """A path argument that is invalid or outside the workspace; the message says why."""


def workspace_root(context: Any) -> Path:
    """The resolved workspace root of a run context (cached on the context)."""
    workspace = context.workspace
    cached = getattr(context, "_resolved_root", None)
    if cached is not None and cached[0] == workspace:
        return cached[1]  # type: ignore[no-any-return]
    root = Path(workspace).resolve()
    with contextlib.suppress(AttributeError):  # a context object that takes no attributes
        context._resolved_root = (workspace, root)
    return root


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
    """``candidate`` with every symlink resolved, or :class:`BoundaryError`."""
    # resolve(strict=False) stops silently at a symlink loop, which could hide an escape
    try:
        resolved = os.path.realpath(candidate)
        existing = resolved
        while not os.path.lexists(existing):
            parent = os.path.dirname(existing)
            if parent == existing:
                break
            existing = parent
        # realpath resolves every link it can; a link left in the result is a loop
        if os.path.islink(existing):
            raise BoundaryError(f"cannot resolve {text!r}: a symlink loop or a broken symlink")
    except (OSError, RuntimeError, ValueError) as exc:  # ENAMETOOLONG, embedded NUL
        raise BoundaryError(f"cannot resolve {text!r}: {exc}") from None
    return Path(resolved)


def readable_roots(context: Any) -> list[Path]:
    """Folders outside the workspace reads may open: this session's artifacts folder (child
    agents share it) and ``context.readable_roots``, resolved; never the rest of MYCODE_HOME."""
    from mycode_core.sessions import is_session_id

    session_id, home = getattr(context, "session_id", None), getattr(context, "home", None)
    own = isinstance(session_id, str) and is_session_id(session_id) and home is not None
    artifacts = [Path(str(home)) / "artifacts" / str(session_id)] if own else []
    return resolved_paths([*artifacts, *(getattr(context, "readable_roots", None) or ())])


def resolved_paths(items: Iterable[Any]) -> list[Path]:
    """``items`` as resolved paths; one that cannot be resolved (a symlink loop) is left out."""
    found: list[Path] = []
    for item in items:
        with contextlib.suppress(OSError, RuntimeError):
            found.append(Path(item).resolve())
    return found


def resolve_in_workspace(raw: object, context: Any, *, write: bool = False) -> Path:
    """Resolve ``raw`` (relative to the workspace, or absolute inside it), symlinks followed;
    :class:`BoundaryError` when invalid or outside (reads may also use :func:`readable_roots`)."""
    text = check_raw(raw)
    root = workspace_root(context)
    candidate = Path(text)
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = resolve_strictly(candidate, text)
    home = Path(getattr(context, "home", None) or "/").resolve()  # never part of the workspace
    own = root in home.parents and is_inside(resolved, home)
    if is_inside(resolved, root) and not own:
        return resolved
    if not write and any(is_inside(resolved, extra) for extra in readable_roots(context)):
        return resolved
    lexical = os.path.normpath(str(candidate))
    if own:
        why = "it is in MYCODE_HOME, mycode's own folder, which is not part of the workspace"
    elif is_inside(Path(lexical), root):
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
        return path.relative_to(root).as_posix()  # the root itself: "."
    except ValueError:
        return str(path)


_WRITE_FLAGS = {
    "r": os.O_RDONLY,
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
}


def open_beneath(root: Path, relative_path: str, flags: int, mode: int = 0o666) -> int:
    """A descriptor of ``root/relative_path`` (``root`` resolved) opened without following any
    symlink on the way, so a symlink swapped in after the check cannot redirect it."""
    parts = [part for part in Path(relative_path).parts if part not in ("", ".")]
    if any(part == ".." for part in parts) or Path(relative_path).is_absolute():
        raise PermissionError(f"{relative_path!r} is not a path below {root}")
    target = Path(root).joinpath(*parts)
    if not parts:
        return safeopen.open_fd(target, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    return safeopen.open_read(target, flags, mode)  # a FIFO or device: refused, not opened


class BoundPath(PosixPath):
    """A resolved path handed to a tool: ``open()`` opens it beneath its root with no symlink
    followed, read-only unless a ``WritePath``; derived paths (``/``, ``parent``) keep the rules."""

    _root: Path = Path("/")
    _writable: bool = False

    def open(  # type: ignore[override]
        self,
        mode: str = "r",
        buffering: int = -1,
        encoding: str | None = None,
        errors: str | None = None,
        newline: str | None = None,
    ) -> IO[Any]:
        """Open without following symlinks; writing needs a ``WritePath``."""
        kind = next((c for c in mode if c in "rwax"), "r")
        if (kind != "r" or "+" in mode) and not self._writable:
            raise PermissionError(f"{self} was given for reading only (declare a WritePath)")
        flags = _WRITE_FLAGS[kind] & ~os.O_WRONLY | os.O_RDWR if "+" in mode else _WRITE_FLAGS[kind]
        try:
            rel = os.path.relpath(self, self._root)
        except ValueError:
            raise PermissionError(f"{self} is outside {self._root}") from None
        fd = open_beneath(self._root, rel, flags)
        if "b" in mode:
            return os.fdopen(fd, mode, buffering)
        encoding = io.text_encoding(encoding)
        return os.fdopen(fd, mode, buffering, encoding=encoding, errors=errors, newline=newline)


@functools.cache
def _bound_class(root: Path, writable: bool) -> type[BoundPath]:
    return type("BoundPath", (BoundPath,), {"_root": root, "_writable": writable})


def bind_path(path: Path, root: Path, *, writable: bool) -> BoundPath:
    """``path`` as a :class:`BoundPath` opened beneath ``root``."""
    return _bound_class(root, writable)(path)


def bind_argument(raw: object, context: Any, *, write: bool) -> BoundPath:
    """A path argument through :func:`resolve_in_workspace`, bound beneath the root holding it."""
    resolved = resolve_in_workspace(raw, context, write=write)
    return bind_path(resolved, bound_root(resolved, context), writable=write)


def bound_root(path: Path, context: Any) -> Path:
    """The root a resolved path is opened beneath: the workspace or the readable root holding it."""
    root = workspace_root(context)
    if is_inside(path, root):
        return root
    return next((extra for extra in readable_roots(context) if is_inside(path, extra)), root)

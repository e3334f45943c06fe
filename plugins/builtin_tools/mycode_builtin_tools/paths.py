"""The workspace boundary: turn a path argument into a resolved path inside the workspace.

Every file tool and the permission policy go through :func:`resolve_in_workspace`, so the
rules are the same everywhere: symlinks are followed, anything that resolves outside the
workspace root is refused (``../``, absolute paths, symlink escapes, ``~``), NUL bytes and
absurd lengths are errors. The one exception is reading this session's artifacts (saved
command output), which live under ``MYCODE_HOME``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath
from typing import Any

MAX_PATH_CHARS = 4096
MAX_COMPONENT_BYTES = 255


class BoundaryError(ValueError):
    """A path argument that is invalid or outside the workspace; the message says why."""


def workspace_root(context: Any) -> Path:
    """The resolved workspace root of a run context."""
    return Path(context.workspace).resolve()


def _check_raw(raw: object) -> str:
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


def _inside(path: Path, root: Path) -> bool:
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


def resolve_in_workspace(raw: object, context: Any, *, allow_artifacts: bool = False) -> Path:
    """Resolve ``raw`` (relative to the workspace, or absolute inside it) with symlinks followed.

    Raises :class:`BoundaryError` with a readable message when the path is invalid or ends up
    outside the workspace. With ``allow_artifacts`` a path under this session's artifacts
    folder is accepted too (read-only use).
    """
    text = _check_raw(raw)
    root = workspace_root(context)
    candidate = Path(text)
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = resolve_strictly(candidate, text)
    if _inside(resolved, root):
        return resolved
    if allow_artifacts:
        artifacts = (Path(context.home) / "artifacts").resolve()
        if _inside(resolved, artifacts):
            return resolved
    lexical = os.path.normpath(str(candidate))
    if _inside(Path(lexical), root):
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


_SENSITIVE_NAMES = {
    ".env",
    ".netrc",
    ".pgpass",
    ".pypirc",
    ".npmrc",
    ".git-credentials",
    "credentials",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
}
_SENSITIVE_SUFFIXES = (".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx")
_ENV_TEMPLATE = re.compile(r"^\.env\.(example|sample|template|dist|defaults?)$", re.IGNORECASE)
_PROTECTED_DIRS = (".git", ".mycode")


def sensitive_reason(path: Path | str) -> str | None:
    """Why a file looks like it holds secrets (``.env``, private keys), or ``None``."""
    name = PurePosixPath(str(path)).name
    lower = name.lower()
    if _ENV_TEMPLATE.match(name):
        return None
    if lower in _SENSITIVE_NAMES or lower.startswith(".env."):
        return f"{name} usually holds secrets"
    if lower.endswith(_SENSITIVE_SUFFIXES):
        return f"{name} looks like a private key or certificate store"
    return None


def protected_reason(rel: str) -> str | None:
    """Why writing to a workspace-relative path needs the user's say (``.git/``, ``.mycode/``)."""
    first = PurePosixPath(rel).parts[0] if rel not in ("", ".") else ""
    if first == ".git":
        return "it is inside .git/ (repository internals)"
    if first == ".mycode":
        return "it is inside .mycode/ (mycode's own configuration and permissions)"
    return None


def is_protected_dir_name(name: str) -> bool:
    """True for folder names whose contents need permission to change."""
    return name in _PROTECTED_DIRS

"""Where a command's path argument points: inside the workspace, a build folder, a temp
folder, a device, the home folder, elsewhere outside, or unknown (``$VAR``)."""

from __future__ import annotations

import fnmatch
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from mycode_core.paths import BoundaryError, resolve_strictly

BUILD_DIRS = {
    "build",
    "dist",
    "target",
    "out",
    "_build",
    "node_modules",
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    "htmlcov",
    "coverage",
    ".cache",
    ".next",
    ".nuxt",
    ".parcel-cache",
    ".turbo",
    ".gradle",
    ".eggs",
    "tmp",
    ".tmp",
    "temp",
}
BUILD_PATTERNS = ("*.egg-info", "*.pyc", "*.pyo", "*.o", "*.obj", "*.class", "*.log", ".coverage*")
SAFE_DEVICES = {
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/stdin",
    "/dev/tty",
    "/dev/zero",
    "/dev/random",
    "/dev/urandom",
}
_GLOB_CHARS = "*?["


@dataclass(frozen=True)
class Target:
    """A classified path argument. ``kind``: inside, root, build, temp, device, safe-device,
    home, outside, unknown."""

    kind: str
    raw: str
    path: Path | None = None

    @property
    def escapes(self) -> bool:
        """True if it points outside the workspace (and is not a temp folder or /dev/null)."""
        return self.kind in ("home", "outside", "device")


def _temp_roots() -> list[Path]:
    roots = {Path("/tmp"), Path("/var/tmp"), Path(tempfile.gettempdir())}
    return [Path(os.path.realpath(r)) for r in roots]


def is_build_name(name: str) -> bool:
    """True for a file or folder name that is a build product or cache (``*.pyc``, ``dist``)."""
    return name in BUILD_DIRS or any(fnmatch.fnmatch(name, p) for p in BUILD_PATTERNS)


def _is_build(rel_parts: tuple[str, ...], pattern_tail: str | None) -> bool:
    for part in rel_parts:
        if part in BUILD_DIRS or any(fnmatch.fnmatch(part, p) for p in BUILD_PATTERNS):
            return True
    if pattern_tail and any(fnmatch.fnmatch(pattern_tail, p) for p in BUILD_PATTERNS):
        return True
    return False


def classify(raw: str, cwd: Path, root: Path) -> Target:
    """Classify one path argument ``raw`` of a command run in ``cwd``."""
    if raw.startswith("~") or "$HOME" in raw or "${HOME}" in raw:
        return Target("home", raw)
    if "$" in raw or "`" in raw or raw.startswith(("<(", ">(")):
        return Target("unknown", raw)
    if raw.startswith("/dev/"):
        if raw in SAFE_DEVICES or raw.startswith("/dev/fd/"):
            return Target("safe-device", raw)
        return Target("device", raw)
    parts = raw.split("/")
    tail: str | None = None
    static: list[str] = []
    for index, part in enumerate(parts):
        if any(ch in part for ch in _GLOB_CHARS):
            tail = part if index == len(parts) - 1 else "*"
            break
        static.append(part)
    base = "/".join(static) if static else ""
    if raw.startswith("/") and not base:
        base = "/"
    joined = os.path.join(str(cwd), base) if base else str(cwd)
    try:
        resolved = resolve_strictly(Path(joined), raw)
    except BoundaryError:
        return Target("unknown", raw)
    root = Path(os.path.realpath(root))
    if resolved == root:
        if tail is None:
            return Target("root", raw, resolved)
        return Target("build" if _is_build((), tail) else "inside", raw, resolved)
    if root in resolved.parents:
        rel = resolved.relative_to(root).parts
        return Target("build" if _is_build(rel, tail) else "inside", raw, resolved)
    if resolved in root.parents:
        return Target("outside", raw, resolved)
    for temp in _temp_roots():
        if raw.startswith("/") and temp in resolved.parents:
            return Target("temp", raw, resolved)
    home = Path(os.path.realpath(os.path.expanduser("~")))
    if resolved == home or home in resolved.parents:
        return Target("home", raw, resolved)
    return Target("outside", raw, resolved)

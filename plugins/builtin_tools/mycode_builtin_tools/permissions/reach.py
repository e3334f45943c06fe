"""Where a command's words lead once symlinks are followed (the no-sandbox policy, SPEC §8).

A committed symlink (``creds -> ~/.aws/credentials``, ``ho -> ~``) makes an innocent-looking
word read outside the workspace. :func:`leads_out` resolves an operand, option value or
redirection (globs and braces by what they match) and names the destination when it leaves
the workspace for anything but a system folder; :func:`linked_out` walks the folders a
recursive read that follows links (``grep -R``, ``find -L``, ``du -L``…) would enter.
"""

from __future__ import annotations

import glob
import os
import re
from pathlib import Path

SYSTEM_READS = tuple(
    Path(p) for p in ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/opt", "/etc")
) + (Path("/nix/store"),)
"""Where a symlink may lead and still be read unasked (the toolchains a venv links to)."""
WALK_LIMIT = 20_000
"""Entries a link-following recursive read may span before it asks instead of being walked."""
GLOB_LIMIT = 500
_BRACES = re.compile(r"\{[^{}]*\}")


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def _allowed(real: Path, root: Path) -> bool:
    return _inside(real, root) or any(_inside(real, folder) for folder in SYSTEM_READS)


def _matches(word: str, cwd: Path) -> list[str] | None:
    """The paths ``word`` names: itself, or what its glob (braces taken as ``*``) matches;
    ``None`` when that is more than can be checked."""
    pattern = _BRACES.sub("*", word)
    if not any(ch in pattern for ch in "*?["):
        return [word]
    found = []
    for match in glob.iglob(pattern, root_dir=cwd):
        found.append(match)
        if len(found) > GLOB_LIMIT:
            return None
    return found or [word]


def leads_out(word: str, cwd: Path, root: Path, guarded: tuple[Path, ...] = ()) -> str | None:
    """Why reading ``word`` (relative to ``cwd``) through its symlinks leaves the workspace
    ``root`` (resolved), or ``None``: a path written inside that links out, or any path that
    links into a ``guarded`` folder (the home folders). A path written outside is the
    caller's to judge."""
    if not word or "\0" in word:
        return None
    names = _matches(word, cwd)
    if names is None:
        return f"{word} matches over {GLOB_LIMIT} paths, too many to check for links"
    for name in names:
        joined = os.path.join(cwd, name)
        try:
            real = Path(os.path.realpath(joined))
        except (OSError, ValueError):
            return f"{name} cannot be resolved"
        literal = Path(os.path.normpath(joined))
        if real == literal or _allowed(real, root):
            continue
        if _inside(literal, root) or any(_inside(real, folder) for folder in guarded):
            return f"{name} is a link that leads to {real}, outside the workspace"
    return None


def linked_out(tops: list[Path], root: Path, limit: int = WALK_LIMIT) -> str | None:
    """Why following the links under the folders ``tops`` would read outside the workspace
    (a link there leads out, or there are more than ``limit`` entries to check), or ``None``."""
    stack = [Path(os.path.realpath(top)) for top in tops if top.is_dir()]
    seen = 0
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        seen += len(entries)
        if seen > limit:
            return f"{tops[0]} holds over {limit} entries, too many to check for links"
        for entry in entries:
            if entry.is_symlink():
                real = Path(os.path.realpath(entry.path))
                if not _allowed(real, root):
                    return f"{entry.path} is a link that leads to {real}, outside the workspace"
            elif entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
    return None

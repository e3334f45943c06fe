"""Getting a plugin's files: copy a folder, or clone a git repository at a revision.

Git runs only through :mod:`mycode_core.safegit` (no configuration, hook or filter of the
repository runs); a clone's ``.git`` is removed once the revision is known.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from mycode_core import safegit

_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.I)
GIT_TIMEOUT = 300.0


class FetchError(Exception):
    """The source could not be fetched (one readable line)."""


@dataclass(frozen=True)
class Source:
    """Where a plugin comes from: ``location`` (a path or URL) and an optional ``rev``."""

    location: str
    rev: str | None = None

    @property
    def is_url(self) -> bool:
        """Whether ``location`` is a URL (``scheme://`` or ``user@host:path``)."""
        return bool(_URL.match(self.location))

    def text(self) -> str:
        """``LOCATION`` or ``LOCATION#REV``."""
        return f"{self.location}#{self.rev}" if self.rev else self.location


def split_rev(spec: str) -> Source:
    """``URL#REV`` / ``PATH#REV`` into a :class:`Source` (a path is made absolute)."""
    location, _, rev = spec.partition("#") if "#" in spec else (spec, "", "")
    if not _URL.match(location):
        location = str(Path(location).expanduser().resolve())
    return Source(location, rev or None)


def is_git_repository(path: Path) -> bool:
    """Whether ``path`` is the top of a git work tree (or a bare repository)."""
    return (path / ".git").exists() or ((path / "HEAD").is_file() and (path / "objects").is_dir())


def _git(args: list[str], cwd: Path) -> str:
    try:
        done = safegit.run(args, cwd, timeout=GIT_TIMEOUT, text=True)
    except (safegit.SafeGitError, OSError) as exc:
        raise FetchError(f"git {args[0]} failed: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - a timeout and the like: one line
        raise FetchError(f"git {args[0]} failed: {type(exc).__name__}: {exc}") from None
    if done.returncode != 0:
        lines = [line for line in str(done.stderr).splitlines() if line.strip()]
        raise FetchError(lines[-1].strip() if lines else f"git {args[0]} failed")
    return str(done.stdout).strip()


def fetch(source: Source, into: Path) -> tuple[Path, str | None]:
    """Put the plugin's files in a new folder under ``into``; returns ``(folder, rev)``.

    A folder that is not a git repository (and has no ``#REV``) is copied (symlinks kept as
    links); a git repository or URL is cloned and checked out at ``rev`` (default: its HEAD).
    """
    path = Path(source.location)
    if not source.is_url:
        if not path.exists():
            raise FetchError(f"{source.location} does not exist")
        if not path.is_dir():
            raise FetchError(f"{source.location} is not a folder")
        if not is_git_repository(path):
            if source.rev:
                raise FetchError(f"{source.location} is not a git repository (#{source.rev})")
            target = into / path.name
            shutil.copytree(path, target, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            return target, None
    base = re.sub(r"(\.git)?/*$", "", source.location.rstrip("/")).rsplit("/", 1)[-1]
    base = re.sub(r"[^A-Za-z0-9._-]", "-", base.rsplit(":", 1)[-1]) or "plugin"
    target = into / base
    _git(["clone", "--quiet", "--no-checkout", source.location, str(target)], into)
    _git(["checkout", "--quiet", "--detach", source.rev or "HEAD"], target)
    rev = _git(["rev-parse", "HEAD"], target)
    shutil.rmtree(target / ".git", ignore_errors=True)
    return target, rev


_LINK_DEPTH = 8


def contain_links(copy: Path, origin: Path, boundary: Path) -> list[str]:
    """Make the fetched plugin ``copy`` (of the folder ``origin``) hold no symlink leading out
    of it: a link into the plugin stays (made relative, so it still works once installed); a
    link to elsewhere inside ``boundary`` (the marketplace: Claude Code keeps such links
    between plugins) is replaced by a copy of what it names; any other link — outside the
    marketplace, dangling, or naming a folder the plugin is in — is removed. Returns the
    removed links (paths relative to ``copy``). Nothing outside ``boundary`` is ever read."""
    plugin = Path(os.path.realpath(origin))
    removed: list[str] = []
    _contain(copy, copy, plugin, plugin, Path(os.path.realpath(boundary)), removed, 0)
    return removed


def _contain(
    root: Path, here: Path, at: Path, plugin: Path, boundary: Path, removed: list[str], depth: int
) -> None:
    """One folder of :func:`contain_links`: ``here`` (in the copy) is a copy of ``at`` (real)."""
    for entry in sorted(os.scandir(here), key=lambda e: e.name):
        path, origin = Path(entry.path), at / entry.name
        if not entry.is_symlink():
            if entry.is_dir(follow_symlinks=False):
                _contain(root, path, origin, plugin, boundary, removed, depth)
            continue
        target = Path(os.path.realpath(origin))
        path.unlink()
        if target.is_relative_to(plugin) and os.path.lexists(target):
            inside = root / target.relative_to(plugin)
            path.symlink_to(os.path.relpath(inside, path.parent))
        elif (
            os.path.lexists(target)
            and target.is_relative_to(boundary)
            and not at.is_relative_to(target)
            and not plugin.is_relative_to(target)
            and depth < _LINK_DEPTH
        ):
            if target.is_dir():
                shutil.copytree(target, path, symlinks=True)
                _contain(root, path, target, plugin, boundary, removed, depth + 1)
            elif target.is_file():
                shutil.copy2(target, path)
            else:
                removed.append(str(path.relative_to(root)))
        else:
            removed.append(str(path.relative_to(root)))


def remove(path: Path) -> None:
    """Remove a folder (or a file, or a link) if it exists."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.exists():
        shutil.rmtree(path)


def staging_dir(home: Path) -> Path:
    """A fresh temporary folder under ``$MYCODE_HOME/plugins/.staging`` (same filesystem, so
    the finished plugin is moved into place with one rename)."""
    import tempfile

    base = home / "plugins" / ".staging"
    base.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=base))

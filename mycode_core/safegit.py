"""Run git for mycode itself without running anything the repository configured: a hostile
workspace's config can make git run programs and its environment can redirect git. Callers
treat :class:`SafeGitError` as "not a git repository". Part of the public API."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mycode_core.safeopen import open_regular

__all__ = [
    "NEUTRAL_CONFIG",
    "Repository",
    "SafeGitError",
    "config_overrides",
    "find_repository",
    "safe_env",
    "run",
]

NEUTRAL_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", "true"),
    ("core.askPass", ""),
    ("core.sshCommand", "ssh"),
    ("core.gitProxy", ""),
    ("core.untrackedCache", "false"),
    ("core.alternateRefsCommand", ""),
    ("sequence.editor", "true"),
    ("diff.external", ""),
    ("credential.helper", ""),
    ("gpg.program", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("protocol.ext.allow", "never"),
    ("uploadpack.packObjectsHook", ""),
)
"""Settings that would run a program, forced to a harmless value on every call."""

# each driver section's program-running keys, set to a harmless value (git runs an empty
# textconv/diff command/merge driver as a program named "")
_DRIVER_NEUTRAL = {
    "filter": {"clean": "", "smudge": "", "process": "", "required": "false"},
    "diff": {"textconv": "cat", "command": "true", "cachetextconv": "false"},
    "merge": {"driver": "false"},
}
_REFUSED_SECTIONS = ("include", "includeif")  # files we would have to follow
_MAX_CONFIG = 1 << 20
# no system or user config, no prompt, no pager, no askpass
_FIXED_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_ASKPASS": "true",
    "SSH_ASKPASS": "true",
}


class SafeGitError(Exception):
    """The repository cannot be used safely; the message says why (one line)."""


@dataclass(frozen=True)
class Repository:
    """A repository resolved without git: its work tree, git folder and common folder."""

    work_tree: Path
    git_dir: Path
    common_dir: Path


def _read_nofollow(path: Path, limit: int = _MAX_CONFIG) -> str | None:
    """The text of ``path`` (None if absent); a symlink or a non-file is refused."""
    try:
        with open_regular(path) as handle:
            data = handle.read(limit + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SafeGitError(f"{path} cannot be read safely ({exc.strerror})") from None
    if len(data) > limit:
        raise SafeGitError(f"{path} is too large")
    return data.decode("utf-8", errors="replace")


def _resolve_dir(base: Path, target: str, root: str | None, what: str) -> Path:
    """``target`` (relative to ``base``) as a real folder, inside ``root`` when given."""
    raw = target.strip()
    if not raw:
        raise SafeGitError(f"{what} is empty")
    real = os.path.realpath(os.path.join(str(base), raw))
    if root is not None and not Path(real).is_relative_to(root):
        raise SafeGitError(f"{what} leads outside the workspace ({raw})")
    if not os.path.isdir(real):
        raise SafeGitError(f"{what} is not a folder (a loop or a missing target: {raw})")
    return Path(real)


def find_repository(root: Path, *, contain: bool = True) -> Repository | None:
    """The repository whose work tree is ``root`` (None without ``.git``), found without git;
    with ``contain``, a ``.git`` link, ``gitdir:`` or ``commondir`` leading out raises."""
    top = os.path.realpath(str(root))
    limit = top if contain else None
    dot_git = Path(top) / ".git"
    try:
        st = os.lstat(dot_git)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SafeGitError(f".git cannot be read ({exc.strerror})") from None
    if stat.S_ISLNK(st.st_mode):
        git_dir = _resolve_dir(Path(top), ".git", limit, ".git (a symlink)")
    elif stat.S_ISDIR(st.st_mode):
        git_dir = dot_git
    elif stat.S_ISREG(st.st_mode):
        text = _read_nofollow(dot_git, 4096) or ""
        first = (text.splitlines() or [""])[0]
        if not first.startswith("gitdir:"):
            raise SafeGitError(".git is a file without a gitdir: line")
        git_dir = _resolve_dir(Path(top), first[len("gitdir:") :], limit, ".git's gitdir")
    else:
        raise SafeGitError(".git is neither a folder nor a file")
    common = _read_nofollow(git_dir / "commondir", 4096)
    common_dir = git_dir if common is None else _resolve_dir(git_dir, common, limit, "commondir")
    if not os.path.lexists(git_dir / "HEAD"):
        return None
    return Repository(Path(top), git_dir, common_dir)


# ``[section]``, ``[section "sub"]`` (``\\`` escapes the next character) or ``[section.sub]``
_HEADER = re.compile(r'\[([^ \t"\]]*)[ \t]*(?:"((?:[^"\\]|\\.)*)")?\]')


def config_overrides(repo: Repository | None) -> list[str]:
    """The ``-c`` arguments neutralising :data:`NEUTRAL_CONFIG` and the repository's drivers."""
    drivers: set[tuple[str, str]] = set()
    paths = () if repo is None else (repo.common_dir / "config", repo.git_dir / "config.worktree")
    for path in paths:
        for raw in (_read_nofollow(path) or "").splitlines():
            line = raw.lstrip()
            if not line.startswith("["):
                continue
            if (match := _HEADER.match(line)) is None:
                raise SafeGitError(f"{path}: a section header we cannot read")
            name, quoted = match.group(1), match.group(2)
            sub = None if quoted is None else re.sub(r"\\(.)", r"\1", quoted)
            if sub is None and "." in name:
                name, _, sub = name.partition(".")
            section = name.lower()
            if section in _REFUSED_SECTIONS:
                raise SafeGitError(f"{path} includes other configuration files")
            if section in _DRIVER_NEUTRAL and sub is not None:
                drivers.add((section, sub))
    pairs = list(NEUTRAL_CONFIG)
    for section, sub in sorted(drivers):
        for key, value in _DRIVER_NEUTRAL[section].items():
            pairs.append((f"{section}.{sub}.{key}", value))
    return [arg for key, value in pairs for arg in ("-c", f"{key}={value}")]


def safe_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This environment without ``GIT_*`` variables, plus the fixed safe ones and ``extra``."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_") and key not in ("SSH_ASKPASS", "PAGER", "LESSOPEN")
    }
    return env | _FIXED_ENV | dict(extra or {})


def run(
    args: Sequence[str],
    cwd: Path,
    *,
    root: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    text: bool = False,
) -> subprocess.CompletedProcess[str] | subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` in ``cwd`` with a scrubbed environment and every program-running
    setting neutralised, output captured. The repository is ``root``'s, resolved and contained
    here (passed as ``GIT_DIR``/``GIT_WORK_TREE``: git discovers nothing), else ``cwd``'s with
    discovery stopped there. Raises :class:`SafeGitError` when unsafe, else as subprocess.run."""
    extra = dict(env or {})
    if root is not None:
        repo = find_repository(root, contain=True)
        if repo is None:
            raise SafeGitError(f"{root} is not a git work tree")
        extra.setdefault("GIT_DIR", str(repo.git_dir))
        extra.setdefault("GIT_WORK_TREE", str(repo.work_tree))
    else:
        repo = find_repository(Path(cwd), contain=False)
        extra.setdefault("GIT_CEILING_DIRECTORIES", os.path.dirname(os.path.realpath(cwd)))
    return subprocess.run(
        ["git", "--no-pager", *config_overrides(repo), *args],
        cwd=str(cwd),
        env=safe_env(extra),
        capture_output=True,
        encoding="utf-8" if text else None,
        errors="replace" if text else None,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
    )

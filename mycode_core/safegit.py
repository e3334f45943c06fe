"""Run git for mycode itself without running anything the repository configured.

A repository's own configuration can make git execute programs (``core.fsmonitor``,
``core.hooksPath``, ``diff.external``, ``filter.<name>.clean``/``smudge``/``process``,
``diff.<name>.textconv``/``command``, ``merge.<name>.driver``, ``core.pager``,
``credential.helper``...), and the environment can redirect git to another repository
(``GIT_DIR``, ``GIT_WORK_TREE``, ``GIT_CONFIG_*``...). A hostile workspace may hold any of
these, so every git command mycode runs for its own purposes goes through :func:`run`:

* the environment is scrubbed of every inherited ``GIT_*`` variable, then set to
  ``GIT_CONFIG_NOSYSTEM=1``, ``GIT_CONFIG_GLOBAL=/dev/null``, ``GIT_TERMINAL_PROMPT=0`` and
  ``GIT_PAGER=cat`` (no askpass helpers either);
* ``-c`` overrides (which win over every configuration file) neutralise the fixed list
  :data:`NEUTRAL_CONFIG`, plus every ``filter``/``diff``/``merge`` driver the repository
  declares; those are found by reading the configuration files here, opened no-follow, never
  by asking git. A configuration with ``[include]``/``[includeIf]`` (files we would have to
  follow), a header we cannot parse, or a configuration file that is a symlink is refused;
* with ``root`` (the workspace), the repository is resolved here: ``root/.git`` as a folder or
  as a ``gitdir:`` file, then its ``commondir``; any step that leads outside ``root`` (a
  symlink out, a loop, an absolute path elsewhere) is refused with :class:`SafeGitError`, and
  ``GIT_DIR``/``GIT_WORK_TREE`` are passed explicitly so git discovers nothing itself.
  Without ``root`` (a copy mycode made itself), discovery stops at ``cwd``.

Callers treat :class:`SafeGitError` as "not a git repository" and fall back to whatever they
do without git. Plugins use this module too (it is part of the public API).
"""

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

_DRIVER_KEYS = {
    "filter": ("clean", "smudge", "process"),
    "diff": ("textconv", "command"),
    "merge": ("driver",),
}
_DRIVER_NEUTRAL = {"textconv": "cat", "command": "true", "driver": "false"}
"""Git runs an empty textconv/diff command/merge driver as a program named "", so those get a
harmless one instead (``cat``: the text as is; ``true``: no external diff output, callers pass
``--no-ext-diff``; ``false``: a merge conflict). An empty filter is skipped by git."""
_REFUSED_SECTIONS = ("include", "includeif")
_MAX_CONFIG = 1 << 20
_FIXED_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_ASKPASS": "true",
    "SSH_ASKPASS": "true",
}
"""What every git run gets: no system or user config, no prompt, no pager, no askpass."""


class SafeGitError(Exception):
    """The repository cannot be used safely; the message says why (one line)."""


@dataclass(frozen=True)
class Repository:
    """A repository resolved without git: its work tree, git folder and common folder."""

    work_tree: Path
    git_dir: Path
    common_dir: Path


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


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
    joined = os.path.join(str(base), raw)
    real = os.path.realpath(joined)
    if root is not None and not _inside(real, root):
        raise SafeGitError(f"{what} leads outside the workspace ({raw})")
    if not os.path.isdir(real):
        raise SafeGitError(f"{what} is not a folder (a loop or a missing target: {raw})")
    return Path(real)


def find_repository(root: Path, *, contain: bool = True) -> Repository | None:
    """The repository whose work tree is ``root``; None if ``root`` has no ``.git``.

    With ``contain``, every step (``.git`` symlink, ``gitdir:`` file, ``commondir``) must stay
    inside ``root``; otherwise :class:`SafeGitError`. Git itself is never run.
    """
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
        git_dir = Path(dot_git)
    elif stat.S_ISREG(st.st_mode):
        text = _read_nofollow(dot_git, 4096) or ""
        first = text.splitlines()[0] if text.splitlines() else ""
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


_HEADER = re.compile(r'\[([^ \t"\]]*)[ \t]*(?:"((?:[^"\\]|\\.)*)")?\]')
"""``[section]``, ``[section "sub"]`` (``\\`` escapes the next character) or the old
``[section.sub]``."""


def _section_header(line: str, path: Path) -> tuple[str, str | None, str]:
    """Parse a ``[section "sub"]`` header; return (section, subsection, rest of line)."""
    match = _HEADER.match(line)
    if match is None:
        raise SafeGitError(f"{path}: a section header we cannot read")
    name, quoted = match.group(1), match.group(2)
    sub = None if quoted is None else re.sub(r"\\(.)", r"\1", quoted)
    if sub is None and "." in name:
        name, _, sub = name.partition(".")
    return name.lower(), sub, line[match.end() :]


def _declared(path: Path, text: str) -> set[tuple[str, str]]:
    """(section, subsection) of every driver section declared in one config file."""
    found: set[tuple[str, str]] = set()
    for raw in text.splitlines():
        line = raw.lstrip()
        if not line.startswith("["):
            continue
        section, sub, _rest = _section_header(line, path)
        if section in _REFUSED_SECTIONS:
            raise SafeGitError(f"{path} includes other configuration files")
        if section in _DRIVER_KEYS and sub is not None:
            found.add((section, sub))
    return found


def config_overrides(repo: Repository | None) -> list[str]:
    """The ``-c key=value`` arguments neutralising :data:`NEUTRAL_CONFIG` and every
    filter/diff/merge driver the repository's configuration files declare."""
    pairs = list(NEUTRAL_CONFIG)
    if repo is not None:
        drivers: set[tuple[str, str]] = set()
        for path in (repo.common_dir / "config", repo.git_dir / "config.worktree"):
            text = _read_nofollow(path)
            if text is not None:
                drivers |= _declared(path, text)
        for section, sub in sorted(drivers):
            for key in _DRIVER_KEYS[section]:
                pairs.append((f"{section}.{sub}.{key}", _DRIVER_NEUTRAL.get(key, "")))
            if section == "filter":
                pairs.append((f"filter.{sub}.required", "false"))
            if section == "diff":
                pairs.append((f"diff.{sub}.cachetextconv", "false"))
    return [arg for key, value in pairs for arg in ("-c", f"{key}={value}")]


def safe_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment without any ``GIT_*`` variable, plus the fixed safe ones
    and ``extra`` (e.g. a private ``GIT_INDEX_FILE`` mycode chose)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("GIT_") and key not in ("SSH_ASKPASS", "PAGER", "LESSOPEN")
    }
    env.update(_FIXED_ENV)
    if extra:
        env.update(extra)
    return env


def run(
    args: Sequence[str],
    cwd: Path,
    *,
    root: Path | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
    text: bool = False,
) -> subprocess.CompletedProcess[str] | subprocess.CompletedProcess[bytes]:
    """Run ``git ARGS`` in ``cwd`` safely (see the module doc); stdout/stderr captured.

    ``root`` is the workspace whose repository is used (resolved and contained here);
    without it the repository at ``cwd`` is used, and discovery does not look above ``cwd``.
    ``env`` adds variables for this call. Raises :class:`SafeGitError` when the repository
    cannot be used safely, :class:`OSError`/:class:`subprocess.SubprocessError` as
    :func:`subprocess.run` does.
    """
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
    command = ["git", "--no-pager", *config_overrides(repo), *args]
    return subprocess.run(
        command,
        cwd=str(cwd),
        env=safe_env(extra),
        capture_output=True,
        text=text,
        encoding="utf-8" if text else None,
        errors="replace" if text else None,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        check=False,
    )

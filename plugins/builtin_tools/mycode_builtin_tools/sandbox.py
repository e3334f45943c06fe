"""The OS sandbox of ``run_command`` (SPEC §8), built on bubblewrap.

``sandbox = "auto"`` (the default) sandboxes commands in ``default`` and ``accept-edits``
modes whenever bubblewrap works here; ``"on"`` makes a missing sandbox a configuration error;
``"off"`` (or ``false``) never sandboxes. ``bypass`` never sandboxes. ``[sandbox]`` widens it:
``network = true``, ``writable = [...]``, ``env_passthrough = [...]`` (and ``mode = ...``).

Inside: the whole file system read-only, the workspace and the ``writable`` folders writable, a
private ``/tmp`` — the session's own folder under ``MYCODE_HOME``, so what one command leaves
there the next finds, as on a machine, and gone when the session ends — (keeping, read-only,
the ``PATH`` folders and virtualenvs that lie in the real one: see :func:`tmp_toolchains`),
the home's credential folders and ``MYCODE_HOME`` replaced by empty ones,
the whole ``.git`` (see :func:`read_only_paths`), ``.claude/``, ``.codex/`` and ``.mycode/``
read-only, the folders plugins made readable (``context.readable_roots``: a skill's folder
under ``MYCODE_HOME`` or ``/tmp``, see :func:`readable_binds`) visible read-only, no network,
no capabilities (even as root), its own pid namespace (nothing outlives the call) and
session, dying with mycode.
``bwrap`` itself comes only from a trusted location (:mod:`.bwrap_location`), never ``PATH``.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_builtin_tools import bwrap_location
from mycode_builtin_tools.paths import CONFIG_FILES, CONFIG_FOLDERS
from mycode_core import safegit
from mycode_core.api import safeopen

NO_NAMESPACES = "bubblewrap cannot create namespaces here (unprivileged user namespaces disabled?)"
MODES = ("auto", "on", "off")
SANDBOXED_PERMISSION_MODES = ("default", "accept-edits")
CREDENTIALS = (
    ".ssh", ".aws", ".gnupg", ".config/gcloud", ".kube", ".docker", ".netrc",
    ".git-credentials", ".npmrc", ".pypirc", ".config/gh", ".config/hub", ".azure",
    ".terraform.d", ".cargo/credentials", ".cargo/credentials.toml", ".gem/credentials",
    ".m2/settings.xml", ".pgpass", ".my.cnf", ".vault-token", ".password-store",
    ".local/share/keyrings", ".config/git/credentials", ".claude/.credentials.json",
    ".codex/auth.json", ".config/op", ".mycode", ".claude.json", ".config/io.datasette.llm",
    ".cache/huggingface/token", ".huggingface/token", ".env", ".bash_history", ".zsh_history",
    ".python_history", ".node_repl_history", ".psql_history", ".mysql_history",
    ".sqlite_history", ".local/share/fish/fish_history",
)  # fmt: skip
HIDDEN_SYSTEM = ("/run/user", "/run/docker.sock", "/var/run/docker.sock", "/run/containerd")
_BASE_FLAGS = (
    "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
    "--unshare-cgroup-try", "--cap-drop", "ALL",
)  # fmt: skip


class SandboxConfigError(ValueError):
    """A ``sandbox`` setting that cannot be used; the message names what to fix."""


@dataclass
class SandboxConfig:
    """The sandbox settings of a run."""

    mode: str = "auto"
    network: bool = False
    writable: list[Path] = field(default_factory=list)
    env_passthrough: list[str] = field(default_factory=list)
    bwrap: str | None = None
    """``[sandbox] bwrap`` from the user config (never from a project layer)."""
    ignored: list[str] = field(default_factory=list)
    """Project-layer settings this config did not take (``[sandbox] bwrap``)."""


@dataclass
class Status:
    """What applies to commands of this run (``mycode doctor`` shows it)."""

    available: bool
    active: bool
    mechanism: str | None
    mode: str
    problem: str | None = None


def _as_list(value: Any, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise SandboxConfigError(f"[sandbox] {key} must be a list of strings")


def config(settings: Any) -> SandboxConfig:
    """Read ``sandbox`` (``"auto"|"on"|"off"``, ``true``/``false``, or a ``[sandbox]`` table)."""
    raw = getattr(settings, "sandbox", "auto") if settings is not None else "auto"
    table: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {"mode": raw}
    mode = table.get("mode", "auto")
    if mode is True:
        mode = "on"
    elif mode is False:
        mode = "off"
    if mode not in MODES:
        raise SandboxConfigError(
            f'sandbox = {mode!r} is not valid: use "auto", "on" or "off" '
            "(or a [sandbox] table with mode, network, writable, env_passthrough)"
        )
    network = table.get("network", False)
    if not isinstance(network, bool):
        raise SandboxConfigError("[sandbox] network must be true or false")
    writable = [Path(p).expanduser() for p in _as_list(table.get("writable"), "writable")]
    passthrough = _as_list(table.get("env_passthrough"), "env_passthrough")
    bwrap, ignored = _configured_bwrap(settings)
    return SandboxConfig(str(mode), network, writable, passthrough, bwrap, ignored)


_PROJECT_FILES = {"project": ".mycode/config.toml", "local": ".mycode/config.local.toml"}


def _configured_bwrap(settings: Any) -> tuple[str | None, list[str]]:
    """``[sandbox] bwrap`` of the user layers, and a note for each project layer setting it."""
    chosen: str | None = None
    ignored: list[str] = []
    for name, data in getattr(settings, "layers", None) or []:
        table = data.get("sandbox") if isinstance(data, dict) else None
        if not isinstance(table, dict) or "bwrap" not in table:
            continue
        if name in _PROJECT_FILES:
            ignored.append(
                f"[sandbox] bwrap in {_PROJECT_FILES[name]} is ignored: "
                "only your user config ($MYCODE_HOME/config.toml) may choose the sandbox program"
            )
            continue
        value = table["bwrap"]
        if not isinstance(value, str) or not value:
            raise SandboxConfigError("[sandbox] bwrap must be the absolute path of bwrap")
        chosen = str(Path(value).expanduser())
    return chosen, ignored


def bwrap_path(configured: str | None = None) -> str | None:
    """Path of a trusted ``bwrap`` that can build the full sandbox here, or ``None``.

    :param configured: ``[sandbox] bwrap`` of the user config (:attr:`SandboxConfig.bwrap`).
    """
    return _locate(configured)[0]


@functools.lru_cache(maxsize=8)
def _locate(configured: str | None) -> tuple[str | None, str | None]:
    """``(bwrap, None)`` or ``(None, why)`` (``why`` is ``None`` when none is installed)."""
    if not sys.platform.startswith("linux"):
        return None, None
    path, rejected = bwrap_location.find(configured)
    if path is None:
        return None, rejected
    from mycode_builtin_tools.probe_cache import cached_probe

    if not cached_probe(path, _probe):
        return None, NO_NAMESPACES
    return path, None


def _probe(path: str) -> bool:
    probe = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    probe += [*_BASE_FLAGS, "--unshare-net", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def unavailable_reason(configured: str | None = None) -> str:
    """Why no sandbox can run here (for notices, denials and ``doctor``)."""
    if not sys.platform.startswith("linux"):
        return f"no command sandbox on {sys.platform} yet (Linux bubblewrap only)"
    why = _locate(configured)[1]
    if why is not None:
        return why
    return "bubblewrap (bwrap) is not installed (e.g. apt-get install bubblewrap)"


def status(settings: Any, permission_mode: str | None = None) -> Status:
    """Whether commands are sandboxed; raises :class:`SandboxConfigError` for bad settings."""
    cfg = config(settings)
    mode = permission_mode or str(getattr(settings, "permission_mode", "default"))
    available = bwrap_path(cfg.bwrap) is not None
    mechanism = "bubblewrap" if available else None
    wanted = cfg.mode != "off" and mode in SANDBOXED_PERMISSION_MODES
    problem = None
    reason = unavailable_reason(cfg.bwrap)
    if cfg.mode == "on" and not available:
        problem = f'sandbox = "on" but no sandbox is available: {reason}'
    elif cfg.mode == "auto" and not available and mode in SANDBOXED_PERMISSION_MODES:
        problem = f"commands are not sandboxed: {reason}"
    return Status(available, wanted and available, mechanism, cfg.mode, problem)


def _homes() -> list[Path]:
    out = []
    for raw in (os.environ.get("HOME"), str(Path.home())):
        if raw:
            path = Path(raw).resolve()
            if path not in out and path != Path("/"):
                out.append(path)
    return out


def _mask(path: Path, cmd: list[str], masked: set[Path]) -> None:
    if not os.path.lexists(path):
        return
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return
    if real in masked or not os.path.lexists(real):
        return
    masked.add(real)
    cmd += _hidden(real)


def _hidden(real: Path) -> list[str]:
    return ["--tmpfs", str(real)] if real.is_dir() else ["--ro-bind", "/dev/null", str(real)]


def tmp_toolchains(path_env: str, prefixes: list[str | None]) -> list[Path]:
    """The folders under ``/tmp`` that commands need to find the user's programs: each
    absolute ``PATH`` entry there (the whole virtualenv when it is one's ``bin``) and each of
    ``prefixes`` (mycode's interpreter, ``VIRTUAL_ENV``). ``/tmp`` itself is never one."""
    found: list[Path] = []
    for raw in [*path_env.split(os.pathsep), *prefixes]:
        if not raw or not os.path.isabs(raw):
            continue
        real = Path(os.path.realpath(raw))
        if real.parent.joinpath("pyvenv.cfg").is_file():
            real = real.parent
        if real.parts[:2] != ("/", "tmp") or len(real.parts) < 3 or not real.is_dir():
            continue
        if not any(real == seen or seen in real.parents for seen in found):
            found = [seen for seen in found if real not in seen.parents] + [real]
    return found


def missing_config_folders(workspace: Path) -> list[Path]:
    """The :data:`CONFIG_FOLDERS`, :data:`CONFIG_FILES` and ``.git`` of ``workspace`` that do
    not exist: nothing can be bound read-only there, so one a command creates is taken back
    after it (:func:`take_back`; a new ``.git`` folder whose config runs nothing, ``git
    init``'s, stays)."""
    names = (*CONFIG_FOLDERS, *CONFIG_FILES, ".git")
    return [workspace / name for name in names if not os.path.lexists(workspace / name)]


_RUNS_KEYS = {key.lower() for key, _ in safegit.NEUTRAL_CONFIG} | {"interactive.difffilter"}
_RUNS_SUBKEYS = {
    ("diff", "textconv"), ("diff", "command"), ("merge", "driver"), ("credential", "helper"),
    ("remote", "uploadpack"), ("remote", "receivepack"), ("gpg", "program"),
    ("difftool", "cmd"), ("mergetool", "cmd"), ("browser", "cmd"), ("man", "cmd"),
}  # fmt: skip
_RUNS_SECTIONS = ("filter", "pager", "include", "includeif")
_GIT_HEADER = re.compile(r'\[([^\s"\]]*)\s*(?:"(?:[^"\\]|\\.)*")?\]')
_GIT_KEY = re.compile(r"[A-Za-z][A-Za-z0-9-]*")


def runs_programs(folder: Path) -> bool:
    """Whether git would run a program a new ``.git`` folder names: its ``config`` or
    ``config.worktree`` sets a key of :data:`mycode_core.safegit.NEUTRAL_CONFIG`
    (``core.fsmonitor``, ``core.hooksPath``, ``core.pager``...), a filter, pager, textconv,
    diff command, merge driver, credential helper, gpg program, or includes another file; or
    it holds a hook that is not a ``.sample``, a ``commondir``, or any of these as a link or
    something that cannot be read."""
    hooks = folder / "hooks"
    if os.path.lexists(folder / "commondir") or hooks.is_symlink():
        return True
    if hooks.is_dir() and any(not name.endswith(".sample") for name in os.listdir(hooks)):
        return True
    for name in ("config", "config.worktree"):
        try:
            with safeopen.open_regular(folder / name) as handle:
                text = handle.read(1 << 20).decode("utf-8", "replace")
        except FileNotFoundError:
            continue
        except OSError:  # a link, FIFO or anything that cannot be read: assume the worst
            return True
        section = ""
        for raw in text.splitlines():
            line = raw.strip()
            if line.startswith("["):
                header = _GIT_HEADER.match(line)
                if header is None:
                    return True
                section = header.group(1).lower().partition(".")[0]
                if section in _RUNS_SECTIONS:
                    return True
                line = line[header.end() :].strip()
            key = _GIT_KEY.match(line)
            if key is None:
                continue
            word = key.group(0).lower()
            if f"{section}.{word}" in _RUNS_KEYS or (section, word) in _RUNS_SUBKEYS:
                return True
    return False


Identity = tuple[int, int, int, str | None, tuple[int, int] | None]
"""An entry as :func:`config_entries` notes it: type, device, inode, link text, and the
device and inode of what it leads to (``None``: a dangling link)."""


def config_entries(
    workspace: Path, protected: list[Path] | None = None
) -> dict[Path, Identity | None]:
    """The :data:`CONFIG_FOLDERS` entries of ``workspace`` and the ``protected`` folders
    (:func:`protected_binds`) before a command (``None``: none there, see
    :func:`missing_config_folders`): one that is a link cannot be bound read-only as it is, and
    a folder bound read-only below the root can be moved away with its parent, so what a
    command makes of it is taken back after it (:func:`take_back_relinked`). One ``lstat``
    each; a link costs a ``readlink`` and a ``stat`` more."""
    found = [workspace / name for name in CONFIG_FOLDERS]
    return {path: _identity(path) for path in [*found, *(protected or ())]}


def _identity(path: Path) -> Identity | None:
    try:
        seen = os.lstat(path)
    except OSError:
        return None
    kind, target = stat.S_IFMT(seen.st_mode), (seen.st_dev, seen.st_ino)
    if kind != stat.S_IFLNK:
        return kind, seen.st_dev, seen.st_ino, None, target
    try:
        link = os.readlink(path)
    except OSError:
        return None
    try:
        found = os.stat(path)
    except OSError:
        return kind, seen.st_dev, seen.st_ino, link, None
    return kind, seen.st_dev, seen.st_ino, link, (found.st_dev, found.st_ino)


def take_back(missing: list[Path], keep: Path, root: Path) -> list[str]:
    """Move each of ``missing`` (below ``root``) that a command has created since into ``keep``
    (under ``MYCODE_HOME``, at the same relative path: nothing is lost); one note for the model
    about each."""
    import shutil

    notes = []
    for path in (path for path in missing if os.path.lexists(path)):
        folder = path.is_dir() and not path.is_symlink()
        if path == root / ".git" and folder and not runs_programs(path):
            continue  # a new repository (git init): git runs nothing it names
        rel = path.relative_to(root).as_posix() + ("/" if folder else "")
        target = keep / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(path), str(target))
        notes.append(
            f"(the command created {rel}, which commands may not create or change: such "
            "files configure hooks, plugins and MCP servers that run outside the sandbox; it was "
            f"moved to {target}. Write such files with write_file, which asks the user first.)"
        )
    return notes


def take_back_relinked(before: dict[Path, Identity | None], keep: Path, root: Path) -> list[str]:
    """After a command: a config link (``before``, :func:`config_entries`) it replaced or
    re-pointed is put back and what stood there moved into ``keep`` (:func:`take_back`); one
    whose target it created or swapped (a dangling link, a renamed parent folder) keeps its
    link and the new target inside ``root`` is moved. One note for the model about each."""
    notes = []
    for path, seen in before.items():
        if seen is None or path == root:
            continue  # none there (:func:`take_back`), or the workspace itself
        now = _identity(path)
        if now == seen:
            continue
        if seen[3] is None:  # a read-only folder whose parent was moved: this one is new
            notes += take_back([path], keep, root)
            continue
        if now is None or now[:4] != seen[:4]:  # replaced, removed or re-pointed: relinked
            notes += take_back([path], keep, root)
            os.symlink(seen[3], path)
            notes.append(f"(the link {path.name} -> {seen[3]} was put back)")
            continue
        # what it leads to is new: that folder, or the link it made leading out of ``root``
        for target in (Path(os.path.realpath(path)), Path(os.path.normpath(root / seen[3]))):
            if root in target.parents:
                notes += take_back([target], keep, root)
                break
    return notes


def take_back_created(
    root: Path, created: list[str], keep: Path, changed: tuple[str, ...] | list[str] = ()
) -> list[str]:
    """Take back what a command created in a :data:`CONFIG_FOLDERS` folder, and a
    :data:`CONFIG_FILES` file, at any depth of ``root`` (``created``: the paths the change
    detection saw it create, relative to ``root``, so nothing is walked but those folders): a
    folder holding nothing else is moved whole (:func:`take_back`), out of one that was there
    before only the files created. A ``.git`` below the root (a repository git would run the
    config of) that it created, or changed (``changed``: a nested repository's pointer file),
    is moved whole."""
    # of what was there, only a rewritten gitdir: pointer file: a nested repository's own
    # ``.git`` folder changes whenever git runs in it (its index), and stays
    there = [rel for rel in changed if _below_git(root, rel) == root / rel and _is_file(root / rel)]
    repos = {_below_git(root, rel) for rel in [*created, *there]} - {None}
    notes = take_back(sorted(path for path in repos if path is not None), keep, root)
    for rel in there:
        notes.append(
            f"({rel} was there before and the command changed it: what it was cannot be "
            "restored by mycode; check it before running git there.)"
        )
    groups: dict[Path, set[Path]] = {}
    for rel in created:
        parts = Path(rel).parts
        if parts and parts[-1] in CONFIG_FILES and os.path.lexists(root / rel):
            notes += take_back([root / rel], keep, root)  # an .mcp.json of a folder below
            continue
        at = next((i for i, part in enumerate(parts) if part in CONFIG_FOLDERS), None)
        if at is not None and os.path.lexists(root / rel):
            groups.setdefault(root.joinpath(*parts[: at + 1]), set()).add(root / rel)
    for folder, files in groups.items():
        whole = folder in files or all(path in files for path in _entries(folder))
        notes += take_back([folder] if whole else sorted(files), keep, root)
    return notes


def _is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (no link followed)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _below_git(root: Path, rel: str) -> Path | None:
    """The ``.git`` below the root (not the root's own) that ``rel`` is or is in, if any."""
    parts = Path(rel.rstrip("/")).parts
    at = next((i for i, part in enumerate(parts) if part == ".git" and i > 0), None)
    return None if at is None else root.joinpath(*parts[: at + 1])


def _entries(folder: Path) -> list[Path]:
    """What ``folder`` holds but folders: files, and links (no link followed)."""
    found = []
    for top, dirs, files in os.walk(folder):
        found += [Path(top, name) for name in files]
        found += [Path(top, name) for name in dirs if os.path.islink(os.path.join(top, name))]
    return found


_GIT_CONFIG = ("config", "hooks", "config.worktree", "commondir", "gitdir")
"""What stays read-only in a ``.git`` folder when git commands may write the repository."""
_SUBMODULE_PATH = re.compile(r"^[ \t]*path[ \t]*=[ \t]*(.*?)[ \t]*$", re.MULTILINE | re.IGNORECASE)


def submodule_dot_gits(workspace: Path) -> list[Path]:
    """The ``.git`` (``gitdir:`` pointer file or folder) of each submodule the root's
    ``.gitmodules`` lists, where it exists inside the workspace. ``.gitmodules`` is read as
    text (one small file, no link followed; git is never run); its gitdir, by default in the
    root's ``.git/modules``, is read-only with the root's ``.git``."""
    try:
        with safeopen.open_regular(workspace / ".gitmodules") as handle:
            text = handle.read(1 << 16)
    except OSError:
        return []
    top, found = os.path.realpath(workspace), []
    for match in _SUBMODULE_PATH.finditer(text.decode("utf-8", "replace")):
        rel = match.group(1).strip('"')
        real = os.path.realpath(os.path.join(top, rel, ".git"))
        if real.startswith(top + os.sep) and os.path.exists(real) and Path(real) not in found:
            found.append(Path(real))  # a link to a .git inside: what it leads to
    return found


def read_only_paths(workspace: Path, *, git_writable: bool = False) -> list[Path]:
    """What is bound read-only over the writable workspace: the :data:`CONFIG_FOLDERS` and
    :data:`CONFIG_FILES`, the whole ``.git`` (a folder, or a ``gitdir:`` file with its git and
    common folders when they lie inside the workspace) and each submodule's
    (:func:`submodule_dot_gits`); with ``git_writable`` only their config and hooks (and a
    submodule's pointer file)."""
    found: list[Path] = []
    top = os.path.realpath(workspace)
    for rel in (*CONFIG_FOLDERS, *CONFIG_FILES):
        inside = workspace / rel
        real = os.path.realpath(inside)
        if os.path.exists(real) and (real == top or real.startswith(top + os.sep)):
            found.append(Path(real))  # a symlink to a folder inside: that folder
    for inside in submodule_dot_gits(workspace):  # git runs their config as the root's
        if not git_writable or inside.is_file():
            found.append(inside)
        else:
            found += [inside / name for name in _GIT_CONFIG if os.path.lexists(inside / name)]
    dot_git = workspace / ".git"
    if not os.path.lexists(dot_git):
        return found
    folders: list[Path] = []
    try:
        repo = safegit.find_repository(workspace, contain=True)
        if repo is not None:
            folders = [repo.git_dir, repo.common_dir]
    except safegit.SafeGitError:
        pass  # leads outside the workspace: already read-only there
    if not git_writable:
        if not dot_git.is_symlink():
            found.append(dot_git)
        found += [folder for folder in folders if folder not in found]
        return found
    if dot_git.is_file():
        found.append(dot_git)
    for folder in dict.fromkeys(folders):
        for name in _GIT_CONFIG:
            inside = folder / name
            if os.path.lexists(inside) and not inside.is_symlink():
                found.append(inside)
    return found


def protected_binds(workspace: Path, roots: list[Path]) -> list[Path]:
    """The folders of ``roots`` (``context.protected_roots``: a plugin folder loaded from the
    workspace) that lie inside ``workspace``, resolved: bound read-only over it. One outside
    it is read-only already, or a folder the user opened (``[sandbox] writable``)."""
    top = workspace.resolve()
    found = []
    for raw in roots:
        folder = Path(os.path.realpath(raw))
        if (folder == top or top in folder.parents) and folder.is_dir() and folder not in found:
            found.append(folder)
    return found


def readable_binds(
    roots: list[Path], *, masked: set[Path], home: Path, visible: list[Path]
) -> list[Path]:
    """The folders of ``roots`` (``context.readable_roots``: what ``read_file`` may open outside
    the workspace, such as a skill's folder) to show read-only inside the sandbox, so a skill's
    scripts run from ``$MYCODE_HOME/skills`` or a plugin folder under ``/tmp``.

    Left out: a folder that is or holds a masked one (it would unmask credentials or all of
    ``MYCODE_HOME``), one inside a masked credential folder, and one already visible (inside the
    workspace or a writable folder: binding it read-only would change what commands may do)."""
    found: list[Path] = []
    try:
        home = home.resolve()
    except (OSError, RuntimeError):
        pass
    for raw in roots:
        try:
            root = Path(raw).resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if not root.is_dir() or root == Path("/") or root in found:
            continue
        if any(root == hidden or root in hidden.parents for hidden in masked):
            continue
        if any(hidden in root.parents for hidden in masked if hidden != home):
            continue
        if any(root == shown or shown in root.parents for shown in visible):
            continue
        found.append(root)
    return found


def wrap(
    argv: list[str],
    *,
    workspace: Path,
    cwd: Path,
    cfg: SandboxConfig,
    home: Path,
    state_dir: Path,
    git_writable: bool = False,
    readable: list[Path] | None = None,
    tmp: Path | None = None,
    protected: list[Path] | None = None,
) -> list[str]:
    """``argv`` wrapped in bubblewrap as the module docstring describes; ``git_writable``
    (an allowed command line of git commands that write the repository) leaves ``.git``
    writable but its ``config`` and ``hooks``; ``readable`` (``context.readable_roots``) are
    shown read-only (:func:`readable_binds`); ``tmp`` is the folder shown as ``/tmp`` (else
    an empty one of this call's own); ``protected`` (``context.protected_roots``) are bound
    read-only where they lie in the workspace (:func:`protected_binds`)."""
    bwrap = bwrap_path(cfg.bwrap)
    if bwrap is None:
        raise RuntimeError(unavailable_reason(cfg.bwrap))
    private = ["--bind", str(tmp), "/tmp"] if tmp is not None else ["--tmpfs", "/tmp"]
    cmd = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", *private]
    prefixes = [sys.prefix, os.environ.get("VIRTUAL_ENV")]
    for folder in tmp_toolchains(os.environ.get("PATH", ""), prefixes):
        cmd += ["--ro-bind", str(folder), str(folder)]  # before the masks: they still win
    masked: set[Path] = set()
    for base in _homes():
        for name in CREDENTIALS:
            _mask(base / name, cmd, masked)
    for raw in HIDDEN_SYSTEM:
        _mask(Path(raw), cmd, masked)
    _mask(home, cmd, masked)
    visible = [workspace.resolve(), *(folder.resolve() for folder in cfg.writable)]
    for folder in readable_binds(list(readable or ()), masked=masked, home=home, visible=visible):
        cmd += ["--ro-bind", str(folder), str(folder)]  # after the masks: a skill's folder wins
    for folder in [workspace, *cfg.writable]:
        if folder.exists():
            cmd += ["--bind", str(folder), str(folder)]
    for inside in read_only_paths(workspace, git_writable=git_writable):
        cmd += ["--ro-bind", str(inside), str(inside)]
    for inside in protected_binds(workspace, protected or []):
        cmd += ["--ro-bind", str(inside), str(inside)]
    # a credential folder or MYCODE_HOME inside the workspace (run from ~) stays hidden
    again = sorted(path for path in masked if any(root in path.parents for root in visible))
    for path in again:
        cmd += _hidden(path)
    for folder in (Path(raw).resolve() for raw in readable or ()):
        if any(path in folder.parents for path in again):
            cmd += ["--ro-bind", str(folder), str(folder)]
    cmd += ["--bind", str(state_dir), str(state_dir)]
    cmd += list(_BASE_FLAGS)
    if not cfg.network:
        cmd.append("--unshare-net")
    cmd += ["--chdir", str(cwd), "--", *argv]
    return cmd


def check_run(context: Any) -> None:
    """At the start of a run: a bad or unsatisfiable ``sandbox`` setting stops the run (exit 2);
    a sandbox that ``auto`` wanted but cannot have is said in a notice."""
    from mycode_core.api import SetupError
    from mycode_core.events import NoticeEvent

    try:
        found = status(context.settings, context.permission_mode)
    except SandboxConfigError as exc:
        raise SetupError(str(exc)) from None
    if found.mode == "on" and not found.available:
        raise SetupError(
            f'{found.problem}. Install bubblewrap, or set sandbox = "auto" or "off" in '
            "$MYCODE_HOME/config.toml"
        )
    for note in config(context.settings).ignored:
        context.emit(NoticeEvent(level="warning", message=note))
    if found.problem and not found.active:
        context.emit(
            NoticeEvent(
                level="warning",
                message=f"{found.problem}; commands the policy cannot show to be harmless "
                "will ask first (denied in -p mode)",
            )
        )

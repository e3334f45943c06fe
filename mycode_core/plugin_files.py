"""Plugin files (SPEC §7): ``$MYCODE_HOME/plugins/*.py`` and, in a trusted workspace,
``.mycode/plugins/*.py``, imported as plugin modules named by their stem; a file left out as
untrusted or for a name shadowing a standard or installed module costs a notice."""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pluggy

FOLDER = "plugins"  # below $MYCODE_HOME and the workspace's .mycode
_ours: dict[str, str] = {}  # module name -> path of each plugin file this process imported


def _files(folder: Path) -> list[Path]:
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return []
    out = []
    for entry in entries:
        with contextlib.suppress(OSError):  # unreadable entries and folders named x.py: left out
            if entry.name.endswith(".py") and not entry.name.startswith(".") and entry.is_file():
                out.append(Path(entry.path))
    return out


def shadowed_module(name: str) -> str | None:
    """What the module name ``name`` would shadow (stdlib or installed module), or ``None``."""
    if name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return "a module of the standard library"
    loaded = sys.modules.get(name)
    if loaded is not None and _ours.get(name) != getattr(loaded, "__file__", None):
        return "a module already imported"
    cwd = os.getcwd()
    # not the current folder: `python -m` adds it
    search = [e for e in sys.path if e not in ("", ".") and os.path.abspath(e) != cwd]
    try:
        installed = importlib.machinery.PathFinder.find_spec(name, search) is not None
    except (ImportError, ValueError):
        installed = False
    return "an installed module" if installed else None


def import_file(path: Path) -> ModuleType:
    """Import one plugin file as the module named by its stem; raises what the import raised."""
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    _ours[name] = str(path)
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        _ours.pop(name, None)
        raise
    return module


def candidates(
    pm: pluggy.PluginManager,
    workspace: Path | None,
    trusted: bool | None,
    selected: Callable[[str], bool],
    notice: Callable[[str], None],
) -> Iterator[Path]:
    """The plugin files to import, one at a time (each registered before the next is checked
    against the loaded plugins); ``workspace`` defaults to the current folder, ``trusted`` to
    its recorded trust; ``selected(name)`` is asked before import; skips cost a ``notice``."""
    raw = os.environ.get("MYCODE_HOME")
    home = Path(raw).expanduser() if raw else Path.home() / ".mycode"
    workspace = Path(os.getcwd()) if workspace is None else workspace
    folder = workspace / ".mycode" / FOLDER
    if trusted is None:
        from mycode_core.trust import is_trusted

        trusted = folder.is_dir() and is_trusted(workspace, home)
    local = _files(folder)
    if local and not trusted:
        names = ", ".join(path.name for path in local)
        notice(
            f"untrusted workspace: its plugin files in .mycode/plugins ({names}) are not "
            "loaded; trust it with `mycode trust` (or --trust for one run) to load them"
        )
    found = [(path, True) for path in _files(home / FOLDER)] + [(path, trusted) for path in local]
    for path, allowed in found:  # home first; every name is ``selected``-checked
        name = path.stem
        if not selected(name) or not allowed:
            continue
        where = f"plugin file {path}"
        if pm.has_plugin(name) or pm.is_blocked(name):
            notice(f"{where} is not loaded: a plugin named {name!r} is loaded already")
            continue
        if name.startswith("__") or not name.replace("-", "_").isidentifier():
            notice(f"{where} is not loaded: {name!r} is not a module name; rename it")
            continue
        shadows = shadowed_module(name)
        if shadows is not None:
            notice(f"{where} is not loaded: its name {name!r} shadows {shadows}; rename it")
            continue
        yield path

"""A cache of plugin command names for ``mycode --help``, and a memory of whose they were.

Listing plugin commands means importing every plugin; ``--help`` should not pay for that on
every call. The cache (under ``MYCODE_HOME``) is valid while the installed packages and the
plugin-selection variables are unchanged.

It also remembers, across installs, which plugin (and distribution) registered each command:
when that plugin is later uninstalled or disabled, ``mycode NAME`` is a usage error naming it
instead of a one-word task for the agent.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

CORE_COMMANDS = ("plugins", "tools", "sessions", "demo", "trust")
"""The subcommands the core owns; a plugin command may not take these names."""


def _cache_path() -> str:
    # os.path, not pathlib: this runs on every `mycode --help`, pathlib costs an import
    raw = os.environ.get("MYCODE_HOME")
    home = os.path.expanduser(raw) if raw else os.path.join(os.path.expanduser("~"), ".mycode")
    return os.path.join(home, "cache", "plugin_commands.json")


def fingerprint() -> str:
    """Changes when packages are installed or removed, or plugin selection changes."""
    parts = [
        sys.executable,
        os.environ.get("MYCODE_LOAD_PLUGINS", "\0"),
        os.environ.get("MYCODE_DISABLE_PLUGINS", ""),
    ]
    cwd = os.getcwd()
    home = os.path.dirname(os.path.dirname(_cache_path()))
    for folder in (os.path.join(home, "plugins"), os.path.join(cwd, ".mycode", "plugins")):
        parts.append(_folder_stamp(folder))  # plugin files may add commands (SPEC §7)
    for entry in sys.path:
        if entry in ("", ".") or os.path.abspath(entry) == cwd:
            continue  # `python -m mycode_core` puts the current folder first: not an install
        try:
            parts.append(f"{entry}:{os.stat(entry or '.').st_mtime_ns}")
        except OSError:
            parts.append(f"{entry}:-")
    return "|".join(parts)


def _folder_stamp(folder: str) -> str:
    """The names and mtimes of the ``*.py`` files of ``folder`` (``-`` when there is none)."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return f"{folder}:-"
    stamps = []
    for entry in entries:
        if entry.name.endswith(".py"):
            try:
                stamps.append(f"{entry.name}@{entry.stat().st_mtime_ns}")
            except OSError:
                continue
    return f"{folder}:{','.join(stamps)}"


def _read() -> dict[str, Any]:
    try:
        with open(_cache_path(), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load() -> list[tuple[str, str]] | None:
    """Cached ``[(name, short help)]``, or ``None`` if missing or stale."""
    data = _read()
    if data.get("fingerprint") != fingerprint():
        return None
    try:
        return [(str(row[0]), str(row[1])) for row in data.get("commands", [])]
    except (TypeError, IndexError, KeyError):
        return None


def known_command(name: str) -> dict[str, str | None] | None:
    """``{"plugin", "distribution"}`` of the plugin that once registered command ``name``."""
    entry = (_read().get("known") or {}).get(name)
    if not isinstance(entry, dict) or not entry.get("plugin"):
        return None
    return {"plugin": str(entry["plugin"]), "distribution": entry.get("distribution")}


def save(
    commands: Iterable[tuple[str, str, str | None]],
    *,
    distributions: Mapping[str, str | None] | None = None,
    loaded_plugins: Iterable[str] = (),
) -> None:
    """Write the cache atomically; failures are ignored (it is only a cache).

    ``commands`` are ``(name, short help, plugin)``. Remembered commands of plugins not loaded
    now are kept; those of ``loaded_plugins`` are replaced by what they register now.
    """
    rows = list(commands)
    distributions = distributions or {}
    loaded = set(loaded_plugins)
    known = {
        name: entry
        for name, entry in (_read().get("known") or {}).items()
        if isinstance(entry, dict) and entry.get("plugin") not in loaded
    }
    for name, _help, plugin in rows:
        if plugin:
            known[name] = {"plugin": plugin, "distribution": distributions.get(plugin)}
    payload = {
        "fingerprint": fingerprint(),
        "commands": [[name, short_help] for name, short_help, _plugin in rows],
        "known": known,
    }
    from pathlib import Path

    from mycode_core.safeopen import replace_atomically

    path, text = Path(_cache_path()), json.dumps(payload).encode()
    try:
        path.parent.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # as ensure_home
        replace_atomically(path, text, 0o600, create_parents=True, follow_folder_links=True)
    except OSError:
        pass

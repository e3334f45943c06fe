"""A cache of plugin command names for ``mycode --help``.

Listing plugin commands means importing every plugin; ``--help`` should not pay for that on
every call. The cache (under ``MYCODE_HOME``) is valid while the installed packages and the
plugin-selection variables are unchanged.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path


def _cache_path() -> Path:
    raw = os.environ.get("MYCODE_HOME")
    home = Path(raw).expanduser() if raw else Path.home() / ".mycode"
    return home / "cache" / "plugin_commands.json"


def fingerprint() -> str:
    """Changes when packages are installed or removed, or plugin selection changes."""
    parts = [
        sys.executable,
        os.environ.get("MYCODE_LOAD_PLUGINS", "\0"),
        os.environ.get("MYCODE_DISABLE_PLUGINS", ""),
    ]
    for entry in sys.path:
        try:
            parts.append(f"{entry}:{os.stat(entry or '.').st_mtime_ns}")
        except OSError:
            parts.append(f"{entry}:-")
    return "|".join(parts)


def load() -> list[tuple[str, str]] | None:
    """Cached ``[(name, short help)]``, or ``None`` if missing or stale."""
    try:
        data = json.loads(_cache_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("fingerprint") != fingerprint():
        return None
    return [(str(name), str(text)) for name, text in data.get("commands", [])]


def save(commands: list[tuple[str, str]]) -> None:
    """Write the cache atomically; failures are ignored (it is only a cache)."""
    path = _cache_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".commands-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump({"fingerprint": fingerprint(), "commands": commands}, fh)
        os.replace(tmp, path)
    except OSError:
        pass

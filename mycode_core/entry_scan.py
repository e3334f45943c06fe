"""One scan of the installed entry points for a start-up of the CLI.

Each scan reads every installed distribution's metadata (~8 ms here), and a run needed three:
pydantic's own search for its plugins (at the first model it builds), the plugin load, and the
names of installed plugins for the config check. :func:`scan_for_startup` does it once, before
any model is built; the plugin load takes that scan (once) instead of scanning again.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

_pending: Any = None  # a SelectableGroups on Python 3.11, EntryPoints later


def scan_for_startup() -> None:
    """Scan now; tell pydantic it has no plugins when no distribution offers one."""
    global _pending
    _pending = metadata.entry_points()
    if _pending.select(group="pydantic"):
        return
    try:  # pydantic scans on its own otherwise; ``_plugins = {}`` is what it finds then
        from pydantic.plugin import _loader
    except ImportError:
        return
    if getattr(_loader, "_plugins", False) is None:
        _loader._plugins = {}


def entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group``: from the start-up scan the first time after it, else a
    fresh scan (a process that installs distributions sees them)."""
    global _pending
    found, _pending = _pending, None
    if found is None:
        return list(metadata.entry_points(group=group))
    return list(found.select(group=group))

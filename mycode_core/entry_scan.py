"""One scan of the installed entry points for a start-up of the CLI.

Each scan reads every installed distribution's metadata (~8 ms here), and a run needed three:
pydantic's own search for its plugins (at the first model it builds), the plugin load, and the
names of installed plugins for the config check. :func:`scan_for_startup` does it once, before
any model is built; the plugin load takes that scan (once) instead of scanning again.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any


class _Scans:
    """The one record of entry-point scans in this process."""

    startup: Any = None
    """The start-up scan of every group, until its first use (a SelectableGroups on Python
    3.11, EntryPoints later)."""
    latest: dict[str, list[metadata.EntryPoint]] = {}
    """The last scan's entry points, by group."""


def scan_for_startup() -> None:
    """Scan now; tell pydantic it has no plugins when no distribution offers one."""
    _Scans.startup = metadata.entry_points()
    if _Scans.startup.select(group="pydantic"):
        return
    try:  # pydantic scans on its own otherwise; ``_plugins = {}`` is what it finds then
        from pydantic.plugin import _loader
    except ImportError:
        return
    if getattr(_loader, "_plugins", False) is None:
        _loader._plugins = {}


def entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group``: from the start-up scan the first time after it, else a
    fresh scan (a process that installs distributions sees them); kept as the latest."""
    found, _Scans.startup = _Scans.startup, None
    if found is None:
        scanned = list(metadata.entry_points(group=group))
    else:
        scanned = list(found.select(group=group))
    _Scans.latest[group] = scanned
    return scanned


def latest_entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group`` as the latest :func:`entry_points` found them (no new
    scan), or a fresh scan when none found any."""
    return _Scans.latest.get(group) or list(metadata.entry_points(group=group))

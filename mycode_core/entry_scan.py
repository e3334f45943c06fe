"""One scan of the installed entry points for a start-up of the CLI (~8 ms each): pydantic's
plugin search, the plugin load and the config check's plugin names share it."""

from __future__ import annotations

from importlib import metadata
from typing import Any


class _Scans:
    """The one record of entry-point scans in this process."""

    startup: Any = None  # the start-up scan of every group, until its first use
    latest: dict[str, list[metadata.EntryPoint]] = {}  # the last scan's entry points, by group


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
    """``group``'s entry points: from the start-up scan once, then fresh scans; kept as latest."""
    found, _Scans.startup = _Scans.startup, None
    scanned = list(
        metadata.entry_points(group=group) if found is None else found.select(group=group)
    )
    _Scans.latest[group] = scanned
    return scanned


def latest_entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group`` as :func:`entry_points` last found them, else a fresh scan."""
    return _Scans.latest.get(group) or list(metadata.entry_points(group=group))

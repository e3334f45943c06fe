"""One scan of the installed entry points for a start-up of the CLI (~8 ms each): pydantic's
plugin search, the plugin load and the config check's plugin names share it."""

from __future__ import annotations

from importlib import metadata
from typing import Any

_startup: Any = None  # the start-up scan of every group, until its first use
_latest: dict[str, list[metadata.EntryPoint]] = {}  # the last scan's entry points, by group


def scan_for_startup() -> None:
    """Scan now; tell pydantic it has no plugins when no distribution offers one."""
    global _startup
    _startup = metadata.entry_points()
    if _startup.select(group="pydantic"):
        return
    try:  # pydantic scans on its own otherwise; ``_plugins = {}`` is what it finds then
        from pydantic.plugin import _loader
    except ImportError:
        return
    if getattr(_loader, "_plugins", False) is None:
        _loader._plugins = {}


def entry_points(group: str) -> list[metadata.EntryPoint]:
    """``group``'s entry points: from the start-up scan once, then fresh scans; kept as latest."""
    global _startup
    found, _startup = _startup, None
    scanned = list(
        metadata.entry_points(group=group) if found is None else found.select(group=group)
    )
    _latest[group] = scanned
    return scanned


def latest_entry_points(group: str) -> list[metadata.EntryPoint]:
    """The entry points of ``group`` as :func:`entry_points` last found them, else a fresh scan."""
    return _latest.get(group) or list(metadata.entry_points(group=group))

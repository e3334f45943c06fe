"""What the agent has read, for the stale-file guard (kept in ``context.store``).

``read_file`` records each file's ``mtime_ns`` and size with the line ranges it showed;
``edit_file`` / ``write_file`` refuse to change a file that was never read, or that changed
on disk since, and record the new state after writing so consecutive edits work.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STORE_KEY = "builtin_tools.read_state"


@dataclass
class ReadRecord:
    """The state of one file when the agent last saw it."""

    mtime_ns: int
    size: int
    ranges: list[tuple[int, int]] = field(default_factory=list)


def _table(context: Any) -> dict[str, ReadRecord]:
    table: dict[str, ReadRecord] | None = context.store.get(STORE_KEY)
    if table is None:
        table = {}
        context.store[STORE_KEY] = table
    return table


def record_read(context: Any, path: Path, stat: os.stat_result, start: int, end: int) -> None:
    """Remember that lines ``start``-``end`` of ``path`` were shown, as of ``stat``."""
    with context.lock:
        table = _table(context)
        record = table.get(str(path))
        if record is None or (record.mtime_ns, record.size) != (stat.st_mtime_ns, stat.st_size):
            record = ReadRecord(stat.st_mtime_ns, stat.st_size)
            table[str(path)] = record
        record.ranges.append((start, end))


def record_write(context: Any, path: Path) -> None:
    """Remember the state of ``path`` right after this plugin wrote it."""
    stat = path.stat()
    with context.lock:
        _table(context)[str(path)] = ReadRecord(stat.st_mtime_ns, stat.st_size, [])


def get(context: Any, path: Path) -> ReadRecord | None:
    """The record of ``path``, or ``None`` if it was never read."""
    with context.lock:
        return _table(context).get(str(path))


def stale_reason(context: Any, path: Path, rel: str) -> str | None:
    """Why ``path`` may not be changed now (never read / changed since), or ``None``."""
    record = get(context, path)
    if record is None:
        return (
            f"{rel} has not been read in this session. Read it with read_file first, "
            "then make the change."
        )
    try:
        stat = path.stat()
    except OSError as exc:
        return f"{rel} cannot be examined: {exc.strerror or exc}"
    if (stat.st_mtime_ns, stat.st_size) != (record.mtime_ns, record.size):
        return (
            f"{rel} changed on disk since it was read (size {record.size} -> {stat.st_size}). "
            "Read it again with read_file before changing it."
        )
    return None

"""What the agent has read, for the stale-file guard (kept in ``context.store``).

``read_file`` records each file's ``mtime_ns``, size, inode and content digest with the line
ranges it showed; ``edit_file`` / ``write_file`` refuse to change a file that was never read,
or that changed on disk since, and record the new state after writing so consecutive edits
work; a file the user inlined whole (``context.shown_files``) counts as read while it has the
bytes shown. The check and the write happen under one exclusive lock (:func:`exclusive`, an
``flock`` on the file's folder), and the check compares the content digest, so of two
processes editing one file every reported edit is in the file or was refused as stale.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_core.api import safeopen

STORE_KEY = "builtin_tools.read_state"
DIGEST_LIMIT = 64 * 1024 * 1024


@dataclass
class ReadRecord:
    """The state of one file when the agent last saw it."""

    mtime_ns: int
    size: int
    ranges: list[tuple[int, int]] = field(default_factory=list)
    inode: int = 0
    digest: str | None = None


def _table(context: Any) -> dict[str, ReadRecord]:
    table: dict[str, ReadRecord] | None = context.store.get(STORE_KEY)
    if table is None:
        table = {}
        context.store[STORE_KEY] = table
    return table


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _current(path: Path) -> tuple[os.stat_result, str | None]:
    """The file's ``fstat`` and digest, read without following symlinks."""
    fd = safeopen.open_read(path)
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if info.st_size > DIGEST_LIMIT:
            return info, None
        return info, _digest(fh.read())


def _same(a: os.stat_result, record: ReadRecord) -> bool:
    return (a.st_mtime_ns, a.st_size, a.st_ino) == (record.mtime_ns, record.size, record.inode)


def record_read(context: Any, path: Path, stat: os.stat_result, start: int, end: int) -> None:
    """Remember that lines ``start``-``end`` of ``path`` were shown, as of ``stat``."""
    digest = None
    with contextlib.suppress(OSError):
        now, digest = _current(path)
        if (now.st_mtime_ns, now.st_size, now.st_ino) != (
            stat.st_mtime_ns,
            stat.st_size,
            stat.st_ino,
        ):
            digest = "changed-while-reading"
    with context.lock:
        table = _table(context)
        record = table.get(str(path))
        if record is None or not _same(stat, record) or record.digest != digest:
            record = ReadRecord(stat.st_mtime_ns, stat.st_size, [], stat.st_ino, digest)
            table[str(path)] = record
        record.ranges.append((start, end))


def record_write(context: Any, path: Path, data: bytes | None = None) -> None:
    """Remember the state of ``path`` right after this plugin wrote ``data`` to it."""
    stat = os.stat(path, follow_symlinks=False)
    digest = _digest(data) if data is not None and len(data) <= DIGEST_LIMIT else None
    with context.lock:
        _table(context)[str(path)] = ReadRecord(
            stat.st_mtime_ns, stat.st_size, [], stat.st_ino, digest
        )


def get(context: Any, path: Path) -> ReadRecord | None:
    """The record of ``path``, or ``None`` if it was never read."""
    with context.lock:
        return _table(context).get(str(path))


def _shown(context: Any, path: Path) -> ReadRecord | None:
    """A file the user inlined whole with ``@path`` counts as read while it has those bytes."""
    digest = getattr(context, "shown_files", {}).get(str(path))
    try:
        stat, now = _current(path) if digest is not None else (None, None)
    except OSError:
        return None
    if stat is None or now != digest:
        return None
    return ReadRecord(stat.st_mtime_ns, stat.st_size, [], stat.st_ino, digest)


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold the write lock of ``path``'s folder (shared by every mycode process) meanwhile.

    Without a folder to lock (it does not exist yet) nothing is held: the file is new."""
    with contextlib.ExitStack() as stack:
        try:
            fd: int | None = stack.enter_context(safeopen.open_parent(path))
        except OSError:  # no folder yet (a new file) or not one: the write will say why
            fd = None
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # released when the descriptor closes
        yield


def stale_reason(context: Any, path: Path, rel: str) -> str | None:
    """Why ``path`` may not be changed now (never read / changed since), or ``None``.

    Call it inside :func:`exclusive` together with the write."""
    record = get(context, path) or _shown(context, path)
    if record is None:
        return (
            f"{rel} has not been read in this session. Read it with read_file first, "
            "then make the change."
        )
    try:
        stat, digest = _current(path)
    except OSError as exc:
        return f"{rel} cannot be examined: {exc.strerror or exc}"
    unchanged = (stat.st_mtime_ns, stat.st_size) == (record.mtime_ns, record.size)
    if record.digest is not None and digest is not None:
        unchanged = unchanged and digest == record.digest
    elif record.inode:
        unchanged = unchanged and stat.st_ino == record.inode
    if not unchanged:
        return (
            f"{rel} changed on disk since it was read (size {record.size} -> {stat.st_size}). "
            "Read it again with read_file before changing it."
        )
    return None

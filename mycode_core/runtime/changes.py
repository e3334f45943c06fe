"""Which workspace files a tool call changed, complete and cheap at any size: inotify events
(one ``read`` per call; a tree walk and re-arm after an overflow), else a ``git status`` (via
:mod:`~mycode_core.safegit`) or tree-walk snapshot. Noise skipped; a new ``.git`` is one path."""

from __future__ import annotations

import contextlib
import errno
import os
import struct
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from stat import S_ISDIR
from typing import Any

from mycode_core import safegit
from mycode_core.workspace import BUILD_DIRS, NOISE_DIRS

SKIPPED_DIRS = NOISE_DIRS | BUILD_DIRS
MAX_WATCHED_DIRS = 100_000  # beyond this many folders, snapshots instead of watches

_IN_MODIFY = 0x002  # inotify(7)'s event bits
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ISDIR = 0x40000000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_EXCL_UNLINK = 0x04000000
_CHANGES = _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO
_MASK = _CHANGES | _IN_CREATE | _IN_DELETE | _IN_ONLYDIR | _IN_DONT_FOLLOW | _IN_EXCL_UNLINK
_EVENT = struct.Struct("iIII")

Snapshot = dict[str, tuple[int, int, str]]


class ChangeDetector:
    """Tells which workspace files changed between :meth:`mark` and :meth:`changes`."""

    def __init__(self, root: Path, *, use_inotify: bool = True, home: Path | None = None) -> None:
        self.root = Path(root).resolve()
        mine = Path(home or "/").resolve()  # MYCODE_HOME below the root: never a workspace change
        self._mine = f"{mine.relative_to(self.root)}/" if self.root in mine.parents else "\0"
        self._lock = threading.Lock()
        self._libc: Any = None  # through ctypes once watching starts (Linux only)
        self._fd: int | None = None  # the inotify descriptor while watching
        self._dirs: dict[int, str] = {}
        self._ready = threading.Event()
        self._closing = False
        self._pending: dict[str, bool] = {}  # path changed since the mark -> created since
        self._snapshot: Snapshot | None = None
        self._git: bool | None = None
        self._marked_ns = 0
        self.mechanism = "snapshot"
        self.created: set[str] = set()  # of the last changes(): paths the call created
        self.rearms = 0  # times the watches were set up again after a queue overflow
        if use_inotify and os.uname().sysname == "Linux":
            threading.Thread(target=self._start_watching, daemon=True, name="mycode-watch").start()
        else:
            self._ready.set()

    def _start_watching(self) -> None:
        try:
            self._arm()
        finally:
            self._ready.set()
        if self._closing:  # closed while the watches were being set up
            self.close()

    def _arm(self) -> bool:
        """Set the watches up (again after an overflow); False if that fails (then snapshots)."""
        again = self._fd is not None
        self._give_up_watching()  # the old watches, if any
        try:
            self._fd = self._inotify("init1", os.O_NONBLOCK | os.O_CLOEXEC)
            for _file in _tree_files(self.root, self._watch_folder):
                pass  # listing each folder watches it
        except OSError:
            self._give_up_watching()
            return False
        self.rearms += again
        self.mechanism = "inotify"
        return True

    def _inotify(self, function: str, *args: object) -> int:
        """libc's ``inotify_<function>(*args)``; a failure raises OSError."""
        import ctypes  # in the watch thread, off the way to the first request

        if self._libc is None:
            self._libc = ctypes.CDLL(None, use_errno=True)  # libc's symbols (no ldconfig run)
        result = int(getattr(self._libc, f"inotify_{function}")(*args))
        if result < 0:
            code = ctypes.get_errno()
            raise OSError(code, os.strerror(code))
        return result

    def _give_up_watching(self) -> None:
        if self._fd is not None:  # closing waits ~15 ms for the kernel to retire the watches
            threading.Thread(target=_close_quietly, args=(self._fd,), daemon=True).start()
        self._fd = None
        self._dirs.clear()
        self.mechanism = "snapshot"

    def _watch_folder(self, folder: str) -> list[os.DirEntry[str]]:
        """Watch ``folder`` and list it (``[]`` if it cannot be); raises when out of watches."""
        if len(self._dirs) >= MAX_WATCHED_DIRS or self._closing:
            raise OSError(errno.ENOSPC, "too many folders to watch (or closed)")
        try:
            self._dirs[self._inotify("add_watch", self._fd, os.fsencode(folder), _MASK)] = folder
            return list(os.scandir(folder))
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.ENOMEM, errno.EMFILE):
                raise
            return []

    def _note(self, path: str, *, created: bool, suffix: str = "") -> None:
        self._pending.setdefault(os.path.relpath(path, self.root) + suffix, created)

    def _net_changes(self) -> Iterator[str]:
        """Pending paths but those created and removed again, and folders deleted and back."""
        for rel, created in self._pending.items():
            path = self.root / rel.rstrip("/")
            if created and not os.path.lexists(path):
                continue
            if not rel.endswith("/") or not os.path.isdir(path):
                yield rel

    def _drain(self) -> bool:
        """Move queued events into ``_pending``; False if the queue overflowed."""
        assert self._fd is not None
        chunks: list[bytes] = []
        with contextlib.suppress(BlockingIOError):  # until nothing more is queued
            while chunk := os.read(self._fd, 65536):
                chunks.append(chunk)
        data, offset = b"".join(chunks), 0
        healthy = True
        while offset + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
            offset += _EVENT.size + length
            name = os.fsdecode(data[offset - length : offset].rstrip(b"\0"))
            if mask & _IN_Q_OVERFLOW:  # of no watch (wd -1): skipped below
                healthy = False
            if mask & _IN_IGNORED:  # the watch is gone (its folder too): skipped below
                self._dirs.pop(wd, None)
            folder = self._dirs.get(wd)
            if folder is None or not name:
                continue
            path = os.path.join(folder, name)
            new = bool(mask & (_IN_CREATE | _IN_MOVED_TO))
            # a new .git folder is a repository, not noise: git would run its config
            if not mask & _IN_ISDIR or (new and name == ".git"):
                self._note(path, created=new)
            elif new and name not in SKIPPED_DIRS:
                self._note(path, created=True, suffix="/")
                try:  # watched, and its files are new too
                    for entry in _tree_files(path, self._watch_folder):
                        self._note(entry.path, created=True)
                except OSError:
                    healthy = False
            elif mask & (_IN_DELETE | _IN_MOVED_FROM):
                self._note(path, created=False, suffix="/")
        return healthy

    def _take_snapshot(self) -> Snapshot:
        snap = None if self._git is False else _git_snapshot(self.root)
        if self._git is None:  # decided once: git status, or the walk when that fails
            self._git = snap is not None
        if snap is not None:
            return snap
        # of a .git folder only that it is there (git running in it is no change)
        return {
            rel: (0, 0, "") if S_ISDIR(st.st_mode) else (st.st_mtime_ns, st.st_size, "")
            for rel, st in _walk_files(self.root)
        }

    def mark(self) -> None:
        """Start a measurement: forget changes made before now (the user's own edits)."""
        self._ready.wait(120)
        with self._lock:
            self._marked_ns = time.time_ns()
            watching = self._fd is not None and (self._drain() or self._arm())
            self._pending.clear()
            self._snapshot = None if watching else self._take_snapshot()

    def changes(self) -> list[str]:
        """Workspace-relative paths changed since :meth:`mark` (deleted folders end in ``/``)."""
        with self._lock:
            if self._fd is not None and self._snapshot is None:
                found = set() if self._drain() else self._rescan()
                found.update(self._net_changes())
                self.created = {rel for rel in found if self._pending.get(rel)}
                self._pending.clear()
            else:
                before = self._snapshot or {}
                after = self._take_snapshot()
                self._snapshot = None
                self.created = set(after) - set(before)
                found = {rel for rel, stamp in after.items() if before.get(rel) != stamp}
                found |= before.keys() - after.keys()
        return sorted(path for path in found if not path.startswith(self._mine))

    def _rescan(self) -> set[str]:
        """After lost events: watch again (nothing made from now on is missed), then walk for the
        files changed or modified since the mark (a program cannot set the change time back)."""
        self._arm()
        since = self._marked_ns - 2_000_000_000  # filesystem timestamps are coarse
        return {
            rel
            for rel, st in _walk_files(self.root)
            if st.st_ctime_ns >= since or st.st_mtime_ns >= since
        }

    def close(self) -> None:
        """Stop watching; watches still being set up stop at their next folder (no wait)."""
        self._closing = True
        if self._ready.is_set():
            with self._lock:
                self._give_up_watching()


def _close_quietly(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def _git_snapshot(root: Path) -> Snapshot | None:
    """Dirty and untracked files (status and stat) from ``git status``; a change to a clean
    file shows up as a new status."""
    args = ["status", "--porcelain=v1", "-z", "--untracked-files=all"]
    try:
        out = safegit.run(args, root, root=root, env={"GIT_OPTIONAL_LOCKS": "0"}, timeout=120)
    except (OSError, subprocess.SubprocessError, safegit.SafeGitError):
        return None
    if out.returncode != 0:
        return None
    snap: Snapshot = {}
    entries = iter(os.fsencode(out.stdout).split(b"\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        status, rel = entry[:2].decode(), os.fsdecode(entry[3:])
        if status[0] in "RC":
            next(entries, None)  # the rename's source path follows
        try:
            st = os.lstat(root / rel)
            snap[rel] = (st.st_mtime_ns, st.st_size, status)
        except OSError:
            snap[rel] = (-1, -1, status)
    return snap


def _listing(folder: str) -> list[os.DirEntry[str]]:
    try:
        return list(os.scandir(folder))
    except OSError:
        return []


def _tree_files(
    top: str | Path, listing: Callable[[str], list[os.DirEntry[str]]] = _listing
) -> Iterator[os.DirEntry[str]]:
    """Every non-folder entry (or ``.git`` folder) below ``top``, each folder listed by
    ``listing``; noise folders skipped, no link followed, unreadable entries passed over."""
    stack = [str(top)]
    while stack:
        for entry in listing(stack.pop()):
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if not is_dir or entry.name == ".git":  # a repository counts as one file
                yield entry
            elif entry.name not in SKIPPED_DIRS:
                stack.append(entry.path)


def _walk_files(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Each readable file of :func:`_tree_files`: its path relative to ``root`` and its stat."""
    for entry in _tree_files(root):
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        yield os.path.relpath(entry.path, root), st

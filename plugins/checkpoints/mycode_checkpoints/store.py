"""Checkpoints on disk: ``MYCODE_HOME/checkpoints/<session>/<turn>/`` per session and turn.

A turn folder holds ``meta.json`` (the turn, its prompt, the files it changed) and ``blobs/``:
the previous content of each file the turn modified or deleted, named by its SHA-256. Only the
files a turn changed are stored, so the space taken grows with the files changed, never with
the size of the repository. ``session.json`` keeps the workspace and the turn counter.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

from mycode_core.api import replace_atomically, safeopen

CHUNK = 1 << 20


def root(home: Path) -> Path:
    """Where every session's checkpoints live."""
    return home / "checkpoints"


def session_dir(home: Path, session_id: str) -> Path:
    """The checkpoint folder of one session (the id is kept to one path component)."""
    safe = session_id.replace("/", "_").replace("\\", "_")
    if safe in ("", ".", ".."):
        safe = "_"
    return root(home) / safe


def _write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (a temporary file, then a rename). ASCII: a file name that is
    not UTF-8 (its bytes decoded with ``surrogateescape``) is kept as ``\\udcff``, not lost."""
    text = json.dumps(data, indent=1).encode("ascii")
    replace_atomically(path, text, create_parents=True, follow_folder_links=True)


def _read_json(path: Path) -> Any:
    """The JSON in ``path``, or None when absent or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def next_turn(home: Path, session_id: str, workspace: Path) -> int:
    """Count one more turn of a session (kept across resumed runs) and return its number.
    The session keeps the workspace it started in; each turn's ``meta.json`` has its own."""
    path = session_dir(home, session_id) / "session.json"
    data = _read_json(path) or {}
    turn = int(data.get("turns", 0)) + 1
    _write_json(path, {"workspace": str(data.get("workspace") or workspace), "turns": turn})
    return turn


def session_workspace(home: Path, session_id: str) -> str | None:
    """The workspace a session's checkpoints started in (a turn's own is in its metadata)."""
    data = _read_json(session_dir(home, session_id) / "session.json")
    return str(data["workspace"]) if isinstance(data, dict) and "workspace" in data else None


def mark_running(
    home: Path, session_id: str, call_id: str, what: str | None, turn: int | None = None
) -> None:
    """Note that a call of ``turn`` that may change files is running (``what``), or that it
    ended (None): a note left behind means the run was killed mid-call and what it changed is
    not recorded."""
    path = session_dir(home, session_id) / "running" / call_id.replace("/", "_")
    if what is None:
        with contextlib.suppress(OSError):
            path.unlink()
    else:
        _write_json(path, {"what": what, "turn": turn})


def cut_short(home: Path, session_id: str, since: int | None = None) -> dict[Path, str]:
    """The calls of a session killed before what they changed was recorded, by their note:
    of turn ``since`` or later (a call of an unknown turn always counts)."""
    folder = session_dir(home, session_id) / "running"
    found = {}
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        note = _read_json(path)  # a run before turns were noted wrote the text alone
        note = note if isinstance(note, dict) else {"what": note}
        what, turn = note.get("what"), note.get("turn")
        if what and (since is None or not isinstance(turn, int) or turn >= since):
            found[path] = str(what)
    return found


def clear_cut_short(notes: Iterable[Path]) -> None:
    """Forget these calls cut short (an undo of their turns went ahead with ``--force``)."""
    for path in notes:
        with contextlib.suppress(OSError):
            path.unlink()


def open_regular(path: Path) -> BinaryIO | None:
    """``path`` open for reading if it is a regular file (a symlink is not followed), else None.
    ``O_NONBLOCK`` keeps a FIFO from blocking the open; ``fstat`` then refuses it."""
    try:
        return safeopen.open_regular(path)
    except OSError:
        return None


def hash_file(path: Path) -> str | None:
    """SHA-256 of a regular file's content (None when absent or not a regular file)."""
    opened = open_regular(path)
    if opened is None:
        return None
    digest = hashlib.sha256()
    with opened as fh:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def copy_in(source: Path, dest_dir: Path, name: str) -> tuple[str, int] | None:
    """Copy a regular file (not following a symlink) to ``dest_dir/name``; its hash and size."""
    opened = open_regular(source)
    if opened is None:
        return None
    digest = hashlib.sha256()
    size = 0
    with opened as src:
        dest_dir.mkdir(parents=True, exist_ok=True)
        with open(dest_dir / name, "wb") as out:
            while chunk := src.read(CHUNK):
                digest.update(chunk)
                out.write(chunk)
                size += len(chunk)
    return digest.hexdigest(), size


class TurnRecord:
    """One turn's checkpoint: its metadata and blobs, saved as they are added."""

    def __init__(self, home: Path, session_id: str, turn: int, prompt: str, workspace: Path):
        self.dir = session_dir(home, session_id) / str(turn)
        self.meta_path = self.dir / "meta.json"
        existing = _read_json(self.meta_path)
        self.meta: dict[str, Any] = existing or {
            "turn": turn,
            "ts": time.time(),
            "prompt": prompt,
            "workspace": str(workspace),
            "session_id": session_id,
            "undone": False,
            "files": [],
        }

    def entry(self, rel: str) -> dict[str, Any] | None:
        """The file entry of ``rel`` in this turn, if recorded."""
        for item in self.meta["files"]:
            if item["path"] == rel:
                return dict(item)
        return None

    def add(self, item: dict[str, Any]) -> None:
        """Add or replace a file entry and save the metadata."""
        files = [f for f in self.meta["files"] if f["path"] != item["path"]]
        files.append(item)
        self.meta["files"] = sorted(files, key=lambda f: f["path"])
        self.save()

    def add_folders(self, folders: list[str]) -> None:
        """Note folders the turn made (undo removes them when left empty) and save."""
        self.meta["folders"] = sorted({*self.meta.get("folders", []), *folders})
        self.save()

    def save(self) -> None:
        """Write ``meta.json``."""
        _write_json(self.meta_path, self.meta)

    def blob_dir(self) -> Path:
        """Where this turn's previous contents are kept."""
        return self.dir / "blobs"


def load_turns(home: Path, session_id: str) -> list[dict[str, Any]]:
    """Every recorded turn of a session that changed files or made folders, oldest first."""
    base = session_dir(home, session_id)
    turns = []
    if base.is_dir():
        for child in base.iterdir():
            if child.is_dir() and child.name.isdigit():
                meta = _read_json(child / "meta.json")
                if isinstance(meta, dict) and (meta.get("files") or meta.get("folders")):
                    meta["_dir"] = str(child)
                    turns.append(meta)
    turns.sort(key=lambda m: int(m["turn"]))
    return turns


def save_meta(meta: dict[str, Any]) -> None:
    """Save a turn's metadata loaded with :func:`load_turns`."""
    data = {k: v for k, v in meta.items() if k != "_dir"}
    _write_json(Path(meta["_dir"]) / "meta.json", data)


def _size(path: Path) -> int:
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def total_size(home: Path) -> int:
    """Bytes taken by every session's checkpoints."""
    base = root(home)
    return _size(base) if base.is_dir() else 0


def enforce_limit(home: Path, max_bytes: int, keep: Path | None = None) -> list[str]:
    """Drop whole oldest turns (any session) until all checkpoints fit in ``max_bytes``;
    the turn folder ``keep`` (the one being recorded) is never dropped. Returns what went."""
    base = root(home)
    if not base.is_dir():
        return []
    turns: list[tuple[float, Path, int, bool]] = []
    total = 0
    for session in base.iterdir():
        if not session.is_dir():
            continue
        for turn in session.iterdir():
            if turn.is_dir() and turn.name.isdigit():
                size = _size(turn)
                total += size
                meta = _read_json(turn / "meta.json") or {}
                turns.append((float(meta.get("ts", 0)), turn, size, bool(meta.get("undone"))))
    dropped = []
    for _ts, turn, size, undone in sorted(turns, key=lambda t: t[0]):
        if total <= max_bytes:
            break
        if keep is not None and turn == keep:
            continue
        shutil.rmtree(turn, ignore_errors=True)
        if not undone:  # an undo going back before it must say it cannot
            with contextlib.suppress(OSError):
                (turn.parent / f"{turn.name}.dropped").touch()
        total -= size
        dropped.append(f"{turn.parent.name}/{turn.name}")
    return dropped


def dropped_turns(home: Path, session_id: str, since: int | None) -> list[int]:
    """The session's turns from ``since`` on (None: all) whose checkpoints were dropped to
    keep within ``max_mb`` before they were undone."""
    base = session_dir(home, session_id)
    found = [int(p.stem) for p in base.glob("*.dropped") if p.stem.isdigit()]
    return sorted(n for n in found if since is None or n >= since)

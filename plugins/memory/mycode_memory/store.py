"""Where notes live: ``$MYCODE_HOME/memory/``, one JSON Lines file per scope.

* ``user/notes.jsonl`` — notes for every project of this user;
* ``projects/<name>-<hash>/notes.jsonl`` — notes of one project, keyed by the workspace's git
  root (the nearest folder up with ``.git``), else the workspace path itself; the folder also
  holds ``project.txt`` with that path.

Adding a note appends one line; forgetting and editing rewrite the file atomically. Nothing
is ever written in the workspace.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from mycode_core.api import replace_atomically

Scope = Literal["project", "user"]
SCOPES: tuple[Scope, ...] = ("project", "user")
MAX_NOTE_CHARS = 2000


class StoreError(Exception):
    """The memory store cannot be read or written; the message says where and why."""


@dataclass(frozen=True)
class Note:
    """One remembered note."""

    id: str
    text: str
    created: float
    scope: Scope = "project"


def project_root(workspace: Path) -> Path:
    """The git root containing ``workspace``, else ``workspace`` (resolved)."""
    start = workspace.resolve()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def project_key(workspace: Path) -> str:
    """A stable folder name for the project of ``workspace``: ``<name>-<hash>``."""
    root = project_root(workspace)
    digest = hashlib.sha256(str(root).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    name = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in root.name)[:40]
    return f"{name or 'root'}-{digest}"


class MemoryStore:
    """The notes of one workspace's project and of the user."""

    def __init__(self, home: Path, workspace: Path) -> None:
        self.home = Path(home)
        self.workspace = Path(workspace)
        self.root = self.home / "memory"

    def folder(self, scope: Scope) -> Path:
        """The folder holding ``scope``'s notes."""
        if scope == "user":
            return self.root / "user"
        return self.root / "projects" / project_key(self.workspace)

    def file(self, scope: Scope) -> Path:
        """The JSON Lines file of ``scope``."""
        return self.folder(scope) / "notes.jsonl"

    def notes(self, scope: Scope) -> list[Note]:
        """The notes of ``scope``, oldest first (unreadable lines are skipped)."""
        path = self.file(scope)
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as exc:
            raise StoreError(f"cannot read {path}: {exc.strerror or exc}") from None
        out = []
        for line in text.splitlines():
            try:
                data = json.loads(line)
                out.append(Note(str(data["id"]), str(data["text"]), float(data["created"]), scope))
            except (ValueError, KeyError, TypeError):
                continue
        return out

    def all_notes(self) -> list[Note]:
        """Project and user notes together, oldest first."""
        return sorted([*self.notes("project"), *self.notes("user")], key=lambda note: note.created)

    def _prepare(self, scope: Scope) -> Path:
        folder = self.folder(scope)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if scope == "project":
                marker = folder / "project.txt"
                if not marker.exists():
                    marker.write_text(str(project_root(self.workspace)) + "\n", encoding="utf-8")
        except OSError as exc:
            raise StoreError(
                f"the memory store {folder} is not writable: {exc.strerror or exc}"
            ) from None
        return self.file(scope)

    def add(self, text: str, scope: Scope) -> tuple[Note, bool]:
        """Append a note; ``(note, False)`` when the same text is already remembered."""
        text = text.strip()
        for note in self.notes(scope):
            if note.text == text:
                return note, False
        note = Note(secrets.token_hex(3), text, time.time(), scope)
        path = self._prepare(scope)
        line = json.dumps({k: v for k, v in asdict(note).items() if k != "scope"})
        try:
            with path.open("a", encoding="utf-8") as fh:
                fh.write(line + "\n")
        except OSError as exc:
            raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None
        return note, True

    def replace(self, scope: Scope, notes: list[Note]) -> None:
        """Rewrite ``scope``'s file with ``notes`` (atomically)."""
        path = self._prepare(scope)
        lines = [
            json.dumps({"id": n.id, "text": n.text, "created": n.created}) + "\n" for n in notes
        ]
        try:
            replace_atomically(path, "".join(lines).encode("utf-8"), follow_folder_links=True)
        except OSError as exc:
            raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None

    def find(self, note_id: str) -> Note:
        """The note whose id starts with ``note_id`` (unique), else :class:`StoreError`."""
        wanted = note_id.strip().lower()
        matches = [note for note in self.all_notes() if wanted and note.id.startswith(wanted)]
        if not matches:
            raise StoreError(f"no note with id {note_id!r} (see `mycode memory list`)")
        if len(matches) > 1:
            ids = ", ".join(note.id for note in matches)
            raise StoreError(f"id {note_id!r} is ambiguous: {ids}")
        return matches[0]

    def forget(self, note_id: str) -> Note:
        """Remove one note by id (or unique id prefix) and return it."""
        note = self.find(note_id)
        self.replace(note.scope, [n for n in self.notes(note.scope) if n.id != note.id])
        return note

"""Editing notes as text: render a scope's notes for ``$EDITOR`` and read the result back.

Each note is a paragraph under a ``<!-- note ID -->`` marker. Deleting a paragraph forgets
the note, changing its text edits it, and paragraphs added without a marker become new notes.
"""

from __future__ import annotations

import os
import re
import secrets
import shlex
import subprocess
import tempfile
import time
from pathlib import Path

from mycode_memory.store import MemoryStore, Note, Scope

_MARKER = re.compile(r"^<!-- note ([0-9a-f]+) -->\s*$", re.MULTILINE)
HEADER = (
    "<!-- mycode memory, {scope} notes{where}. One note per block under its marker; delete a "
    "block to forget it, add paragraphs at the end for new notes. Save and quit to apply. -->"
)


def render(notes: list[Note], scope: Scope, where: str = "") -> str:
    """The editable text of ``notes``."""
    parts = [HEADER.format(scope=scope, where=f" for {where}" if where else ""), ""]
    for note in notes:
        parts.append(f"<!-- note {note.id} -->")
        parts.append(note.text)
        parts.append("")
    return "\n".join(parts)


def parse(text: str, previous: list[Note], scope: Scope) -> list[Note]:
    """Notes from edited ``text``; unchanged ids keep their creation time."""
    by_id = {note.id: note for note in previous}
    text = re.sub(r"\A\s*<!-- mycode memory.*?-->", "", text, flags=re.DOTALL)
    pieces = _MARKER.split(text)
    out: list[Note] = []
    leading = pieces[0]
    for paragraph in re.split(r"\n\s*\n", leading):
        if paragraph.strip():
            out.append(Note(secrets.token_hex(3), paragraph.strip(), time.time(), scope))
    for index in range(1, len(pieces), 2):
        note_id, body = pieces[index], pieces[index + 1].strip()
        if not body:
            continue
        old = by_id.get(note_id)
        chunks = [c.strip() for c in re.split(r"\n\s*\n", body) if c.strip()]
        first = chunks[0]
        if old is not None:
            out.append(Note(old.id, first, old.created, scope))
        else:
            out.append(Note(secrets.token_hex(3), first, time.time(), scope))
        out.extend(Note(secrets.token_hex(3), c, time.time(), scope) for c in chunks[1:])
    return out


def editor_command() -> list[str]:
    """``$VISUAL`` / ``$EDITOR`` split like a shell would, else ``vi``."""
    raw = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    return shlex.split(raw)


def edit_in_editor(store: MemoryStore, scope: Scope) -> tuple[int, int]:
    """Open ``scope``'s notes in the editor; save the result. Returns ``(before, after)``."""
    notes = store.notes(scope)
    where = str(store.workspace) if scope == "project" else ""
    handle, name = tempfile.mkstemp(prefix="mycode-memory-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as fh:
            fh.write(render(notes, scope, where))
        completed = subprocess.run([*editor_command(), str(path)], check=False)
        if completed.returncode != 0:
            raise OSError(f"the editor exited with code {completed.returncode}; nothing changed")
        edited = parse(path.read_text(encoding="utf-8"), notes, scope)
    finally:
        path.unlink(missing_ok=True)
    store.replace(scope, edited)
    return len(notes), len(edited)

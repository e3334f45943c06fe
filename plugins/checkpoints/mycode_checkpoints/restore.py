"""Undo: put the workspace back as it was before a turn and every later one (SPEC §12)."""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_checkpoints import store
from mycode_core.api import replace_atomically


class UndoError(Exception):
    """Undo cannot proceed; ``code`` is the exit code (1 refused, 2 nothing to undo)."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


Key = tuple[str, str]
"""A file of a checkpoint: the workspace its turn was taken in, and its path there."""


@dataclass
class UndoPlan:
    """What an undo will do: for each file (its turn's workspace and its path there), the turn
    entry holding its content before. A session resumed in another folder has turns in each."""

    turns: list[dict[str, Any]]
    since: int | None = None
    """The first turn undone, for the calls killed mid-call that count (None: all)."""
    targets: dict[Key, tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=dict)
    expected: dict[Key, str | None] = field(default_factory=dict)
    folders: set[Key] = field(default_factory=set)
    """Folders the turns made (``mkdir``): removed when left empty."""

    def workspaces(self) -> list[str]:
        """The workspaces the undone turns were taken in, oldest turn's first."""
        return list(dict.fromkeys(workspace for workspace, _ in [*self.targets, *self.folders]))

    def name(self, key: Key) -> str:
        """How undo names a file: its path in its workspace, the full path when the turns
        span several workspaces."""
        return key[1] if len(self.workspaces()) < 2 else str(Path(key[0]) / key[1])


def active_turns(home: Path, session_id: str) -> list[dict[str, Any]]:
    """The session's turns with files that are not undone yet, oldest first."""
    return [t for t in store.load_turns(home, session_id) if not t.get("undone")]


def plan(home: Path, session_id: str, turn: int | None, force: bool = False) -> UndoPlan:
    """The turns to undo (``turn`` and later; default the last one that changed files)."""
    turns = active_turns(home, session_id)
    if not turns:
        killed = store.cut_short(home, session_id, turn)
        if killed and not force:  # what a killed call changed was never recorded
            raise UndoError(f"cannot undo: the run was killed during {'; '.join(killed.values())}"
                            ", what it changed was not recorded (use --force)")  # fmt: skip
        store.clear_cut_short(killed)  # forced: there is nothing else to restore
        raise UndoError(f"nothing to undo in session {session_id}", 2)
    if turn is None:
        chosen = [turns[-1]]
    else:
        chosen = [t for t in turns if int(t["turn"]) >= turn]
        if not chosen:
            numbers = ", ".join(str(t["turn"]) for t in turns)
            raise UndoError(
                f"turn {turn} changed no files to undo (turns with changes: {numbers})", 2
            )
    found = gather(home, session_id, chosen)
    found.since = turn or int(chosen[0]["turn"])
    return found


def gather(home: Path, session_id: str, turns: list[dict[str, Any]]) -> UndoPlan:
    """The files of ``turns`` (oldest first), each with the first entry holding its content
    before, keyed by the workspace its turn was taken in."""
    result = UndoPlan(turns=turns)
    started_in = store.session_workspace(home, session_id) or ""  # for a turn without its own
    for meta in turns:
        made_in = str(meta.get("workspace") or started_in)
        result.folders.update((made_in, folder) for folder in meta.get("folders") or [])
        for item in meta["files"]:
            key = (made_in, item["path"])
            result.targets.setdefault(key, (meta, item))
            result.expected[key] = item.get("after")
    return result


def conflicts(undo: UndoPlan) -> list[str]:
    """Files changed since the checkpoint (by hand), and files that cannot be restored. A file
    already as it was before (an undo cut short half-way) is no conflict: undo goes on."""
    found = []
    for key, expected in sorted(undo.expected.items()):
        now = store.hash_file(Path(key[0]) / key[1])
        meta, item = undo.targets[key]
        before = None if item["change"] == "created" else item.get("blob")
        if now not in (expected, before):
            found.append(f"{undo.name(key)} (changed since turn {meta['turn']})")
    for key, (_meta, item) in sorted(undo.targets.items()):
        if item["change"] != "created" and not item.get("blob") and "link" not in item:
            found.append(f"{undo.name(key)} ({item.get('note') or 'no saved content'})")
    return found


def _write(path: Path, data_path: Path, mode: int | None) -> None:
    """Put ``data_path``'s bytes at ``path`` atomically (works for a read-only file too). A
    symlink there (a turn made ``ln -sf`` over the file) is replaced, never written through."""
    if path.is_dir() and not path.is_symlink():
        raise IsADirectoryError(errno.EISDIR, "it is now a folder")
    with open(data_path, "rb") as src:  # the mode saved, else the file's own
        replace_atomically(path, src, mode, create_parents=True, follow_folder_links=True)


def _put_back(path: Path, meta: dict[str, Any], item: dict[str, Any]) -> str | None:
    """Undo one file: remove it if the turn created it, else write its content before; what
    was done (None: nothing to do)."""
    if item["change"] == "created":
        if not (path.is_file() or path.is_symlink()):
            return None
        path.unlink()
        return "removed"
    if "link" in item:  # a symlink: made again, pointing where it did
        if path.is_symlink() or path.is_file():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(item["link"], path)
        return "restored"
    if not item.get("blob"):
        return None  # forced: nothing saved for it
    _write(path, Path(meta["_dir"]) / "blobs" / item["blob"], item.get("mode"))
    return "restored"


def _apply(undo_plan: UndoPlan, keys: list[Key], done: list[str]) -> None:
    """Put back the files ``keys`` in order, adding a line to ``done`` for each."""
    for key in keys:
        meta, item = undo_plan.targets[key]
        name = undo_plan.name(key)
        try:
            verb = _put_back(Path(key[0]) / key[1], meta, item)
        except OSError as exc:
            raise UndoError(
                f"cannot restore {name}: {exc.strerror or exc}; restored so far: "
                + (", ".join(done) or "nothing")
            ) from exc
        if verb:
            done.append(f"{verb} {name}")


def undo(
    home: Path, session_id: str, turn: int | None, force: bool, undo_plan: UndoPlan | None = None
) -> list[str]:
    """Restore the workspaces before ``turn`` (each turn's files in the workspace it was taken
    in); the restored paths (``UndoError`` if refused)."""
    undo_plan = undo_plan or plan(home, session_id, turn, force)
    for workspace in undo_plan.workspaces():
        if not Path(workspace).is_dir():
            raise UndoError(f"the session's workspace {workspace} no longer exists")
    problems = conflicts(undo_plan)
    killed = store.cut_short(home, session_id, undo_plan.since)
    problems += [f"{what} (killed mid-call: what it changed is not recorded)"
                 for what in killed.values()]  # fmt: skip
    problems += [f"turn {n} (its checkpoint was dropped to keep within [checkpoints] max_mb)"
                 for n in store.dropped_turns(home, session_id, undo_plan.since)]  # fmt: skip
    if problems and not force:
        raise UndoError(
            "undo refused, changed since or not restorable (use --force): " + "; ".join(problems)
        )
    done: list[str] = []
    keys = sorted(undo_plan.targets)
    created = [k for k in keys if undo_plan.targets[k][1]["change"] == "created"]
    _apply(undo_plan, created, done)  # first: a folder a turn made where a file was goes
    made = {(k[0], d) for k in created for d in undo_plan.targets[k][1].get("dirs") or []}
    for key in sorted(made | undo_plan.folders, key=lambda k: -len(Path(k[1]).parts)):
        with contextlib.suppress(OSError):  # a folder the turns made, if now empty
            (Path(key[0]) / key[1]).rmdir()
            if key in undo_plan.folders:
                done.append(f"removed {undo_plan.name(key)}/")
    _apply(undo_plan, [k for k in keys if k not in created], done)
    store.clear_cut_short(killed)
    for meta in undo_plan.turns:
        meta["undone"] = True
        store.save_meta(meta)
    return done

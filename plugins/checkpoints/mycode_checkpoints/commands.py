"""``mycode checkpoints`` and ``mycode undo`` (SPEC §12)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from mycode_checkpoints import restore, store


def _session(home: Path, session_id: str | None, cwd: Path) -> str | None:
    """The session asked for, else the latest one of this workspace."""
    from mycode_core.sessions import SessionStore

    if session_id:
        known = (
            SessionStore(home).exists(session_id) or store.session_dir(home, session_id).is_dir()
        )
        if not known:
            _fail(f"no session {session_id!r} (see `mycode sessions`)", 2)
        return session_id

    latest = SessionStore(home).latest(str(cwd))
    if latest is not None:
        return latest.id
    base = store.root(home)  # sessions whose transcript is gone still have checkpoints
    found = []
    if base.is_dir():
        for child in base.iterdir():
            if child.name != ".pending" and store.session_workspace(home, child.name) == str(cwd):
                found.append((child.stat().st_mtime, child.name))
    return max(found)[1] if found else None


def _home_and_session(session_id: str | None, cwd: Path | None) -> tuple[Path, Path, str | None]:
    """``MYCODE_HOME``, the workspace and the session a command is about (exit 2 on a bad home)."""
    from mycode_core.config import ConfigError, home_dir

    try:
        home = home_dir()
    except ConfigError as exc:
        _fail(str(exc), 2)
    workspace = (cwd or Path.cwd()).resolve()
    return home, workspace, _session(home, session_id, workspace)


def _public(meta: dict[str, Any]) -> dict[str, Any]:
    """The SPEC §12 shape of one turn (plus line counts, whether it was undone and the folders
    it made, if any)."""
    files = [
        {
            "path": f["path"],
            "change": f["change"],
            "added": f.get("added"),
            "removed": f.get("removed"),
            **({"note": f["note"]} if f.get("note") else {}),
        }
        for f in meta["files"]
    ]
    return {
        "turn": int(meta["turn"]),
        "ts": meta.get("ts"),
        "prompt": meta.get("prompt", ""),
        "files": files,
        "undone": bool(meta.get("undone")),
        **({"folders": meta["folders"]} if meta.get("folders") else {}),
    }


def _fail(message: str, code: int) -> None:
    _say(f"mycode: {message}", err=True)
    sys.exit(code)


def _say(line: str, err: bool = False) -> None:
    """One line for the terminal: a file name a command chose (``x\\e]52;…``) shows its
    control characters as text, as the run view does, never driving the terminal."""
    from mycode_core.api import neutralise

    click.echo(neutralise(line), err=err)


def _json_text(value: Any) -> str:
    """``value`` as JSON text that is valid UTF-8: a file name that is not UTF-8 (its bytes
    kept as lone surrogates) is written with ``\\udcXX`` escapes, not as raw bytes."""
    text = json.dumps(value, indent=1, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, indent=1)
    return text


def make_commands() -> list[click.Command]:
    """Build the ``checkpoints`` and ``undo`` click commands."""

    @click.command("checkpoints")
    @click.option("--session", "session_id", help="Session id (default: latest in this workspace).")
    @click.option("--json", "as_json", is_flag=True, help="JSON: one object per turn, newest last.")
    @click.option("--cwd", type=click.Path(file_okay=False, path_type=Path), help="Workspace.")
    def checkpoints(session_id: str | None, as_json: bool, cwd: Path | None) -> None:
        """List what each turn of a session changed (files, +/- lines)."""
        home, _, sid = _home_and_session(session_id, cwd)
        turns = [_public(m) for m in store.load_turns(home, sid)] if sid else []
        if as_json:
            click.echo(_json_text(turns))
            return
        if not turns:
            _say("no checkpoints" + (f" in session {sid}" if sid else " in this workspace"))
            return
        _say(f"session {sid}")
        for turn in turns:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(turn["ts"] or 0))
            prompt = " ".join(str(turn["prompt"]).split())[:60]
            flag = "  (undone)" if turn["undone"] else ""
            _say(f"turn {turn['turn']}  {when}  {prompt}{flag}")
            for f in turn["files"]:
                lines = f"  +{f['added']} -{f['removed']}" if f.get("added") is not None else ""
                note = f"  [{f['note']}]" if f.get("note") else ""
                _say(f"    {f['change']:<8} {f['path']}{lines}{note}")
            for folder in turn.get("folders", []):
                _say(f"    {'created':<8} {folder}/  (folder)")

    @click.command("undo")
    @click.option("--session", "session_id", help="Session id (default: latest in this workspace).")
    @click.option("--turn", type=click.IntRange(min=1), help="Undo this turn and every later one.")
    @click.option("--force", is_flag=True, help="Restore even files changed since.")
    @click.option("--cwd", type=click.Path(file_okay=False, path_type=Path), help="Workspace.")
    def undo(session_id: str | None, turn: int | None, force: bool, cwd: Path | None) -> None:
        """Restore the workspace to before a turn (default: the last turn that changed files)."""
        home, workspace, sid = _home_and_session(session_id, cwd)
        if sid is None:
            _fail("nothing to undo: no session in this workspace", 2)
        assert sid is not None
        try:
            undo_plan = restore.plan(home, sid, turn, force)
            done = restore.undo(home, sid, turn, force, undo_plan)
        except restore.UndoError as exc:
            _fail(str(exc), exc.code)
        where = undo_plan.workspaces()
        if done and where != [str(workspace)]:  # --session of another workspace, or several
            where_text = f"s {', '.join(where)}" if len(where) > 1 else f" {where[0]}"
            _say(f"mycode: undone in the session's workspace{where_text}", err=True)
        for line in done:
            _say(line)

    return [checkpoints, undo]

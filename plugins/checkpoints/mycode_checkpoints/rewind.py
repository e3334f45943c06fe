"""``/rewind [N] [--force]``: back to before a turn of this session, files and conversation.

The turns are the session's own (its transcript's user prompts, as earlier rewinds left them, in
the user's own words: a ``typed`` event's text where the model was sent more), numbered like the
checkpoints; each shows the files it changed. The files go back as
``mycode undo --turn`` would put them (the same refusal when one changed since, unless
``--force``); then the command returns ``SlashResult(rewind=N)`` and the session cuts its
conversation back to before that turn's prompt, recording it in the transcript.

A checkpoint belongs to the first prompt sent at or after it began: a checkpoint's turn starts
when its prompt is accepted, just before the prompt is written to the transcript.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_checkpoints import restore
from mycode_checkpoints.recorder import refresh_after_undo

CANCEL = "cancel"
SHOWN = 20


@dataclass
class SessionTurn:
    """One user turn of the session's conversation and the files it changed."""

    number: int
    prompt: str
    files: list[dict[str, Any]] = field(default_factory=list)
    checkpoints: list[int] = field(default_factory=list)
    """The numbers of the checkpoint turns (not undone) holding what this turn changed."""

    def label(self) -> str:
        """``3. fix the parser · edited a.py, created b.py``."""
        words = " ".join(self.prompt.split()) or "(no prompt)"
        words = words if len(words) <= 60 else words[:59] + "…"
        names = [f"{f['change']} {f['path']}" for f in self.files]
        if len(names) > 3:
            names = [*names[:3], f"{len(names) - 3} more"]
        return f"{self.number}. {words} · {', '.join(names) or 'no files changed'}"


def session_turns(home: Path, session_id: str) -> list[SessionTurn]:
    """The turns of the session's conversation now (turns rewound away left out), oldest
    first, each with the files of its checkpoints that are not undone."""
    from mycode_core.api import rewound
    from mycode_core.sessions import SessionStore, user_words

    sessions = SessionStore(home)
    if not sessions.exists(session_id):
        return []
    events = sessions.read_events(session_id)
    kept = {id(event) for event in rewound(events)}
    users = [e for e in events if e.get("type") == "user" and not e.get("agent_id")]
    stamps = [float(e.get("ts") or 0) for e in users]
    said = _typed(events)
    turns = {
        number: SessionTurn(
            number, said.get(id(event)) or user_words(str(event.get("content", "")))
        )
        for number, event in enumerate(users, 1)
        if id(event) in kept
    }
    for meta in restore.active_turns(home, session_id):
        owner = turns.get(bisect.bisect_left(stamps, float(meta.get("ts") or 0)) + 1)
        if owner is not None:
            owner.files.extend(meta["files"])
            made = meta.get("folders", [])
            owner.files.extend({"change": "created", "path": f"{d}/"} for d in made)
            owner.checkpoints.append(int(meta["turn"]))
    return list(turns.values())


def _typed(events: list[dict[str, Any]]) -> dict[int, str]:
    """What the user typed for a ``user`` event (by ``id``) when the model was sent more: the
    session's ``typed`` event ahead of it in its turn (``/greet Marie``, ``!make`` then the
    message), where the ``user`` event holds a skill's instructions or a command's output."""
    said: dict[int, str] = {}
    typed = ""
    for event in events:
        kind = None if event.get("agent_id") else event.get("type")
        if kind == "typed":
            typed = str(event.get("text") or "")
        elif kind in ("user", "result"):
            if kind == "user" and typed:
                said[id(event)] = typed
            typed = ""
    return said


def _pick(turns: list[SessionTurn], context: Any) -> SessionTurn | None:
    """Ask which turn (newest first); ``None`` when cancelled. Each label starts with its
    turn's number (``12. …``): the session's picker shows that number alone and takes it
    typed in full, then Enter (a digit never picks at once)."""
    newest = list(reversed(turns))[:SHOWN]
    labels = [turn.label() for turn in newest]
    question = (
        "Rewind to before which turn?\n"
        "Its files go back as they were before it, and the conversation restarts there."
    )
    answer = context.ask(question, [*labels, CANCEL])
    return newest[labels.index(answer)] if answer in labels else None


def rewind_command(args: str, context: Any) -> Any:
    """``/rewind [N] [--force]``: restore the files of turn N and later, then cut the
    conversation back to before turn N (no N: a picker, or the list when nothing can ask)."""
    from mycode_core import SlashResult

    words = args.split()
    force = "--force" in words
    numbers = [w for w in words if w.isdigit()]
    unknown = [w for w in words if not w.isdigit() and w != "--force"]
    if unknown:
        problem = f"/rewind [N] [--force]: {' '.join(unknown)!r} is not a turn"
        return SlashResult(output=problem, exit_code=2)  # a usage error, as `mycode undo` has
    home, session_id = Path(context.home), str(context.session_id)
    turns = session_turns(home, session_id)
    if not turns:
        return SlashResult(output="nothing to rewind: this session has no turn yet", exit_code=2)
    if numbers:
        chosen = next((t for t in turns if t.number == int(numbers[0])), None)
        if chosen is None:
            listed = ", ".join(str(t.number) for t in turns)
            missing = f"no turn {numbers[0]} to rewind to (turns: {listed})"
            return SlashResult(output=missing, exit_code=2)
    elif context.ask is None:
        lines = [turn.label() for turn in turns]
        return SlashResult(output="\n".join([*lines, "Rewind with /rewind N [--force]."]))
    else:
        chosen = _pick(turns, context)
        if chosen is None:
            return SlashResult(output="rewind cancelled: nothing changed")
    return _rewind_to(chosen, turns, context, force)


def _rewind_to(chosen: SessionTurn, turns: list[SessionTurn], context: Any, force: bool) -> Any:
    """Restore the files of ``chosen`` and every later turn, then ask for the cut."""
    from mycode_core import SlashResult

    home, session_id = Path(context.home), str(context.session_id)
    later = [n for t in turns if t.number >= chosen.number for n in t.checkpoints]
    done: list[str] = []
    if later:
        try:
            done = restore.undo(home, session_id, min(later), force)
        except restore.UndoError as exc:
            hint = "" if force else f" (/rewind {chosen.number} --force overwrites them)"
            return SlashResult(output=f"{exc}{hint}; nothing was rewound", exit_code=exc.code)
    refresh_after_undo(context, done)
    if not done:
        done = [f"no files to restore: turn {chosen.number} and later changed none"]
    return SlashResult(output="\n".join(done), rewind=chosen.number)

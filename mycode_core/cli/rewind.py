"""The conversation side of ``/rewind`` (issue 20): the history cut back to before a turn.

The checkpoints plugin's ``/rewind`` picks the turn and restores the files, then returns
``SlashResult(rewind=N)``. The session records a ``rewind`` event (:func:`record`) — the
transcript stays append-only — and rebuilds its history from the :func:`rewound` events, as
``--resume`` does later. Turns are numbered like the checkpoints: the main agent's ``user``
events, counted over the whole transcript (turns cut off keep their numbers).
"""

from __future__ import annotations

from typing import Any, Literal

from mycode_core.events import AgentEvent
from mycode_core.sessions import SessionStore


class RewindEvent(AgentEvent):
    """In the transcript: the history goes back to before the ``turn``-th user turn."""

    type: Literal["rewind"] = "rewind"
    turn: int


def rewound(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A transcript's events without the turns a ``rewind`` cut off: each ``rewind`` drops
    every event from the main agent's ``turn``-th ``user`` event (from the ``typed`` event ahead
    of it, when the turn has one) up to itself. What the
    session's history is made of now (``--resume``, ``/resume``, ``/rewind``'s list)."""
    kept: list[dict[str, Any]] = []
    starts: list[int] = []  # where each user turn begins in ``kept`` (-1: cut off already)
    typed: int | None = None  # where the turn's ``typed`` event is in ``kept``: it begins there
    for event in events:
        kind, main = event.get("type"), not event.get("agent_id")
        if kind in ("typed", "result") and main:
            typed = len(kept) if kind == "typed" else None
        if kind == "user" and main:
            starts.append(len(kept) if typed is None else typed)
            typed = None
        elif kind == "rewind" and main:
            turn = _turn_number(event.get("turn"))
            if 0 < turn <= len(starts) and starts[turn - 1] >= 0:
                del kept[starts[turn - 1] :]
                starts[turn - 1 :] = [-1] * (len(starts) - turn + 1)
            continue
        kept.append(event)
    return kept


def _turn_number(value: Any) -> int:
    """A rewind's turn as an int (0 for anything a hand-edited transcript may hold)."""
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def record(store: SessionStore, session_id: str, turn: int) -> None:
    """Append the ``rewind`` event to the session's transcript (and make it durable)."""
    transcript = store.open(session_id)
    try:
        transcript.write(RewindEvent(turn=turn))
    finally:
        transcript.close()


def history(store: SessionStore, session_id: str) -> list[dict[str, Any]]:
    """The chat history of a stored session as its rewinds left it."""
    from mycode_core.cli.transcript_history import history_from_events

    return history_from_events(rewound(store.read_events(session_id)))

"""What a stored transcript says for a resumed run: the last checkpoint and recorded view."""

from __future__ import annotations

from typing import Any


def last_checkpoint(events: list[dict[str, Any]]) -> str | None:
    """The continuation checkpoint a run that stopped at its step limit left last, if any."""
    checkpoint, stopped = None, None
    for event in events:
        if event.get("type") == "checkpoint":
            checkpoint = str(event.get("text", ""))
        elif event.get("type") == "result":
            stopped = event.get("stop_reason")
            checkpoint = checkpoint if stopped == "max_steps" else None
    return checkpoint if stopped == "max_steps" else None


def last_view(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The session's last ``compaction`` event, for ``--resume``; ``None`` when there is none or
    the history restarts from a checkpoint or was rewound since (the indexes would not match)."""
    if last_checkpoint(events) is not None:
        return None
    for event in reversed(events):
        if event.get("type") == "rewind":  # the turns it cut off may hold what it refers to
            return None
        if event.get("type") == "compaction":
            view, length = event.get("view"), event.get("history_length")
            return event if isinstance(view, list) and isinstance(length, int) else None
    return None

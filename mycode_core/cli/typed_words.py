"""What the user typed for a turn, kept in the transcript when the model was sent more.

A plugin's slash command (``/greet Marie``) runs as the prompt it expanded to — a skill's
instructions — and ``!command``s reach the model as notes ahead of the next message; the
``user`` event holds what the model was sent. Before such a turn the session appends a ``typed``
event with the lines typed (``/greet Marie``; ``!make test`` then the message), so the lists of
sessions and turns (``/sessions``, ``/resume``, ``/rewind``, ``sessions show``) show the user's
own words. A ``typed`` event stands for the next main-agent ``user`` event of its turn (none
when the turn's ``result`` comes first: a blocked prompt).
"""

from __future__ import annotations

from typing import Any, Literal

from mycode_core.events import AgentEvent
from mycode_core.sessions import SessionStore


class TypedEvent(AgentEvent):
    """In the transcript, ahead of a turn's ``user`` event: the lines the user typed for it."""

    type: Literal["typed"] = "typed"
    text: str


def record(runner: Any, text: str) -> None:
    """Append the ``typed`` event to the runner's session transcript (no turn runs now)."""
    transcript = SessionStore(runner.home).open(runner.session_id)
    try:
        transcript.write(TypedEvent(text=text))
    finally:
        transcript.close()

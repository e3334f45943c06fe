"""The runner of ``mycode -p "/name ..."``: a plugin's local command (``/diff``,
``/checkpoints``, ``/undo``, ``/rewind``) reads the session's files and asks no model, so a
model that cannot be made (none configured, no API key) is an error only when the command
hands the model a prompt."""

from __future__ import annotations

import time
from typing import Any

from mycode_core.errors import SetupError
from mycode_core.events import AgentEvent
from mycode_core.runtime.loop import AgentRunner


class CommandRunner(AgentRunner):
    """An :class:`AgentRunner` whose model may be missing until a turn needs it."""

    model_problem: SetupError | None = None
    """Why the model could not be made (``None``: it was)."""

    def _make_model(self) -> Any:
        try:
            return super()._make_model()
        except SetupError as exc:
            self.model_problem = exc
            return None


def command_turn(runner: AgentRunner, text: str, failed: bool = False) -> list[AgentEvent]:
    """A turn a slash command answered instead of the model: ``text`` is the result's
    ``final_text`` (``failed``: its error, ``interrupted``); no user/assistant event. Returns
    the events not consumed yet: what setup emitted (``system`` first), then the result."""
    runner.prepare()
    started = time.monotonic()
    stop, error = ("interrupted", text) if failed else ("completed", None)
    if runner.guard.strict_failure:  # the command (or a hook before it) failed: exit 2
        stop, error = "interrupted", f"{runner.guard.strict_failure} (strict plugins)"
    with runner._lock:
        runner._result_sent = True
        verdict = "pass" if error is None else "none"
        runner._emit(runner._result(stop, verdict, 0, text, started, error))
    events: list[AgentEvent] = []
    while not runner.events.queue.empty():
        event = runner.events.queue.get_nowait()
        if event is not None:
            events.append(event)
    return events

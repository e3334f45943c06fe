"""The runner of ``mycode -p "/name ..."``: a plugin's local command (``/diff``,
``/checkpoints``, ``/undo``, ``/rewind``) reads the session's files and asks no model, so a
model that cannot be made (none configured, no API key) is an error only when the command
hands the model a prompt."""

from __future__ import annotations

from typing import Any

from mycode_core.errors import SetupError
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

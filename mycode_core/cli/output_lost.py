"""The run's output could not be written (a full disk, a closed pipe): what the command line
says then (:func:`mycode_core.cli.output.render_turn` raises it, ``mycode`` exits 1)."""

from __future__ import annotations


class OutputLost(Exception):
    """Writing a run's output failed (a full disk, a closed pipe): the turn was stopped and
    drained, so the transcript of session ``session_id`` is complete. ``error``: the write's."""

    def __init__(self, error: OSError, session_id: str) -> None:
        super().__init__(str(error))
        self.error, self.session_id = error, session_id

    def line(self) -> str | None:
        """What to tell on stderr: nothing for a closed pipe (``| head``), as other tools."""
        if isinstance(self.error, BrokenPipeError):
            return None
        return (
            f"mycode: error: cannot write the output ({self.error.strerror or self.error}); "
            f"the session is kept: mycode sessions show {self.session_id}"
        )

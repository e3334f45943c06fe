"""What a running command prints, shown while it runs: its last line goes out as a
``progress`` event (source ``run_command``), at most once a second, so the terminal's spinner
line and a ``stream-json`` reader see a long build or test run moving."""

from __future__ import annotations

import re
import time
from typing import Any

from mycode_core.events import ProgressEvent

EVERY = 1.0
"""Least seconds between two ``progress`` events of one command."""

_ESCAPES = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-_])")
_LINE_BREAKS = re.compile(r"[\r\n]")


def last_line(chunk: bytes, limit: int = 200) -> str:
    """The last line of ``chunk`` with text (a ``\\r``-redrawn progress bar counts as lines),
    without terminal escapes, cut to ``limit`` characters; ``""`` when there is none."""
    text = _ESCAPES.sub("", chunk.decode("utf-8", "replace"))
    for line in reversed(_LINE_BREAKS.split(text)):
        if line.strip():
            return " ".join(line.split())[:limit]
    return ""


class LiveOutput:
    """The last line a running command printed, sent to the run's event stream when it
    changed and a second has passed since the last one (the first line goes out at once)."""

    def __init__(self, context: Any, every: float = EVERY) -> None:
        self.context, self.every = context, every
        self.line = self.sent = ""
        self.sent_at = -every

    def feed(self, chunk: bytes) -> None:
        """Take a piece of output; send its last line if it is time."""
        line = last_line(chunk)
        if line:
            self.line = line
        self.tick()

    def tick(self) -> None:
        """Send the last line if it changed and a second has passed (called while waiting)."""
        now = time.monotonic()
        if self.line == self.sent or now - self.sent_at < self.every:
            return
        self.sent, self.sent_at = self.line, now
        emit = getattr(self.context, "emit", None)
        if emit is not None:
            emit(ProgressEvent(source="run_command", message=self.line))

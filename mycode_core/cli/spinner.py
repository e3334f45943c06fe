"""The live line of the text view: a spinner, its words, how long they have been shown, and
what the user typed ahead of the turn."""

from __future__ import annotations

import time
from typing import Any

ELAPSED_AFTER = 2.0
"""Seconds of spinning before the line says how long (a quick step shows no clock)."""


def elapsed_text(seconds: float) -> str:
    """``12s`` or ``2m 05s``: how long a step or a tool call has been running."""
    whole = int(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m {whole % 60:02d}s"


class SpinnerWords:
    """The spinner's words and the seconds since ``since``, worked out at each redraw (rich
    asks for ``__rich__`` every frame), so the line of a long command keeps counting."""

    def __init__(self, words: str, since: float, queued: str = "") -> None:
        self.words, self.since, self.queued = words, since, queued

    def __rich__(self) -> Any:
        """The line as plain text: arguments and a server's words are never rich markup."""
        from rich.text import Text

        seconds = time.monotonic() - self.since
        clock = f" ({elapsed_text(seconds)})" if seconds >= ELAPSED_AFTER else ""
        return Text(self.words + clock + self.queued)


class Spinner:
    """The view's one spinner: started on a console, given new words, stopped. Its clock
    starts with it; new words (a tool's progress) keep the clock running."""

    def __init__(self) -> None:
        self.status: Any = None
        self.words = ""
        self.queued = ""
        """What the user typed during the turn, said after the words."""
        self.since = 0.0

    @property
    def spinning(self) -> bool:
        """Whether the spinner is on the screen."""
        return self.status is not None

    def show(self, console: Any, words: str) -> None:
        """Spin on ``console`` with ``words``, starting the spinner if it is not running."""
        self.words = words
        if self.status is None:
            self.since = time.monotonic()
            self.status = console.status(self._line(), spinner="dots")
            self.status.start()
        else:
            self.status.update(self._line())

    def show_queued(self, note: str) -> None:
        """Keys typed during the turn (told from the keyboard's thread), after the words."""
        self.queued = note
        status = self.status
        if status is not None:
            status.update(self._line())

    def stop(self) -> None:
        """Take the spinner off the screen."""
        if self.status is not None:
            self.status.stop()
            self.status = None

    def _line(self) -> SpinnerWords:
        return SpinnerWords(self.words, self.since, self.queued)

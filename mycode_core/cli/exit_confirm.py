"""Leaving with Ctrl-C at the empty prompt, as Claude Code's "press again to exit": the first
press shows a hint, a second one within :data:`WINDOW` seconds leaves. The hint expires, and
any edit of the prompt in between disarms it, so a Ctrl-C much later — or after typing and
deleting a word — only shows the hint again.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

WINDOW = 2.0
"""Seconds a first Ctrl-C waits for the second (``MYCODE_EXIT_CONFIRM_S`` sets another)."""
HINT = "(press Ctrl-C again to exit, or type a task)"


def window() -> float:
    """The window in effect: ``MYCODE_EXIT_CONFIRM_S`` when it is a number, else :data:`WINDOW`."""
    try:
        return float(os.environ.get("MYCODE_EXIT_CONFIRM_S", WINDOW))
    except ValueError:
        return WINDOW


class ExitConfirmation:
    """Whether a Ctrl-C at the empty prompt confirms leaving (``clock``: seconds, monotonic)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.window = window()
        self._armed_at: float | None = None

    def press(self) -> bool:
        """A Ctrl-C: ``True`` when it is the second within the window (leave); else it arms."""
        now = self.clock()
        if self._armed_at is not None and now - self._armed_at <= self.window:
            return True
        self._armed_at = now
        return False

    def disarm(self, *_: object) -> None:
        """An edit, or a line read: the next Ctrl-C only arms again."""
        self._armed_at = None

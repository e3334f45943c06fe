"""The ``idle_prompt`` notification: the prompt has waited a while for the user after a turn.

Claude Code tells its ``Notification`` hooks when it has waited 60 seconds for input after an
answer — the cue desktop notifiers wait for. The interactive session does the same through the
``notification`` hook (``kind`` ``idle_prompt``), once per wait, and not while something is
typed. ``MYCODE_IDLE_NOTIFICATION_S`` sets the wait (``0``: never).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

IDLE_MESSAGE = "mycode is waiting for your input"
DEFAULT_IDLE_S = 60.0


def idle_seconds() -> float:
    """The wait before the notification: ``MYCODE_IDLE_NOTIFICATION_S``, else 60 s (a value
    that is not a number counts as unset)."""
    try:
        return float(os.environ.get("MYCODE_IDLE_NOTIFICATION_S", DEFAULT_IDLE_S))
    except ValueError:
        return DEFAULT_IDLE_S


@contextmanager
def notify_when_idle(runner: Any, typing: Callable[[], bool]) -> Iterator[None]:
    """While the block runs (the prompt waits), call the ``notification`` hook once after
    :func:`idle_seconds`, unless ``typing()`` says the user has begun a line."""
    from mycode_core.runtime.lifecycle import notify

    def fire() -> None:
        if not typing():
            notify(runner.guard, runner.context, IDLE_MESSAGE, "idle_prompt")

    seconds = idle_seconds()
    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    if seconds > 0:
        timer.start()
    try:
        yield
    finally:
        timer.cancel()

"""SIGTERM and SIGHUP end a run the way Ctrl-C does, with exit code 128 + the signal.

The first signal cancels the running turn: the tool in flight stops its process tree and
reports that it was cut, the loop writes the ``result`` event (``stop_reason = "interrupted"``)
and the process exits 143 (SIGTERM) or 129 (SIGHUP). Should the turn not wind down within
``GRACE`` seconds, or a second signal arrive, the process exits at once with the same code.
In an interactive session the handler waits for the turn to end and then leaves the session.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

GRACE = 20.0
SIGNALS = ("SIGTERM", "SIGHUP")


class SignalGuard:
    """Installs the handlers for the duration of a ``with`` block."""

    def __init__(
        self, cancel: Callable[[], None], *, wait: Callable[[float], None] | None = None
    ) -> None:
        """``cancel`` stops the running turn; with ``wait`` (interactive sessions, whose loop
        would otherwise go on) the handler waits for the turn to end, then exits."""
        self.cancel = cancel
        self.wait = wait
        self.received: int | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is not threading.main_thread():
            return self
        for name in SIGNALS:
            number = getattr(signal, name, None)
            if number is not None:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.received is not None:
            os._exit(128 + self.received)
        self.received = signum
        self.cancel()
        if self.wait is not None:
            self.wait(GRACE)
            raise SystemExit(128 + signum)
        timer = threading.Timer(GRACE, os._exit, args=(128 + signum,))
        timer.daemon = True
        timer.start()

    def exit_code(self, code: int) -> int:
        """``code``, or 128 + the signal when one ended the run."""
        return code if self.received is None else 128 + self.received

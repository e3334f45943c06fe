"""Questions the loop's threads hand to the main thread, which owns the terminal (Ctrl-C goes
there, and a reader thread left after a cancel would eat the user's typing); one not yet
started when the turn is cancelled is never shown."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, wait
from typing import Any

POLL_SECONDS = 0.05


class MainThreadCalls:
    """A queue of calls that only the main thread runs."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any], Any]]
        self._queue = queue.SimpleQueue()

    def submit(self, function: Callable[[], Any], cancelled: threading.Event, default: Any) -> Any:
        """``function()`` run on the main thread (``default`` if cancelled before it starts)."""
        if threading.current_thread() is threading.main_thread():
            return function()
        call: Future[Any] = Future()
        self._queue.put((call, function, default))
        while not wait([call], POLL_SECONDS).done:
            if cancelled.is_set() and call.cancel():  # not started: never run now
                return default
        return call.result()

    def serve(self) -> None:
        """Run the waiting calls (main thread only); a ``KeyboardInterrupt`` or ``SystemExit``
        answers the call with its default and propagates."""
        while True:
            try:
                call, function, default = self._queue.get_nowait()
            except queue.Empty:
                return
            if not call.set_running_or_notify_cancel():  # cancelled while it waited
                continue
            try:
                call.set_result(function())
            except (KeyboardInterrupt, SystemExit):
                call.set_result(default)  # the asker gets the default; the turn is cancelled
                raise
            except BaseException as exc:  # noqa: BLE001 - handed back to the asking thread
                call.set_exception(exc)

"""Questions the loop's threads hand to the main thread, which owns the terminal (Ctrl-C goes
there, and a reader thread left after a cancel would eat the user's typing); one not yet
started when the turn is cancelled is never shown."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

POLL_SECONDS = 0.05


@dataclass
class _Call:
    function: Callable[[], Any]
    default: Any = None
    done: threading.Event = field(default_factory=threading.Event)
    started: bool = False
    result: Any = None
    error: BaseException | None = None


class MainThreadCalls:
    """A queue of calls that only the main thread runs."""

    def __init__(self) -> None:
        self._queue: queue.Queue[_Call] = queue.Queue()
        self._lock = threading.Lock()

    def submit(self, function: Callable[[], Any], cancelled: threading.Event, default: Any) -> Any:
        """``function()`` run on the main thread (``default`` if cancelled before it starts)."""
        if threading.current_thread() is threading.main_thread():
            return function()
        call = _Call(function, default)
        self._queue.put(call)
        while not call.done.wait(POLL_SECONDS):
            with self._lock:
                if cancelled.is_set() and not call.started:
                    call.started = True  # never run now
                    return default
        if call.error is not None:
            raise call.error
        return call.result

    def serve(self) -> None:
        """Run the waiting calls (main thread only); a ``KeyboardInterrupt`` or ``SystemExit``
        answers the call with its default and propagates."""
        while True:
            try:
                call = self._queue.get_nowait()
            except queue.Empty:
                return
            with self._lock:
                if call.started:
                    continue
                call.started = True
            try:
                call.result = call.function()
            except (KeyboardInterrupt, SystemExit):
                call.result = call.default  # the asker gets the default; the turn is cancelled
                raise
            except BaseException as exc:  # noqa: BLE001 - handed back to the asking thread
                call.error = exc
            finally:
                call.done.set()

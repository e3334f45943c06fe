"""The one background event loop that runs every MCP session of the process.

A daemon thread runs an asyncio loop (anyio code runs on it); synchronous callers submit
coroutines with :meth:`BackgroundLoop.submit` and wait on the returned future with a timeout.
Events for the run (notices, progress) raised on the loop are handed to a separate emitter
thread, so a slow ``context.emit`` can never stall the sessions.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import queue
import threading
import weakref
from collections.abc import Callable, Coroutine
from typing import Any, Protocol, Self, TypeVar

T = TypeVar("T")


class _Stoppable(Protocol):
    def shutdown(self, timeout: float = ...) -> None: ...


class _Shared:
    """One per process, working on its daemon ``thread``: :meth:`get` makes it on first use
    and again if that thread has died."""

    _instance: Any = None
    _guard = threading.Lock()
    thread: threading.Thread

    @classmethod
    def get(cls) -> Self:
        """The shared instance, started on first use."""
        with cls._guard:
            if cls._instance is None or not cls._instance.thread.is_alive():
                cls._instance = cls()
            shared: Self = cls._instance
            return shared


class BackgroundLoop(_Shared):
    """A process-wide asyncio loop in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._run, name="mycode-mcp-loop", daemon=True)
        self.thread.start()
        self._ready.wait()
        atexit.register(_shutdown_everything)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._ready.set)
        self.loop.run_forever()

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Run ``coro`` on the loop; returns a thread-safe future."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coro`` on the loop and wait for its result (``TimeoutError`` after ``timeout``)."""
        future = self.submit(coro)
        try:
            return future.result(timeout=timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout} s") from None

    def call_soon(self, fn: Callable[[], Any]) -> None:
        """Call ``fn`` on the loop thread."""
        self.loop.call_soon_threadsafe(fn)


class Emitter(_Shared):
    """Delivers events to ``context.emit`` from a dedicated thread, in order."""

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[Callable[[Any], None], Any] | None] = queue.Queue()
        self.thread = threading.Thread(target=self._run, name="mycode-mcp-emit", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                emit, event = item
                try:
                    emit(event)
                except Exception:  # noqa: BLE001 - a broken sink must not kill the thread
                    pass
            finally:
                self._queue.task_done()

    def put(self, emit: Callable[[Any], None], event: Any) -> None:
        """Queue ``emit(event)``."""
        self._queue.put((emit, event))

    def flush(self, timeout: float = 2.0) -> None:
        """Wait (bounded) until every queued event has been delivered."""
        done = threading.Event()
        self._queue.put((lambda _e: done.set(), None))
        done.wait(timeout)


_live: weakref.WeakSet[Any] = weakref.WeakSet()


def track(owner: _Stoppable) -> None:
    """Remember an owner of server processes, so exit can stop them (safety net)."""
    _live.add(owner)


def untrack(owner: _Stoppable) -> None:
    """Forget an owner that shut down cleanly."""
    _live.discard(owner)


def _shutdown_everything() -> None:
    """atexit: stop every server still running, so no process outlives us."""
    for owner in list(_live):
        try:
            owner.shutdown(timeout=8.0)
        except Exception:  # noqa: BLE001 - best effort at exit
            pass

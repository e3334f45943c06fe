"""The run's event stream: each event goes to the transcript, the ``on_event`` observers and
the consumer's queue, in that order; events before ``system`` are held until it is sent."""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable
from typing import Any

import pluggy

from mycode_core.events import AgentEvent, NoticeEvent
from mycode_core.observers import ObserverPool
from mycode_core.sessions import Transcript


class EventStream:
    """Fan-out of events; thread-safe (tools and MCP threads emit too)."""

    def __init__(self, pm: pluggy.PluginManager, context: Any) -> None:
        self.queue: queue.Queue[AgentEvent | None] = queue.Queue()
        self.transcript: Transcript | None = None
        self._lock = threading.RLock()
        self._held: list[AgentEvent] | None = []
        self._last_type = ""
        self.on_failure: Callable[[str], None] | None = None  # counts failing observers
        self.observers = ObserverPool(pm, context, self._observer_notice, self._observer_failed)

    def _observer_notice(self, plugin: str, message: str) -> None:
        """A slow or failing observer: a notice, and a stderr line (the consumer may be gone)."""
        print(f"mycode: {message}", file=sys.stderr, flush=True)
        if self._last_type == "result":  # the turn is over: ``result`` stays its last event
            return
        notice = NoticeEvent(
            level="warning", source=plugin, message=message, plugin=plugin, hook="on_event"
        )
        self.emit(notice)

    def _observer_failed(self, plugin: str, message: str) -> None:
        """A failing observer: its notice, then the failure counts (strict plugins: exit 2)."""
        self._observer_notice(plugin, message)
        if self.on_failure is not None:
            self.on_failure(message)

    def emit(self, event: AgentEvent) -> None:
        """Record and publish one event."""
        with self._lock:
            if self._held is not None and event.type != "system":
                self._held.append(event)
                return
            self._deliver(event)
            for early in self._held or ():
                self._deliver(early)
            self._held = None

    def _deliver(self, event: AgentEvent) -> None:
        self._last_type = event.type
        if self.transcript is not None:
            self.transcript.write(event)
        self.observers.publish(event)
        self.queue.put(event)

    def end_of_turn(self) -> None:
        """Tell the consumer that the turn's events are complete."""
        self.queue.put(None)

    def unread(self) -> list[AgentEvent]:
        """The events the consumer has not taken yet, start-up ones held for ``system`` too."""
        with self._lock:
            return [*(self._held or ()), *(e for e in list(self.queue.queue) if e is not None)]

    def discard_pending(self) -> None:
        """Drop what a cancelled turn emitted after its result."""
        while not self.queue.empty():
            self.queue.get_nowait()

    def close(self) -> None:
        """Let observers catch up (bounded), then close the transcript."""
        self.observers.close()
        if self.transcript is not None:
            self.transcript.close()

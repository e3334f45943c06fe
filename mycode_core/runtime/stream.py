"""The run's event stream: every event goes to the transcript, to ``on_event`` observers and
to the consumer's queue, in that order.

Events emitted before the ``system`` event (start-up notices) are held back and delivered right
after it, so ``system`` is always the first event of a session.
"""

from __future__ import annotations

import queue
import threading
from typing import Any

import pluggy

from mycode_core.runtime.events import AgentEvent, NoticeEvent
from mycode_core.sessions import Transcript


class EventStream:
    """Fan-out of events; thread-safe (tools and MCP threads emit too)."""

    def __init__(self, pm: pluggy.PluginManager, context: Any) -> None:
        self.pm = pm
        self.context = context
        self.queue: queue.Queue[AgentEvent | None] = queue.Queue()
        self.transcript: Transcript | None = None
        self._lock = threading.RLock()
        self._held: list[AgentEvent] | None = []
        self._failed_observers: set[str] = set()

    def emit(self, event: AgentEvent) -> None:
        """Record and publish one event."""
        with self._lock:
            if self._held is not None and event.type != "system":
                self._held.append(event)
                return
            self._deliver(event)
            if self._held:
                for early in self._held:
                    self._deliver(early)
            self._held = None

    def _deliver(self, event: AgentEvent) -> None:
        if self.transcript is not None:
            self.transcript.write(event)
        arguments = {"event": event, "context": self.context}
        for impl in self.pm.hook.on_event.get_hookimpls():
            try:
                impl.function(**{name: arguments[name] for name in impl.argnames})
            except Exception as exc:  # noqa: BLE001 - observers never stop the run
                if impl.plugin_name not in self._failed_observers:
                    self._failed_observers.add(impl.plugin_name)
                    self.queue.put(
                        NoticeEvent(
                            level="warning",
                            source=impl.plugin_name,
                            message=f"plugin {impl.plugin_name!r} failed in on_event: {exc}",
                        )
                    )
        self.queue.put(event)

    def end_of_turn(self) -> None:
        """Tell the consumer that the turn's events are complete."""
        self.queue.put(None)

    def discard_pending(self) -> None:
        """Drop what a cancelled turn emitted after its result."""
        while not self.queue.empty():
            self.queue.get_nowait()

    def close(self) -> None:
        """Close the transcript."""
        if self.transcript is not None:
            self.transcript.close()

"""``on_event`` observers, off the loop's thread: one worker per plugin, events in order, calling
its implementations through ``pm.subset_hook_caller`` (so wrappers, ``specname`` and tracing
work)."""

from __future__ import annotations

import queue
import sys
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pluggy

from mycode_core.errors import error_line

F = TypeVar("F", bound=Callable[..., Any])

EVENT_TYPES_ATTRIBUTE = "mycode_event_types"
FLUSH_SECONDS = 10.0


def subscribe(*event_types: str) -> Callable[[F], F]:
    """Deliver only these event types to an ``on_event`` implementation (stacked with
    ``@hookimpl`` in either order)."""

    def mark(func: F) -> F:
        setattr(func, EVENT_TYPES_ATTRIBUTE, frozenset(event_types))
        return func

    return mark


@dataclass(eq=False)
class _Observer:
    """One plugin's observers: a queue and a worker thread, started on the first event."""

    name: str
    caller: Any
    types: frozenset[str] | None
    context: Any
    notice: Callable[[str, str], None]
    failed: Callable[[str, str], None]
    queue: queue.SimpleQueue[Any] = field(default_factory=queue.SimpleQueue)
    thread: threading.Thread | None = None
    warned: bool = False
    broken: bool = False

    def put(self, event: Any) -> None:
        if self.thread is None:
            self.thread = threading.Thread(
                target=self._work, daemon=True, name=f"mycode-observer-{self.name}"
            )
            self.thread.start()
        self.queue.put(event)

    def _work(self) -> None:
        while True:
            event = self.queue.get()
            if event is None:
                return
            started = time.monotonic()
            try:
                self.caller(event=event, context=self.context)
            except BaseException as exc:  # noqa: BLE001 - observers never stop the run
                if not self.broken:
                    self.broken = True
                    self.failed(
                        self.name, f"plugin {self.name!r} failed in on_event: {error_line(exc)}"
                    )
            ms = (time.monotonic() - started) * 1000
            settings = getattr(self.context, "settings", None)
            if not self.warned and ms > float(getattr(settings, "observer_warn_ms", 500) or 500):
                self.warned = True
                self.notice(
                    self.name,
                    f"plugin {self.name!r} is a slow on_event observer ({ms:.0f} ms "
                    "for one event); events are queued for it so the run is not slowed",
                )


def _event_types(impls: list[Any]) -> frozenset[str] | None:
    """The event types a plugin's observers subscribed to; ``None`` means every type."""
    types: set[str] = set()
    for impl in impls:
        if impl.wrapper or impl.hookwrapper:
            continue
        wanted = getattr(impl.function, EVENT_TYPES_ATTRIBUTE, None)
        if wanted is None:
            return None
        types |= wanted
    return frozenset(types) if types else None


class ObserverPool:
    """Dispatches events to every plugin's ``on_event`` implementations, asynchronously."""

    def __init__(
        self,
        pm: pluggy.PluginManager,
        context: Any,
        notice: Callable[[str, str], None],
        failed: Callable[[str, str], None] | None = None,
    ) -> None:
        """``notice(plugin, message)`` is told of a slow observer; ``failed(plugin, message)``
        (default: ``notice``) of a failing one (once per plugin)."""
        self._observers: list[_Observer] = []
        _POOLS.add(self)
        failed = failed or notice
        impls = pm.hook.on_event.get_hookimpls()
        by_plugin: dict[str, list[Any]] = {}
        for impl in impls:
            by_plugin.setdefault(impl.plugin_name, []).append(impl)
        for name, own in by_plugin.items():
            others = [impl.plugin for impl in impls if impl.plugin_name != name]
            caller = pm.subset_hook_caller("on_event", remove_plugins=others)
            types = _event_types(own)
            self._observers.append(_Observer(name, caller, types, context, notice, failed))

    def publish(self, event: Any) -> None:
        """Queue ``event`` for every observer that wants it (never blocks)."""
        for observer in self._observers:
            if observer.types is None or event.type in observer.types:
                observer.put(event)

    def close(self, timeout: float | None = None) -> dict[str, int]:
        """Let observers finish every queued event, waiting up to ``timeout`` seconds in all
        (default ``[plugins] observer_drain_s``), then stop their workers. Returns, by plugin, the
        events an observer still busy did not receive (each costs one stderr line)."""
        if timeout is None:  # ``[plugins] observer_drain_s``, default :data:`FLUSH_SECONDS`
            context = self._observers[0].context if self._observers else None
            section = getattr(getattr(context, "settings", None), "section", None)
            table = section("plugins") if callable(section) else {}
            value = table.get("observer_drain_s") if isinstance(table, dict) else None
            timeout = float(value) if isinstance(value, int | float) else FLUSH_SECONDS
        deadline = time.monotonic() + timeout
        for observer in self._observers:
            if observer.thread is not None:
                observer.queue.put(None)
        missed: dict[str, int] = {}
        for observer in self._observers:
            if observer.thread is not None:
                observer.thread.join(max(0.0, deadline - time.monotonic()))
                # alive: events never got + its stop (standing for the event it is stuck in)
                count = observer.queue.qsize() if observer.thread.is_alive() else 0
                if count:
                    missed[observer.name] = count
                    busy = f"{count} event(s): still busy after observer_drain_s = {timeout:g} s"
                    said = f"mycode: observer plugin {observer.name!r} did not receive {busy}"
                    print(said, file=sys.stderr, flush=True)
                observer.thread = None
        _POOLS.discard(self)
        return missed


_POOLS: weakref.WeakSet[ObserverPool] = weakref.WeakSet()


def drain_observers(timeout: float | None = None) -> dict[str, int]:
    """Deliver every event still queued for any ``on_event`` observer of this process before
    it exits (bounded by ``timeout``, default ``[plugins] observer_drain_s``); the exit path
    calls this before ``os._exit``. Returns the events each too-slow plugin did not get."""
    missed: dict[str, int] = {}
    for pool in list(_POOLS):
        missed.update(pool.close(timeout))
    return missed

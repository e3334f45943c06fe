"""The run's event stream as its consumer sees it."""

from __future__ import annotations

from mycode_core.events import NoticeEvent, SystemEvent
from mycode_core.runtime.stream import EventStream
from mycode_core.testing.inprocess import make_plugin_manager


def _system() -> SystemEvent:
    return SystemEvent(session_id="s", model="m", cwd="/w", tools=[], plugins=[])


def test_unread_shows_start_up_notices_held_for_system_and_queued_ones() -> None:
    """A start-up notice waits for ``system`` (always the first event) and is unread meanwhile;
    afterwards the queue's events are unread until taken, in order, and stay there."""
    stream = EventStream(make_plugin_manager(), None)
    early = NoticeEvent(message="a plugin's command file was skipped")
    stream.emit(early)
    assert stream.unread() == [early]
    stream.emit(_system())
    assert [event.type for event in stream.unread()] == ["system", "notice"]
    stream.end_of_turn()
    assert stream.queue.get().type == "system"
    assert stream.unread() == [early]
    assert stream.queue.qsize() == 2  # unread() takes nothing
    stream.close()

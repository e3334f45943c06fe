"""How a transcript's ``rewind`` events shape the history ``--resume`` rebuilds (issue 20)."""

from __future__ import annotations

from typing import Any

from mycode_core.cli.rewind import rewound
from mycode_core.cli.transcript_history import history_from_events
from mycode_core.runtime.viewing import last_view


def _turn(n: int) -> list[dict[str, Any]]:
    return [
        {"type": "user", "content": f"prompt {n}"},
        {"type": "assistant", "content": f"answer {n}"},
        {"type": "result", "stop_reason": "completed"},
    ]


def _users(events: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in history_from_events(rewound(events)) if m["role"] == "user"]


def test_a_rewind_cuts_its_turn_and_every_later_one() -> None:
    events = [*_turn(1), *_turn(2), *_turn(3), {"type": "rewind", "turn": 2}, *_turn(4)]
    assert _users(events) == ["prompt 1", "prompt 4"]
    assert history_from_events(rewound(events))[1] == {"role": "assistant", "content": "answer 1"}


def test_turns_keep_their_numbers_across_rewinds() -> None:
    events = [*_turn(1), *_turn(2), *_turn(3), {"type": "rewind", "turn": 2}, *_turn(4)]
    # turn 4 (the fourth prompt of the transcript) is cut; turns 2-3 were cut already
    assert _users([*events, {"type": "rewind", "turn": 4}]) == ["prompt 1"]
    assert _users([*events, {"type": "rewind", "turn": 3}]) == ["prompt 1", "prompt 4"]
    assert _users([*events, {"type": "rewind", "turn": 1}]) == []


def test_bad_rewinds_and_child_agents_change_nothing() -> None:
    child = {"type": "user", "content": "a subtask", "agent_id": "a1"}
    events = [*_turn(1), child, *_turn(2)]
    for bad in ({"turn": 0}, {"turn": 9}, {"turn": "x"}, {}, {"turn": 1, "agent_id": "a1"}):
        assert _users([*events, {"type": "rewind", **bad}]) == ["prompt 1", "prompt 2"]
    assert _users([*events, {"type": "rewind", "turn": 2}]) == ["prompt 1"]  # the child's: no turn


def test_a_rewind_after_a_compaction_drops_the_recorded_view() -> None:
    compaction = {"type": "compaction", "view": [0], "history_length": 2}
    events = [*_turn(1), compaction, *_turn(2)]
    assert last_view(events) is compaction
    assert last_view([*events, {"type": "rewind", "turn": 2}]) is None
    later = {"type": "compaction", "view": [0], "history_length": 3}
    assert last_view([*events, {"type": "rewind", "turn": 2}, later]) is later


def test_a_rewind_cuts_the_words_typed_for_its_turn_too() -> None:
    """A turn's ``typed`` event (``/greet Marie``) goes with it: left behind, it would name the
    next turn's prompt in every list of turns."""
    typed = {"type": "typed", "text": "/greet Marie"}
    events = [*_turn(1), typed, *_turn(2), {"type": "rewind", "turn": 2}]
    assert rewound(events) == _turn(1)
    blocked = [typed, {"type": "result", "stop_reason": "interrupted"}]  # no ``user`` event
    events = [*_turn(1), *blocked, *_turn(2), {"type": "rewind", "turn": 2}]
    assert rewound(events) == [*_turn(1), *blocked]

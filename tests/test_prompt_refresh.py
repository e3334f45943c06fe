"""``build_context`` is asked again before each later turn (issue 10: skills refresh)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mycode_core.hookspecs import hookimpl
from mycode_core.records import ContextSection
from mycode_core.testing import make_runner, run_events


class Counter:
    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def build_context(self, context: Any) -> list[ContextSection]:
        self.calls.append(context.prompt)
        return [ContextSection(title="Counter", text=f"version {len(self.calls)}")]


def _system(request: dict[str, Any]) -> str:
    return str(request["messages"][0]["content"])


def test_each_turn_rebuilds_the_system_prompt(tmp_path: Path) -> None:
    counter = Counter()
    runner = make_runner(tmp_path, counter, turns=[{"content": "one"}, {"content": "two"}])
    run_events(runner, "first task", close=False)
    run_events(runner, "second task")
    assert counter.calls == ["first task", "first task\n\nsecond task"]
    calls = runner.turns_model.calls
    assert "version 1" in _system(calls[0])
    assert "version 2" in _system(calls[1])


def test_unchanged_sections_keep_the_same_prompt(tmp_path: Path) -> None:
    class Fixed:
        @hookimpl
        def build_context(self, context: Any) -> list[ContextSection]:
            return [ContextSection(title="Fixed", text="always the same")]

    runner = make_runner(tmp_path, Fixed(), turns=[{"content": "one"}, {"content": "two"}])
    run_events(runner, "a", close=False)
    first = runner.view.system_message
    run_events(runner, "b")
    assert runner.view.system_message is first
    calls = runner.turns_model.calls
    assert _system(calls[0]) == _system(calls[1])


def test_session_start_lines_survive_the_refresh(tmp_path: Path) -> None:
    class Starter:
        @hookimpl
        def session_start(self, source: str, context: Any) -> list[str]:
            return ["Style: terse."]

    counter = Counter()
    runner = make_runner(tmp_path, counter, Starter(), turns=[{"content": "1"}, {"content": "2"}])
    run_events(runner, "a", close=False)
    run_events(runner, "b")
    for call in runner.turns_model.calls:
        assert "Style: terse." in _system(call)
    assert "version 2" in _system(runner.turns_model.calls[1])

"""The loop state machine: a frozen state advanced only through ``next(reason)``."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from mycode_core.records import Tool
from mycode_core.runtime.state import LoopState, Phase, Transition, TransitionReason
from mycode_core.testing import make_runner, run_events, tools_plugin

FAST: dict[str, Any] = {"retry_base_delay": 0.001, "retry_max_delay": 0.01}


def test_state_is_frozen() -> None:
    state = LoopState()
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.step = 3  # type: ignore[misc]


def test_next_returns_a_new_state_and_records_the_transition() -> None:
    log: list[Transition] = []
    first = LoopState(log=log)
    second = first.next(TransitionReason.STEP_BEGIN, "why", step=1, phase=Phase.CALLING_MODEL)
    assert first.step == 0 and first.phase is Phase.STARTING
    assert second.step == 1 and second.phase is Phase.CALLING_MODEL
    assert second.reason is TransitionReason.STEP_BEGIN
    assert log == [Transition(TransitionReason.STEP_BEGIN, Phase.CALLING_MODEL, 1, "why")]
    third = second.next(TransitionReason.FINISHED, stop_reason="completed", phase=Phase.DONE)
    assert third.stop_reason == "completed" and second.stop_reason is None
    assert [t.reason for t in log] == [TransitionReason.STEP_BEGIN, TransitionReason.FINISHED]
    assert second.log is log and third.log is log


def _noop_tool() -> Tool:
    return Tool(name="noop", description="Does nothing.", handler=lambda args, ctx: "ok")


def test_a_run_records_every_transition_with_its_reason(tmp_path: Path) -> None:
    runner = make_runner(
        tmp_path,
        tools_plugin(_noop_tool()),
        turns=[{"tool_calls": [{"name": "noop", "arguments": {}}]}, {"content": "finished"}],
    )
    events = run_events(runner)
    assert events[-1].stop_reason == "completed"
    assert [t.reason for t in runner.transitions] == [
        TransitionReason.START,
        TransitionReason.STEP_BEGIN,
        TransitionReason.MODEL_REPLIED_TOOLS,
        TransitionReason.TOOLS_DONE,
        TransitionReason.STEP_BEGIN,
        TransitionReason.MODEL_REPLIED_TEXT,
        TransitionReason.FINISHED,
    ]
    assert runner.transitions[-1].phase is Phase.DONE
    assert [t.step for t in runner.transitions if t.reason is TransitionReason.STEP_BEGIN] == [1, 2]


def test_retries_are_transitions_but_never_consume_steps(tmp_path: Path) -> None:
    runner = make_runner(
        tmp_path,
        turns=[
            {"error": {"kind": "rate_limit"}},
            {"error": {"kind": "server_error"}},
            {"error": {"kind": "timeout"}},
            {"content": "made it"},
        ],
        max_steps=1,
        **FAST,
    )
    events = run_events(runner)
    result = events[-1]
    assert (result.stop_reason, result.steps, result.final_text) == ("completed", 1, "made it")
    retries = [t for t in runner.transitions if t.reason is TransitionReason.RETRY]
    assert [t.detail for t in retries] == ["rate_limit", "server_error", "timeout"]
    assert all(t.step == 1 for t in retries)
    assert [e.attempt for e in events if e.type == "retry"] == [1, 2, 3]

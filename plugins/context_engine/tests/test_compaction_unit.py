"""``compact_view`` on hand-made views: what is kept, referenced, summarised."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mycode_context_engine.compaction import compact_view, is_summary_message
from mycode_context_engine.settings import EngineSettings, engine_settings

from mycode_core.runtime.context import ContextOverflow
from mycode_core.testing import make_context, tool_pairing_problems


def _turns(count: int, size: int = 400) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "SYSTEM"}]
    messages.append({"role": "user", "content": "the task"})
    for i in range(count):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "read_file", "arguments": json.dumps({"path": f"f{i}.py"})},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"{i} " + "x " * size})
    return messages


def _summary(messages: list[dict[str, Any]], previous: str | None) -> tuple[str, None]:
    return f"SUMMARY of {len(messages)} (previous: {previous})", None


def test_older_turns_are_summarised_and_older_results_become_references(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    context.prompt = "the task"
    view, problem = compact_view(
        _turns(12),
        6_000,
        context,
        "proactive",
        EngineSettings(recent_results=2, strategy="summary"),
        _summary,
    )
    assert view is not None and problem is None
    messages = view.messages
    assert messages[0]["content"] == "SYSTEM" and is_summary_message(messages[1])
    assert "SUMMARY of" in messages[1]["content"] and "the task" in messages[1]["content"]
    tools = [m for m in messages if m["role"] == "tool"]
    assert len(tools) >= 3
    assert all(m["content"].startswith("[masked result of read_file(path=") for m in tools[:-2])
    assert all(not m["content"].startswith("[earlier") for m in tools[-2:])
    assert tool_pairing_problems(messages) == []
    again, _ = compact_view(
        [*messages, *_turns(12)[2:]], 6_000, context, "proactive", SUMMARY_ONLY, _summary
    )
    assert again is not None and "previous: SUMMARY of" in again.messages[1]["content"]


def test_nothing_to_do_declines(tmp_path: Path) -> None:
    view, _ = compact_view(
        _turns(1, size=10), 6_000, make_context(tmp_path), "proactive", EngineSettings(), _summary
    )
    assert view is None


SUMMARY_ONLY = EngineSettings(strategy="summary")


def test_an_oversized_task_is_a_context_overflow_naming_it(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    context.prompt = "word " * 5_000
    with pytest.raises(ContextOverflow, match="the task ~"):
        compact_view(_turns(3), 2_000, context, "reactive", EngineSettings(), _summary)


def test_bad_config_values_fall_back_to_defaults(tmp_path: Path) -> None:
    from mycode_core.config import Settings

    settings = Settings.model_validate({"context": {"keep_recent": "lots", "recent_results": 3}})
    assert engine_settings(settings) == EngineSettings(recent_results=3)


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=900), min_size=1, max_size=30),
    budget=st.integers(min_value=1_500, max_value=9_000),
)
def test_cuts_never_separate_a_call_from_its_result(sizes: list[int], budget: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        context = make_context(Path(tmp))
        messages: list[dict[str, Any]] = [{"role": "system", "content": "S"}]
        messages.append({"role": "user", "content": "task"})
        for i, size in enumerate(sizes):
            calls = [
                {
                    "id": f"c{i}_{k}",
                    "type": "function",
                    "function": {"name": "t", "arguments": "{}"},
                }
                for k in range(1 + i % 3)
            ]
            messages.append({"role": "assistant", "content": "a", "tool_calls": calls})
            for call in calls:
                messages.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": "y " * size}
                )
            if i % 4 == 3:
                messages.append({"role": "user", "content": "guidance"})
        try:
            view, _ = compact_view(messages, budget, context, "reactive", SUMMARY_ONLY, _summary)
        except ContextOverflow:
            return
        if view is not None:
            assert tool_pairing_problems(view.messages) == []

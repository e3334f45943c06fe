"""The engine in process: summaries and their failures, pins, references, overflow, veto."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mycode_context_engine.plugin as engine
import pytest
from view_helpers import SideModel

from mycode_core import hookimpl
from mycode_core.providers.base import FatalModelError
from mycode_core.records import Tool, ToolResult
from mycode_core.testing import (
    TurnsModel,
    installed_plugin,
    make_plugin_manager,
    model_plugin,
    tool_pairing_problems,
    tools_plugin,
)
from mycode_core.tokens import count_message

TASK = "TASK-4242: read the files and report the sum"


def reads(count: int) -> list[dict[str, Any]]:
    return [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": f"f{i % 10}.py"}}]}
        for i in range(count)
    ]


def runner_with(
    tmp_path: Path,
    model: TurnsModel,
    *plugins: object,
    **settings: Any,
) -> Any:
    from mycode_core.config import Settings
    from mycode_core.runtime.child import run_child
    from mycode_core.runtime.loop import AgentRunner

    workspace = (tmp_path / "workspace").resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    for i in range(10):
        lines = [f"line {n} of file {i}: value = {n * i} # filler" for n in range(40)]
        (workspace / f"f{i}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    home = (tmp_path / "home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    pm = make_plugin_manager(
        installed_plugin("builtin_tools"), engine, model_plugin(model), *plugins
    )
    settings.setdefault("model", "test:m")
    settings.setdefault("permission_mode", "bypass")
    settings.setdefault("max_steps", 200)
    return AgentRunner(
        spawn_child=run_child,
        pm=pm,
        settings=Settings(**settings),
        workspace=workspace,
        home=home,
        session_id="s1",
    )


def run(runner: Any, prompt: str = TASK) -> list[Any]:
    try:
        return list(runner.run(prompt))
    finally:
        runner.close()


def of(events: list[Any], kind: str) -> list[Any]:
    return [e for e in events if e.type == kind]


def test_a_compacted_view_holds_task_summary_facts_and_todos(tmp_path: Path) -> None:
    todo = {
        "tool_calls": [
            {
                "name": "todo_write",
                "arguments": {"todos": [{"content": "SUM-THE-VALUES", "status": "in_progress"}]},
            }
        ]
    }
    model = SideModel([todo, *reads(20)], lambda: "## Goal\nSum values.\n## Progress\nREAD-SOME")
    runner = runner_with(tmp_path, model, context_window=8_000, context={"strategy": "summary"})
    events = run(runner)
    assert events[-1].stop_reason == "completed"
    compactions = of(events, "compaction")
    assert compactions and all(c.reason == "proactive" for c in compactions)
    assert all(c.after_tokens < c.before_tokens for c in compactions)
    last = model.calls[-1]["messages"]
    head = last[1]["content"]
    for needle in (TASK, "READ-SOME", "Recorded by mycode", "f9.py", "SUM-THE-VALUES"):
        assert needle in head, needle
    # the second summary request folds in the first summary (cumulative)
    assert len(model.side_calls) >= 2 and "READ-SOME" in model.side_calls[1][1]["content"]
    assert tool_pairing_problems(last) == []
    assert len(runner.history) == 2 + 21 * 2  # history holds everything


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (lambda: "", "returned nothing"),
        (lambda: " ".join(f"w{i}" for i in range(5_000)), "too long"),
        (lambda: (_ for _ in ()).throw(FatalModelError("HTTP 500: boom")), "request failed"),
    ],
)
def test_a_bad_summary_falls_back_to_the_recorded_facts(
    tmp_path: Path, reply: Callable[[], str], problem: str
) -> None:
    model = SideModel(reads(12), reply)
    runner = runner_with(tmp_path, model, context_window=8_000, context={"strategy": "summary"})
    events = run(runner)
    assert events[-1].stop_reason == "completed"
    assert of(events, "compaction")
    notices = [n.message for n in of(events, "notice")]
    assert any(problem in m and "recorded facts" in m for m in notices), notices
    head = model.calls[-1]["messages"][1]["content"]
    assert TASK in head and "Recorded by mycode" in head and "f5.py" in head


def test_pins_survive_every_compaction(tmp_path: Path) -> None:
    def pin(arguments: dict[str, Any], context: Any) -> str:
        context.pin("skill:demo", "PINNED-SKILL-BODY", title="Skill demo")
        return "loaded"

    tool = Tool(name="load_demo", description="Load the demo skill.", handler=pin)
    turns = [{"tool_calls": [{"name": "load_demo", "arguments": {}}]}, *reads(24)]
    model = SideModel(turns, lambda: "summary")
    runner = runner_with(
        tmp_path, model, tools_plugin(tool), context_window=8_000, context={"strategy": "summary"}
    )
    events = run(runner)
    assert len(of(events, "compaction")) >= 2
    for call in model.calls[-3:]:
        assert "PINNED-SKILL-BODY" in json.dumps(call["messages"])


def test_masking_keeps_a_result_that_shows_pinned_context(tmp_path: Path) -> None:
    """A loaded skill is shown by its tool result and pinned: masking alone (no summary
    message re-states the pins) must not take it from the view."""
    body = "PINNED-SKILL-BODY: follow these steps.\n" + "step detail\n" * 60

    def load(arguments: dict[str, Any], context: Any) -> str:
        context.pin("skill:demo", body, title="Skill demo")
        return f"# Skill demo\n\n{body}\nFiles: none"

    tool = Tool(name="load_demo", description="Load the demo skill.", handler=load)
    turns = [{"tool_calls": [{"name": "load_demo", "arguments": {}}]}, *reads(30)]
    model = SideModel(turns, lambda: "summary")
    runner = runner_with(tmp_path, model, tools_plugin(tool), context={"keep_recent_results": 3})
    events = run(runner)
    stages = {event.stage for event in of(events, "compaction")}
    assert stages == {"mask"}, stages
    last = json.dumps(model.calls[-1]["messages"])
    assert "PINNED-SKILL-BODY" in last and "[masked result of read_file" in last


def test_a_huge_argument_is_elided_in_the_view_but_the_call_and_result_stay(
    tmp_path: Path,
) -> None:
    content = "x = 1\n" * 200_000  # 1.2 MB
    write = {
        "tool_calls": [{"name": "write_file", "arguments": {"path": "big.py", "content": content}}]
    }
    model = SideModel([write, {"content": "written"}], lambda: "summary")
    runner = runner_with(tmp_path, model, context_window=8_000)
    events = run(runner)
    assert events[-1].stop_reason == "completed"
    assert (runner.workspace / "big.py").read_text() == content
    second = model.calls[1]["messages"]
    assert len(json.dumps(second)) < 40_000
    (assistant,) = [m for m in second if m.get("tool_calls")]
    call = assistant["tool_calls"][0]
    assert call["function"]["name"] == "write_file"
    assert "elided" in json.loads(call["function"]["arguments"])["content"]
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == call["id"]
    history_call = [m for m in runner.history.messages() if m.get("tool_calls")][0]
    assert len(history_call["tool_calls"][0]["function"]["arguments"]) > 1_000_000


def test_a_result_bigger_than_the_window_is_referenced_never_sent_whole(tmp_path: Path) -> None:
    big = "\n".join(f"row {i}: " + "data " * 10 for i in range(20_000))

    def dump(arguments: dict[str, Any], context: Any) -> ToolResult:
        return ToolResult(content=big)

    tool = Tool(name="dump", description="Dump a lot.", handler=dump, read_only=True)
    turns = [{"tool_calls": [{"name": "dump", "arguments": {}}]}, {"content": "seen"}]
    model = SideModel(turns, lambda: "summary")
    runner = runner_with(tmp_path, model, tools_plugin(tool), context_window=8_000)
    events = run(runner)
    assert events[-1].stop_reason == "completed"
    result = model.calls[1]["messages"][-1]["content"]
    assert "row 0:" in result and "row 19999:" in result and len(result) < 8_000 * 4
    saved = Path(result.split("saved at ")[1].split(" ")[0])
    assert saved.read_text() == big and str(runner.home) in str(saved)
    assert [m["content"] for m in runner.history.messages() if m["role"] == "tool"] == [big]


def test_when_the_pinned_context_alone_does_not_fit_the_run_ends_with_context_overflow(
    tmp_path: Path,
) -> None:
    model = SideModel([{"content": "never"}], lambda: "summary")
    runner = runner_with(tmp_path, model, context_window=4_000)
    events = run(runner, "please " * 6_000)
    result = events[-1]
    assert result.stop_reason == "context_overflow"
    assert "pinned context alone" in (result.error or "") and "task" in (result.error or "")
    assert model.calls == []  # nothing oversized was ever sent
    # the parts it names add up to more than the budget it names (the summary's own frame too)
    error = result.error or ""
    budget = int(error.split("context budget of ")[1].split(" ")[0])
    assert "headings and recorded facts" in error
    assert int(error.split(" in all)")[0].rsplit("~", 1)[1]) > budget


def test_a_wrapper_can_veto_a_compaction(tmp_path: Path) -> None:
    vetoed: list[str] = []

    class Veto:
        @hookimpl(wrapper=True)
        def compact_context(
            self, messages: Any, budget: int, context: Any, reason: str, instructions: Any
        ) -> Any:
            yield  # the inner result is thrown away: vetoed
            vetoed.append(reason)
            return None

    model = SideModel(reads(30), lambda: "summary")
    runner = runner_with(tmp_path, model, Veto(), context_window=8_000)
    events = run(runner)
    assert vetoed and of(events, "compaction") == []
    assert events[-1].stop_reason == "context_overflow"
    assert "compaction declined" in (events[-1].error or "")
    sizes = [len(json.dumps(c["messages"])) for c in model.calls]
    assert sizes == sorted(sizes)  # the view only grew: nothing was compacted


def test_the_overflow_names_the_summary_frame_that_tipped_it(tmp_path: Path) -> None:
    """A small window (llama-server -c 2048 with every tool offered): the system prompt and
    the task fit the budget, the summary message's own frame does not. The error's parts add
    up past the budget it names instead of looking as if they fitted."""
    from types import SimpleNamespace

    from mycode_context_engine.compaction import _check_pinned

    from mycode_core.api import ContextOverflow
    from mycode_core.tokens import count_message, count_text

    system = {"role": "system", "content": "You are a coding agent. " * 10}
    context = SimpleNamespace(prompt="hi", pins={}, store={})
    budget = count_message(system) + count_text("hi") + 5
    with pytest.raises(ContextOverflow) as caught:
        _check_pinned(system, [{"role": "user", "content": "hi"}], budget, context)
    error = str(caught.value)
    assert f"context budget of {budget} tokens" in error
    assert int(error.split(" in all)")[0].rsplit("~", 1)[1]) > budget


def test_a_small_window_full_of_tool_schemas_gives_way_on_the_reply_not_the_run(
    tmp_path: Path,
) -> None:
    """llama-server ``-c 2048`` with every plugin's tools: the schemas take more than half the
    window, so a quarter kept for the reply left the messages ~200 tokens and the run ended
    with context_overflow at step 3, though each request still fitted. Now the reply's share
    gives way (down to half of it) and the run goes on, compacting as it must."""

    class Capped(SideModel):
        def __init__(self, turns: list[dict[str, Any]]) -> None:
            super().__init__(turns, lambda: "summary")
            self.caps: list[int | None] = []

        def complete(self, messages: Any, tools: Any, on_text: Any, max_tokens: Any = None) -> Any:
            if tools:  # a model turn, not a summary request
                self.caps.append(max_tokens)
            return super().complete(messages, tools, on_text)

    def noop(arguments: dict[str, Any], context: Any) -> ToolResult:
        return ToolResult(content="ok")

    # the builtin tools and one long-winded third-party tool: ~1,400 tokens of schemas, which
    # leave ~50 tokens of room over the reply's floor (the system prompt holds tmp_path, whose
    # length grows with pytest's run counter: with no room, run 1000 overflowed by one token)
    long_winded = Tool(
        name="long_winded",
        description="Describes one option of this tool at length. " * 55,
        handler=noop,
        read_only=True,
    )
    model = Capped([*reads(8), {"content": "done"}])
    runner = runner_with(tmp_path, model, tools_plugin(long_winded), context_window=2_048)
    events = run(runner, "hi")
    assert events[-1].stop_reason == "completed", events[-1].error
    assert runner.view.calibration.scale(runner.view.tool_tokens) > 1_024  # over half the window
    assert of(events, "compaction")
    reserve, floor = 512, 256
    assert all(floor <= (cap or 0) <= reserve for cap in model.caps)
    assert min(cap or 0 for cap in model.caps) < reserve  # the reply gave way
    for call, cap in zip(model.calls, model.caps, strict=True):
        sent = runner.view.calibration.scale(
            sum(map(count_message, call["messages"])) + runner.view.tool_tokens
        )
        assert sent + (cap or 0) <= 2_048  # the request and its reply fit the window

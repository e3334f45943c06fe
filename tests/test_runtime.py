"""The runner in-process, with a recording model: recovery paths and the acting branch."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from mycode_core.cli.run import exit_code_for
from mycode_core.records import Tool, ToolResult
from mycode_core.runtime.state import TransitionReason
from mycode_core.testing import make_runner, run_events, tool_pairing_problems, tools_plugin

FAST: dict[str, Any] = {"retry_base_delay": 0.001, "retry_max_delay": 0.01}


def _types(events: list[Any]) -> list[str]:
    return [event.type for event in events]


def _of(events: list[Any], kind: str) -> list[Any]:
    return [event for event in events if event.type == kind]


def echo_tool(calls: list[dict[str, Any]] | None = None, **options: Any) -> Tool:
    def handler(arguments: dict[str, Any], context: Any) -> str:
        if calls is not None:
            calls.append(arguments)
        return f"echo: {arguments['text']}"

    return Tool(
        name=options.pop("name", "echo"),
        description="Echo text.",
        handler=handler,
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        **options,
    )


def call(name: str, arguments: Any = None, call_id: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"name": name, "arguments": {} if arguments is None else arguments}
    if call_id:
        out["id"] = call_id
    return out


# --- recovery ------------------------------------------------------------------------------


def test_retry_after_is_honoured(tmp_path: Path) -> None:
    runner = make_runner(
        tmp_path,
        turns=[{"error": {"kind": "rate_limit", "retry_after": 0.05}}],
        retry_base_delay=0.001,
        retry_max_delay=5.0,
    )
    events = run_events(runner)
    (retry,) = _of(events, "retry")
    assert (retry.reason, retry.delay, retry.attempt) == ("rate_limit", 0.05, 1)
    assert events[-1].stop_reason == "completed"


def test_retry_after_is_capped_by_the_max_delay(tmp_path: Path) -> None:
    runner = make_runner(
        tmp_path, turns=[{"error": {"kind": "rate_limit", "retry_after": 300}}], **FAST
    )
    (retry,) = _of(run_events(runner), "retry")
    assert retry.delay <= 0.01


def test_retries_are_bounded_then_model_error(tmp_path: Path) -> None:
    runner = make_runner(
        tmp_path,
        turns=[{"error": {"kind": "server_error", "message": "boom"}}] * 5,
        max_retries=2,
        **FAST,
    )
    events = run_events(runner)
    assert len(_of(events, "retry")) == 2
    result = events[-1]
    assert result.stop_reason == "model_error" and result.is_error
    assert "boom" in (result.error or "")
    assert exit_code_for(result.stop_reason) == 1


def test_a_fatal_model_error_is_not_retried(tmp_path: Path) -> None:
    runner = make_runner(
        tmp_path, turns=[{"error": {"kind": "model_error", "message": "bad key"}}], **FAST
    )
    events = run_events(runner)
    assert _of(events, "retry") == []
    assert events[-1].stop_reason == "model_error"
    assert len(runner.turns_model.calls) == 1


def test_context_length_error_compacts_and_retries(tmp_path: Path) -> None:
    big = "word " * 400
    turns: list[dict[str, Any]] = [
        {"tool_calls": [call("echo", {"text": f"{i} {big}"})]} for i in range(4)
    ]
    turns += [
        {"error": {"kind": "context_length", "message": "maximum context length"}},
        {"content": "fits now"},
    ]
    runner = make_runner(
        tmp_path,
        tools_plugin(echo_tool()),
        turns=turns,
        context_window=6000,
        max_output_tokens=1000,
        **FAST,
    )
    events = run_events(runner)
    assert events[-1].stop_reason == "completed"
    (compaction,) = _of(events, "compaction")
    assert compaction.after_messages < compaction.before_messages
    assert TransitionReason.COMPACTED in [t.reason for t in runner.transitions]
    before, after = (
        runner.turns_model.calls[-2]["messages"],
        runner.turns_model.calls[-1]["messages"],
    )
    assert len(after) < len(before)
    assert after[0] == before[0] and after[0]["role"] == "system"
    assert after[1] == before[1] and after[1]["role"] == "user"
    assert any("left out" in str(m.get("content")) for m in after)
    assert tool_pairing_problems(after) == []
    # history itself is untouched: everything before, then the final answer
    assert runner.history.messages()[: len(before) - 1] == before[1:]
    assert len(runner.history) == len(before)


def test_persistent_context_length_error_is_context_overflow(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, turns=[{"error": {"kind": "context_length"}}] * 5, **FAST)
    events = run_events(runner)
    result = events[-1]
    assert result.stop_reason == "context_overflow" and exit_code_for(result.stop_reason) == 1
    # no limit named: the first try, one more with the budget halved, then context_overflow
    assert len(runner.turns_model.calls) == 2
    assert len(_of(events, "compaction")) == 1
    assert any("halving" in n.message for n in _of(events, "notice"))


def test_a_long_reply_that_overflows_the_window_found_meanwhile_is_compacted(
    tmp_path: Path,
) -> None:
    """A long reply cut, and the window discovered while the continuation was asked (llama's
    error names the window already known): the view, over its budget now, is compacted — the
    budget is not halved, which left a small window no room for the tool schemas."""
    from mycode_core.testing.responses import LLAMA_CPP_OVERFLOW

    overflow = LLAMA_CPP_OVERFLOW.format(prompt=9_000, limit=4_096)
    turns = [
        {"content": "ping " * 3_000, "finish_reason": "length"},
        {"error": {"kind": "context_length", "message": overflow}},
        {"content": "The end."},
    ]
    runner = make_runner(tmp_path, turns=turns, **FAST)
    model, play = runner.turns_model, runner.turns_model.complete

    def complete(messages: Any, tools: Any, on_text: Any) -> Any:
        if len(model.calls) == 1:  # window discovery's answer, in while the request was out
            runner.view.window.discover(4_096)
        return play(messages, tools, on_text)

    model.complete = complete
    events = run_events(runner)
    assert not [n.message for n in _of(events, "notice") if "halving" in n.message]
    assert [c.reason for c in _of(events, "compaction")] == ["reactive"]
    assert events[-1].stop_reason == "completed"
    assert events[-1].final_text == "ping " * 3_000 + "The end."


def test_no_continuation_is_asked_of_a_reply_that_filled_the_window(tmp_path: Path) -> None:
    """Prompt and cut reply fill the window: a continuation cannot fit, so none is asked; the
    run ends naming the window, with the text so far."""
    cut = {"content": "ping pong", "finish_reason": "length"}
    turns = [{**cut, "usage": {"input_tokens": 1_466, "output_tokens": 582}}, {"content": "x"}]
    runner = make_runner(tmp_path, turns=turns, context_window=2_048)
    result = run_events(runner)[-1]
    assert len(runner.turns_model.calls) == 1
    assert (result.stop_reason, result.final_text) == ("model_error", "ping pong")
    assert "the answer filled the context window (2048 tokens)" in (result.error or "")


def test_an_empty_reply_gets_one_nudge(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, turns=[{"content": ""}, {"content": "here it is"}])
    events = run_events(runner)
    (guidance,) = _of(events, "guidance")
    assert guidance.source == "runtime" and "empty" in guidance.message
    assert events[-1].stop_reason == "completed" and events[-1].final_text == "here it is"
    assert events[-1].steps == 1
    last_request = runner.turns_model.calls[-1]["messages"]
    assert "empty" in last_request[-1]["content"]


def test_two_empty_replies_are_a_model_error(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, turns=[{"content": ""}, {"content": "   "}, {"content": "x"}])
    events = run_events(runner)
    assert len(_of(events, "guidance")) == 1
    assert events[-1].stop_reason == "model_error"
    assert "empty" in (events[-1].error or "")


def test_finish_reason_length_asks_the_model_to_continue(tmp_path: Path) -> None:
    runner = make_runner(
        tmp_path,
        turns=[
            {"content": "The first half of", "finish_reason": "length"},
            {"content": " the answer."},
        ],
    )
    events = run_events(runner)
    assert events[-1].stop_reason == "completed"
    assert events[-1].final_text == "The first half of the answer."
    assert TransitionReason.LENGTH_CONTINUE in [t.reason for t in runner.transitions]
    sent = runner.turns_model.calls[-1]["messages"]
    assert sent[-2] == {"role": "assistant", "content": "The first half of"}
    assert sent[-1]["role"] == "user" and "cut off" in sent[-1]["content"]


def test_max_steps_writes_a_checkpoint(tmp_path: Path) -> None:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [call("echo", {"text": str(i)})]} for i in range(5)
    ]
    turns.append({"content": "## Remaining actions\nkeep echoing"})
    runner = make_runner(tmp_path, tools_plugin(echo_tool()), turns=turns, max_steps=3)
    events = run_events(runner)
    result = events[-1]
    assert (result.stop_reason, result.steps, result.is_error) == ("max_steps", 3, True)
    (checkpoint,) = _of(events, "checkpoint")
    assert "Recorded by mycode" in checkpoint.text
    # the checkpoint request offers no tools and asks for the checkpoint
    request = runner.turns_model.calls[-1]
    assert request["tools"] == [] and "checkpoint" in request["messages"][-1]["content"]
    assert _types(events).index("checkpoint") < _types(events).index("result")


def test_near_limit_guidance_is_sent_once(tmp_path: Path) -> None:
    turns = [{"tool_calls": [call("echo", {"text": str(i)})]} for i in range(10)]
    runner = make_runner(
        tmp_path, tools_plugin(echo_tool()), turns=turns, max_steps=6, near_limit_steps=2
    )
    events = run_events(runner)
    near = [g for g in _of(events, "guidance") if g.source == "near_limit"]
    assert len(near) == 1


def test_token_budget_stops_the_run(tmp_path: Path) -> None:
    turns = [
        {
            "tool_calls": [call("echo", {"text": str(i)})],
            "usage": {"input_tokens": 60, "output_tokens": 10},
        }
        for i in range(5)
    ]
    runner = make_runner(tmp_path, tools_plugin(echo_tool()), turns=turns, max_tokens=100)
    events = run_events(runner)
    result = events[-1]
    assert result.stop_reason == "token_budget" and exit_code_for("token_budget") == 1
    assert result.steps == 2
    assert result.usage == {"input_tokens": 120, "output_tokens": 20}


# --- acting ----------------------------------------------------------------------------------


def test_a_tool_call_without_id_gets_one(tmp_path: Path) -> None:
    runner = make_runner(
        tmp_path, tools_plugin(echo_tool()), turns=[{"tool_calls": [call("echo", {"text": "a"})]}]
    )
    events = run_events(runner)
    (tool_call,) = _of(events, "tool_call")
    (tool_result,) = _of(events, "tool_result")
    assert tool_call.id and tool_result.id == tool_call.id
    sent = runner.turns_model.calls[-1]["messages"]
    assistant = next(m for m in sent if m.get("tool_calls"))
    assert assistant["tool_calls"][0]["id"] == tool_call.id
    assert sent[-1] == {"role": "tool", "tool_call_id": tool_call.id, "content": "echo: a"}


def test_a_claude_code_tool_name_is_answered_with_mycodes_name(tmp_path: Path) -> None:
    """Instructions written for Claude Code ("use the Read tool") lead models to its names."""
    turns = [{"tool_calls": [call("Read", {"file_path": "a.py"}, "c1"), call("Fetch", {}, "c2")]}]
    read = Tool(name="read_file", description="r", handler=lambda arguments, context: "x")
    events = run_events(make_runner(tmp_path, tools_plugin(read), turns=turns))
    results = {r.id: r.content for r in _of(events, "tool_result")}
    assert "Claude Code's Read is read_file here" in results["c1"]
    assert "Claude Code" not in results["c2"]


def test_every_call_gets_exactly_one_result_in_order(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []
    turns = [
        {
            "tool_calls": [
                call("nope", {}, "c1"),
                {"id": "c2", "name": "echo", "arguments": "{not json"},
                {"id": "c3", "name": "echo", "arguments": "[1, 2]"},
                call("echo", {"text": 5}, "c4"),
                call("echo", {"text": "fine"}, "c5"),
            ]
        }
    ]
    runner = make_runner(tmp_path, tools_plugin(echo_tool(calls)), turns=turns)
    events = run_events(runner)
    results = {r.id: r for r in _of(events, "tool_result")}
    assert list(results) == ["c1", "c2", "c3", "c4", "c5"]
    assert results["c1"].is_error and "Unknown tool" in results["c1"].content
    assert "echo" in results["c1"].content  # names the available tools
    assert results["c2"].is_error and "Invalid JSON" in results["c2"].content
    assert results["c3"].is_error and "JSON object" in results["c3"].content
    assert results["c4"].is_error and "Invalid arguments" in results["c4"].content
    assert not results["c5"].is_error
    assert calls == [{"text": "fine"}]  # the handler never saw the bad calls
    # SPEC §4: a permission event before every call, the malformed ones denied by the core
    decided = {e.id: (e.decision, e.rule) for e in _of(events, "permission")}
    invalid = ("deny", "core:invalid-call")
    assert decided == {
        "c1": invalid,
        "c2": invalid,
        "c3": invalid,
        "c4": invalid,
        "c5": ("allow", decided["c5"][1]),
    }
    sent = runner.turns_model.calls[-1]["messages"]
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == [
        "c1",
        "c2",
        "c3",
        "c4",
        "c5",
    ]
    assert events[-1].stop_reason == "completed"


def test_a_crashing_tool_is_an_error_result(tmp_path: Path) -> None:
    def crash(arguments: dict[str, Any], context: Any) -> ToolResult:
        raise RuntimeError("kaput")

    tool = Tool(name="crash", description="x", handler=crash)
    runner = make_runner(tmp_path, tools_plugin(tool), turns=[{"tool_calls": [call("crash")]}])
    events = run_events(runner)
    (result,) = _of(events, "tool_result")
    assert result.is_error and "kaput" in result.content
    assert events[-1].stop_reason == "completed"


def test_tool_calls_per_reply_are_capped(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []
    turns = [{"tool_calls": [call("echo", {"text": str(i)}, f"c{i}") for i in range(4)]}]
    runner = make_runner(
        tmp_path, tools_plugin(echo_tool(calls)), turns=turns, max_tool_calls_per_reply=2
    )
    events = run_events(runner)
    results = {r.id: r for r in _of(events, "tool_result")}
    assert [results[f"c{i}"].is_error for i in range(4)] == [False, False, True, True]
    assert "Not run" in results["c2"].content
    assert len(calls) == 2


def test_concurrency_safe_tools_run_in_parallel(tmp_path: Path) -> None:
    barrier = threading.Barrier(2, timeout=10)

    def meet(arguments: dict[str, Any], context: Any) -> str:
        barrier.wait()  # only returns if the other call runs at the same time
        return "met"

    tools = [Tool(name=n, description="x", handler=meet, concurrency_safe=True) for n in "ab"]
    runner = make_runner(
        tmp_path, tools_plugin(*tools), turns=[{"tool_calls": [call("a"), call("b")]}]
    )
    results = _of(run_events(runner), "tool_result")
    assert sorted((r.name, r.is_error, r.content) for r in results) == [
        ("a", False, "met"),
        ("b", False, "met"),
    ]
    # history keeps call order whatever the completion order
    sent = runner.turns_model.calls[-1]["messages"]
    assert [m["content"] for m in sent if m["role"] == "tool"] == ["met", "met"]
    ids = [c["id"] for c in sent[-3]["tool_calls"]]
    assert [m["tool_call_id"] for m in sent if m["role"] == "tool"] == ids


def test_unsafe_tools_run_one_after_another_in_order(tmp_path: Path) -> None:
    order: list[str] = []
    active: list[int] = [0]
    overlap: list[bool] = []
    lock = threading.Lock()

    def work(name: str) -> Any:
        def handler(arguments: dict[str, Any], context: Any) -> str:
            with lock:
                active[0] += 1
                overlap.append(active[0] > 1)
            order.append(name)
            threading.Event().wait(0.02)
            with lock:
                active[0] -= 1
            return name

        return handler

    tools = [Tool(name=n, description="x", handler=work(n)) for n in ("one", "two", "three")]
    runner = make_runner(
        tmp_path,
        tools_plugin(*tools),
        turns=[{"tool_calls": [call("one"), call("two"), call("three")]}],
    )
    run_events(runner)
    assert order == ["one", "two", "three"]
    assert not any(overlap)


def test_observations_record_each_call(tmp_path: Path) -> None:
    runner = make_runner(
        tmp_path,
        tools_plugin(echo_tool()),
        turns=[{"tool_calls": [call("echo", {"text": "x"}, "c1")]}],
    )
    events = run_events(runner)
    (observation,) = _of(events, "observation")
    assert observation.observation["tool"] == "echo"
    assert observation.observation["signature"] == 'echo {"text":"x"}'
    assert len(runner.context.observations) == 1


# --- images from tool results ------------------------------------------------------------------


def _screenshot_tool() -> Tool:
    def handler(arguments: dict[str, Any], context: Any) -> ToolResult:
        return ToolResult(
            content=[
                {"type": "text", "text": "a screenshot"},
                {"type": "image", "mime_type": "image/png", "data": "iVBORw0KGgo="},
            ]
        )

    return Tool(name="shot", description="Take a screenshot.", handler=handler)


def test_images_become_a_note_unless_the_model_takes_images(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, tools_plugin(_screenshot_tool()), turns=[
        {"tool_calls": [call("shot", {}, "c1")]}, {"content": "seen"},
    ])  # fmt: skip
    run_events(runner)
    second = runner.turns_model.calls[1]["messages"]
    tool_reply = next(m for m in second if m["role"] == "tool")
    assert "a screenshot" in tool_reply["content"] and "image/png" in tool_reply["content"]
    assert not any(isinstance(m.get("content"), list) for m in second)


@pytest.mark.parametrize(
    "settings",
    [{"images": True}, {"models": {"test:model": {"images": True}}}],
    ids=["images", "models"],
)
def test_images_are_passed_on_to_a_model_that_takes_images(
    tmp_path: Path, settings: dict[str, Any]
) -> None:
    runner = make_runner(tmp_path, tools_plugin(_screenshot_tool()), **settings, turns=[
        {"tool_calls": [call("shot", {}, "c1")]}, {"content": "seen"},
    ])  # fmt: skip
    run_events(runner)
    second = runner.turns_model.calls[1]["messages"]
    roles = [m["role"] for m in second]
    assert roles[-2:] == ["tool", "user"]
    parts = second[-1]["content"]
    assert parts[1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }


def test_an_internal_error_ends_the_run_cleanly_with_a_crash_log(tmp_path: Path) -> None:
    # a plugin's failure is skipped (fail closed); an error of the core's own ends the run
    def broken(prompt: str, context: Any) -> Any:
        raise RuntimeError("mention expansion exploded")

    runner = make_runner(tmp_path, turns=[{"content": "never"}])
    runner.expand_prompt = broken
    events = run_events(runner)
    result = events[-1]
    assert result.type == "result" and result.stop_reason == "model_error"
    assert "mention expansion exploded" in (result.error or "")
    logs = list((tmp_path / "home" / "logs").glob("crash-*.log"))
    assert logs and "Traceback" in logs[0].read_text()


def test_switching_to_a_model_without_images_says_earlier_ones_stay(tmp_path: Path) -> None:
    """``/model`` from a model that takes images to one that is not known to: the images the
    conversation already holds are still sent, and the switch line says so (a server without
    image input refuses them) — said only when there are some."""
    from mycode_core.cli.model_switch import switch_model

    vision = {"test:model": {"images": True}}
    runner = make_runner(tmp_path, tools_plugin(_screenshot_tool()), models=vision, turns=[
        {"tool_calls": [call("shot", {}, "c1")]}, {"content": "seen"},
    ])  # fmt: skip
    quiet = switch_model(make_runner(tmp_path / "plain", models=vision, turns=[]), "test:other")
    run_events(runner)
    line = switch_model(runner, "test:other")
    assert "earlier images stay in this conversation" in line and "/clear" in line
    assert "earlier images" not in quiet

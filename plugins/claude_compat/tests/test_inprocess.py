"""Events without a CLI way in: Notification (interactive asks) and PreCompact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cc_helpers import Env, hooks_file
from mycode_claude_compat import plugin

from mycode_core import hookimpl
from mycode_core.records import PermissionVerdict, Tool
from mycode_core.testing import installed_plugin, make_runner, run_events, tools_plugin


def _tool(name: str, text: str) -> Tool:
    return Tool(name=name, description="x", handler=lambda arguments, context: text)


def test_notification_runs_before_a_permission_question(tmp_path: Path) -> None:
    env = Env(tmp_path / "e")
    order: list[str] = []

    class Asker:
        @hookimpl
        def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
            return PermissionVerdict(decision="ask", reason="check")

    def ask(question: str, options: list[str]) -> str:
        order.append(f"asked after {len(env.log('note'))} notification(s)")
        return options[0]

    runner = make_runner(
        tmp_path,
        plugin,
        Asker(),
        tools_plugin(_tool("hello", "hi")),
        turns=[{"tool_calls": [{"name": "hello", "arguments": {}}]}],
        session_id="n1",
        ask=ask,
    )
    hooks_file(runner.home / "hooks.json", {"Notification": [(None, [env.hook("note")])]})
    run_events(runner)
    assert order == ["asked after 1 notification(s)"]
    (note,) = env.log("note")
    assert note["stdin"]["hook_event_name"] == "Notification"
    assert note["stdin"]["notification_type"] == "permission_prompt"
    assert "hello" in note["stdin"]["message"]


def test_precompact_runs_before_compaction(tmp_path: Path) -> None:
    env = Env(tmp_path / "e")
    big = "word " * 1500
    turns = [{"tool_calls": [{"name": "big", "arguments": {}}]} for _ in range(4)]
    runner = make_runner(
        tmp_path,
        plugin,
        tools_plugin(_tool("big", big)),
        turns=[*turns, {"content": "done"}],
        context_window=4000,
    )
    hooks_file(runner.home / "hooks.json", {"PreCompact": [("auto", [env.hook("pre")])]})
    events = run_events(runner)
    compactions = [e for e in events if e.type == "compaction"]
    assert compactions, "the run should have compacted"
    records = env.log("pre")
    assert records and records[0]["stdin"]["trigger"] == "auto"
    assert records[0]["start"] <= compactions[0].ts


def test_precompact_does_not_run_for_the_masking_batches(tmp_path: Path) -> None:
    """Below the threshold the engine only masks old results (every keep_recent_results new
    ones): nothing is summarised, so no PreCompact/PostCompact hook runs."""
    env = Env(tmp_path / "e")
    turns = [{"tool_calls": [{"name": "mid", "arguments": {}}]} for _ in range(20)]
    runner = make_runner(
        tmp_path,
        plugin,
        installed_plugin("context_engine"),
        tools_plugin(_tool("mid", "word " * 300)),
        turns=[*turns, {"content": "done"}],
        context_window=128_000,
        context={"keep_recent_results": 5},
    )
    hook = [("auto", [env.hook("pre")])]
    hooks_file(runner.home / "hooks.json", {"PreCompact": hook, "PostCompact": hook})
    events = run_events(runner)
    assert [e.stage for e in events if e.type == "compaction"] == ["mask"] * 3
    assert env.log("pre") == []


def test_a_subagent_fires_subagent_stop_not_stop(tmp_path: Path) -> None:
    env = Env(tmp_path / "e")
    block = {"decision": "block", "reason": "Summarise the files you changed."}
    runner = make_runner(tmp_path, plugin, turns=[{"content": "a"}, {"content": "b"}])
    hooks_file(
        runner.home / "hooks.json",
        {
            "Stop": [(None, [env.hook("stop")])],
            "SubagentStop": [(None, [env.hook("sub", stdout=block, when_active={})])],
        },
    )
    runner.context.agent_id = "agent-1"  # what the subagents plugin sets on a child's context
    events = run_events(runner)
    assert env.log("stop") == []
    first, second = (r["stdin"] for r in env.log("sub"))
    assert first["hook_event_name"] == "SubagentStop" and first["stop_hook_active"] is False
    assert second["stop_hook_active"] is True
    assert [e.message for e in events if e.type == "guidance"] == [block["reason"]]


def test_an_interactive_answer_waits_for_its_async_rewake_stop_hook(tmp_path: Path) -> None:
    """In an interactive session an ``asyncRewake`` Stop hook runs in the background, and the
    answer waits for it as for any ``asyncRewake`` hook still running (it was left running,
    unheard): its exit 2 wakes the model with ``rewakeMessage`` and stderr, and the next Stop
    sees ``stop_hook_active``."""
    env = Env(tmp_path / "e")
    turns = [{"content": "first"}, {"content": "second"}]
    runner = make_runner(tmp_path, plugin, turns=turns, ask=lambda question, options: options[0])
    review = env.hook("review", exit=2, stderr="a.py leaks a token", sleep=1, when_active={})
    stop = {"command": review, "asyncRewake": True, "rewakeMessage": "Background review:"}
    hooks_file(runner.home / "hooks.json", {"Stop": [(None, [stop])]})
    events = run_events(runner)
    said = [e.message for e in events if e.type == "guidance"]
    assert said == ["Background review:\n\na.py leaks a token"]
    assert events[-1].final_text == "second"
    assert [r["stdin"]["stop_hook_active"] for r in env.log("review")] == [False, True]


class EchoSummariser:
    """A summariser that writes the instructions it was given into the summary."""

    @hookimpl
    def summarize_context(self, messages: Any, instructions: Any, context: Any) -> str:
        return f"SUMMARY focus={instructions}"


def _compacting_run(tmp_path: Path, env: Env, hooks: dict[str, Any], *extra: object) -> list[Any]:
    """A scripted run with the context engine that compacts (small window, many results)."""
    engine = installed_plugin("context_engine")
    turns = [{"tool_calls": [{"name": "mid", "arguments": {}}]} for _ in range(16)]
    runner = make_runner(
        tmp_path,
        plugin,
        engine,
        *extra,
        tools_plugin(_tool("mid", "word " * 300)),
        turns=[*turns, {"content": "done"}],
        context_window=4000,
        context={"strategy": "summary"},
    )
    hooks_file(runner.home / "hooks.json", hooks)
    return run_events(runner)


def test_precompact_block_skips_a_proactive_compaction(tmp_path: Path) -> None:
    env = Env(tmp_path / "e")
    plain = _compacting_run(tmp_path / "a", env, {})
    assert [e for e in plain if e.type == "compaction"], "the run should compact"
    blocked = _compacting_run(
        tmp_path / "b",
        env,
        {"PreCompact": [("auto", [env.hook("pre", stdout={"decision": "block", "reason": "no"})])]},
    )
    assert env.log("pre"), "PreCompact should have run"
    proactive = [e for e in blocked if e.type == "compaction" and e.reason == "proactive"]
    assert proactive == []
    assert any("skipped this compaction" in getattr(e, "message", "") for e in blocked)


def test_precompact_instructions_and_postcompact_summary(tmp_path: Path) -> None:
    env = Env(tmp_path / "e")
    extra = {"hookSpecificOutput": {"additionalContext": "KEEP-THE-API-NAMES"}}
    replacement = {"hookSpecificOutput": {"compactSummary": "REPLACED SUMMARY 42"}}
    events = _compacting_run(
        tmp_path,
        env,
        {
            "PreCompact": [("auto", [env.hook("pre", stdout=extra)])],
            "PostCompact": [(None, [env.hook("post", stdout=replacement)])],
        },
        EchoSummariser(),
    )
    compactions = [e for e in events if e.type == "compaction"]
    assert compactions
    pre, post = env.log("pre")[0]["stdin"], env.log("post")[0]["stdin"]
    assert pre["hook_event_name"] == "PreCompact" and pre["trigger"] == "auto"
    assert {"session_id", "transcript_path", "cwd", "custom_instructions"} <= set(pre)
    assert post["hook_event_name"] == "PostCompact" and post["compact_summary"]
    assert "focus=KEEP-THE-API-NAMES" in post["compact_summary"]  # reached the summariser
    assert all(e.summary == "REPLACED SUMMARY 42" for e in compactions)

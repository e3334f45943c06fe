"""Events without a CLI way in: Notification (interactive asks) and PreCompact."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cc_helpers import Env, hooks_file
from mycode_claude_compat import plugin

from mycode_core import hookimpl
from mycode_core.records import PermissionVerdict, Tool
from mycode_core.runtime.child import run_child
from mycode_core.runtime.loop import AgentRunner
from mycode_core.testing import make_runner, run_events, tools_plugin


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

    template = make_runner(
        tmp_path,
        plugin,
        Asker(),
        tools_plugin(_tool("hello", "hi")),
        turns=[{"tool_calls": [{"name": "hello", "arguments": {}}]}],
    )
    hooks_file(template.home / "hooks.json", {"Notification": [(None, [env.hook("note")])]})
    runner = AgentRunner(
        spawn_child=run_child,
        pm=template.pm,
        settings=template.settings,
        workspace=template.workspace,
        home=template.home,
        session_id="n1",
        interactive=True,
        ask=ask,
    )
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

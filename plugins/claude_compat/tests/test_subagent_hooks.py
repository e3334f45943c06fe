"""Claude Code's subagent hooks: ``SubagentStart`` adds to the subagent's instructions,
``SubagentStop`` is matched on its profile, and hooks inside a subagent know which one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cc_helpers import Env, hooks_file
from mycode_claude_compat import plugin

from mycode_core.testing import installed_plugin, make_runner, run_events

PROFILE = """---
name: reviewer
description: Reviews a change.
---
Review what you are given.
"""


def _delegating_run(tmp_path: Path, hooks: dict[str, Any], final: str = "child done") -> Any:
    turns = [
        {
            "tool_calls": [
                {"name": "delegate_task", "arguments": {"task": "review", "agent": "reviewer"}}
            ]
        },
        {"content": final},
        {"content": "all done"},
    ]
    runner = make_runner(
        tmp_path, plugin, installed_plugin("subagents"), turns=turns, permission_mode="bypass"
    )
    (runner.home / "agents").mkdir()
    (runner.home / "agents" / "reviewer.md").write_text(PROFILE, encoding="utf-8")
    hooks_file(runner.home / "hooks.json", hooks)
    return runner


def _system_prompts(runner: Any) -> list[str]:
    return [call["messages"][0]["content"] for call in runner.turns_model.calls]


def test_subagent_start_context_reaches_only_that_subagent(tmp_path: Path) -> None:
    env = Env(tmp_path / "e")
    said = {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "M-42"}}
    runner = _delegating_run(
        tmp_path,
        {
            "SubagentStart": [
                ("reviewer", [env.hook("start", stdout=said)]),
                ("explorer", [env.hook("other")]),
            ]
        },
    )
    events = run_events(runner)
    assert events[-1].stop_reason == "completed"
    parent, child, parent_again = _system_prompts(runner)
    assert "M-42" in child and "M-42" not in parent and "M-42" not in parent_again
    (record,) = env.log("start")
    stdin = record["stdin"]
    assert stdin["hook_event_name"] == "SubagentStart"
    assert stdin["agent_type"] == "reviewer" and stdin["agent_id"].startswith("reviewer-")
    assert env.log("other") == []


def test_subagent_start_exit_2_cannot_stop_the_subagent(tmp_path: Path) -> None:
    env = Env(tmp_path / "e")
    runner = _delegating_run(
        tmp_path, {"SubagentStart": [(None, [env.hook("start", exit=2, stderr="no reviews")])]}
    )
    events = run_events(runner)
    assert events[-1].stop_reason == "completed"
    assert len(runner.turns_model.calls) == 3  # the child still ran
    assert any("no reviews" in e.message for e in events if e.type == "notice")


def test_subagent_stop_is_matched_on_the_profile_and_names_its_transcript(
    tmp_path: Path,
) -> None:
    env = Env(tmp_path / "e")
    runner = _delegating_run(
        tmp_path,
        {
            "PreToolUse": [(None, [env.hook("pre")])],
            "SubagentStop": [
                ("reviewer", [env.hook("stop")]),
                ("explorer", [env.hook("other")]),
            ],
            "Stop": [(None, [env.hook("main")])],
        },
    )
    run_events(runner)
    (stop,) = (record["stdin"] for record in env.log("stop"))
    assert stop["agent_type"] == "reviewer" and stop["last_assistant_message"] == "child done"
    own = Path(stop["agent_transcript_path"])
    assert own != Path(stop["transcript_path"]) and own.is_file()
    assert all(
        line["agentId"] == stop["agent_id"] for line in map(_json, own.read_text().splitlines())
    )
    assert env.log("other") == []
    # the main agent's hooks carry no agent fields; its transcript holds no subagent line
    (pre,) = (record["stdin"] for record in env.log("pre"))
    (main,) = (record["stdin"] for record in env.log("main"))
    assert "agent_id" not in pre and "agent_type" not in main
    assert "isSidechain" not in Path(main["transcript_path"]).read_text()


def test_stop_additional_context_keeps_the_agent_going(tmp_path: Path) -> None:
    env = Env(tmp_path / "e")
    more = {"hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": "Run the tests."}}
    runner = make_runner(tmp_path, plugin, turns=[{"content": "first"}, {"content": "second"}])
    hooks_file(
        runner.home / "hooks.json",
        {"Stop": [(None, [env.hook("stop", stdout=more, when_active={})])]},
    )
    events = run_events(runner)
    assert [e.message for e in events if e.type == "guidance"] == ["Run the tests."]
    assert events[-1].final_text == "second" and events[-1].stop_reason == "completed"
    assert [r["stdin"]["stop_hook_active"] for r in env.log("stop")] == [False, True]


def _json(line: str) -> Any:
    import json

    return json.loads(line)


def test_a_subagent_does_not_repeat_the_notices_of_the_run(tmp_path: Path) -> None:
    runner = _delegating_run(tmp_path, {})
    (runner.home / "hooks.json").write_text("{not json")
    events = run_events(runner)
    said = [(e.agent_id, e.message) for e in events if e.type == "notice" and "hooks" in e.message]
    assert len(said) == 1 and said[0][0] is None, said

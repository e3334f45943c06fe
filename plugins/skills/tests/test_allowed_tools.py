"""``allowed-tools``: restrict while active, never loosen, expire with the turn."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mycode_skills import plugin
from mycode_skills.restrict import Restrictions, parse_rule
from skill_helpers import write_skill

from mycode_core.testing import installed_plugin, make_runner, run_events

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.mark.parametrize(
    ("entry", "tool", "arguments", "inside"),
    [
        ("Read", "read_file", {"path": "a.py"}, True),
        ("Read", "write_file", {"path": "a.py"}, False),
        ("Bash(git:*)", "run_command", {"command": "git status"}, True),
        ("Bash(git:*)", "run_command", {"command": "gitk"}, False),
        ("Bash(git log:*)", "run_command", {"command": "git  log -3"}, True),
        ("Bash(git log:*)", "run_command", {"command": "git push"}, False),
        ("Bash(make test)", "run_command", {"command": "make test"}, True),
        ("Bash(make test)", "run_command", {"command": "make test; rm -rf x"}, False),
        ("Edit(src/**)", "edit_file", {"path": "src/app/x.py"}, True),
        ("Edit(src/**)", "edit_file", {"path": "docs/x.md"}, False),
        ("read_file", "read_file", {"path": "x"}, True),
        ("mcp__git__*", "mcp__git__log", {}, True),
        ("Grep", "glob", {"pattern": "*"}, False),
        ("NotebookEdit(nb/**)", "edit_file", {"path": "nb/a.ipynb"}, True),
        ("Agent", "delegate_task", {"task": "x"}, True),
        ("Skill", "load_skill", {"name": "pdf"}, True),
    ],
)
def test_rule_matching(entry: str, tool: str, arguments: dict[str, Any], inside: bool) -> None:
    rule = parse_rule(entry)
    assert rule is not None
    assert rule.matches(tool, arguments) is inside


def test_restrictions_expire_with_the_turn() -> None:
    restrictions = Restrictions()
    restrictions.activate("careful", ("Read",), "turn one")
    assert restrictions.outside("turn one", "run_command", {"command": "ls"}) == ["careful"]
    assert restrictions.outside("turn one", "read_file", {"path": "x"}) is None
    assert restrictions.outside("turn one", "load_skill", {"name": "y"}) is None
    assert restrictions.outside("turn one\n\nturn two", "run_command", {}) is None


def test_a_skill_without_the_field_restricts_nothing() -> None:
    restrictions = Restrictions()
    restrictions.activate("free", None, "t")
    assert restrictions.outside("t", "run_command", {"command": "ls"}) is None
    restrictions.activate("careful", ("Read",), "t")
    assert restrictions.outside("t", "run_command", {"command": "ls"}) == ["careful"]
    restrictions.activate("also", ("Bash(ls)",), "t")
    assert restrictions.outside("t", "run_command", {"command": "ls"}) is None


def _turns(*calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"tool_calls": [{"name": name, "arguments": arguments, "id": f"c{index}"}]}
        for index, (name, arguments) in enumerate(calls)
    ]


def _results(events: list[Any]) -> dict[str, Any]:
    return {e.id: e for e in events if e.type == "tool_result"}


def test_outside_calls_are_refused_in_print_mode_inside_ones_run(tmp_path: Path) -> None:
    turns = _turns(
        ("load_skill", {"name": "read-only-review"}),
        ("run_command", {"command": "echo hi"}),
        ("read_file", {"path": "notes.txt"}),
        ("write_file", {"path": "out.txt", "content": "x"}),
    )
    runner = make_runner(tmp_path, plugin, installed_plugin("builtin_tools"), turns=turns)
    (runner.workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    write_skill(runner.home / "skills", "read-only-review", allowed_tools="Read Grep Glob")
    results = _results(run_events(runner))
    assert not results["c0"].is_error
    assert results["c1"].is_error
    assert "allowed-tools of the active skill 'read-only-review'" in str(results["c1"].content)
    assert not results["c2"].is_error and "hello" in str(results["c2"].content)
    assert results["c3"].is_error
    assert not (runner.workspace / "out.txt").exists()


def test_inside_the_list_the_permission_rules_still_apply(tmp_path: Path) -> None:
    turns = _turns(
        ("load_skill", {"name": "shell-skill"}),
        ("run_command", {"command": "echo fine"}),
    )
    runner = make_runner(
        tmp_path,
        plugin,
        installed_plugin("builtin_tools"),
        turns=turns,
        permissions={"deny": ["run_command(echo:*)"]},
    )
    write_skill(runner.home / "skills", "shell-skill", allowed_tools=["Bash(echo:*)"])
    results = _results(run_events(runner))
    assert results["c1"].is_error
    assert "run_command(echo:*)" in str(results["c1"].content)  # the user's rule decided


def test_the_next_turn_is_unrestricted(tmp_path: Path) -> None:
    turns = [
        *_turns(("load_skill", {"name": "tight"})),
        {"content": "done with the skill"},
        *_turns(("run_command", {"command": "echo again"})),
    ]
    runner = make_runner(tmp_path, plugin, installed_plugin("builtin_tools"), turns=turns)
    write_skill(runner.home / "skills", "tight", allowed_tools="Read")
    run_events(runner, "first", close=False)
    second = run_events(runner, "second")
    results = [e for e in second if e.type == "tool_result"]
    assert results and not results[0].is_error, json.dumps(str(results[0].content))


def test_interactive_ask_names_the_skill(tmp_path: Path) -> None:
    questions: list[str] = []

    def ask(question: str, options: list[str]) -> str:
        questions.append(question)
        return options[0]

    turns = _turns(("load_skill", {"name": "tight"}), ("run_command", {"command": "echo x"}))
    runner = make_runner(tmp_path, plugin, installed_plugin("builtin_tools"), turns=turns)
    runner.context.interactive = True
    runner.context.ask = ask
    write_skill(runner.home / "skills", "tight", allowed_tools="Read")
    results = _results(run_events(runner))
    assert not results["c1"].is_error
    assert questions and "'tight'" in questions[0]

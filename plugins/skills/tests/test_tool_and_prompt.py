"""``load_skill``, the listing in the system prompt, refresh between turns, pinning."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from mycode_skills import plugin
from mycode_skills.state import PINNED_KEY
from mycode_skills.tool import LOAD_SKILL
from skill_helpers import write_skill

from mycode_core.records import ToolResult
from mycode_core.testing import call_tool, child_runner, make_context, make_runner, run_events

pytestmark = pytest.mark.usefixtures("isolated_home")


def _load(context: Any, name: str) -> ToolResult:
    return call_tool(LOAD_SKILL, {"name": name}, context)


def test_load_skill_returns_body_and_every_file(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    write_skill(
        context.home / "skills",
        "release-notes",
        body="# Release notes\n\nRun scripts/collect.py first.\n",
        files={
            "scripts/collect.py": "print('hi')\n",
            "references/style/guide.md": "Be brief.\n",
            "template.txt": "x\n",
        },
    )
    result = _load(context, "release-notes")
    assert not result.is_error, result.content
    text = result.text()
    assert "Run scripts/collect.py first." in text
    assert "name: release-notes" not in text  # the front matter is not repeated
    for name in ("SKILL.md", "scripts/collect.py", "references/style/guide.md", "template.txt"):
        assert f"- {name}" in text
    assert str((context.home / "skills" / "release-notes").resolve()) in text
    assert context.store[PINNED_KEY]["release-notes"].startswith("# Release notes")


def test_unknown_skill_lists_the_available_ones(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    write_skill(context.home / "skills", "alpha")
    write_skill(context.home / "skills", "beta")
    result = _load(context, "gamma")
    assert result.is_error
    assert "Unknown skill 'gamma'" in result.text() and "alpha, beta" in result.text()
    empty = make_context(tmp_path / "other")
    assert "Available skills: none" in _load(empty, "x").text()


def test_symlinks_leading_out_of_the_skill_are_not_listed(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("s", encoding="utf-8")
    folder = write_skill(context.home / "skills", "linky", files={"ok.md": "fine"})
    os.symlink(secret, folder / "escape.txt")
    os.symlink(folder / "ok.md", folder / "alias.md")
    text = _load(context, "linky").text()
    assert "- ok.md" in text and "- alias.md" in text
    assert "escape.txt" not in text


def test_huge_skill_body_is_cut_with_a_pointer(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    folder = write_skill(context.home / "skills", "huge", body="start\n")
    with (folder / "SKILL.md").open("a", encoding="utf-8") as fh:
        fh.write(("y" * 99 + "\n") * 100_000)
    result = _load(context, "huge")
    assert not result.is_error
    assert "only the start is shown" in result.text()
    assert len(result.text()) < 300_000


def test_system_prompt_lists_name_and_description_sorted(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    write_skill(context.home / "skills", "zeta", description="Last one.", body="SECRET BODY")
    write_skill(context.home / "skills", "alpha", description="First one.")
    sections = plugin.build_context(context=context)
    assert sections is not None and len(sections) == 1
    text = sections[0].text
    assert text.index("- alpha: First one.") < text.index("- zeta: Last one.")
    assert "SECRET BODY" not in text
    assert plugin.build_context(context=context)[0].text == text  # type: ignore[index]


def test_no_skills_no_section(tmp_path: Path) -> None:
    assert plugin.build_context(context=make_context(tmp_path)) is None


def test_invalid_skill_notice_is_shown_once(tmp_path: Path) -> None:
    events: list[Any] = []
    context = make_context(tmp_path, events=events)
    write_skill(context.home / "skills", "Bad")
    write_skill(context.home / "skills", "good")
    plugin.build_context(context=context)
    plugin.build_context(context=context)
    notices = [e for e in events if getattr(e, "type", "") == "notice"]
    assert len(notices) == 1
    assert "'Bad'" in notices[0].message and "name-characters" in notices[0].message


def test_a_skill_added_between_turns_is_listed_at_the_next_turn(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, plugin, turns=[{"content": "one"}, {"content": "two"}])
    write_skill(runner.home / "skills", "early", description="Was there at the start.")
    run_events(runner, "first", close=False)
    write_skill(runner.home / "skills", "late", description="Added between turns.")
    run_events(runner, "second")
    first, second = (call["messages"][0]["content"] for call in runner.turns_model.calls)
    assert "- early:" in first and "- late:" not in first
    assert "- early:" in second and "- late: Added between turns." in second
    assert "load_skill" in runner.turns_model.calls[0]["tools"]


def test_a_subagent_does_not_tell_a_skills_problem_again(tmp_path: Path) -> None:
    """What the main agent told (an invalid skill) is the session's: a subagent, which lists
    the skills in its own prompt, does not say it a second time."""
    runner = child_runner(tmp_path, plugin)
    write_skill(runner.home / "skills", "Bad")
    write_skill(runner.home / "skills", "good")
    events = run_events(runner)
    child_prompt = runner.turns_model.calls[1]["messages"][0]["content"]
    assert "- good:" in child_prompt  # the child lists the skills too
    notices = [e for e in events if e.type == "notice" and "'Bad'" in e.message]
    assert len(notices) == 1 and notices[0].agent_id is None

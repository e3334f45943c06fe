"""``/skills``, ``/skill NAME`` and ``/skill:NAME [task]``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mycode_skills import plugin
from mycode_skills.state import PINNED_KEY, SkillsState
from skill_helpers import write_skill

from mycode_core import SlashResult
from mycode_core.cli.slash import collect_slash_commands
from mycode_core.testing import make_context, make_plugin_manager


@pytest.fixture
def commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], Any]:
    user = tmp_path / "user"
    user.mkdir()
    monkeypatch.setenv("HOME", str(user))
    context = make_context(tmp_path)
    write_skill(
        context.home / "skills",
        "tidy-imports",
        description="Sort and prune imports.",
        body="Run the sorter, then check.\n",
        allowed_tools="Read Edit",
    )
    write_skill(context.home / "skills", "Bad_One")
    pm = make_plugin_manager(plugin)
    notices: list[str] = []
    found = collect_slash_commands(pm, context, notices.append)
    assert notices == []
    return found, context


def test_registered_names(commands: tuple[dict[str, Any], Any]) -> None:
    found, _ = commands
    assert {"skills", "skill", "skill:tidy-imports"} <= set(found)
    assert all(command.plugin for command in found.values())


def test_skills_lists_valid_and_invalid(commands: tuple[dict[str, Any], Any]) -> None:
    found, context = commands
    result = found["skills"].run("", context)
    assert isinstance(result, SlashResult) and result.prompt is None
    assert "tidy-imports (user): Sort and prune imports." in str(result.output)
    assert "not loaded" in str(result.output) and "Bad_One" in str(result.output)


def test_skill_colon_name_forces_the_skill_into_the_turn(
    commands: tuple[dict[str, Any], Any],
) -> None:
    found, context = commands
    prompt = found["skill:tidy-imports"].run("clean up app.py", context)
    assert isinstance(prompt, str)
    assert "Run the sorter, then check." in prompt and prompt.startswith("clean up app.py")
    assert context.store[PINNED_KEY]["tidy-imports"].startswith("Run the sorter")
    state = SkillsState.of(context)
    # bound to the turn this prompt starts: restricts there, not in a later one
    assert state.restricting("turn 1", "run_command", {"command": "ls"}) == ["tidy-imports"]
    assert state.restricting("turn 1", "read_file", {"path": "a"}) is None
    assert state.restricting("turn 1\n\nturn 2", "run_command", {"command": "ls"}) is None


def test_skill_with_a_space_and_unknown_names(commands: tuple[dict[str, Any], Any]) -> None:
    found, context = commands
    prompt = found["skill"].run("tidy-imports", context)
    assert isinstance(prompt, str) and prompt.startswith("Apply this skill")
    unknown = found["skill"].run("nope do it", context)
    assert isinstance(unknown, SlashResult)
    assert "Unknown skill 'nope'" in str(unknown.output) and "tidy-imports" in str(unknown.output)
    listing = found["skill"].run("", context)
    assert isinstance(listing, SlashResult) and "tidy-imports" in str(listing.output)


def test_skills_says_not_loaded_only_of_skills_kept_out(
    commands: tuple[dict[str, Any], Any],
) -> None:
    found, context = commands
    # loads, with a warning: its name differs from its folder's (name-folder)
    write_skill(context.home / "skills", "template", name="starter-kit")
    output = str(found["skills"].run("", context).output)
    assert "starter-kit (user)" in output
    (warned,) = [line for line in output.splitlines() if "'starter-kit'" in line]
    assert "not loaded" not in warned and warned.startswith("warning: ")
    (refused,) = [line for line in output.splitlines() if "Bad_One" in line]
    assert refused.count("not loaded") == 1


def test_a_user_only_skill_is_neither_listed_nor_loaded_by_the_model(tmp_path: Path) -> None:
    from mycode_skills.tool import LOAD_SKILL

    from mycode_core.testing import call_tool

    context = make_context(tmp_path)
    write_skill(context.home / "skills", "tidy", description="Tidy the imports.")
    front = {"disable-model-invocation": True}
    write_skill(context.home / "skills", "deploy", description="Ship it.", front=front)
    (section,) = plugin.build_context(context) or []
    assert "- tidy:" in section.text and "deploy" not in section.text
    refused = call_tool(LOAD_SKILL, {"name": "deploy"}, context)
    assert refused.is_error and "/deploy" in refused.text()
    assert not call_tool(LOAD_SKILL, {"name": "tidy"}, context).is_error
    found = collect_slash_commands(make_plugin_manager(plugin), context, lambda _: None)
    prompt = found["skill:deploy"].run("now", context)  # the user may
    assert isinstance(prompt, str) and "Follow these steps." in prompt


def test_front_matter_booleans_are_read_as_claude_code_reads_them(tmp_path: Path) -> None:
    """``yes``/``no``, ``on``/``off`` and ``1``/``0`` in any case, besides ``true``/``false``."""
    context = make_context(tmp_path)
    flags: dict[str, object] = {"a": 1, "b": "Yes", "c": "ON", "d": "no", "e": 0, "f": "maybe"}
    for name, flag in flags.items():
        front = {"disable-model-invocation": flag}
        write_skill(context.home / "skills", name, description="A skill.", front=front)
    (section,) = plugin.build_context(context) or []
    listed = {name for name in flags if f"- {name}:" in section.text}
    assert listed == {"d", "e", "f"}

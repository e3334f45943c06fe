"""``/memory`` and ``/init``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mycode_memory import plugin
from mycode_memory.store import MemoryStore

from mycode_core import SlashResult
from mycode_core.cli.slash import collect_slash_commands
from mycode_core.testing import make_context, make_plugin_manager


@pytest.fixture
def setup(tmp_path: Path) -> tuple[dict[str, Any], Any, MemoryStore]:
    context = make_context(tmp_path)
    found = collect_slash_commands(make_plugin_manager(plugin), context, print)
    return found, context, MemoryStore(context.home, context.workspace)


def test_memory_list_and_forget(setup: tuple[dict[str, Any], Any, MemoryStore]) -> None:
    found, context, store = setup
    assert "No notes" in str(found["memory"].run("", context).output)
    note, _ = store.add("the CI image is ubuntu-24.04", "project")
    listed = found["memory"].run("list", context)
    assert isinstance(listed, SlashResult) and note.id in str(listed.output)
    assert "Usage" in str(found["memory"].run("forget", context).output)
    assert "Forgot project note" in str(found["memory"].run(f"forget {note.id}", context).output)
    assert "no note with id" in str(found["memory"].run("forget zzz", context).output)
    assert "Usage" in str(found["memory"].run("frobnicate", context).output)


def test_memory_edit_user_scope(
    setup: tuple[dict[str, Any], Any, MemoryStore], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    found, context, store = setup
    store.add("old preference", "user")
    editor = tmp_path / "ed.py"
    editor.write_text(
        "import sys, pathlib\np = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('old preference', 'new preference'))\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    result = found["memory"].run("edit user", context)
    assert "Saved user notes: 1" in str(result.output)
    assert [n.text for n in store.notes("user")] == ["new preference"]
    monkeypatch.setenv("VISUAL", "false")
    failed = found["memory"].run("edit", context)
    assert "editor exited with code" in str(failed.output)


def test_init_returns_a_survey_prompt(setup: tuple[dict[str, Any], Any, MemoryStore]) -> None:
    found, context, _ = setup
    prompt = found["init"].run("mention the docker setup", context)
    assert isinstance(prompt, str)
    assert "AGENTS.md" in prompt and "write_file" in prompt
    assert "The user adds: mention the docker setup" in prompt
    assert list(context.workspace.iterdir()) == []  # the command itself writes nothing


def test_init_prompt_run_writes_agents_md(tmp_path: Path) -> None:

    from mycode_core.testing import installed_plugin, make_runner, run_events

    turns = [
        {"tool_calls": [{"name": "glob", "arguments": {"pattern": "**/*"}, "id": "g"}]},
        {
            "tool_calls": [
                {
                    "name": "write_file",
                    "arguments": {"path": "AGENTS.md", "content": "# Project\n\nA tool.\n"},
                    "id": "w",
                }
            ]
        },
        {"content": "AGENTS.md written"},
    ]
    runner = make_runner(
        tmp_path,
        plugin,
        installed_plugin("builtin_tools"),
        turns=turns,
        permission_mode="accept-edits",
    )
    (runner.workspace / "main.py").write_text("print('hi')\n", encoding="utf-8")
    context = runner.context
    prompt = collect_slash_commands(runner.pm, context, print)["init"].run("", context)
    events = run_events(runner, prompt)
    assert events[-1].stop_reason == "completed"
    assert (runner.workspace / "AGENTS.md").read_text(encoding="utf-8").startswith("# Project")
    assert "Survey this workspace" in runner.turns_model.calls[0]["messages"][-1]["content"]

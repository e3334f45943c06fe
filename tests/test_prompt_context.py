"""What the model is told: AGENTS.md in the system prompt (CLAUDE.md: the claude_compat
plugin's tests), ``@path`` reminders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mycode_core.project_files import folders_down_to, instruction_files
from mycode_core.testing import FakeOpenAIServer, make_runner, run_events


def test_agents_md_reaches_the_system_prompt(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], workspace: Path
) -> None:
    (workspace / "AGENTS.md").write_text("ROOT-RULE: use tabs\n")
    sub = workspace / "pkg" / "sub"
    sub.mkdir(parents=True)
    (workspace / "pkg" / "AGENTS.md").write_text("PKG-RULE: no globals\n")
    (workspace / "unrelated").mkdir()
    (workspace / "unrelated" / "AGENTS.md").write_text("UNRELATED-RULE\n")
    run = cli(["-p", "task", *server_args, "--cwd", str(workspace)], cwd=sub)
    assert run.rc == 0, run.stderr
    system = server.chat_requests[0].messages[0]
    assert system["role"] == "system"
    text = system["content"]
    for rule in ("ROOT-RULE", "PKG-RULE"):
        assert rule in text
    assert "UNRELATED-RULE" not in text
    assert text.index("ROOT-RULE") < text.index("PKG-RULE")  # root first, then down


def test_your_own_agents_md_comes_before_the_projects(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], workspace: Path, home: Path
) -> None:
    """``$MYCODE_HOME/AGENTS.md``: your instructions for every workspace (Codex's
    ``~/.codex/AGENTS.md``, Claude Code's ``~/.claude/CLAUDE.md``)."""
    (home / "AGENTS.md").write_text("MY-RULE: answer in British English\n")
    (workspace / "AGENTS.md").write_text("PROJECT-RULE: use tabs\n")
    run = cli(["-p", "task", *server_args])
    assert run.rc == 0, run.stderr
    text = server.chat_requests[0].messages[0]["content"]
    assert "MY-RULE" in text and text.index("MY-RULE") < text.index("PROJECT-RULE")


def test_instruction_files_from_root_down(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "AGENTS.md").write_text("x")
    (tmp_path / "a" / "b" / "CLAUDE.md").write_text("y")
    groups = (("AGENTS.override.md", "AGENTS.md"), ("CLAUDE.md",))
    found = instruction_files(tmp_path, tmp_path / "a" / "b", groups)
    assert found == [tmp_path / "AGENTS.md", tmp_path / "a" / "b" / "CLAUDE.md"]
    assert instruction_files(tmp_path, Path("/"), groups) == [tmp_path / "AGENTS.md"]
    assert instruction_files(tmp_path, tmp_path / "a" / "b") == [tmp_path / "AGENTS.md"]


def test_agents_override_md_replaces_agents_md_in_its_folder_only(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], workspace: Path
) -> None:
    """Codex's rule: in each folder ``AGENTS.override.md`` is read instead of ``AGENTS.md``;
    other folders are unaffected (``CLAUDE.md`` too: the claude_compat plugin's tests)."""
    (workspace / "AGENTS.md").write_text("SHARED-RULE\n")
    (workspace / "AGENTS.override.md").write_text("LOCAL-OVERRIDE-RULE\n")
    sub = workspace / "pkg"
    sub.mkdir()
    (sub / "AGENTS.md").write_text("PKG-RULE\n")
    run = cli(["-p", "task", *server_args, "--cwd", str(workspace)], cwd=sub)
    assert run.rc == 0, run.stderr
    text = server.chat_requests[0].messages[0]["content"]
    assert "SHARED-RULE" not in text
    assert text.index("LOCAL-OVERRIDE-RULE") < text.index("PKG-RULE")
    assert "(AGENTS.override.md)" in text


def test_instruction_files_take_the_override_first(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    for name in ("AGENTS.md", "AGENTS.override.md", "CLAUDE.md", "a/AGENTS.md"):
        (tmp_path / name).write_text("x")
    (tmp_path / "a" / "AGENTS.override.md").symlink_to(tmp_path / "gone")  # dangling: still it
    groups = (("AGENTS.override.md", "AGENTS.md"), ("CLAUDE.md",))
    assert instruction_files(tmp_path, tmp_path / "a", groups) == [
        tmp_path / "AGENTS.override.md",
        tmp_path / "CLAUDE.md",
        tmp_path / "a" / "AGENTS.override.md",
    ]


def test_your_own_agents_override_md_wins_when_not_empty(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], home: Path
) -> None:
    """As Codex's ``~/.codex``: the first non-empty of AGENTS.override.md, AGENTS.md."""
    (home / "AGENTS.md").write_text("MY-USUAL-RULE\n")
    (home / "AGENTS.override.md").write_text("MY-OVERRIDE-RULE\n")
    assert cli(["-p", "task", *server_args]).rc == 0
    (home / "AGENTS.override.md").write_text(" \n")
    assert cli(["-p", "task", *server_args]).rc == 0
    first, second = (r.messages[0]["content"] for r in server.chat_requests)
    assert "MY-OVERRIDE-RULE" in first and "MY-USUAL-RULE" not in first
    assert "MY-USUAL-RULE" in second and "AGENTS.override.md" not in second


def test_folders_down_to_are_the_root_then_each_folder_to_the_current_one(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    (root / "a" / "b").mkdir(parents=True)
    assert folders_down_to(root, root / "a" / "b") == [root, root / "a", root / "a" / "b"]
    assert folders_down_to(root, None) == folders_down_to(root, root.parent) == [root]


def test_at_path_inlines_the_file(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, turns=[])
    (runner.workspace / "src").mkdir()
    (runner.workspace / "src" / "app.py").write_text("print(1)\n")
    events = run_events(runner, "fix the bug in @src/app.py, then mail me@example.com")
    (user,) = [e for e in events if e.type == "user"]
    assert user.content.startswith("fix the bug in @src/app.py")
    assert '<mentioned-file path="src/app.py">\nprint(1)\n</mentioned-file>' in user.content
    assert "example.com" not in user.content.split("<mentioned-file")[1]
    sent = runner.turns_model.calls[0]["messages"][-1]
    assert sent == {"role": "user", "content": user.content}


def test_at_path_of_a_missing_file_adds_nothing(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, turns=[])
    events = run_events(runner, "look at @nowhere.py")
    (user,) = [e for e in events if e.type == "user"]
    assert user.content == "look at @nowhere.py"

"""Claude Code's ``.claude/rules/``: rules without ``paths`` are instructions from the start,
path-scoped ones reach the model with the first call that reads or changes a matching file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mycode_claude_compat import plugin

from mycode_core.testing import installed_plugin, make_runner, run_events


def _read(path: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "read_file", "arguments": {"path": path}}]}


def _runner(tmp_path: Path, turns: list[dict[str, Any]]) -> Any:
    runner = make_runner(
        tmp_path, plugin, installed_plugin("builtin_tools"), turns=turns, permission_mode="bypass"
    )
    rules = runner.workspace / ".claude" / "rules"
    (rules / "frontend").mkdir(parents=True)
    (rules / "style.md").write_text("Always STYLE-RULE.\n")
    (rules / "frontend" / "react.md").write_text("---\ndescription: x\n---\nNESTED-RULE.\n")
    (rules / "api.md").write_text('---\npaths:\n  - "src/api/**/*.py"\n---\nAPI-RULE applies.\n')
    (rules / "docs.md").write_text('---\npaths: "docs/*.{md,rst}, README.md"\n---\nDOCS-RULE.\n')
    for name in ("src/api/v1/users.py", "src/api/v1/items.py", "src/core.py", "docs/guide.rst"):
        (runner.workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (runner.workspace / name).write_text("x = 1\n")
    return runner


def _tool_messages(call: dict[str, Any]) -> list[str]:
    return [m["content"] for m in call["messages"] if m["role"] == "tool"]


def test_rules_without_paths_are_instructions_from_the_start(tmp_path: Path) -> None:
    runner = _runner(tmp_path, [{"content": "done"}])
    run_events(runner)
    system = runner.turns_model.calls[0]["messages"][0]["content"]
    assert "STYLE-RULE" in system and "NESTED-RULE" in system
    assert "(.claude/rules/frontend/react.md)" in system
    assert "API-RULE" not in system and "DOCS-RULE" not in system
    assert "description: x" not in system  # the front matter is not the rule


def test_a_scoped_rule_comes_with_the_first_matching_file_once(tmp_path: Path) -> None:
    files = ["src/core.py", "src/api/v1/users.py", "src/api/v1/items.py", "docs/guide.rst"]
    turns = [*map(_read, files), {"content": "done"}]
    runner = _runner(tmp_path, turns)
    events = run_events(runner)
    results = _tool_messages(runner.turns_model.calls[-1])
    core, users, items, guide = results
    assert "RULE" not in core
    assert "API-RULE applies." in users and "(.claude/rules/api.md)" in users
    assert "API-RULE" not in items  # once a run
    assert "DOCS-RULE" in guide and "API-RULE" not in guide
    shown = [e.message for e in events if e.type == "guidance"]
    assert [e.source for e in events if e.type == "guidance"] == ["claude_code_rules"] * 2
    assert "src/api/v1/users.py" in shown[0]


def test_a_rule_leading_out_of_the_workspace_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-TEXT\n")
    runner = _runner(tmp_path, [{"content": "done"}])
    (runner.workspace / ".claude" / "rules" / "leak.md").symlink_to(secret)
    events = run_events(runner)
    assert "SECRET-TEXT" not in runner.turns_model.calls[0]["messages"][0]["content"]
    assert any("leak.md" in e.message for e in events if e.type == "notice")


def test_a_sub_folders_claude_md_comes_when_the_agent_first_works_there(tmp_path: Path) -> None:
    files = ["src/core.py", "packages/api/src/app.py", "packages/api/README.md"]
    write = {"name": "write_file", "arguments": {"path": "packages/web/a.js", "content": "1"}}
    turns = [
        *map(_read, [*files, "node_modules/dep/index.js"]),
        {"tool_calls": [write]},
        {"content": "done"},
    ]
    runner = _runner(tmp_path, turns)
    ws = runner.workspace
    (ws / "CLAUDE.md").write_text("ROOT-MEMORY\n")
    for name, text in {
        "packages/api/CLAUDE.md": "API-PACKAGE-MEMORY\n",
        "packages/api/src/CLAUDE.md": "API-SRC-MEMORY\n",
        "packages/web/CLAUDE.md": "WEB-MEMORY\n",
        "packages/api/src/app.py": "x = 1\n",
        "packages/api/README.md": "readme\n",
        "node_modules/dep/CLAUDE.md": "DEPENDENCY-MEMORY\n",
        "node_modules/dep/index.js": "1\n",
    }.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    events = run_events(runner)
    system = runner.turns_model.calls[0]["messages"][0]["content"]
    assert "ROOT-MEMORY" in system and "API-PACKAGE-MEMORY" not in system
    core, app, readme, dependency, listing = _tool_messages(runner.turns_model.calls[-1])
    assert "MEMORY" not in dependency
    assert "MEMORY" not in core
    assert "API-PACKAGE-MEMORY" in app and "API-SRC-MEMORY" in app
    assert app.index("API-PACKAGE-MEMORY") < app.index("API-SRC-MEMORY")  # outer first
    assert "(packages/api/CLAUDE.md)" in app and "ROOT-MEMORY" not in app
    assert "MEMORY" not in readme  # once a run
    assert "WEB-MEMORY" in listing  # a file written there too
    assert events[-1].stop_reason == "completed"


def test_a_rule_with_a_broken_glob_is_one_notice_and_the_run_goes_on(tmp_path: Path) -> None:
    runner = _runner(tmp_path, [_read("src/core.py"), {"content": "done"}])
    rules = runner.workspace / ".claude" / "rules"
    (rules / "odd.md").write_text('---\npaths: ["src/\\\\"]\n---\nODD-RULE.\n')  # a lone escape
    (rules / "unclosed.md").write_text("---\npaths: [src\n---\nUNCLOSED-RULE.\n")
    events = run_events(runner)
    assert events[-1].stop_reason == "completed"
    said = [e.message for e in events if e.type == "notice"]
    assert any("odd.md" in n and "not valid" in n for n in said), said
    assert "ODD-RULE" not in str(runner.turns_model.calls)
    assert "UNCLOSED-RULE" not in runner.turns_model.calls[0]["messages"][0]["content"]


def test_your_own_rules_and_settings_env_need_the_opt_in(env: Any) -> None:
    """``~/.claude/rules/`` and ``~/.claude/settings.json``'s ``env`` are another tool's user
    settings: read only with ``user_claude_settings = true``, as ``~/.claude/CLAUDE.md``."""
    from cc_helpers import bash

    fake_home = env.root / "userhome"
    rules = fake_home / ".claude" / "rules"
    rules.mkdir(parents=True)
    (rules / "notes.md").write_text('---\npaths: ["*.txt"]\n---\nMY-TXT-RULE\n')
    (fake_home / ".claude" / "settings.json").write_text('{"env": {"QA_MINE": "mine"}}')
    (env.workspace / "a.txt").write_text("hello\n")
    turns = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        bash('echo "mine=${QA_MINE-unset}"'),
        {"content": "ok"},
    ]
    said = []
    for config in ("", "[claude_compat]\nuser_claude_settings = true\n"):
        (env.home / "config.toml").write_text(config)
        result = env.run(turns, env={"HOME": str(fake_home)})
        assert result.rc == 0, result.stderr
        guidance = [e["message"] for e in result.of_type("guidance")]
        echoed = result.of_type("tool_result")[1]["content"]
        said.append((any("MY-TXT-RULE" in g for g in guidance), "mine=mine" in echoed))
    assert said == [(False, False), (True, True)]


def test_the_opt_in_in_a_project_config_is_ignored_with_a_notice(env: Any) -> None:
    """``user_claude_settings = true`` in the workspace's own config (trusted or not) is
    ignored (only the user's layers opt in) and one notice says so (SPEC §8)."""
    fake_home = env.root / "userhome"
    fake_home.mkdir()
    (env.workspace / ".mycode").mkdir()
    (env.workspace / ".mycode" / "config.toml").write_text(
        "[claude_compat]\nuser_claude_settings = true\n"
    )
    for trusted in (False, True):
        if trusted:
            env.trust()
        result = env.run([{"content": "ok"}], env={"HOME": str(fake_home)})
        assert result.rc == 0, result.stderr
        said = [e["message"] for e in result.of_type("notice")]
        named = [m for m in said if "user_claude_settings" in m]
        assert len(named) == 1 and "ignored" in named[0] and "project config" in named[0], said

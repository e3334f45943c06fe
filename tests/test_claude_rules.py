"""Claude Code's permission rules (``.claude/settings*.json``) are project layers (SPEC §8)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mycode_core.api import mycode_tool_name
from mycode_core.claude_rules import mycode_rule
from mycode_core.testing import CliResult, run_cli, write_script


@pytest.mark.parametrize(
    ("entry", "rule"),
    [
        ("Bash(npm run test:*)", "run_command(npm run test:*)"),
        ("Read(./.env)", "read_file(.env)"),
        ("Edit(/src/**)", "edit_file(src/**)"),
        ("Read(//etc/hosts)", "read_file(/etc/hosts)"),
        ("Read(**/.env)", "read_file(**/.env)"),
        ("Bash", "run_command"),
        ("mcp__github__create_issue", "mcp__github__create_issue"),
        ("not a rule(", None),
        ("NotebookEdit(nb/**)", "edit_file(nb/**)"),
        ("LS", "glob"),
        ("Agent", "delegate_task"),
    ],
)
def test_claude_rules_in_mycode_words(entry: str, rule: str | None) -> None:
    assert mycode_rule(entry) == rule


@pytest.mark.parametrize(
    ("name", "tool"),
    [
        ("Bash", "run_command"),
        ("bash", "run_command"),
        ("MultiEdit", "edit_file"),
        ("LS", "glob"),
        ("Task", "delegate_task"),
        ("Agent", "delegate_task"),
        ("Skill", "load_skill"),
        ("read_file", "read_file"),
        ("mcp__github__create_issue", "mcp__github__create_issue"),
        ("WebFetch", "WebFetch"),
    ],
)
def test_one_table_of_claude_code_tool_names(name: str, tool: str) -> None:
    """Rules, skills' ``allowed-tools`` and profiles' ``tools`` read names through it."""
    assert mycode_tool_name(name) == tool


def _run(workspace: Path, home: Path, turns: list[dict[str, object]], *flags: str) -> CliResult:
    script = write_script(home.parent / "script.json", turns)
    return run_cli(
        ["-p", "do it", "--model", script, "--output-format", "stream-json", *flags],
        cwd=workspace,
        home=home,
    )


def test_deny_applies_untrusted_allow_only_once_trusted(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    (workspace / ".claude").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    (workspace / ".env").write_text("TOKEN=secret\n")
    (workspace / "notes.txt").write_text("n\n")
    rules = {"deny": ["Read(./.env)"], "allow": ["Bash(git add:*)"]}
    (workspace / ".claude" / "settings.json").write_text(json.dumps({"permissions": rules}))
    read_env = {"tool_calls": [{"name": "read_file", "arguments": {"path": ".env"}}]}
    stage = {"tool_calls": [{"name": "run_command", "arguments": {"command": "git add notes.txt"}}]}
    turns = [read_env, stage, {"content": "done"}]

    untrusted = _run(workspace, home, turns)
    decided = [(e["decision"], e.get("layer")) for e in untrusted.of_type("permission")]
    assert decided == [("deny", "claude-project"), ("deny", "default")]  # git add still asks
    said = [e["message"] for e in untrusted.of_type("notice")]
    assert any("[permissions] allow (.claude/settings.json)" in m for m in said), said
    assert "secret" not in json.dumps(untrusted.of_type("tool_result"))

    trusted = _run(workspace, home, turns, "--trust")
    decided = [(e["decision"], e.get("layer")) for e in trusted.of_type("permission")]
    assert decided == [("deny", "claude-project"), ("allow", "claude-project")]


def test_claude_code_approval_of_project_mcp_servers(tmp_path: Path) -> None:
    """``enabledMcpjsonServers`` of the local settings file approves the project's servers
    once the workspace is trusted; the committed ``settings.json`` never does."""
    import sys

    workspace, home = tmp_path / "ws", tmp_path / "home"
    (workspace / ".claude").mkdir(parents=True)
    time_server = str(Path(sys.executable).with_name("mcp-server-time"))
    servers = {"clock": {"command": time_server, "args": ["--local-timezone", "UTC"]}}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    approve = {"enabledMcpjsonServers": ["clock"]}

    def clock_tools(*flags: str) -> list[str]:
        run = _run(workspace, home, [{"content": "done"}], *flags)
        assert run.rc == 0, run.stderr
        return [t for t in run.of_type("system")[0]["tools"] if t.startswith("mcp__clock__")]

    (workspace / ".claude" / "settings.json").write_text(json.dumps(approve))
    assert clock_tools("--trust") == []  # the committed file does not approve
    (workspace / ".claude" / "settings.json").unlink()
    (workspace / ".claude" / "settings.local.json").write_text(json.dumps(approve))
    assert clock_tools() == []  # untrusted: ignored
    assert clock_tools("--trust") != []


def test_default_mode_is_the_permission_mode(tmp_path: Path) -> None:
    """``permissions.defaultMode``: ``plan`` holds in any workspace (it only tightens);
    ``acceptEdits`` only once the workspace is trusted."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    (workspace / ".claude").mkdir(parents=True)
    settings = workspace / ".claude" / "settings.json"
    turns: list[dict[str, object]] = [{"content": "done"}]

    def mode(*flags: str) -> object:
        return _run(workspace, home, turns, *flags).of_type("system")[0]["permission_mode"]

    settings.write_text(json.dumps({"permissions": {"defaultMode": "plan"}}))
    assert mode() == "plan"
    settings.write_text(json.dumps({"permissions": {"defaultMode": "acceptEdits"}}))
    assert mode() == "default"
    assert mode("--trust") == "accept-edits"

"""A project's ``.mcp.json`` names programs a trusted project starts outside the sandbox
(with ``[mcp] trust_project_servers = true``, or Claude Code's ``enableAllProjectMcpServers``):
a sandboxed command that wrote one had its server started by the next session. It is read-only
to commands (taken back when a command creates one, at any depth) and ``write_file`` asks, as
Claude Code counts ``.mcp.json`` among its dangerous files.

Real ``mycode`` runs with the scripted model (and the real bubblewrap sandbox)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mycode_builtin_tools import sandbox

from mycode_core.testing import run_cli, script_turn, write_script

SERVER = {"mcpServers": {"evil": {"command": "touch", "args": ["MARKER"]}}}


def _run(tmp_path: Path, workspace: Path, *turns: dict) -> list[dict]:
    model = write_script(tmp_path / "script.json", [*turns, {"content": "done"}])
    done = run_cli(["-p", "task", "--model", model, "--output-format", "stream-json", "--trust"],
                   cwd=workspace, home=tmp_path / "home", timeout=120)  # fmt: skip
    assert done.rc == 0 and "Traceback" not in done.stderr, done.stderr
    return done.events


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    workspace, marker = tmp_path / "ws", tmp_path / "pwned"
    workspace.mkdir()
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text("[mcp]\ntrust_project_servers = true\n")
    return workspace, marker


def test_write_file_asks_before_writing_an_mcp_json(tmp_path: Path) -> None:
    workspace, marker = _workspace(tmp_path)
    text = json.dumps(SERVER).replace("MARKER", str(marker))
    events = _run(
        tmp_path, workspace, script_turn("write_file", path="sub/.mcp.json", content=text)
    )
    denied = [e for e in events if e["type"] == "permission"][0]
    assert denied["decision"] == "deny" and "MCP servers" in denied["reason"], denied
    assert not (workspace / "sub" / ".mcp.json").exists()


@pytest.mark.skipif(sandbox.bwrap_path() is None, reason="no command sandbox here")
def test_a_sandboxed_command_cannot_leave_an_mcp_json_for_the_next_session(
    tmp_path: Path,
) -> None:
    workspace, marker = _workspace(tmp_path)
    text = json.dumps(SERVER).replace("MARKER", str(marker))
    write = f"mkdir -p sub && echo '{text}' > .mcp.json && cp .mcp.json sub/.mcp.json"
    events = _run(tmp_path, workspace, script_turn("run_command", command=write))
    result = [e for e in events if e["type"] == "tool_result"][0]
    if not result.get("metadata", {}).get("sandboxed"):
        pytest.skip("no command sandbox here")
    assert "created .mcp.json" in result["content"], result
    assert not (workspace / ".mcp.json").exists() and not (workspace / "sub/.mcp.json").exists()
    _run(tmp_path, workspace)
    assert not marker.exists()  # the next session started no server of the command's
    (workspace / ".mcp.json").write_text('{"mcpServers": {}}')
    events = _run(tmp_path, workspace, script_turn("run_command", command=write))
    result = [e for e in events if e["type"] == "tool_result"][0]
    assert "Read-only file system" in result["content"], result
    assert json.loads((workspace / ".mcp.json").read_text()) == {"mcpServers": {}}

"""What a server says about using its tools (``instructions`` of its ``initialize`` answer)
reaches the model in the system prompt, as Claude Code puts it there."""

from __future__ import annotations

import json
from pathlib import Path

import mycode_mcp_bridge
from mcp_helpers import feature

from mycode_core.testing import FakeOpenAIServer, child_runner, run_cli, run_events, turn


def test_server_instructions_are_in_the_system_prompt(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    servers = {"alpha": feature("--name", "alpha"), "beta": feature("--name", "beta")}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    with FakeOpenAIServer([turn("ok"), turn("again")]) as server:
        done = run_cli(
            server.cli_args("hi"), workspace, home, {"MYCODE_LOAD_PLUGINS": "mcp_bridge"}
        )
        assert done.rc == 0, done.stderr
        system = server.chat_requests[0].messages[0]
    assert system["role"] == "system"
    text = system["content"]
    assert "## alpha\nCall alpha's peek before wipe." in text
    assert "## beta\nCall beta's peek before wipe." in text
    assert text.index("## alpha") < text.index("## beta")


def test_a_subagent_is_given_the_servers_instructions_too(tmp_path: Path) -> None:
    """A subagent gets the session's MCP tools, so it is told how to use them: its system
    prompt has the servers' instructions (the bridge is the session's, not only the main
    agent's: ``register_tools`` is not called for a child)."""
    home = tmp_path / "home"
    home.mkdir()
    servers = {"alpha": feature("--name", "alpha")}
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    runner = child_runner(tmp_path, mycode_mcp_bridge)
    run_events(runner)
    main, child = (call["messages"] for call in runner.turns_model.calls[:2])
    assert child[1] == {"role": "user", "content": "CHILD"}
    said = "## alpha\nCall alpha's peek before wipe."
    assert said in main[0]["content"] and said in child[0]["content"]
    assert "mcp__alpha__peek" in runner.turns_model.calls[1]["tools"]

"""What a server says about using its tools (``instructions`` of its ``initialize`` answer)
reaches the model in the system prompt, as Claude Code puts it there."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_helpers import feature

from mycode_core.testing import FakeOpenAIServer, run_cli, turn


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

"""MCP prompts as slash commands, ``/mcp__<server>__<prompt> [args]``, as Claude Code offers
them: the words after the name fill the prompt's arguments in order; the text the server
returns is the prompt the model gets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mycode_mcp_bridge
from mcp_helpers import Run, feature

from mycode_core.records import SlashResult
from mycode_core.testing import FakeOpenAIServer, run_cli, turn


def _commands(run: Run) -> dict[str, Any]:
    found: list[Any] = []
    mycode_mcp_bridge.register_slash_commands(register=found.append, context=run.context)
    return {command.name: command for command in found}


def test_a_servers_prompts_are_slash_commands(make_run) -> None:
    run: Run = make_run({"notes": feature()})
    commands = _commands(run)
    review = commands["mcp__notes__review"]
    assert review.description == "Review a file for one kind of problem."
    assert review.argument_hint == "<file> [focus]"
    assert review.run("src/app.py", run.context) == "Review src/app.py for bugs."
    said = review.run('src/app.py "thread safety"', run.context)
    assert said == "Review src/app.py for thread safety."
    missing = review.run("", run.context)
    assert isinstance(missing, SlashResult) and "file" in (missing.output or "")


def test_a_prompt_command_from_the_command_line(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"notes": feature()}}))
    with FakeOpenAIServer([turn("reviewed")]) as server:
        done = run_cli(
            server.cli_args("/mcp__notes__review a.py style"),
            workspace,
            home,
            {"MYCODE_LOAD_PLUGINS": "mcp_bridge"},
        )
        assert done.rc == 0, done.stderr
        users = [m for m in server.chat_requests[0].messages if m["role"] == "user"]
    assert users[-1]["content"] == "Review a.py for style."


def test_a_prompt_command_that_fails_exits_as_a_failure(tmp_path: Path) -> None:
    """``mycode -p "/mcp__srv__prompt"`` with a required argument left out is a usage error
    (exit 2, the usage line on stderr), one the server refused exits 1: both exited 0, the
    line on stdout as if it were the answer."""
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"notes": feature()}}))
    env = {"MYCODE_LOAD_PLUGINS": "mcp_bridge"}
    with FakeOpenAIServer([turn("never")]) as server:
        usage = run_cli(server.cli_args("/mcp__notes__review"), workspace, home, env)
        unknown = run_cli(server.cli_args("/mcp__notes__gone"), workspace, home, env)
        assert server.chat_requests == []
    assert usage.rc == 2, (usage.stdout, usage.stderr)
    assert "usage: /mcp__notes__review <file> [focus]" in usage.stderr and usage.stdout == ""
    assert unknown.rc == 2  # not a command at all (the core's usage error)


def test_a_prompt_the_server_refuses_exits_1(make_run) -> None:
    run: Run = make_run({"notes": feature()})
    refused = _commands(run)["mcp__notes__broken"].run("x", run.context)
    assert isinstance(refused, SlashResult) and refused.exit_code == 1
    assert "could not give prompt broken" in (refused.output or "")
    missing = _commands(run)["mcp__notes__review"].run("", run.context)
    assert isinstance(missing, SlashResult) and missing.exit_code == 2

"""A plugin's data folder, ``${CLAUDE_PLUGIN_DATA}`` (Claude Code: "persistent state that
survives plugin updates"), and ``${CLAUDE_PLUGIN_ROOT}`` wherever Claude Code fills them in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cc_helpers import Env, bash, call

from mycode_core.testing import run_cli, write_script


def _kit(env: Env) -> Path:
    """A Claude Code plugin ``kit`` whose command keeps notes in its data folder through its
    own script."""
    folder = env.root / "kit"
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text('{"name": "kit"}')
    (folder / "scripts").mkdir()
    script = folder / "scripts" / "remember.sh"
    script.write_text('#!/bin/sh\necho "$2" >> "$1/notes.txt" && echo "noted $2"\n')
    script.chmod(0o755)
    (folder / "commands").mkdir()
    (folder / "commands" / "remember.md").write_text(
        "---\nallowed-tools: Bash(${CLAUDE_PLUGIN_ROOT}/scripts/remember.sh:*)\n---\n"
        "Result: !`${CLAUDE_PLUGIN_ROOT}/scripts/remember.sh ${CLAUDE_PLUGIN_DATA} $ARGUMENTS`\n"
        "The notes are in ${CLAUDE_PLUGIN_DATA}/notes.txt.\n"
    )
    return folder


def test_a_commands_plugin_data_is_filled_in_readable_and_writable_in_the_sandbox(
    env: Env,
) -> None:
    """``${CLAUDE_PLUGIN_DATA}`` stayed as written in a command (its script wrote to
    ``/notes.txt``), and the folder was neither readable by ``read_file`` nor writable by
    commands in the sandbox (which hides ``MYCODE_HOME``). It is ``$MYCODE_HOME/plugin-data/
    <plugin>``, outside the workspace, read and written by the run's tools."""
    folder = _kit(env)
    data = env.home / "plugin-data" / "kit"
    turns = [
        call("read_file", path=str(data / "notes.txt")),
        bash(f"echo pears >> {data / 'notes.txt'}"),
        {"content": "ok"},
    ]
    model = write_script(env.root / "script.json", turns)
    result = run_cli(
        ["-p", "/remember apples", "--model", model, "--output-format", "stream-json"]
        + ["--plugin-dir", str(folder)],
        cwd=env.workspace,
        home=env.home,
    )
    assert result.rc == 0, result.stderr
    (user,) = result.of_type("user")
    assert "noted apples" in user["content"], user
    assert f"The notes are in {data}/notes.txt." in user["content"]
    read, wrote = result.of_type("tool_result")
    assert not read["is_error"] and "apples" in read["content"], read
    if not wrote.get("metadata", {}).get("sandboxed"):
        pytest.skip("no command sandbox here")
    assert not wrote["is_error"], wrote
    assert (data / "notes.txt").read_text() == "apples\npears\n"
    assert not (env.workspace / "notes.txt").exists()


def test_skills_and_agents_get_the_plugins_root_and_data(env: Env) -> None:
    """A plugin's skill (project-artifact keeps its pages in ``${CLAUDE_PLUGIN_DATA}/
    artifacts/``) and agent (claude-security names ``${CLAUDE_PLUGIN_ROOT}/scripts``) reached
    the model with the placeholders as written; both are filled in as in Claude Code."""
    from mycode_core.testing import FakeOpenAIServer, turn

    folder = env.root / "kit"
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin" / "plugin.json").write_text('{"name": "kit"}')
    (folder / "skills" / "pages").mkdir(parents=True)
    (folder / "skills" / "pages" / "SKILL.md").write_text(
        "---\nname: pages\ndescription: Keeps pages.\n---\n"
        "Save each page under ${CLAUDE_PLUGIN_DATA}/artifacts/, with "
        "${CLAUDE_PLUGIN_ROOT}/templates/page.html as the model.\n"
    )
    (folder / "agents").mkdir()
    (folder / "agents" / "scanner.md").write_text(
        "---\nname: scanner\ndescription: Scans.\n---\n"
        "SCRIPTS: ${CLAUDE_PLUGIN_ROOT}/scripts; STATE: ${CLAUDE_PLUGIN_DATA}/state.json\n"
    )
    root, data = folder.resolve(), env.home / "plugin-data" / "kit"

    def calling(tool: str, **arguments: Any) -> Any:
        return turn(tool_calls=[{"name": tool, "arguments": arguments}])

    with FakeOpenAIServer() as server:
        server.enqueue(calling("load_skill", name="pages"))
        server.enqueue(calling("delegate_task", task="scan", agent="scanner"), turn("scanned"))
        server.enqueue(turn("done"))
        result = run_cli(
            [*server.cli_args("go", output_format="stream-json"), "--plugin-dir", str(folder)],
            cwd=env.workspace,
            home=env.home,
        )
        systems = [request.messages[0]["content"] for request in server.chat_requests]
    assert result.rc == 0, result.stderr
    loaded = result.of_type("tool_result")[0]
    assert f"under {data}/artifacts/, with {root}/templates/page.html" in loaded["content"]
    assert f"SCRIPTS: {root}/scripts; STATE: {data}/state.json" in systems[2]
    assert "${CLAUDE_PLUGIN" not in json.dumps(systems) + loaded["content"]

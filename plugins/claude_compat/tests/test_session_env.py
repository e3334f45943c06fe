"""``CLAUDE_ENV_FILE``: what a ``SessionStart`` hook writes there is the environment of every
later command of the session, through real ``mycode -p`` runs."""

from __future__ import annotations

import json

from ap_helpers import wrapper_server
from cc_helpers import Env, bash, hooks_file, notices

ENV_LINES = """export QA_FLAVOR=mint
QA_PLAIN="two words"
unset QA_DROPPED
export PATH="$CLAUDE_PROJECT_DIR/tools:$PATH"
"""


def test_what_session_start_writes_to_claude_env_file_reaches_later_commands(env: Env) -> None:
    """Claude Code gives SessionStart hooks ``CLAUDE_ENV_FILE`` and sources it before every
    Bash call (setting up ``PATH``, a virtualenv, a project's variables); mycode gave no such
    variable, so those hooks wrote nowhere (``> ""``: an error) and commands saw nothing."""
    lines = env.root / "env-lines.sh"
    lines.write_text(ENV_LINES)
    tool = env.workspace / "tools/qa-tool"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\necho qa-tool ran\n")
    tool.chmod(0o755)
    hooks_file(
        env.home / "hooks.json",
        {"SessionStart": [(None, [f'cat > /dev/null; cat {lines} >> "$CLAUDE_ENV_FILE"'])]},
    )
    command = 'echo "flavor=$QA_FLAVOR plain=$QA_PLAIN dropped=${QA_DROPPED-gone}"; qa-tool'
    result = env.run([bash(command), {"content": "ok"}], env={"QA_DROPPED": "here"})
    assert result.rc == 0, result.stderr
    (ran,) = result.of_type("tool_result")
    assert "flavor=mint plain=two words dropped=gone\nqa-tool ran" in ran["content"]
    assert not [n for n in notices(result) if "SessionStart" in n]
    assert not any(p.suffix == ".sh" for p in env.workspace.rglob("*"))
    assert not list((env.home / "claude_compat/env").iterdir())  # removed at the end


def test_a_broken_env_file_is_one_notice_and_commands_still_run(env: Env) -> None:
    hooks_file(
        env.home / "hooks.json",
        {"SessionStart": [(None, ['cat > /dev/null; echo "export X=(" >> "$CLAUDE_ENV_FILE"'])]},
    )
    result = env.run([bash("echo still here"), {"content": "ok"}])
    assert result.rc == 0, result.stderr
    (ran,) = result.of_type("tool_result")
    assert "still here" in ran["content"]
    (problem,) = [n for n in notices(result) if "CLAUDE_ENV_FILE" in n]
    assert "syntax error" in problem or "unexpected" in problem


def _settings(env: Env, name: str, data: dict[str, object]) -> None:
    path = env.workspace / ".claude" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data))


def test_the_env_of_a_trusted_projects_settings_reaches_commands_and_hooks(env: Env) -> None:
    """Claude Code's ``env`` table: variables every command of the session gets; the local
    file wins over the shared one; hooks see them too."""
    _settings(env, "settings.json", {"env": {"QA_GREETING": "shared", "QA_LEVEL": 3}})
    _settings(env, "settings.local.json", {"env": {"QA_GREETING": "local", "QA_DEBUG": True}})
    hooks_file(env.home / "hooks.json", {"PreToolUse": [(None, [env.hook("pre")])]})
    env.trust()
    command = 'echo "greeting=$QA_GREETING level=$QA_LEVEL debug=$QA_DEBUG"'
    result = env.run([bash(command), {"content": "ok"}], env={"QA_GREETING": "from-shell"})
    assert result.rc == 0, result.stderr
    (ran,) = result.of_type("tool_result")
    assert "greeting=local level=3 debug=true" in ran["content"]
    (hook,) = env.log("pre")
    assert hook["stdin"]["tool_input"]["command"] == command
    probe = env.root / "hook-env.txt"
    hooks_file(
        env.home / "hooks.json",
        {"PreToolUse": [(None, [f'cat > /dev/null; echo "$QA_GREETING" > {probe}'])]},
    )
    assert env.run([bash("true"), {"content": "ok"}]).rc == 0
    assert probe.read_text().strip() == "local"


def test_an_untrusted_projects_settings_env_is_ignored_and_named(env: Env) -> None:
    _settings(env, "settings.json", {"env": {"PATH": "/evil/bin", "QA_GREETING": "project"}})
    result = env.run([bash('echo "greeting=${QA_GREETING-unset}"'), {"content": "ok"}])
    assert result.rc == 0, result.stderr
    (ran,) = result.of_type("tool_result")
    assert "greeting=unset" in ran["content"]
    assert any("environment variables (env in .claude/settings.json)" in n for n in notices(result))


def test_a_bad_env_entry_is_one_notice(env: Env) -> None:
    _settings(env, "settings.json", {"env": {"QA_OK": "yes", "QA_BAD": {"nested": 1}}})
    env.trust()
    result = env.run([bash('echo "ok=$QA_OK"'), {"content": "ok"}])
    assert result.rc == 0, result.stderr
    assert "ok=yes" in result.of_type("tool_result")[0]["content"]
    assert any("QA_BAD" in n for n in notices(result))


def test_the_settings_env_is_there_when_mcp_servers_are_configured(env: Env) -> None:
    """``${VAR}`` in an MCP server's entry may name a variable of the settings' ``env``, as in
    Claude Code, where that table is the environment ``.mcp.json`` is expanded in."""
    record = env.root / "seen.json"
    _settings(env, "settings.json", {"env": {"QA_RECORD": str(record)}})
    entry = wrapper_server(env.root / "srv", record="${QA_RECORD}")
    entry["command"] = str(env.root / "srv" / "bin" / "server")
    servers = env.root / "servers.json"
    servers.write_text(json.dumps({"mcpServers": {"clock": entry}}))
    env.trust()
    result = env.run([{"content": "ok"}], "--mcp-config", str(servers))
    assert result.rc == 0, result.stderr
    assert any(t.startswith("mcp__clock__") for t in result.of_type("system")[0]["tools"])
    assert json.loads(record.read_text())["argv"] == [str(record)]


def test_commands_get_the_session_id_as_claude_code_gives_it(env: Env) -> None:
    """``CLAUDE_CODE_SESSION_ID`` in a command's environment is the ``session_id`` hooks get."""
    result = env.run([bash('echo "id=$CLAUDE_CODE_SESSION_ID"'), {"content": "ok"}])
    (ran,) = result.of_type("tool_result")
    assert f"id={result.of_type('result')[0]['session_id']}" in ran["content"]

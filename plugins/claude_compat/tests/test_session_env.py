"""``CLAUDE_ENV_FILE``: what a ``SessionStart`` hook writes there is the environment of every
later command of the session, through real ``mycode -p`` runs."""

from __future__ import annotations

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

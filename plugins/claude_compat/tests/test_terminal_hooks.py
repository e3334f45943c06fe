"""Hooks and the terminal, through a real pseudo-terminal: the idle prompt's ``Notification``
(``idle_prompt``), what a hook asks to be written there (``terminalSequence``) and the
``SessionStart`` context ``/resume`` gives back."""

from __future__ import annotations

import json
from pathlib import Path

from cc_helpers import Env, hooks_file

from mycode_core.testing import (
    FakeOpenAIServer,
    cli_env,
    mycode_command,
    run_cli,
    turn,
    write_script,
)
from mycode_core.testing.host import wait_until
from mycode_core.testing.terminal import Terminal

NOTIFY = "\x1b]9;mycode is idle\x07"


def test_an_idle_notification_hook_rings_the_terminal(tmp_path: Path) -> None:
    """Claude Code's notifier recipe: a ``Notification`` hook on ``idle_prompt`` answers with
    a ``terminalSequence`` (an OSC 9 desktop notification), which mycode writes to its
    terminal; a sequence that would move the cursor is left out, with one notice."""
    env = Env(tmp_path / "e")
    answer = {"terminalSequence": NOTIFY}
    hooks_file(
        env.home / "hooks.json",
        {
            "Notification": [
                ("idle_prompt", [env.hook("idle", stdout=answer)]),
                ("idle_prompt", [env.hook("rude", stdout={"terminalSequence": "\x1b[5;5HRUDE"})]),
            ]
        },
    )
    model = write_script(tmp_path / "turns.json", [{"content": "first answer"}])
    variables = cli_env(env.home, {"TERM": "xterm", "NO_COLOR": "1"})
    variables["MYCODE_IDLE_NOTIFICATION_S"] = "0.3"
    command = [*mycode_command(), "--model", model, "--cwd", str(env.workspace)]
    term = Terminal(command, variables, env.workspace)
    term.expect("/help for help")
    term.type("hello\r")
    term.expect("first answer")
    assert wait_until(lambda: len(env.log("idle")) == 1, 30)
    term.expect(NOTIFY)
    (seen,) = env.log("idle")
    assert seen["stdin"]["notification_type"] == "idle_prompt"
    assert seen["stdin"]["message"] == "mycode is waiting for your input"
    term.type("/exit\r")
    assert term.wait() == 0
    assert "RUDE" not in term.output
    transcript = next((env.home / "sessions").glob("*.jsonl")).read_text()
    notices = [
        e["message"] for e in map(json.loads, transcript.splitlines()) if e["type"] == "notice"
    ]
    assert any("terminalSequence ignored" in n for n in notices), notices


def test_slash_resume_pins_that_sessions_start_context_again(tmp_path: Path) -> None:
    """Interactive ``/resume ID`` gives the session back the context its own ``startup`` hooks
    gave (a hook matching ``startup|clear|compact`` does not run on ``resume``), not this
    session's."""
    env = Env(tmp_path / "e")
    start = env.hook("start", stdout="You have superpowers.")
    hooks_file(env.home / "hooks.json", {"SessionStart": [("startup|clear|compact", [start])]})
    with FakeOpenAIServer() as server:
        server.enqueue(turn("one"), turn("second answer"))
        first = run_cli(server.cli_args("first", output_format="json"), env.workspace, env.home)
        session = json.loads(first.stdout)["session_id"]
        env.hook("start", stdout="A newer startup context.")  # what a new session gets now
        variables = cli_env(env.home, {"TERM": "xterm", "NO_COLOR": "1"})
        command = [*mycode_command(), *server.cli_args(), "--cwd", str(env.workspace)]
        term = Terminal(command, variables, env.workspace)
        term.expect("/help for help")
        term.type(f"/resume {session}\r")
        term.expect(f"Resumed {session}")
        term.type("go on\r")
        term.expect("second answer")
        term.type("/exit\r")
        assert term.wait() == 0
        system = server.chat_requests[-1].messages[0]["content"]
    assert system.endswith("You have superpowers.") and "newer" not in system

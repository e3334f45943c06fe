"""Hooks and the terminal, through a real pseudo-terminal: the idle prompt's ``Notification``
(``idle_prompt``) and what a hook asks to be written there (``terminalSequence``)."""

from __future__ import annotations

import json
from pathlib import Path

from cc_helpers import Env, hooks_file

from mycode_core.testing import cli_env, mycode_command, write_script
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

"""The interactive session, driven through a real pseudo-terminal."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

import pytest

MYCODE = [sys.executable, "-m", "mycode_core"]


class Terminal:
    """A child process on a pty: type into it, wait for text to appear."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # child
            # a shell's background job inherits SIGINT ignored; a terminal user's does not
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.chdir(cwd)
            os.execvpe(argv[0], argv, env)
        self.output = ""

    def _read(self, timeout: float) -> None:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if ready:
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                return
            text = chunk.decode("utf-8", "replace")
            if "\x1b[6n" in text:  # answer prompt_toolkit's cursor-position request
                os.write(self.fd, b"\x1b[1;1R")
            self.output += text

    def expect(self, needle: str, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.output:
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} did not appear; got:\n{self.output[-2000:]}")
            self._read(0.1)

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def wait(self, timeout: float = 20.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._read(0.05)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError("mycode did not exit")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MYCODE_"))}
    environment.update(MYCODE_HOME=str(tmp_path / "home"), TERM="xterm", NO_COLOR="1")
    return environment


def _script(tmp_path: Path, turns: list[dict[str, object]]) -> str:
    path = tmp_path / "turns.json"
    path.write_text(json.dumps(turns))
    return f"scripted:{path}"


def test_turns_slash_commands_and_exit(tmp_path: Path, env: dict[str, str]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = _script(tmp_path, [{"content": "first answer"}, {"content": "second answer"}])
    term = Terminal([*MYCODE, "--model", model, "--cwd", str(workspace)], env, workspace)
    term.expect("/help for help")
    term.type("hello there\r")
    term.expect("first answer")
    term.type("/sessions\r")
    term.expect("hello there")  # the session of this workspace, by its first prompt
    term.type("/help\r")
    term.expect("/resume ID")
    term.type("again\r")
    term.expect("second answer")
    term.type("/exit\r")
    assert term.wait() == 0
    transcripts = list((tmp_path / "home" / "sessions").glob("*.jsonl"))
    assert len(transcripts) == 1
    users = [
        json.loads(line)["content"]
        for line in transcripts[0].read_text().splitlines()
        if json.loads(line)["type"] == "user"
    ]
    assert users == ["hello there", "again"]
    assert not any(workspace.iterdir())  # nothing of ours in the workspace


def test_ctrl_c_cancels_the_turn_not_the_session(tmp_path: Path, env: dict[str, str]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    model = _script(tmp_path, [{"delay": 8, "content": "too slow"}, {"content": "still here"}])
    term = Terminal([*MYCODE, "--model", model, "--cwd", str(workspace)], env, workspace)
    term.expect("/help for help")
    term.expect("›")
    term.type("slow task\r")
    term.expect("thinking")
    time.sleep(0.5)
    term.type("\x03")
    term.expect("interrupted")
    term.type("next task\r")
    term.expect("still here", timeout=10)
    term.expect("completed")
    assert "too slow" not in term.output
    time.sleep(0.5)  # back at the prompt
    term.type("\x04")  # Ctrl-D leaves
    assert term.wait() == 0


def test_permission_prompt_allow_for_the_session(tmp_path: Path, env: dict[str, str]) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    push = {"name": "run_command", "arguments": {"command": "git push origin main"}}
    model = _script(
        tmp_path, [{"tool_calls": [push]}, {"tool_calls": [push]}, {"content": "pushed twice"}]
    )
    term = Terminal([*MYCODE, "--model", model, "--cwd", str(workspace)], env, workspace)
    term.expect("›")
    term.type("push it\r")
    term.expect("allow for this session")
    term.type("2")  # a number picks at once (arrow keys and Enter work too)
    term.expect("pushed twice")
    assert term.output.count("→ allow for this session") == 1  # answered once, not asked again
    term.type("/exit\r")
    assert term.wait() == 0
    transcript = next((tmp_path / "home" / "sessions").glob("*.jsonl"))
    decisions = [
        (event["decision"], event.get("layer"))
        for event in map(json.loads, transcript.read_text().splitlines())
        if event["type"] == "permission"
    ]
    assert decisions[0] == ("allow", "session")
    assert decisions[1][0] == "allow"

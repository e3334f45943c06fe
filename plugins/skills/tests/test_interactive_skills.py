"""``/skills`` and ``/skill NAME`` in a real interactive session (pseudo-terminal), with a
skill added while the session runs."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import sys
import time
from pathlib import Path

from skill_helpers import write_skill


class Terminal:
    """A child process on a pty: type into it, wait for text to appear."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # child
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

    def expect(self, needle: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while needle not in self.output:
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} did not appear; got:\n{self.output[-2000:]}")
            self._read(0.1)

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def wait(self, timeout: float = 60.0) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._read(0.05)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
        os.kill(self.pid, signal.SIGKILL)
        raise AssertionError("mycode did not exit")


def test_skills_in_an_interactive_session(tmp_path: Path) -> None:
    workspace, home, user = tmp_path / "ws", tmp_path / "home", tmp_path / "user"
    for path in (workspace, user):
        path.mkdir()
    write_skill(home / "skills", "early-bird", description="Present from the start.")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MYCODE_"))}
    env.update(MYCODE_HOME=str(home), HOME=str(user), TERM="xterm", NO_COLOR="1")
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([{"content": "answer one"}, {"content": "answer two"}]))
    term = Terminal(
        [
            sys.executable,
            "-m",
            "mycode_core",
            "--model",
            f"scripted:{script}",
            "--cwd",
            str(workspace),
            "--completion-policy",
            "off",
        ],
        env,
        workspace,
    )
    term.expect("/help for help")
    term.type("/skills\r")
    term.expect("early-bird (user): Present from the start.")
    term.type("hello\r")
    term.expect("answer one")
    write_skill(home / "skills", "late-comer", description="Added mid-session.", body="LATE BODY\n")
    term.type("/skills\r")
    term.expect("late-comer (user): Added mid-session.")
    term.type("/skill late-comer use it now\r")
    term.expect("answer two")
    term.type("/exit\r")
    assert term.wait() == 0
    transcripts = list((home / "sessions").glob("*.jsonl"))
    users = [
        json.loads(line)["content"]
        for line in transcripts[0].read_text().splitlines()
        if json.loads(line)["type"] == "user"
    ]
    assert users[0] == "hello"
    assert users[1].startswith("use it now") and "LATE BODY" in users[1]

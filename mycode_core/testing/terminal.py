"""A child process on a real pseudo-terminal, for tests of the interactive session.

``Terminal(argv, env, cwd)`` forks the command onto a pty (of ``columns`` × ``rows``);
``type`` sends keys (``"\\x03"`` is Ctrl-C, ``"\\x1b"`` Esc, ``"\\r"`` Enter), ``expect``
waits for text to appear in what it printed, ``hang_up`` closes the terminal, ``wait`` returns
its exit code. prompt_toolkit's cursor-position requests are answered so full-screen prompts
run as in a real terminal.
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from collections.abc import Mapping
from pathlib import Path

_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[=>]")


PROMPT_READS = "\x1b[6n"
"""What prompt_toolkit sends when a prompt starts reading keys (its cursor-position request):
wait for it before a key that must reach the prompt (a Ctrl-C before it ends a session still
starting up)."""


class Terminal:
    """Type into a child process on a pty and wait for its output."""

    def __init__(
        self,
        argv: list[str],
        env: Mapping[str, str],
        cwd: Path,
        *,
        columns: int = 100,
        rows: int = 40,
    ) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # child
            # a shell's background job inherits SIGINT ignored, a test run under ``nohup``
            # SIGHUP; a terminal user's process has neither ignored
            for number in (signal.SIGINT, signal.SIGHUP):
                signal.signal(number, signal.SIG_DFL)
            os.chdir(cwd)
            os.execvpe(argv[0], argv, dict(env))
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.output = ""
        self.mark = 0

    def _read(self, timeout: float) -> None:
        if self.fd < 0:  # hung up: nothing more to read
            time.sleep(timeout)
            return
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

    @property
    def plain(self) -> str:
        """What was printed, without terminal escape sequences."""
        return _ESCAPES.sub("", self.output)

    def since_mark(self) -> str:
        """Plain output printed after the last :meth:`set_mark`."""
        return _ESCAPES.sub("", self.output[self.mark :])

    def set_mark(self) -> None:
        """Remember where the output is now (for :meth:`expect` with ``after_mark``)."""
        self.mark = len(self.output)

    def expect(self, needle: str, timeout: float = 30.0, after_mark: bool = False) -> float:
        """Wait until ``needle`` was printed (escape sequences ignored); return when it was."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.since_mark() if after_mark else self.plain
            if needle in text or needle in self.output[self.mark if after_mark else 0 :]:
                return time.monotonic()
            if time.monotonic() > deadline:
                raise AssertionError(f"{needle!r} did not appear; got:\n{self.plain[-3000:]}")
            self._read(0.05)

    def type(self, text: str) -> None:
        """Send keys."""
        os.write(self.fd, text.encode())

    def settle(self, seconds: float = 0.3) -> None:
        """Read output for a moment (let the child reach its next prompt)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._read(0.05)

    def hang_up(self) -> None:
        """Close the terminal, as closing its window does (the child gets SIGHUP)."""
        os.close(self.fd)
        self.fd = -1

    def wait(self, timeout: float = 30.0) -> int:
        """The child's exit code (it is killed, and the test fails, if it does not exit)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._read(0.05)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                return os.waitstatus_to_exitcode(status)
        self.kill()
        raise AssertionError(f"the child did not exit; got:\n{self.plain[-2000:]}")

    def kill(self) -> None:
        """Kill the child if it still runs."""
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass

"""``/compact [focus]`` in a real interactive session (pseudo-terminal)."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import sys
import time
from pathlib import Path


def _spawn(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[int, int]:
    pid, fd = pty.fork()
    if pid == 0:  # child
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.chdir(cwd)
        os.execvpe(argv[0], argv, env)
    return pid, fd


def _expect(fd: int, seen: list[str], needle: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while needle not in seen[0]:
        if time.monotonic() > deadline:
            raise AssertionError(f"{needle!r} did not appear; got:\n{seen[0][-2000:]}")
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                text = os.read(fd, 65536).decode("utf-8", "replace")
            except OSError:
                continue
            if "\x1b[6n" in text:
                os.write(fd, b"\x1b[1;1R")
            seen[0] += text


def test_slash_compact_summarises_before_the_next_request(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    # the summary request is answered by the scripted provider itself: it consumes no turn
    turns = [{"content": "first answer"}, {"content": "second answer"}]
    script = tmp_path / "turns.json"
    script.write_text(json.dumps(turns))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MYCODE_"))}
    env.update(MYCODE_HOME=str(tmp_path / "home"), TERM="xterm", NO_COLOR="1")
    env["MYCODE_LOAD_PLUGINS"] = "context_engine"
    argv = [sys.executable, "-m", "mycode_core", "--model", f"scripted:{script}"]
    pid, fd = _spawn([*argv, "--cwd", str(workspace)], env, workspace)
    seen = [""]
    try:
        _expect(fd, seen, "/help for help")
        os.write(fd, b"hello there\r")
        _expect(fd, seen, "first answer")
        os.write(fd, b"/compact keep the greeting\r")
        _expect(fd, seen, "compacted before the next request")
        os.write(fd, b"again\r")
        _expect(fd, seen, "second answer")
        os.write(fd, b"/context\r")
        _expect(fd, seen, "summary ~")
        assert "recent ~" in seen[0] and "masked ~" in seen[0]
        assert "context compacted (manual)" in seen[0]
        os.write(fd, b"/exit\r")
        deadline = time.monotonic() + 30
        while not os.waitpid(pid, os.WNOHANG)[0]:
            assert time.monotonic() < deadline, "mycode did not exit"
            time.sleep(0.05)
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    (transcript,) = (tmp_path / "home" / "sessions").glob("*.jsonl")
    events = [json.loads(line) for line in transcript.read_text().splitlines()]
    (compaction,) = [e for e in events if e["type"] == "compaction"]
    assert compaction["reason"] == "manual" and compaction["stage"] == "summary"
    assert "## Progress" in compaction["summary"]  # the scripted provider's own summary

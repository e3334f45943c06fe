"""A running command's output shown while it runs: its last line goes out as ``progress``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mycode_builtin_tools.live_output import LiveOutput, last_line

from mycode_core.testing import script_turn, start_cli, write_script


def test_the_last_line_is_plain_text_of_the_newest_output() -> None:
    assert last_line(b"one\ntwo\n\n") == "two"
    assert last_line(b"\x1b[32mPASSED\x1b[0m  tests/a.py\n") == "PASSED tests/a.py"
    assert last_line(b" 10%\r 55%\r") == "55%"  # a redrawn progress bar: its newest state
    assert last_line(b"\n \n") == ""
    assert len(last_line(b"x" * 500)) == 200


class _Sink:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def emit(self, event: Any) -> None:
        self.events.append(event)


def test_a_line_goes_out_at_once_then_at_most_once_a_second() -> None:
    sink = _Sink()
    live = LiveOutput(sink, every=3600.0)  # no second event can be due during this test
    live.feed(b"collecting\n")
    live.feed(b"running 1/9\n")
    live.tick()
    assert [(e.type, e.source, e.message) for e in sink.events] == [
        ("progress", "run_command", "collecting")
    ]
    live.sent_at -= 3600.0  # as if the hour had passed: the newest line, once
    live.tick()
    live.tick()
    assert [e.message for e in sink.events] == ["collecting", "running 1/9"]


def test_a_long_command_reports_its_output_before_it_ends(tmp_path: Path) -> None:
    """The command waits for a file the test creates only when the command's first line has
    arrived as a ``progress`` event: without live output the run times out."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    command = "echo compiling-1; while [ ! -e go ]; do sleep 0.05; done; echo built"
    turn = script_turn("run_command", command=command, timeout=120)
    model = write_script(tmp_path / "s.json", [turn])
    args = ["-p", "build", "--model", model, "--permission-mode", "bypass"]
    args += ["--output-format", "stream-json"]
    proc = start_cli(args, workspace, tmp_path / "h", {"MYCODE_NO_BWRAP": "1"})
    events: list[dict[str, Any]] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            event = json.loads(line)
            events.append(event)
            if event["type"] == "progress" and event.get("message") == "compiling-1":
                (workspace / "go").touch()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    kinds = [e["type"] for e in events]
    assert "progress" in kinds, kinds
    assert kinds.index("progress") < kinds.index("tool_result")
    result = next(e for e in events if e["type"] == "tool_result")
    assert "built" in json.dumps(result["content"]) and not result["is_error"]
    assert proc.returncode == 0

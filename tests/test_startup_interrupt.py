"""SPEC §2: Ctrl-C while plugins import at start-up exits 130 with one line, no traceback; Ctrl-C
while the run sets up (MCP servers, the system prompt) runs no turn and says so — in
``stream-json`` and ``json`` as a ``result``."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from mycode_core.testing import write_user_plugin
from mycode_core.testing.cli import interrupt_cli, start_cli, write_script
from mycode_core.testing.host import signal_when_ready, wait_until

SLOW_IMPORT = """
import os
import time

with open(os.environ["IMPORT_MARKER"], "w", encoding="utf-8") as fh:
    fh.write("importing")
while True:
    time.sleep(0.05)
"""


@pytest.mark.parametrize(
    "args", [["-p", "hi there"], ["-p", "hi there", "--output-format", "json"], ["plugins"]]
)
def test_ctrl_c_while_a_plugin_imports_exits_130(tmp_path: Path, args: list[str]) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    write_user_plugin(home, "sluggish", SLOW_IMPORT)
    workspace.mkdir()
    marker = tmp_path / "importing"
    model = write_script(tmp_path / "s.json", [{"content": "done"}])
    env = {"IMPORT_MARKER": str(marker), "MYCODE_MODEL": model}
    process = start_cli(args, workspace, home, env)
    run = interrupt_cli(process, ready=lambda: wait_until(marker.exists, 60), timeout=60)
    assert run.rc == 130, run.stderr
    assert "Traceback" not in run.stderr and "Aborted" not in run.stderr
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert lines == ["mycode: interrupted (Ctrl-C) while starting up"], run.stderr


SLOW_SETUP = """
import os
import time
from pathlib import Path

from mycode_core import hookimpl


@hookimpl
def build_context(context):
    Path(os.environ["SETUP_MARK"]).touch()  # the test sends Ctrl-C now
    deadline = time.monotonic() + 60
    while not context.cancelled.is_set() and time.monotonic() < deadline:
        time.sleep(0.02)
    return None
"""


@pytest.mark.parametrize("output_format", ["stream-json", "json", "text"])
def test_ctrl_c_while_setting_up_ends_with_a_result_or_a_line(
    tmp_path: Path, output_format: str
) -> None:
    home, workspace, mark = tmp_path / "home", tmp_path / "ws", tmp_path / "setting-up"
    workspace.mkdir()
    write_user_plugin(home, "slow_setup", SLOW_SETUP)
    model = write_script(tmp_path / "s.json", [{"content": "never asked"}])
    args = ["-p", "hi", "--model", model, "--output-format", output_format]
    env = {"SETUP_MARK": str(mark), "MYCODE_LOAD_PLUGINS": "slow_setup"}
    proc = start_cli(args, workspace, home, env)
    assert signal_when_ready(proc, mark, signal.SIGINT) == 130
    stdout, stderr = proc.communicate()
    assert "Traceback" not in stderr
    if output_format == "text":
        assert "interrupted while starting up" in stderr and not stdout.strip()
        return
    events = [json.loads(line) for line in stdout.splitlines()]
    if output_format == "stream-json":
        assert events[0]["type"] == "system", events
    result = events[-1]
    assert (result["type"], result["stop_reason"], result["is_error"]) == (
        "result",
        "interrupted",
        True,
    )
    assert "interrupted while starting up" in result["error"]

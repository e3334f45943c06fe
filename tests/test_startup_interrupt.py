"""SPEC §2: Ctrl-C while plugins import at start-up exits 130 with one line, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from mycode_core.testing import write_user_plugin
from mycode_core.testing.cli import interrupt_cli, start_cli, write_script
from mycode_core.testing.host import wait_until

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

"""Ctrl-C of ``mycode -p`` while MCP servers start or a call runs: exit 130 (with a ``result``
event once the turn began) and no server process left behind (SPEC §2)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from mcp_helpers import feature

from mycode_core.testing.cli import interrupt_cli, start_cli, write_script
from mycode_core.testing.host import process_alive, wait_until


def _start(
    tmp_path: Path, workspace: Path, home: Path, entry: dict[str, Any], turns: list[Any]
) -> subprocess.Popen[str]:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"feat": entry}}))
    model = write_script(tmp_path / "turns.json", [*turns, {"content": "done"}])
    args = ["-p", "go", "--model", model, "--mcp-config", str(config),
            "--output-format", "stream-json", "--completion-policy", "off"]  # fmt: skip
    return start_cli(args, workspace, home)


def _pids(marker: Path) -> list[int]:
    return [int(p) for p in marker.read_text().split()] if marker.exists() else []


def test_ctrl_c_while_a_server_starts(workspace: Path, home: Path, tmp_path: Path) -> None:
    """The start-up task waited for the server without looking at the cancelled run: mycode
    sat out its 20 s grace, then exited at once, leaving the server running."""
    marker = tmp_path / "pids"
    entry = feature("--marker", str(marker), "--slow-start", "600", startup_timeout=900)
    process = _start(tmp_path, workspace, home, entry, [])
    run = interrupt_cli(process, ready=lambda: wait_until(lambda: _pids(marker), 60), timeout=60)
    assert run.rc == 130, run.stderr  # stopped while setting up: no turn, no events
    assert "Traceback" not in run.stderr
    assert wait_until(lambda: not any(process_alive(p) for p in _pids(marker)), 15)


def test_ctrl_c_during_a_call_to_a_server_that_stopped_answering(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "pids"
    call = {"name": "mcp__feat__hang", "arguments": {}}
    process = _start(tmp_path, workspace, home, feature("--marker", str(marker)),
                     [{"tool_calls": [call]}])  # fmt: skip
    log = home / "logs" / "mcp" / "feat.log"
    hanging = lambda: log.exists() and "hanging now" in log.read_text()  # noqa: E731
    run = interrupt_cli(process, ready=lambda: wait_until(hanging, 60), timeout=60)
    assert run.rc == 130, run.stderr
    results = run.of_type("tool_result")
    assert len(results) == 1 and results[0]["is_error"] and "cancelled" in results[0]["content"]
    assert run.result is not None and run.result["stop_reason"] == "interrupted"
    assert wait_until(lambda: not any(process_alive(p) for p in _pids(marker)), 15)

"""Ctrl-C of ``mycode -p`` while MCP servers start or a call runs: exit 130 (with a ``result``
event once the turn began) and no server process left behind (SPEC §2)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcp_helpers import FEATURE_SERVER, PYTHON, feature

from mycode_core.testing.cli import interrupt_cli, start_cli, write_script
from mycode_core.testing.host import host_processes, process_alive, wait_until


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


def _hanging(
    workspace: Path, home: Path, tmp_path: Path, entry: dict[str, Any]
) -> tuple[subprocess.Popen[str], Callable[[], bool]]:
    """A run calling the server's ``hang`` tool; the check that the server is hanging now."""
    call = {"name": "mcp__feat__hang", "arguments": {}}
    process = _start(tmp_path, workspace, home, entry, [{"tool_calls": [call]}])
    log = home / "logs" / "mcp" / "feat.log"
    return process, lambda: log.exists() and "hanging now" in log.read_text()


def test_ctrl_c_during_a_call_to_a_server_that_stopped_answering(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    marker = tmp_path / "pids"
    process, hanging = _hanging(workspace, home, tmp_path, feature("--marker", str(marker)))
    run = interrupt_cli(process, ready=lambda: wait_until(hanging, 60), timeout=60)
    assert run.rc == 130, run.stderr
    results = run.of_type("tool_result")
    assert len(results) == 1 and results[0]["is_error"] and "cancelled" in results[0]["content"]
    assert run.result is not None and run.result["stop_reason"] == "interrupted"
    assert wait_until(lambda: not any(process_alive(p) for p in _pids(marker)), 15)


def test_a_sigkilled_mycode_leaves_no_server_nor_what_the_server_started(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """``kill -9`` runs no clean-up: the server saw its stdin end and left, but a helper it had
    started in the background lived on, until the lifeline killed the server's group."""
    marker = tmp_path / "pids"
    script = f"sleep 3091 & exec {PYTHON} {FEATURE_SERVER} --marker {marker}"
    entry = {"command": "sh", "args": ["-c", script]}
    process, hanging = _hanging(workspace, home, tmp_path, entry)
    try:
        assert wait_until(hanging, 60)
        process.kill()
        process.communicate(timeout=60)
        assert wait_until(lambda: not host_processes("sleep 3091"), 15)
        assert wait_until(lambda: not any(process_alive(p) for p in _pids(marker)), 15)
    finally:
        for pid in host_processes("sleep 3091"):
            os.kill(pid, signal.SIGKILL)

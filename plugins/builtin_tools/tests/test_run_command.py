"""run_command: exit codes, persistent cwd, timeouts that kill the tree, capped output."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from mycode_builtin_tools import sandbox
from mycode_builtin_tools.tools import run_command as rc

from mycode_core.testing import script_turn, start_cli, write_script
from mycode_core.testing.host import process_alive, signal_when_ready, wait_until

MODES = [
    "off",
    pytest.param(
        "auto",
        marks=pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap not usable here"),
    ),
]


def test_output_and_exit_code(run) -> None:
    result = run("run_command", command="echo hello; echo err >&2")
    assert not result.is_error
    assert result.text() == "hello\nerr\nexit code: 0"
    assert result.metadata["exit_code"] == 0
    assert result.metadata["resources"] == ["command:echo hello; echo err >&2"]


def test_nonzero_exit_is_error(run) -> None:
    result = run("run_command", command="mv missing.txt other.txt")
    assert result.is_error
    assert result.metadata["exit_code"] == 1
    assert "No such file or directory" in result.text() and "exit code: 1" in result.text()


def test_runs_in_workspace_and_cwd_persists(workspace: Path, run) -> None:
    (workspace / "sub").mkdir()
    assert run("run_command", command="pwd").text().startswith(str(workspace))
    moved = run("run_command", command="cd sub")
    assert "working directory is now sub" in moved.text()
    assert run("run_command", command="pwd").text().startswith(str(workspace / "sub"))


def test_cwd_never_leaves_workspace(workspace: Path, run) -> None:
    result = run("run_command", command="cd /")
    assert "outside the workspace" in result.text()
    assert run("run_command", command="pwd -P").text().startswith(str(workspace))


def test_cwd_reset_when_folder_removed(workspace: Path, run) -> None:
    (workspace / "gone").mkdir()
    run("run_command", command="cd gone")
    (workspace / "gone").rmdir()
    assert run("run_command", command="pwd").text().startswith(str(workspace) + "\n")


def test_stdin_is_closed(run) -> None:
    result = run("run_command", command='read line; echo "rc=$?"', timeout=10)
    assert "rc=1" in result.text()


@pytest.mark.parametrize("mode", MODES)
def test_timeout_kills_grandchildren(mode: str, new_context, wait_gone) -> None:
    ctx = new_context(sandbox=mode)
    started = time.monotonic()
    result = rc.run_command.handler(
        {"command": "bash -c 'sleep 301.5 & wait' & wait", "timeout": 1}, ctx
    )
    assert time.monotonic() - started < 60
    assert result.is_error and result.metadata["timed_out"] is True
    assert "timed out after 1 s" in result.text()
    assert wait_gone("sleep 301.5"), "the grandchild sleep survived the timeout"


def test_background_process_does_not_block_and_dies_with_the_call(
    workspace: Path, new_context
) -> None:
    from mycode_builtin_tools.tools import build_tools

    context = new_context(sandbox="off")
    tool = next(t for t in build_tools() if t.name == "run_command")
    started = time.monotonic()
    result = tool.handler({"command": "sleep 300 & echo $! > bg.pid; echo started"}, context)
    assert time.monotonic() - started < 60
    assert "started" in result.text() and not result.is_error
    pid = int((workspace / "bg.pid").read_text())
    assert wait_until(lambda: not process_alive(pid), 5.0), (
        "a background process outlived its command"
    )


def test_long_output_is_capped_and_saved(run) -> None:
    result = run("run_command", command="seq 1 200000")
    text = result.text()
    assert len(text) < rc.CAP_CHARS + 2000
    assert text.startswith("1\n2\n3\n") and "200000\nexit code: 0" in text
    assert "lines" in text and "elided" in text
    artifact = Path(result.metadata["artifact"])
    assert artifact.is_file() and str(artifact) in text
    assert artifact.read_text().count("\n") == 200000
    again = run("read_file", path=str(artifact), offset=199999, limit=2)
    assert not again.is_error and "200000" in again.text()


def test_short_output_leaves_no_artifact(run, context) -> None:
    result = run("run_command", command="echo small")
    assert "artifact" not in result.metadata
    assert not [p for p in context.artifacts_dir.iterdir() if p.name.startswith("command-")]


def test_default_and_max_timeout(context) -> None:
    assert rc._timeout(None, context) == 120
    assert rc._timeout(5000, context) == 600
    assert rc._timeout(3, context) == 3


def test_ansi_codes_stripped(run) -> None:
    assert run("run_command", command="printf '\\033[31mred\\033[0m\\n'").text().startswith("red\n")


@pytest.mark.skipif(sandbox.bwrap_path() is None, reason="bubblewrap not usable here")
def test_sandbox_blocks_writes_outside_and_network(workspace: Path, new_context) -> None:
    from mycode_builtin_tools.tools.run_command import run_command

    ctx = new_context(sandbox=True)
    outside = Path(f"/var/tmp/mycode-sandbox-probe-{os.getpid()}")
    try:
        result = run_command.handler({"command": f"echo x > inside.txt; echo y > {outside}"}, ctx)
        assert (workspace / "inside.txt").read_text() == "x\n"
        assert not outside.exists() and result.is_error
        assert "Read-only file system" in result.text()
    finally:
        outside.unlink(missing_ok=True)
    probe = "import socket; print(sorted(n for _, n in socket.if_nameindex()))"
    inside = run_command.handler({"command": f'python3 -c "{probe}"'}, ctx).text()
    assert inside.startswith("['lo']")


@pytest.mark.parametrize("mode", MODES)
def test_setsid_and_double_forks_do_not_outlive_the_call(mode: str, new_context, wait_gone) -> None:
    ctx = new_context(sandbox=mode)
    command = "setsid sleep 303.25 >/dev/null 2>&1 & (sleep 303.5 >/dev/null 2>&1 &); echo ok"
    result = rc.run_command.handler({"command": command}, ctx)
    assert "ok" in result.text()
    assert wait_gone("sleep 303.25") and wait_gone("sleep 303.5")


def test_a_setsid_daemon_with_a_cleared_environment_is_killed(new_context, wait_gone) -> None:
    """No marker, own session, re-parented to mycode (the subreaper): found and killed."""
    import subprocess
    import sys

    ctx = new_context(sandbox="off")
    known = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        command = "setsid sh -c 'env -i sleep 306.75 >/dev/null 2>&1 &'; echo ok"
        result = rc.run_command.handler({"command": command}, ctx)
        assert "ok" in result.text()
        assert wait_gone("sleep 306.75")
        assert known.poll() is None  # a child mycode had before the call is kept
    finally:
        known.kill()
        known.wait()


@pytest.mark.parametrize("mode", MODES)
def test_cancelled_run_stops_the_command_and_says_so(mode: str, new_context, wait_gone) -> None:
    import threading

    ctx = new_context(sandbox=mode)
    threading.Timer(1.0, ctx.cancelled.set).start()
    result = rc.run_command.handler({"command": "sleep 304.5; echo never", "timeout": 120}, ctx)
    assert result.is_error and result.metadata["interrupted"] is True
    assert "interrupted" in result.text() and "never" not in result.text()
    assert wait_gone("sleep 304.5")


def test_artifact_is_capped_with_head_tail_and_the_cut_said(
    run, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rc, "ARTIFACT_HEAD", 100_000)
    monkeypatch.setattr(rc, "ARTIFACT_TAIL", 50_000)
    result = run("run_command", command="seq 1 400000")
    artifact = Path(result.metadata["artifact"])
    data = artifact.read_bytes()
    assert len(data) < 100_000 + 50_000 + 500
    assert data.startswith(b"1\n2\n3\n") and data.endswith(b"399999\n400000\n")
    assert b"artifact cut:" in data and b"not kept" in data


def test_ansi_and_osc_sequences_do_not_backtrack(run) -> None:
    result = run(
        "run_command", command="printf '\\033]0;title' ; head -c 200000 /dev/zero | tr '\\0' x"
    )
    assert "\x1b" not in result.text()


@pytest.mark.parametrize("mode", MODES)
def test_nothing_a_command_started_outlives_a_sigkilled_mycode(
    mode: str, tmp_path: Path, workspace: Path, wait_gone
) -> None:
    """``kill -9`` of mycode (the OOM killer, a lost batch worker) runs no clean-up of its own:
    the command's tree goes anyway — its group, a ``setsid`` and a ``nohup`` child, a double
    fork — sandboxed (bubblewrap dies with mycode) or not (the lifeline kills it)."""
    command = (
        "sleep 3071 & setsid sleep 3072 & nohup sleep 3073 >/dev/null 2>&1 & (sleep 3074 &); "
        "touch ready; sleep 3075"
    )
    model = write_script(tmp_path / "s.json", [script_turn("run_command", command=command)])
    flags = ["--permission-mode", "bypass"] if mode == "off" else ["--trust"]
    env = {"MYCODE_NO_BWRAP": "1"} if mode == "off" else {}
    proc = start_cli(["-p", "go", "--model", model, *flags], workspace, tmp_path / "h", env)
    assert signal_when_ready(proc, workspace / "ready") == -9
    assert wait_gone("sleep 307"), "a process of the command outlived the SIGKILLed mycode"

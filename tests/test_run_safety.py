"""Issue 13 red-team cases at the command line: no sandbox, signals, MYCODE_HOME, arguments."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import run_cli, start_cli, write_script


def _bin_without_bwrap(tmp_path: Path) -> str:
    """A PATH with the usual tools but no bubblewrap: "no sandbox available"."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("bash", "sh", "python3", "ls", "cat", "echo", "env", "sleep", "true", "mv"):
        found = shutil.which(name)
        if found:
            (folder / name).symlink_to(found)
    return str(folder)


def _gone(needle: str, seconds: float = 20.0) -> bool:
    """True once no process's command line contains ``needle``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        alive = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue
            alive = alive or (needle.encode() in cmd and state != "Z")
        if not alive:
            return True
        time.sleep(0.1)
    return False


def _call(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]}


def test_without_a_sandbox_unknown_commands_are_denied_with_how_to_allow(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "a.txt").write_text("a")
    env = {"PATH": _bin_without_bwrap(tmp_path)}
    turns = [
        _call("ls"),
        _call('python3 -c \'open("/tmp/x", "w")\''),
        _call("cat ~/.ssh/id_rsa"),
        _call("python3 -m pytest --version"),
        _call("mv a.txt b.txt"),
        {"content": "done"},
    ]
    model = write_script(tmp_path / "s.json", turns)
    run = run_cli(["-p", "t", "--model", model, "--output-format", "stream-json"], ws, home, env)
    decisions = [(e["decision"], e["rule"]) for e in run.of_type("permission")]
    assert {e["tool"] for e in run.of_type("permission")} == {"run_command"}  # SPEC §4 names it
    assert decisions[0] == ("allow", "builtin:ordinary-command")
    assert decisions[1] == ("deny", "builtin:unsandboxed")
    assert decisions[2][0] == "deny"
    # a validation command runs the workspace's code: unasked only in a trusted workspace
    assert decisions[3] == ("deny", "builtin:unsandboxed")
    assert "trust" in run.of_type("tool_result")[3]["content"]
    assert decisions[4] == ("deny", "builtin:unsandboxed")
    denied = run.of_type("tool_result")[1]["content"]
    assert "[permissions] allow" in denied and "doctor" in denied
    assert any("not sandboxed" in e["message"] for e in run.of_type("notice"))
    assert (ws / "a.txt").exists()
    doctor = run_cli(["doctor", "--cwd", str(ws)], ws, home, env)
    data = json.loads(doctor.stdout)
    assert data["sandbox"]["available"] is False and data["sandbox"]["active"] is False
    assert data["problems"]


def test_sandbox_on_without_a_sandbox_is_exit_2(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    (home / "config.toml").write_text('sandbox = "on"\n')
    model = write_script(tmp_path / "s.json", [{"content": "x"}])
    env = {"PATH": _bin_without_bwrap(tmp_path)}
    run = run_cli(["-p", "t", "--model", model], ws, home, env)
    assert run.rc == 2 and 'sandbox = "on"' in run.stderr and "Traceback" not in run.stderr
    (home / "config.toml").write_text('sandbox = "sometimes"\n')
    run = run_cli(["-p", "t", "--model", model], ws, home)
    assert run.rc == 2 and "sandbox" in run.stderr


def _wait_for(proc: subprocess.Popen[str], kind: str, seen: list[dict[str, Any]]) -> None:
    assert proc.stdout is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            return
        if line.startswith("{"):
            seen.append(json.loads(line))
            if seen[-1]["type"] == kind:
                return


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_signal_ends_the_tool_tree_records_it_and_exits(
    tmp_path: Path, sig: int, code: int
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    marker = f"sleep 306.{code}"
    model = write_script(tmp_path / "s.json", [_call(f"{marker}; echo never"), {"content": "x"}])
    proc = start_cli(["-p", "t", "--model", model, "--output-format", "stream-json"], ws, home)
    seen: list[dict[str, Any]] = []
    _wait_for(proc, "tool_call", seen)
    time.sleep(1.0)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=120)
    seen += [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert proc.returncode == code, err
    results = [e for e in seen if e["type"] == "tool_result"]
    assert results and "interrupted" in results[0]["content"] and results[0]["is_error"]
    assert seen[-1]["type"] == "result" and seen[-1]["stop_reason"] == "interrupted"
    assert _gone(marker)
    transcript = next((home / "sessions").glob("*.jsonl")).read_text()
    assert '"type":"tool_result"' in transcript.replace(": ", ":")


def test_unusable_mycode_home_is_one_line(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"content": "x"}])
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    run = run_cli(["-p", "t", "--model", model], tmp_path, tmp_path / "h",
                  {"MYCODE_HOME": str(not_a_folder)})  # fmt: skip
    assert run.rc == 2 and "Traceback" not in run.stderr
    assert str(not_a_folder) in run.stderr and "errno" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_full_mycode_home_is_one_line(tmp_path: Path) -> None:
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare to mount a tiny tmpfs")
    model = write_script(tmp_path / "s.json", [{"content": "x"}])
    full = tmp_path / "full"
    full.mkdir()
    inner = (
        f"mount -t tmpfs -o size=64k none {full} || exit 77; "
        f"dd if=/dev/zero of={full}/fill bs=4k 2>/dev/null; "
        f"MYCODE_HOME={full} {sys.executable} -m mycode_core -p t --model {model}"
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", inner], capture_output=True, text=True, timeout=120
    )
    if done.returncode == 77:
        pytest.skip("cannot mount a tmpfs here")
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr
    assert "errno 28" in done.stderr and str(full) in done.stderr


def test_odd_arguments_are_error_results_not_the_end_of_the_run(tmp_path: Path) -> None:
    deep = '{"command": ' + "[" * 50_000 + "]" * 50_000 + "}"
    surrogate = '{"path": "a\\ud800.txt", "content": "x"}'
    turns = [
        {"tool_calls": [{"name": "run_command", "arguments": deep}]},
        {"tool_calls": [{"name": "write_file", "arguments": surrogate}]},
        {"tool_calls": [{"name": "todo_write", "arguments": {"todos": [[[[[[[[[[[]]]]]]]]]]]}}]},
        {"content": "still here \ud800"},
    ]  # fmt: skip
    model = write_script(tmp_path / "s.json", turns)
    run = run_cli(["-p", "t", "--model", model, "--output-format", "stream-json"], tmp_path,
                  tmp_path / "home")  # fmt: skip
    results = run.of_type("tool_result")
    assert len(results) == 3 and all(r["is_error"] for r in results)
    assert "nested" in results[0]["content"] or "recursion" in results[0]["content"]
    assert "surrogate" in results[1]["content"]
    assert run.result is not None and run.result["final_text"] == "still here \ufffd"
    assert run.rc == 0


def test_escape_sequences_are_neutralised_in_the_text_view(tmp_path: Path) -> None:
    evil = "\x1b]0;owned\x07\x1b[2J\x1b[31mred\x9b6n"
    turns = [_call("printf '\\033]52;c;cGF5bG9hZA==\\a\\033[2Jdone'"), {"content": f"ok {evil}"}]
    model = write_script(tmp_path / "s.json", turns)
    run = run_cli(["-p", "t", "--model", model], tmp_path, tmp_path / "home")
    assert run.rc == 0, run.stderr
    assert "\x1b" not in run.stdout + run.stderr and "\x9b" not in run.stdout + run.stderr
    assert "ok ^[]0;owned^G" in run.stdout

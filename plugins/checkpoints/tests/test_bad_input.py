"""Issue 20's bad input for checkpoints: each is one clear line, nothing lost, no traceback."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import run_cli, script_turn, write_script


def _run(ws: Path, home: Path, turns: list[dict[str, Any]]) -> Any:
    model = write_script(home.parent / "script.json", [*turns, {"content": "done"}])
    args = ["-p", "go", "--model", model, "--output-format", "stream-json", "--cwd", str(ws),
            "--permission-mode", "bypass", "--completion-policy", "off"]  # fmt: skip
    return run_cli(args, ws, home, timeout=180)


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    return ws.resolve(), home


def _notices(run: Any) -> list[str]:
    return [e["message"] for e in run.events if e["type"] == "notice"]


def test_a_file_too_large_to_keep_is_said_during_the_turn(tmp_path: Path) -> None:
    ws, home = _dirs(tmp_path)
    (home / "config.toml").write_text("[checkpoints]\nmax_mb = 0.001\n")  # ~1 KB
    (ws / "big.txt").write_text("x" * 5000 + "\n")
    turns = [script_turn("read_file", path="big.txt"),
             script_turn("write_file", path="big.txt", content="small\n")]  # fmt: skip
    done = _run(ws, home, turns)
    assert done.rc == 0, done.stderr
    assert _notices(done) == [
        "checkpoints: undo cannot restore big.txt: too large to keep "
        "(5 KB, over [checkpoints] max_mb = 0.001)"
    ]
    refused = run_cli(["undo", "--cwd", str(ws)], ws, home, timeout=60)
    assert refused.rc == 1 and len(refused.stderr.strip().splitlines()) == 1
    assert "big.txt" in refused.stderr and (ws / "big.txt").read_text() == "small\n"


def test_a_file_a_command_changed_unseen_is_said_during_the_turn(tmp_path: Path) -> None:
    ws, home = _dirs(tmp_path)
    (ws / "notes.txt").write_text("mine\n")
    done = _run(ws, home, [script_turn("run_command", command="echo theirs > notes.txt")])
    assert done.rc == 0, done.stderr
    [line] = _notices(done)
    assert line.startswith("checkpoints: undo cannot restore notes.txt: never seen by mycode")


def test_undo_of_another_workspaces_session_says_where(tmp_path: Path) -> None:
    ws, home = _dirs(tmp_path)
    done = _run(ws, home, [script_turn("write_file", path="new.txt", content="x\n")])
    session = next(e for e in done.events if e["type"] == "result")["session_id"]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    undo = run_cli(["undo", "--session", session], elsewhere, home, timeout=60)
    assert undo.rc == 0 and undo.stdout.strip() == "removed new.txt"
    assert undo.stderr.strip() == f"mycode: undone in the session's workspace {ws}"
    assert not (ws / "new.txt").exists()
    listed = json.loads(run_cli(["checkpoints", "--json", "--session", session], elsewhere,
                                home, timeout=60).stdout)  # fmt: skip
    assert listed[0]["undone"] is True


def _chattr(flag: str, path: Path) -> bool:
    import subprocess

    try:
        return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0
    except OSError:
        return False


def test_an_undo_cut_short_by_a_file_it_cannot_write_can_be_finished(tmp_path: Path) -> None:
    ws, home = _dirs(tmp_path)
    (ws / "sub").mkdir()
    (ws / "a.txt").write_text("one\n")
    (ws / "sub" / "b.txt").write_text("two\n")
    turns = [script_turn("read_file", path="a.txt"), script_turn("read_file", path="sub/b.txt"),
             script_turn("write_file", path="a.txt", content="ONE\n"),
             script_turn("write_file", path="sub/b.txt", content="TWO\n")]  # fmt: skip
    assert _run(ws, home, turns).rc == 0
    if not _chattr("+i", ws / "sub"):  # an immutable folder: even root cannot write in it
        pytest.skip("chattr +i is not available here")
    try:
        cut = run_cli(["undo", "--cwd", str(ws)], ws, home, timeout=60)
    finally:
        _chattr("-i", ws / "sub")
    assert cut.rc == 1 and len(cut.stderr.strip().splitlines()) == 1, cut.stderr
    assert (
        "cannot restore sub/b.txt" in cut.stderr and "restored so far: restored a.txt" in cut.stderr
    )
    assert (ws / "a.txt").read_text() == "one\n" and (ws / "sub" / "b.txt").read_text() == "TWO\n"
    finished = run_cli(["undo", "--cwd", str(ws)], ws, home, timeout=60)  # no --force needed
    assert finished.rc == 0, finished.stderr
    assert (ws / "sub" / "b.txt").read_text() == "two\n"


def test_an_unknown_session_is_named(tmp_path: Path) -> None:
    ws, home = _dirs(tmp_path)
    for command in (["undo"], ["checkpoints", "--json"]):
        run = run_cli([*command, "--session", "nope"], ws, home, timeout=60)
        assert (
            run.rc == 2
            and run.stderr.strip() == "mycode: no session 'nope' (see `mycode sessions`)"
        )


def test_a_fifo_named_by_a_call_is_neither_opened_nor_kept(tmp_path: Path) -> None:
    """Checkpoints cache what a call reads and copy aside what it writes before it runs: a FIFO
    there is skipped, never opened (the open would wait for a writer: the run hung)."""
    ws, home = _dirs(tmp_path)
    os.mkfifo(ws / "pipe")
    turns = [script_turn("read_file", path="pipe"),
             script_turn("write_file", path="pipe", content="x"),
             script_turn("edit_file", path="pipe", old_string="a", new_string="b")]  # fmt: skip
    try:
        done = _run(ws, home, turns)  # bounded: a hang is killed and fails here
    except subprocess.TimeoutExpired:
        pytest.fail("the run hung on a FIFO")
    assert done.rc == 0, done.stderr
    results = [e for e in done.events if e["type"] == "tool_result"]
    assert [r["is_error"] for r in results] == [True, True, True]
    assert all("not a regular file" in r["content"] for r in results), results
    assert done.events[-1]["type"] == "result" and stat.S_ISFIFO(os.lstat(ws / "pipe").st_mode)

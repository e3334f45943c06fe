"""Undo gives back what a user sees of a file beyond its bytes, and ends what a killed run left."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from mycode_core.testing import run_cli, script_turn, write_script


def _run(ws: Path, home: Path, turns: list[dict[str, Any]], *extra: str) -> Any:
    script = home.parent / f"script-{len(list(home.parent.glob('script-*')))}.json"
    model = write_script(script, [*turns, {"content": "done"}])
    args = ["-p", "change things", "--model", model, "--output-format", "json",
            "--cwd", str(ws), "--permission-mode", "bypass", "--completion-policy", "off",
            *extra]  # fmt: skip
    done = run_cli(args, ws, home, {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
                   timeout=180)  # fmt: skip
    assert done.rc == 0, done.stderr
    return done


def _cli(ws: Path, home: Path, *args: str) -> Any:
    return run_cli([*args, "--cwd", str(ws)], ws, home, timeout=120)


def _git(ws: Path, *args: str) -> str:
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t", *args]
    return subprocess.run(git, cwd=ws, check=True, capture_output=True, text=True).stdout


def test_undo_gives_scripts_a_command_deleted_their_executable_bit_back(
    tmp_path: Path, home: Path
) -> None:
    """A script deleted by ``rm`` (tracked in git, or read by the session) comes back
    executable, and a mode a command changed goes back too: not a 0o644 copy git reports as
    modified."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("tracked.sh", "seen.sh"):
        (ws / name).write_text("#!/bin/sh\necho hi\n")
        (ws / name).chmod(0o755)
    (ws / "plain.txt").write_text("text\n")
    (ws / "plain.txt").chmod(0o644)
    _git(ws, "init", "-q")
    _git(ws, "add", "tracked.sh")
    _git(ws, "commit", "-qm", "x")
    _run(ws, home, [script_turn("read_file", path="seen.sh"),
                    script_turn("read_file", path="plain.txt"),
                    script_turn("run_command", command="rm tracked.sh seen.sh; "
                                "chmod 755 plain.txt; echo more >> plain.txt")])  # fmt: skip
    undo = _cli(ws, home, "undo")
    assert undo.rc == 0, undo.stderr
    assert (ws / "tracked.sh").stat().st_mode & 0o777 == 0o755
    assert (ws / "seen.sh").stat().st_mode & 0o777 == 0o755
    assert (ws / "plain.txt").stat().st_mode & 0o777 == 0o644
    assert (ws / "plain.txt").read_text() == "text\n"
    assert _git(ws, "status", "--porcelain", "tracked.sh") == ""


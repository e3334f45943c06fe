"""Undo gives back what a user sees of a file beyond its bytes, and ends what a killed run left."""

from __future__ import annotations

import os
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


def _killed_mid_command(ws: Path, home: Path, tmp_path: Path) -> None:
    """Run a turn whose command is killed (SIGKILL) once it has started."""
    import os
    import signal
    import time

    from mycode_core.testing import cli_env, mycode_command

    model = write_script(tmp_path / "kill.json", [
        script_turn("run_command", command="touch started; sleep 600")])  # fmt: skip
    env = cli_env(home, {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"})
    run = subprocess.Popen([*mycode_command(False), "-p", "go", "--model", model, "--cwd",
                            str(ws), "--permission-mode", "bypass"], cwd=ws, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)  # fmt: skip
    try:
        for _ in range(1200):
            if (ws / "started").exists():
                break
            time.sleep(0.1)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()


def test_a_call_killed_in_an_earlier_turn_neither_blocks_nor_haunts_undo(
    tmp_path: Path, home: Path
) -> None:
    """A killed call concerns the undo of its own turn only: the next run's turn undoes
    without ``--force``; undoing the killed turn names it (exit 1), and ``--force`` ends the
    matter (nothing else to restore: exit 2, then plain ``undo`` says nothing to undo)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    _killed_mid_command(ws, home, tmp_path)
    _run(ws, home, [script_turn("write_file", path="new.txt", content="n\n")], "--continue")
    undo = _cli(ws, home, "undo")
    assert undo.rc == 0, undo.stderr
    assert not (ws / "new.txt").exists()
    refused = _cli(ws, home, "undo")
    assert refused.rc == 1 and "touch started; sleep 600" in refused.stderr
    assert _cli(ws, home, "undo", "--force").rc == 2
    again = _cli(ws, home, "undo")
    assert again.rc == 2 and "nothing to undo" in again.stderr


def test_a_turn_that_makes_a_file_name_not_utf8_is_still_recorded_and_undone(
    tmp_path: Path, home: Path
) -> None:
    """A command that writes a file named with a byte that is not UTF-8 used to crash the
    plugin (the turn, and every later one, went without checkpoints); ``--json`` stays UTF-8."""
    import json

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("before\n")
    done = _run(ws, home, [script_turn("read_file", path="f.txt"),
                           script_turn("run_command", command="echo after > f.txt; "
                                       "printf z > \"$(printf 'bad\\377name')\"")])  # fmt: skip
    assert "checkpoints" not in done.stderr
    listed = run_cli(["checkpoints", "--json", "--cwd", str(ws)], ws, home, timeout=120)
    files = json.loads(listed.stdout)[0]["files"]  # the test's reader would fail on raw bytes
    assert {f["path"] for f in files} == {"f.txt", "bad\udcffname"}
    assert _cli(ws, home, "undo").rc == 0
    assert os.listdir(ws) == ["f.txt"] and (ws / "f.txt").read_text() == "before\n"


def test_undo_of_files_a_turn_replaced_by_a_folder_or_a_symlink(tmp_path: Path, home: Path) -> None:
    """``rm f; mkdir f; …`` and ``ln -sf … g``: undo empties and removes the folder the turn
    made before writing ``f`` back, and replaces the link by ``g`` (the link's target is left
    alone) — instead of stopping half-way with files already removed."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f").write_text("file f\n")
    (ws / "g").write_text("file g\n")
    (tmp_path / "target").write_text("outside\n")
    _run(ws, home, [script_turn("read_file", path="f"), script_turn("read_file", path="g"),
                    script_turn("run_command", command="echo a > a.txt; rm f; mkdir f; "
                                f"echo in > f/x; ln -sf {tmp_path / 'target'} g")])  # fmt: skip
    undo = _cli(ws, home, "undo")
    assert undo.rc == 0, undo.stderr
    assert sorted(os.listdir(ws)) == ["f", "g"]
    assert (ws / "f").read_text() == "file f\n"
    assert not (ws / "g").is_symlink() and (ws / "g").read_text() == "file g\n"
    assert (tmp_path / "target").read_text() == "outside\n"


def test_undo_back_past_a_turn_max_mb_dropped_says_it_cannot(tmp_path: Path, home: Path) -> None:
    """``undo --turn 1`` when turn 1's checkpoint went to keep within ``max_mb``: refused,
    naming the turn (exit 1, nothing changed), not "restored" with only the later turns
    undone; ``--force`` restores what is kept."""
    (home / "config.toml").write_text("[checkpoints]\nmax_mb = 1\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    for n in range(3):
        (ws / f"b{n}.bin").write_bytes(bytes([n + 1]) * 450_000)
    for n in range(3):
        _run(ws, home, [script_turn("read_file", path=f"b{n}.bin"),
                        script_turn("run_command", command=f"echo small > b{n}.bin")],
             *(["--continue"] if n else []))  # fmt: skip
    refused = _cli(ws, home, "undo", "--turn", "1")
    assert refused.rc == 1 and "turn 1 (its checkpoint was dropped" in refused.stderr
    assert all((ws / f"b{n}.bin").read_text() == "small\n" for n in range(3))
    forced = _cli(ws, home, "undo", "--turn", "1", "--force")
    assert forced.rc == 0, forced.stderr
    assert (ws / "b0.bin").read_text() == "small\n"
    assert (ws / "b2.bin").read_bytes() == bytes([3]) * 450_000


def test_undo_removes_the_empty_folders_a_command_made(tmp_path: Path, home: Path) -> None:
    """``mkdir -p`` by a command — with files, without any, or the whole turn's work — is
    undone: the folders go when empty (named on stdout), older ones and ones with a file
    added since stay."""
    ws = tmp_path / "ws"
    (ws / "old").mkdir(parents=True)
    _run(ws, home, [script_turn("run_command", command="mkdir -p a/b old/c keep; echo x > f")])
    (ws / "keep" / "mine.txt").write_text("added by hand\n")
    undo = _cli(ws, home, "undo")
    assert undo.rc == 0, undo.stderr
    assert sorted(os.listdir(ws)) == ["keep", "old"] and os.listdir(ws / "old") == []
    assert "removed a/b/" in undo.stdout.splitlines()
    _run(ws, home, [script_turn("run_command", command="mkdir -p only/folders")], "--continue")
    listed = _cli(ws, home, "checkpoints")
    assert "only/folders/" in listed.stdout
    undo = _cli(ws, home, "undo")
    assert undo.rc == 0, undo.stderr
    assert sorted(os.listdir(ws)) == ["keep", "old"]

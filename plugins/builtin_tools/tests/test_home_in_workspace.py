"""SPEC §2: ``MYCODE_HOME`` is never part of the workspace, even when it lies inside it (a test
layout ``tmp/`` + ``tmp/home``, or ``mycode`` run from ``~`` with the default ``~/.mycode``):
the tools cannot open it, listings and searches leave it out, and mycode's own transcript
writes are not changes a call made (``observation.mutated``)."""

from __future__ import annotations

from pathlib import Path

from mycode_core.testing import run_cli, script_turn, write_script


def test_the_home_inside_the_workspace_stays_mycodes_own(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    home = workspace / ".mycode-home"
    (workspace / "notes.txt").parent.mkdir(parents=True)
    (workspace / "notes.txt").write_text("needle here\n")
    model = write_script(
        tmp_path / "s.json",
        [
            script_turn("run_command", command="echo made > made.txt"),
            script_turn("glob", pattern="**/*"),
            script_turn("grep", pattern="needle|permission_mode"),
            script_turn("write_file", path=".mycode-home/config.toml", content="x = 1\n"),
            script_turn("read_file", path=".mycode-home/trusted.json"),
            {"content": "done"},
        ],
    )
    args = ["-p", "needle", "--model", model, "--output-format", "stream-json"]
    # bypass: the command runs with or without a sandbox here, and the boundary still holds
    run = run_cli([*args, "--permission-mode", "bypass"], workspace, home)
    assert run.rc == 0, run.stderr
    command, listing, search, write, read = run.of_type("tool_result")
    assert not command["is_error"]
    (observed, *_) = [e["observation"] for e in run.of_type("observation")]
    assert observed["mutated"] == ["made.txt"]
    assert sorted(listing["content"].splitlines()) == ["made.txt", "notes.txt"]
    assert search["content"] == "notes.txt"
    for refused in (write, read):
        assert refused["is_error"] and "MYCODE_HOME" in refused["content"]
    assert not (home / "config.toml").exists()
    assert not any("read_only but changed" in n["message"] for n in run.of_type("notice"))

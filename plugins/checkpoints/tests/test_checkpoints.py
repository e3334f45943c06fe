"""Checkpoints and undo through real ``mycode`` runs (scripted model, real tools and files)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import run_cli, script_turn, write_script


def _run(ws: Path, home: Path, turns: list[dict[str, Any]], *extra: str) -> Any:
    script = home.parent / f"script-{len(list(home.parent.glob('script-*')))}.json"
    model = write_script(script, [*turns, {"content": "done"}])
    args = ["-p", "change things", "--model", model, "--output-format", "json",
            "--cwd", str(ws), "--permission-mode", "bypass", "--completion-policy", "off",
            *extra]  # fmt: skip
    return run_cli(args, ws, home, {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
                   timeout=180)  # fmt: skip


def _cli(ws: Path, home: Path, *args: str) -> Any:
    return run_cli(list(args), ws, home, timeout=120)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with two files."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("one\ntwo\n")
    (root / "b.txt").write_text("keep me\n")
    return root


def _edit_turns() -> list[dict[str, Any]]:
    return [
        script_turn("read_file", path="a.py"),
        script_turn("edit_file", path="a.py", old_string="two", new_string="TWO\nthree"),
        script_turn("write_file", path="new.txt", content="fresh\n"),
        script_turn("read_file", path="b.txt"),
        script_turn("run_command", command="rm b.txt && echo made > cmd.txt"),
    ]


def test_undo_restores_files_of_tools_and_commands(ws: Path, home: Path) -> None:
    done = _run(ws, home, _edit_turns())
    assert done.rc == 0, done.stderr
    listed = _cli(ws, home, "checkpoints", "--json", "--cwd", str(ws))
    assert listed.rc == 0, listed.stderr
    turns = json.loads(listed.stdout)
    assert [t["turn"] for t in turns] == [1]
    changes = {f["path"]: f["change"] for f in turns[0]["files"]}
    assert changes == {"a.py": "modified", "new.txt": "created", "b.txt": "deleted",
                       "cmd.txt": "created"}  # fmt: skip
    a_py = next(f for f in turns[0]["files"] if f["path"] == "a.py")
    assert (a_py["added"], a_py["removed"]) == (2, 1)
    assert turns[0]["prompt"] == "change things"
    undo = _cli(ws, home, "undo", "--cwd", str(ws))
    assert undo.rc == 0, undo.stderr
    assert "a.py" in undo.stdout and "cmd.txt" in undo.stdout
    assert (ws / "a.py").read_text() == "one\ntwo\n"
    assert (ws / "b.txt").read_text() == "keep me\n"
    assert not (ws / "new.txt").exists() and not (ws / "cmd.txt").exists()
    again = _cli(ws, home, "undo", "--cwd", str(ws))
    assert again.rc == 2 and "nothing to undo" in again.stderr
    assert not any(ws.rglob("*.pending")) and not (ws / ".mycode").exists()


def test_undo_refuses_files_edited_by_hand_unless_forced(ws: Path, home: Path) -> None:
    assert _run(ws, home, _edit_turns()[:2]).rc == 0
    (ws / "a.py").write_text("my own edit\n")
    refused = _cli(ws, home, "undo", "--cwd", str(ws))
    assert refused.rc == 1
    assert "a.py" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert (ws / "a.py").read_text() == "my own edit\n"
    forced = _cli(ws, home, "undo", "--force", "--cwd", str(ws))
    assert forced.rc == 0, forced.stderr
    assert (ws / "a.py").read_text() == "one\ntwo\n"


def test_undo_turn_n_undoes_later_turns_across_resumed_runs(ws: Path, home: Path) -> None:
    first = _run(ws, home, _edit_turns()[:2])
    session = json.loads(first.stdout)["session_id"]
    second = _run(ws, home, [script_turn("write_file", path="a.py", content="second\n"),
                             script_turn("write_file", path="c.bin", content="x")],
                  "--resume", session)  # fmt: skip
    assert second.rc == 0, second.stderr
    turns = json.loads(_cli(ws, home, "checkpoints", "--json", "--session", session).stdout)
    assert [t["turn"] for t in turns] == [1, 2]
    elsewhere = ws.parent / "other"
    elsewhere.mkdir()
    undo = _cli(elsewhere, home, "undo", "--session", session, "--turn", "1")
    assert undo.rc == 0, undo.stderr
    assert (ws / "a.py").read_text() == "one\ntwo\n" and not (ws / "c.bin").exists()


def test_read_only_and_binary_files_come_back(ws: Path, home: Path) -> None:
    (ws / "data.bin").write_bytes(bytes(range(256)) * 4)
    os.chmod(ws / "a.py", 0o444)
    turns = [script_turn("read_file", path="data.bin"),
             script_turn("run_command", command="chmod u+w a.py && echo x > a.py && "
                   "printf 'zz' > data.bin && chmod 444 a.py")]  # fmt: skip
    assert _run(ws, home, [script_turn("read_file", path="a.py"), *turns]).rc == 0
    assert (ws / "a.py").read_text() == "x\n"
    undo = _cli(ws, home, "undo", "--cwd", str(ws))
    assert undo.rc == 0, undo.stderr
    assert (ws / "a.py").read_text() == "one\ntwo\n"
    assert (ws / "data.bin").read_bytes() == bytes(range(256)) * 4
    assert os.stat(ws / "a.py").st_mode & 0o777 == 0o444


def test_a_file_never_seen_outside_git_is_named_not_lost(ws: Path, home: Path) -> None:
    turns = [script_turn("run_command", command="echo changed > b.txt")]
    assert _run(ws, home, turns).rc == 0
    listed = json.loads(_cli(ws, home, "checkpoints", "--json", "--cwd", str(ws)).stdout)
    assert listed[0]["files"][0]["path"] == "b.txt" and "note" in listed[0]["files"][0]
    refused = _cli(ws, home, "undo", "--cwd", str(ws))
    assert refused.rc == 1 and "b.txt" in refused.stderr
    assert (ws / "b.txt").read_text() == "changed\n"


def test_inside_git_the_index_gives_the_content_and_git_is_untouched(ws: Path, home: Path) -> None:
    import subprocess

    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=ws, check=True)
    subprocess.run([*git, "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=ws, check=True)
    index = (ws / ".git" / "index").read_bytes()
    refs = sorted(p.name for p in (ws / ".git" / "objects").iterdir())
    assert _run(ws, home, [script_turn("run_command", command="echo changed > b.txt")]).rc == 0
    undo = _cli(ws, home, "undo", "--cwd", str(ws))
    assert undo.rc == 0, undo.stderr
    assert (ws / "b.txt").read_text() == "keep me\n"
    assert (ws / ".git" / "index").read_bytes() == index
    assert sorted(p.name for p in (ws / ".git" / "objects").iterdir()) == refs


def test_max_mb_drops_oldest_turns_and_bad_values_are_config_errors(ws: Path, home: Path) -> None:
    (home / "config.toml").write_text("[checkpoints]\nmax_mb = 0.001\n")  # ~1 KB
    (ws / "big.txt").write_text("b" * 800)
    turns = [script_turn("read_file", path="big.txt"),
             script_turn("write_file", path="big.txt", content="c" * 800)]  # fmt: skip
    first = _run(ws, home, turns)
    session = json.loads(first.stdout)["session_id"]
    second = _run(ws, home, [script_turn("read_file", path="big.txt"),
                             script_turn("write_file", path="big.txt", content="d" * 800)],
                  "--resume", session)  # fmt: skip
    assert second.rc == 0, second.stderr
    turns = json.loads(_cli(ws, home, "checkpoints", "--json", "--session", session).stdout)
    assert [t["turn"] for t in turns] == [2]
    (home / "config.toml").write_text("[checkpoints]\nmax_mb = -3\n")
    bad = _run(ws, home, [])
    assert bad.rc == 2 and "max_mb" in bad.stderr and "Traceback" not in bad.stderr


def test_nothing_to_undo(ws: Path, home: Path) -> None:
    none = _cli(ws, home, "undo", "--cwd", str(ws))
    assert none.rc == 2 and "nothing to undo" in none.stderr
    assert json.loads(_cli(ws, home, "checkpoints", "--json", "--cwd", str(ws)).stdout) == []


def test_slash_undo_in_a_resumed_session(ws: Path, home: Path) -> None:
    first = _run(ws, home, _edit_turns()[:2])
    session = json.loads(first.stdout)["session_id"]
    model = write_script(home.parent / "none.json", [])
    slash = run_cli(["-p", "/undo", "--resume", session, "--model", model, "--cwd", str(ws)],
                    ws, home, timeout=120)  # fmt: skip
    assert slash.rc == 0, slash.stderr
    assert "restored a.py" in slash.stdout
    assert (ws / "a.py").read_text() == "one\ntwo\n"
    again = run_cli(["-p", "/undo", "--continue", "--model", model, "--cwd", str(ws)], ws, home,
                    timeout=120)  # fmt: skip
    assert again.rc == 2 and "nothing to undo" in again.stderr  # as `mycode undo` exits
    as_json = run_cli(["-p", "/undo", "--continue", "--model", model, "--output-format", "json",
                       "--cwd", str(ws)], ws, home, timeout=120)  # fmt: skip
    result = json.loads(as_json.stdout)  # a failed command is no completed run, in JSON too
    assert as_json.rc == 2 and result["is_error"] and result["stop_reason"] == "interrupted"
    assert "nothing to undo" in result["error"] and result["verdict"] == "none"
    plugins = _cli(ws, home, "plugins")
    assert '"checkpoints"' in plugins.stdout


def test_slash_diff_shows_what_the_session_changed(ws: Path, home: Path) -> None:
    """``/diff``: each changed file from before the session's first turn to now — modified,
    created and deleted, by tools and commands alike; ``/diff N`` starts at turn N."""
    first = _run(ws, home, _edit_turns())
    session = json.loads(first.stdout)["session_id"]
    second = _run(ws, home, [script_turn("write_file", path="late.txt", content="later\n")],
                  "--resume", session)  # fmt: skip
    assert second.rc == 0, second.stderr
    model = write_script(home.parent / "none.json", [])

    def slash(text: str) -> str:
        done = run_cli(["-p", text, "--resume", session, "--model", model, "--cwd", str(ws)],
                       ws, home, timeout=120)  # fmt: skip
        assert done.rc == 0, done.stderr
        return done.stdout

    whole = slash("/diff")
    assert "--- a/a.py\n+++ b/a.py\n" in whole and "-two\n+TWO\n+three\n" in whole
    assert "--- /dev/null\n+++ b/new.txt\n" in whole and "+fresh\n" in whole
    assert "--- a/b.txt\n+++ /dev/null\n" in whole and "-keep me\n" in whole
    assert "+++ b/cmd.txt" in whole and "+++ b/late.txt" in whole
    from_second = slash("/diff 2")
    assert "+++ b/late.txt" in from_second and "a.py" not in from_second
    (ws / "late.txt").unlink()  # by hand: the diff says how things are now
    assert "+++ b/late.txt" not in slash("/diff 2")
    assert "no changes to show" in slash("/diff 9")


def test_file_names_never_drive_the_terminal(ws: Path, home: Path) -> None:
    """A command may name a file ``x ESC ]52;c;… BEL``: an OSC sequence that writes the
    clipboard, sets the title or fakes a link. The listing and undo show it as text."""
    make = "python3 -c \"open('x\\x1b]52;c;cHduZWQ=\\x07RED', 'w').write('p')\""
    made = _run(ws, home, [script_turn("run_command", command=make)])
    assert made.rc == 0, made.stderr
    assert (ws / "x\x1b]52;c;cHduZWQ=\x07RED").is_file()
    listed = _cli(ws, home, "checkpoints", "--cwd", str(ws))
    model = write_script(home.parent / "none.json", [])
    session = json.loads(made.stdout)["session_id"]
    slash = _cli(ws, home, "-p", "/checkpoints", "--resume", session, "--model", model)
    undone = _cli(ws, home, "undo", "--cwd", str(ws))
    for out in (listed, slash, undone):
        assert out.rc == 0, out.stderr
        assert "x^[]52;c;cHduZWQ=^GRED" in out.stdout
        assert "\x1b" not in out.stdout + out.stderr and "\x07" not in out.stdout + out.stderr
    assert not (ws / "x\x1b]52;c;cHduZWQ=\x07RED").exists()

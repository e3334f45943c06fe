"""Undo after commands that replace files, in resumed sessions, and of new folder trees; what
a file is beyond its bytes (mode, a folder or link in its place, a name not UTF-8); killed
runs and turns max_mb dropped."""

from __future__ import annotations

import json
import os
import subprocess
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
    done = run_cli(args, ws, home, {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
                   timeout=180)  # fmt: skip
    assert done.rc == 0, done.stderr
    return done


def _cli(ws: Path, home: Path, *args: str) -> Any:
    return run_cli([*args, "--cwd", str(ws)], ws, home, timeout=120)


def test_a_file_a_command_replaces_is_never_deleted_by_undo(tmp_path: Path, home: Path) -> None:
    """``sed -i`` and atomic saves rename a new file over the old one: not a created file."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "b.txt").write_text("mine\n")
    (ws / "u.txt").write_text("mine too\n")
    save = "import os; open('t.tmp', 'w').write('x'); os.replace('t.tmp', 'u.txt')"
    _run(ws, home, [script_turn("run_command", command=f"sed -i s/mine/sed/ b.txt; "
                                f"{sys.executable} -c \"{save}\"")])  # fmt: skip
    files = json.loads(_cli(ws, home, "checkpoints", "--json").stdout)[0]["files"]
    assert {f["path"]: f["change"] for f in files} == {"b.txt": "modified", "u.txt": "modified"}
    refused = _cli(ws, home, "undo")  # their content before was never seen: named, kept
    assert refused.rc == 1 and "b.txt" in refused.stderr and "u.txt" in refused.stderr
    assert _cli(ws, home, "undo", "--force").rc == 0
    assert (ws / "b.txt").read_text() == "sed\n" and (ws / "u.txt").read_text() == "x"


def test_undo_of_a_resumed_turn_keeps_what_earlier_turns_did(tmp_path: Path, home: Path) -> None:
    """Turn 2 (another run) changes by command a file turn 1 wrote: undo goes back to turn 1's
    content, not to the git index's."""
    import subprocess

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("one\n")
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=ws, check=True)
    subprocess.run([*git, "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=ws, check=True)
    first = _run(ws, home, [script_turn("read_file", path="a.txt"),
                            script_turn("write_file", path="a.txt", content="ONE\n")])  # fmt: skip
    session = json.loads(first.stdout)["session_id"]
    _run(ws, home, [script_turn("run_command", command="echo three > a.txt")], "--resume", session)
    undo = _cli(ws, home, "undo")
    assert undo.rc == 0, undo.stderr
    assert (ws / "a.txt").read_text() == "ONE\n"


def test_undo_removes_the_folders_a_turn_made_not_older_ones(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "old").mkdir(parents=True)
    _run(ws, home, [script_turn("run_command", command="mkdir -p tree/x/y && echo z > tree/x/y/z"),
                    script_turn("write_file", path="n1/n2/c.txt", content="c\n"),
                    script_turn("write_file", path="old/sub/d.txt", content="d\n")])  # fmt: skip
    undo = _cli(ws, home, "undo")
    assert undo.rc == 0, undo.stderr
    assert sorted(p.name for p in ws.iterdir()) == ["old"]
    assert list((ws / "old").iterdir()) == []


def _killed_mid_command(ws: Path, home: Path, turns: list[dict[str, Any]]) -> None:
    """Run ``turns`` and kill the run (SIGKILL) once its command has made the file
    ``started``."""
    import signal
    import time

    from mycode_core.testing import cli_env, mycode_command

    model = write_script(home.parent / "kill.json", turns)
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


def test_a_run_killed_mid_command_is_named_by_undo(tmp_path: Path, home: Path) -> None:
    """What a command changed is recorded when it ends: killed before that, undo says so
    (exit 1, nothing changed) instead of restoring half the turn as if it were all."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    _killed_mid_command(ws, home, [
        script_turn("read_file", path="a.txt"),
        script_turn("write_file", path="a.txt", content="A\n"),
        script_turn("run_command", command="echo n > new.txt; touch started; sleep 600"),
    ])  # fmt: skip
    refused = _cli(ws, home, "undo")
    assert refused.rc == 1 and "run_command(echo n > new.txt" in refused.stderr
    assert (ws / "a.txt").read_text() == "A\n"
    forced = _cli(ws, home, "undo", "--force")
    assert forced.rc == 0 and (ws / "a.txt").read_text() == "a\n"
    assert _cli(ws, home, "undo").rc == 2


def test_an_untrusted_project_cannot_turn_checkpoints_off_or_evict_others(
    tmp_path: Path, home: Path
) -> None:
    """SPEC §8: a cloned repository's `[checkpoints]` may not switch undo off for its own turns,
    nor set a tiny `max_mb` that drops every other workspace's checkpoints under MYCODE_HOME."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "kept.txt").write_text("k" * 800)
    _run(mine, home, [script_turn("read_file", path="kept.txt"),
                      script_turn("write_file", path="kept.txt", content="K")])  # fmt: skip
    ws = tmp_path / "ws"
    (ws / ".mycode").mkdir(parents=True)
    (ws / "a.txt").write_text("before\n")
    for setting in ("max_mb = 0.001", "enabled = false"):  # 0.001: 1 KB
        (ws / ".mycode" / "config.toml").write_text(f"[checkpoints]\n{setting}\n")
        done = _run(ws, home, [script_turn("read_file", path="a.txt"),
                               script_turn("write_file", path="a.txt", content=setting)],
                    "--output-format", "stream-json")  # fmt: skip
        notices = [e["message"] for e in done.events if e["type"] == "notice"]
        ignored = [n for n in notices if "[checkpoints]" in n and "untrusted" in n]
        assert len(ignored) == 1 and setting.split()[0] in ignored[0], notices
        assert json.loads(_cli(mine, home, "checkpoints", "--json").stdout)  # still there
    assert _cli(ws, home, "undo").rc == 0
    assert (ws / "a.txt").read_text() == "max_mb = 0.001"


def test_a_session_resumed_in_another_folder_is_undone_in_each_turns_own(
    tmp_path: Path, home: Path
) -> None:
    """SPEC §12: `undo --session ID` acts on the session's own workspace. A session resumed
    from another folder ran its turn there: each turn is restored where it was taken (ws's old
    content never lands in the other folder), and the resume says where the session started."""
    ws, other = tmp_path / "ws", tmp_path / "other"
    ws.mkdir()
    other.mkdir()
    (ws / "a.txt").write_text("WS-orig")
    (other / "a.txt").write_text("OTHER-orig")

    def write(text: str) -> list[dict[str, Any]]:
        return [script_turn("read_file", path="a.txt"),
                script_turn("write_file", path="a.txt", content=text)]  # fmt: skip

    session = json.loads(_run(ws, home, write("WS-turn1")).stdout)["session_id"]
    second = _run(other, home, write("OTHER-turn2"), "--resume", session)
    assert f"session {session} was started in {ws}" in second.stderr, second.stderr
    assert (ws / "a.txt").read_text() == "WS-turn1"
    assert (other / "a.txt").read_text() == "OTHER-turn2"
    listed = json.loads(_cli(other, home, "checkpoints", "--session", session, "--json").stdout)
    assert [t["turn"] for t in listed] == [1, 2]
    undo = _cli(other, home, "undo", "--session", session, "--turn", "1")
    assert undo.rc == 0, undo.stderr
    assert (ws / "a.txt").read_text() == "WS-orig"
    assert (other / "a.txt").read_text() == "OTHER-orig"
    assert sorted(undo.stdout.split()) == sorted(
        ["restored", str(ws / "a.txt"), "restored", str(other / "a.txt")]
    )
    assert str(ws) in undo.stderr and str(other) in undo.stderr
    again = _cli(ws, home, "undo", "--session", session)
    assert again.rc == 2, again.stderr


def _git_repo(ws: Path) -> list[str]:
    import subprocess

    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], cwd=ws, check=True)
    subprocess.run([*git, "add", "-A"], cwd=ws, check=True)
    subprocess.run([*git, "commit", "-qm", "x"], cwd=ws, check=True)
    return git


@pytest.mark.parametrize("then", ["{git} add f.txt", "{git} add f.txt && {git} commit -qm new"])
def test_undo_of_a_command_that_staged_its_change_restores_it(
    tmp_path: Path, home: Path, then: str
) -> None:
    """A file a command changed, never seen by mycode, in git: its content before is the
    index's as it was before the command, not after it staged (or committed) the new one."""
    import subprocess

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("orig\n")
    git = _git_repo(ws)
    command = "echo new > f.txt && " + then.format(git=" ".join(git))
    _run(ws, home, [script_turn("run_command", command=command)])
    staged = subprocess.run([*git, "show", ":f.txt"], cwd=ws, capture_output=True, text=True)
    assert (ws / "f.txt").read_text() == staged.stdout == "new\n"
    commits = subprocess.run([*git, "rev-list", "--count", "HEAD"], cwd=ws, capture_output=True)
    assert int(commits.stdout) == (2 if "commit" in then else 1)
    dot_git = {p: p.read_bytes() for p in (ws / ".git").rglob("*") if p.is_file()}
    undo = _cli(ws, home, "undo")
    assert undo.rc == 0, undo.stderr
    assert undo.stdout.split() == ["restored", "f.txt"]
    assert (ws / "f.txt").read_text() == "orig\n"
    assert {p: p.read_bytes() for p in (ws / ".git").rglob("*") if p.is_file()} == dot_git
    assert not list((home / "checkpoints" / ".pending").rglob("indexes/*"))


def test_the_index_is_copied_when_a_hard_link_cannot_be_made(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """MYCODE_HOME on another filesystem than the repository: the index kept before a call is
    a copy, and the content before is still the one staged then."""
    import errno
    import os
    import subprocess

    from mycode_checkpoints import recorder

    from mycode_core.config import load_settings
    from mycode_core.records import RunContext

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("orig\n")
    git = _git_repo(ws)

    def no_link(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(recorder.os, "link", no_link)
    context = RunContext(workspace=ws, home=home, settings=load_settings(ws, home),
                         session_id="s")  # fmt: skip
    kept = recorder.Recorder(context)
    kept._keep_index("c1")
    (ws / "f.txt").write_text("new\n")
    subprocess.run([*git, "add", "f.txt"], cwd=ws, check=True)
    assert kept._from_git("f.txt", kept.indexes["c1"]) == (b"orig\n", None)
    assert os.stat(kept.indexes["c1"]).st_nlink == 1
    kept.call_ended("c1")
    assert not kept.indexes and not any((home / "checkpoints").rglob("c1"))


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


def test_a_call_killed_in_an_earlier_turn_neither_blocks_nor_haunts_undo(
    tmp_path: Path, home: Path
) -> None:
    """A killed call concerns the undo of its own turn only: the next run's turn undoes
    without ``--force``; undoing the killed turn names it (exit 1), and ``--force`` ends the
    matter (nothing else to restore: exit 2, then plain ``undo`` says nothing to undo)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    _killed_mid_command(ws, home, [script_turn("run_command", command="touch started; sleep 600")])
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


def test_undo_removes_the_folders_a_command_made_for_its_files(tmp_path: Path, home: Path) -> None:
    """``mkdir -p`` by a command, with files in the new folders, is undone: the folders go
    when empty (named on stdout, listed by ``checkpoints``, ``/checkpoints`` and ``/rewind``),
    older ones and ones with a file added since stay."""
    ws = tmp_path / "ws"
    (ws / "old").mkdir(parents=True)
    made = "mkdir -p a/b old/c keep; echo x > a/b/f; echo y > old/c/g; echo z > keep/h"
    _run(ws, home, [script_turn("run_command", command=made)])
    listed = _cli(ws, home, "checkpoints")
    assert "a/b/" in listed.stdout and "old/c/" in listed.stdout
    model = write_script(tmp_path / "none.json", [])
    for slash in ("/checkpoints", "/rewind"):
        args = ["-p", slash, "--model", model, "--continue", "--cwd", str(ws)]
        assert "created a/b/" in run_cli(args, ws, home, timeout=120).stdout, slash
    (ws / "keep" / "mine.txt").write_text("added by hand\n")
    undo = _cli(ws, home, "undo")
    assert undo.rc == 0, undo.stderr
    assert sorted(os.listdir(ws)) == ["keep", "old"] and os.listdir(ws / "old") == []
    assert os.listdir(ws / "keep") == ["mine.txt"]
    assert "removed a/b/" in undo.stdout.splitlines()


@pytest.mark.parametrize("in_git", [False, True])
def test_undo_puts_back_symlinks_a_command_deleted_or_repointed(
    tmp_path: Path, home: Path, in_git: bool
) -> None:
    """``rm link``, ``ln -sf elsewhere link`` and a link replaced by a file: undo makes each
    link again, pointing where it did (it was "never seen by mycode: cannot be restored")."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    for name in ("gone", "moved", "filed"):
        (ws / name).symlink_to("a.txt")
    if in_git:
        _git(ws, "init", "-q")
        _git(ws, "add", "-A")
        _git(ws, "commit", "-qm", "x")
    done = _run(ws, home, [script_turn("run_command", command="rm gone filed; echo f > filed; "
                                       "ln -sf /etc/hostname moved")])  # fmt: skip
    assert "undo cannot restore" not in done.stderr
    undo = _cli(ws, home, "undo")
    assert undo.rc == 0, undo.stderr
    for name in ("gone", "moved", "filed"):
        assert os.readlink(ws / name) == "a.txt"

"""Workspace-change detection around tool calls: inotify, and git/walk snapshots without it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mycode_core.runtime.changes import ChangeDetector


def _tree(root: Path, count: int = 300) -> None:
    for index in range(count):
        folder = root / f"pkg{index // 50}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"m{index}.py").write_text(f"x = {index}\n")
    (root / "node_modules").mkdir()
    (root / "node_modules" / "dep.js").write_text("1")


def _git(root: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env_args = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    (root / ".gitignore").write_text("node_modules/\n")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", *env_args, "commit", "-qm", "init"], cwd=root, check=True)


def _exercise(detector: ChangeDetector, root: Path) -> None:
    detector.mark()
    assert detector.changes() == []
    (root / "pkg0" / "m0.py").write_text("x = 'user edit before the call'\n")
    detector.mark()  # changes before a call are not the call's
    last = root / "pkg5" / "m299.py"
    last.write_text("changed\n")
    (root / "pkg1" / "m50.py").unlink()
    (root / "new" / "deep").mkdir(parents=True)
    (root / "new" / "deep" / "n.py").write_text("new\n")
    temp = root / "tmp-file"
    temp.write_text("short-lived")
    temp.unlink()
    (root / "node_modules" / "dep.js").write_text("2")
    found = detector.changes()
    assert "pkg5/m299.py" in found and "pkg1/m50.py" in found
    assert "new/deep/n.py" in found
    assert "tmp-file" not in found and not any(p.startswith("node_modules") for p in found)
    assert "pkg0/m0.py" not in found
    detector.mark()
    last.write_text("changed again\n")  # a file already dirty, changed once more
    assert detector.changes() == ["pkg5/m299.py"]


@pytest.mark.parametrize("git", [True, False], ids=["git", "plain"])
@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "snapshot"])
def test_changes_are_complete_with_every_mechanism(
    tmp_path: Path, git: bool, inotify: bool
) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    _tree(root)
    if git:
        _git(root)
    detector = ChangeDetector(root, use_inotify=inotify)
    try:
        _exercise(detector, root)
        if inotify and Path("/proc/sys/fs/inotify").exists():
            assert detector.mechanism == "inotify"
    finally:
        detector.close()


def test_no_file_cap_a_change_past_twenty_thousand_files_is_seen(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    for index in range(21_000):
        folder = root / f"d{index // 1000}"
        if index % 1000 == 0:
            folder.mkdir(parents=True)
        (folder / f"f{index}").write_bytes(b"")
    detector = ChangeDetector(root, use_inotify=False)
    detector.mark()
    (root / "d20" / "f20999").write_text("seen")
    assert detector.changes() == ["d20/f20999"]


def _queue_limit() -> int:
    try:
        return int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    except (OSError, ValueError):
        pytest.skip("no inotify here")


def test_after_a_real_queue_overflow_it_rescans_then_watches_again(tmp_path: Path) -> None:
    limit = _queue_limit()
    if limit > 40_000:
        pytest.skip("the inotify queue is too long to overflow in a test")
    _tree(tmp_path)
    detector = ChangeDetector(tmp_path)
    detector.mark()
    assert detector.mechanism == "inotify"
    flood = tmp_path / "flood"
    flood.mkdir()  # watched before the call: its events are queued
    detector.mark()
    count = limit // 2 + 200  # each new file queues at least CREATE + CLOSE_WRITE
    for index in range(count):
        (flood / f"f{index}").write_bytes(b"")
    (tmp_path / "pkg2" / "m100.py").write_text("edited in the flooded call\n")
    found = detector.changes()
    assert detector.rearms == 1  # the queue really overflowed
    assert detector.mechanism == "inotify"
    assert "pkg2/m100.py" in found
    assert (
        f"flood/f{count - 1}" in found
        and len([p for p in found if p.startswith("flood/")]) == count
    )
    # the next call is reported from events again, and completely
    detector.mark()
    (tmp_path / "pkg3" / "m150.py").write_text("next call\n")
    (tmp_path / "pkg4" / "m200.py").unlink()
    assert detector.changes() == ["pkg3/m150.py", "pkg4/m200.py"]
    assert detector.rearms == 1 and detector._snapshot is None
    detector.close()


def test_an_overflow_before_the_mark_rearms_too(tmp_path: Path) -> None:
    limit = _queue_limit()
    if limit > 40_000:
        pytest.skip("the inotify queue is too long to overflow in a test")
    _tree(tmp_path, 50)
    detector = ChangeDetector(tmp_path)
    detector.mark()
    for index in range(limit // 2 + 200):
        (tmp_path / f"user{index}").write_bytes(b"")
    detector.mark()  # the user's own flood: not the call's
    assert detector.rearms == 1 and detector.mechanism == "inotify"
    (tmp_path / "pkg0" / "m1.py").write_text("call\n")
    assert detector.changes() == ["pkg0/m1.py"]
    detector.close()


@pytest.mark.parametrize("inotify", [True, False], ids=["inotify", "snapshot"])
def test_git_running_in_a_nested_repository_is_no_change(tmp_path: Path, inotify: bool) -> None:
    """A nested repository's ``.git`` folder changes whenever git runs there (its index): that
    is no change of the workspace (the tools plugin would take a changed ``.git`` back), while
    a ``.git`` created is one."""
    root = tmp_path / "ws"
    (root / "repo").mkdir(parents=True)
    _git(root / "repo")
    detector = ChangeDetector(root, use_inotify=inotify)
    try:
        detector.mark()
        (root / "repo" / ".git" / "index").write_bytes(b"another index")
        (root / "repo" / ".git" / "new-ref").write_text("x")  # the folder's mtime moves
        assert detector.changes() == []
        detector.mark()
        (root / "other" / ".git").mkdir(parents=True)
        assert detector.changes() == ["other/.git"]
    finally:
        detector.close()

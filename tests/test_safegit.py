"""mycode's own git never runs the workspace's configuration (real hostile repositories)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from mycode_core import safegit
from mycode_core.runtime.changes import ChangeDetector, _git_snapshot


def _plain_git(cwd: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null")
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
    )


def _repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    _plain_git(path, "init", "-q")
    (path / "a.txt").write_text("one\n")
    (path / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    _plain_git(path, "add", "-A")
    _plain_git(path, "commit", "-qm", "base")
    return path


def _marker_script(tmp: Path, name: str) -> tuple[Path, Path]:
    marker = tmp / f"{name}.marker"
    script = tmp / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    script.chmod(0o755)
    return script, marker


def _hostile_config(git_dir: Path, tmp: Path) -> list[Path]:
    """Every executing setting at once; returns the markers none of which may appear."""
    markers = []
    lines = []
    for key in (
        "core.fsmonitor",
        "core.pager",
        "credential.helper",
        "diff.external",
        "filter.evil.clean",
        "filter.evil.smudge",
        "filter.evil.process",
        "diff.evil.textconv",
        "diff.evil.command",
    ):
        script, marker = _marker_script(tmp, key.replace(".", "_"))
        markers.append(marker)
        section, _, rest = key.partition(".")
        if "." in rest:
            sub, _, name = rest.partition(".")
            lines.append(f'[{section} "{sub}"]\n\t{name} = {script}\n')
        else:
            lines.append(f"[{section}]\n\t{rest} = {script}\n")
    hooks = tmp / "hooks"
    hooks.mkdir(exist_ok=True)
    script, marker = _marker_script(tmp, "hook")
    for hook in ("pre-commit", "post-checkout", "post-index-change", "reference-transaction"):
        (hooks / hook).write_text(script.read_text())
        (hooks / hook).chmod(0o755)
    markers.append(marker)
    lines.append(f"[core]\n\thooksPath = {hooks}\n")
    with (git_dir / "config").open("a") as fh:
        fh.write("".join(lines))
    return markers


def _exercise(root: Path) -> None:
    (root / "a.txt").write_text("two\n")
    (root / "new.txt").write_text("new\n")
    for args in (
        ["status", "--porcelain"],
        ["diff", "--no-ext-diff"],
        ["add", "-A"],
        ["commit", "-qm", "x"],
        ["log", "-p", "-1"],
        ["checkout", "-q", "HEAD~1", "--", "a.txt"],
    ):
        done = safegit.run(["-c", "user.name=t", "-c", "user.email=t@t", *args], root, root=root)
        assert done.returncode == 0, done.stderr


def test_hostile_config_runs_nothing(tmp_path: Path) -> None:
    root = _repo(tmp_path / "ws")
    markers = _hostile_config(root / ".git", tmp_path)
    _exercise(root)
    assert [m.name for m in markers if m.exists()] == []
    # the hostile config really would run: plain git runs the fsmonitor
    _plain_git(root, "status")
    assert (tmp_path / "core_fsmonitor.marker").exists()


def test_inherited_git_environment_is_scrubbed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _repo(tmp_path / "ws")
    other = _repo(tmp_path / "other")
    markers = _hostile_config(other / ".git", tmp_path)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(tmp_path / "core_fsmonitor.sh"))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(tmp_path / "diff_external.sh"))
    done = safegit.run(["rev-parse", "--show-toplevel"], root, root=root, text=True)
    assert str(done.stdout).strip() == str(root.resolve())
    _exercise(root)
    assert [m.name for m in markers if m.exists()] == []


def _refused(root: Path) -> str:
    with pytest.raises(safegit.SafeGitError) as info:
        safegit.run(["status"], root, root=root)
    assert "\n" not in str(info.value)
    return str(info.value)


def test_commondir_outside_is_refused(tmp_path: Path) -> None:
    root = _repo(tmp_path / "ws")
    outside = _repo(tmp_path / "copy")
    markers = _hostile_config(outside / ".git", tmp_path)
    (root / ".git" / "commondir").write_text(str(outside / ".git") + "\n")
    assert "outside" in _refused(root)
    (root / ".git" / "commondir").write_text("../../copy/.git\n")
    assert "outside" in _refused(root)
    # change detection treats it as non-git and falls back to a walk
    detector = ChangeDetector(root, use_inotify=False)
    detector.mark()
    (root / "b.txt").write_text("b")
    assert detector.changes() == ["b.txt"]
    assert _git_snapshot(root) is None
    assert [m.name for m in markers if m.exists()] == []


def test_gitdir_file_and_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    outside = _repo(tmp_path / "elsewhere")
    (root / ".git").write_text(f"gitdir: {outside / '.git'}\n")
    assert "outside" in _refused(root)
    (root / ".git").unlink()
    (root / ".git").symlink_to(outside / ".git")
    assert "outside" in _refused(root)
    (root / ".git").unlink()
    (root / ".git").symlink_to(root / ".git")  # a loop
    _refused(root)
    (root / ".git").unlink()
    (root / ".git").write_text("nonsense\n")
    _refused(root)


def test_commondir_loop_and_symlinked_config(tmp_path: Path) -> None:
    root = _repo(tmp_path / "ws")
    git_dir = root / ".git"
    (git_dir / "loop").symlink_to(git_dir / "loop")
    (git_dir / "commondir").write_text("loop\n")
    _refused(root)
    (git_dir / "commondir").unlink()
    outside_config = tmp_path / "evil-config"
    outside_config.write_text("[core]\n\tfsmonitor = /bin/false\n")
    (git_dir / "config").rename(git_dir / "config.real")
    (git_dir / "config").symlink_to(outside_config)
    assert "safely" in _refused(root)
    (git_dir / "config").unlink()
    (git_dir / "config.real").rename(git_dir / "config")
    with (git_dir / "config").open("a") as fh:
        fh.write(f"[include]\n\tpath = {outside_config}\n")
    assert "includes" in _refused(root)


def test_worktree_inside_workspace_is_used(tmp_path: Path) -> None:
    main = _repo(tmp_path / "ws")
    markers = _hostile_config(main / ".git", tmp_path)
    wt = main / "wt"
    safegit.run(["worktree", "add", "-q", "--detach", str(wt)], main, root=main)
    repo = safegit.find_repository(wt, contain=False)
    assert repo is not None and repo.common_dir == (main / ".git").resolve()
    # contained to the worktree itself, its common folder lies outside: refused
    assert "outside" in _refused(wt)
    # the main workspace holding it is fine
    done = safegit.run(["status", "--porcelain"], main, root=main, text=True)
    assert done.returncode == 0
    assert [m.name for m in markers if m.exists()] == []


def test_overrides_name_every_declared_driver(tmp_path: Path) -> None:
    root = _repo(tmp_path / "ws")
    with (root / ".git" / "config").open("a") as fh:
        fh.write(
            '[filter "lfs"]\n\tclean = x\n[diff.pic]\n\ttextconv = y\n[merge "m"] driver = z\n'
            '[Diff "a \\"b\\\\c"]\n\ttextconv = w\n'
        )
    repo = safegit.find_repository(root)
    args = safegit.config_overrides(repo)
    for expected in (
        "filter.lfs.clean=",
        "filter.lfs.process=",
        "diff.pic.textconv=cat",
        "merge.m.driver=false",
        'diff.a "b\\c.textconv=cat',
    ):
        assert expected in args
    with (root / ".git" / "config").open("a") as fh:
        fh.write('[filter "unterminated]\n')
    with pytest.raises(safegit.SafeGitError):
        safegit.config_overrides(safegit.find_repository(root))


def test_not_a_repository(tmp_path: Path) -> None:
    assert safegit.find_repository(tmp_path) is None
    with pytest.raises(safegit.SafeGitError):
        safegit.run(["status"], tmp_path, root=tmp_path)


def test_change_detection_git_fallback_runs_no_config(tmp_path: Path) -> None:
    root = _repo(tmp_path / "ws")
    markers = _hostile_config(root / ".git", tmp_path)
    detector = ChangeDetector(root, use_inotify=False)
    detector.mark()
    assert detector._git is True  # the git status snapshot is the one in use
    (root / "a.txt").write_text("changed\n")
    (root / "b.txt").write_text("new\n")
    assert detector.changes() == ["a.txt", "b.txt"]
    assert [m.name for m in markers if m.exists()] == []

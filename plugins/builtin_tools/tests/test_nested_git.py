"""A submodule's or nested repository's ``.git`` is git's configuration as much as the root's:
git (the user's ``git status``, a shell prompt with git integration) runs what its config
names. End to end through ``mycode -p --model scripted:…`` with real git and bubblewrap."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from mycode_core.testing.cli import run_cli, script_turn, write_script

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
}  # fmt: skip


def _git(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | _GIT_ENV
    return subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip


@pytest.fixture
def with_submodule(tmp_path: Path) -> Path:
    """A repository with a committed submodule at ``sub``."""
    source, root = tmp_path / "subsrc", tmp_path / "ws"
    for repo in (source, root):
        repo.mkdir()
        _git(repo, "init", "-q", "-b", "master")
        (repo / "README").write_text(repo.name)
        _git(repo, "add", "README")
        _git(repo, "commit", "-qm", "first")
    _git(root, "submodule", "add", "-q", "../subsrc", "sub")
    _git(root, "commit", "-qm", "sub")
    assert (root / "sub" / ".git").is_file()
    return root


def _user_git_status(root: Path) -> None:
    """What the user does next: plain ``git status`` with the repository's own config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | _GIT_ENV
    subprocess.run(["git", "status"], cwd=root, env=env, capture_output=True, timeout=60)


def _fsmonitor(marker: Path) -> str:
    return f'[core]\n\tfsmonitor = "touch {marker}; false"\n'


def test_write_file_to_a_nested_git_asks(tmp_path: Path, with_submodule: Path) -> None:
    """write_file/edit_file to ``sub/.git`` (a gitdir pointer) or into ``a/b/.git/`` asks
    (``builtin:protected-folder``; denied in ``-p``) as the root ``.git`` does."""
    root, marker = with_submodule, tmp_path / "PWN"
    pointer = (root / "sub" / ".git").read_text()
    (root / "a" / "b" / ".git").mkdir(parents=True)
    turns = [
        script_turn("write_file", path="sub/.git", content="gitdir: ../evilgd\n"),
        script_turn("write_file", path="evilgd/HEAD", content="ref: refs/heads/master\n"),
        script_turn("write_file", path="evilgd/config", content=_fsmonitor(marker)),
        script_turn("run_command", command="mkdir -p evilgd/objects evilgd/refs/heads"),
        script_turn("write_file", path="a/b/.git/config", content=_fsmonitor(marker)),
        script_turn("edit_file", path="sub/.git", old_string="gitdir", new_string="gitdir"),
        {"content": "done"},
    ]
    model = write_script(tmp_path / "script.json", turns)
    out = run_cli(["-p", "go", "--model", model, "--output-format", "stream-json"], root,
                  tmp_path / "home")  # fmt: skip
    assert "Traceback" not in out.stderr, out.stderr
    denied = [e for e in out.of_type("permission") if e["decision"] == "deny"]
    assert [e["rule"] for e in denied] == ["builtin:protected-folder"] * 3, out.events
    assert (root / "sub" / ".git").read_text() == pointer
    assert not (root / "a" / "b" / ".git" / "config").exists()
    _user_git_status(root)
    assert not marker.exists()

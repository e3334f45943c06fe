"""A submodule's or nested repository's ``.git`` is git's configuration as much as the root's:
git (the user's ``git status``, a shell prompt with git integration) runs what its config
names. End to end through ``mycode -p --model scripted:…`` with real git and bubblewrap."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from mycode_builtin_tools import sandbox
from mycode_builtin_tools.tools import run_command as rc

from mycode_core.config import Settings
from mycode_core.records import RunContext
from mycode_core.testing.cli import run_cli, script_turn, write_script

needs_bwrap = pytest.mark.skipif(
    sandbox.bwrap_path() is None, reason=f"no sandbox here: {sandbox.unavailable_reason()}"
)

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
    denied = [e["rule"] for e in out.of_type("permission") if e["decision"] == "deny"]
    assert denied.count("builtin:protected-folder") == 3, out.events  # the mkdir too, unsandboxed
    assert (root / "sub" / ".git").read_text() == pointer
    assert not (root / "a" / "b" / ".git" / "config").exists()
    _user_git_status(root)
    assert not marker.exists()


def _sandboxed(root: Path, home: Path, command: str) -> str:
    ctx = RunContext(workspace=root, home=home, settings=Settings(), session_id="sbx")
    result = rc.run_command.handler({"command": command, "timeout": 60}, ctx)
    assert result.metadata.get("sandboxed") is True
    return result.text()


@needs_bwrap
def test_a_submodules_git_is_read_only_in_the_sandbox(tmp_path: Path, with_submodule: Path) -> None:
    """The ``.git`` of each submodule ``.gitmodules`` lists is bound read-only, as the root's:
    a pointer file can be neither rewritten nor replaced by a folder, a folder not written."""
    root, marker = with_submodule, tmp_path / "PWN"
    old = root / "old"  # a submodule whose .git is a folder (cloned before absorbgitdirs)
    _git(tmp_path, "clone", "-q", str(tmp_path / "subsrc"), str(old))
    with (root / ".gitmodules").open("a") as handle:
        handle.write('[submodule "old"]\n\tpath = "old"\n\turl = ../subsrc\n')
    pointer = (root / "sub" / ".git").read_text()
    config = (old / ".git" / "config").read_text()
    hostile = _fsmonitor(marker)
    (root / "plant.py").write_text(
        "import os, sys\n"
        "def attempt(f):\n"
        "    try:\n        f()\n    except OSError as exc:\n        print(exc)\n"
        "attempt(lambda: open('sub/.git', 'w').write('gitdir: ../evilgd'))\n"
        "attempt(lambda: os.remove('sub/.git'))\n"
        "attempt(lambda: os.makedirs('sub/.git/refs/heads'))\n"
        "attempt(lambda: os.makedirs('sub/.git/objects'))\n"
        "attempt(lambda: open('sub/.git/HEAD', 'w').write('ref: refs/heads/master'))\n"
        "attempt(lambda: open('sub/.git/config', 'w').write(sys.argv[1]))\n"
        "attempt(lambda: open('old/.git/config', 'a').write(sys.argv[1]))\n"
    )
    out = _sandboxed(root, tmp_path / "home", f"python3 plant.py '{hostile}'; echo ran")
    assert "ran" in out and "Read-only file system" in out
    assert (root / "sub" / ".git").read_text() == pointer
    assert (old / ".git" / "config").read_text() == config
    _user_git_status(root)
    _user_git_status(root / "sub")
    _user_git_status(old)
    assert not marker.exists()


def test_only_submodules_inside_the_workspace_are_bound(tmp_path: Path) -> None:
    """``.gitmodules`` is read as text: a path out of the workspace (``..``, absolute, a link
    out) or without a ``.git`` is not bound; a link to a ``.git`` inside binds what it leads to."""
    root, out = tmp_path / "ws", tmp_path / "out"
    for rel in ("a/.git/hooks", "b/.git", "real/.git"):
        (root / rel).mkdir(parents=True)
    (out / ".git").mkdir(parents=True)
    (root / "c").mkdir()
    (root / "c" / ".git").write_text("gitdir: ../.git/modules/c\n")
    (root / "outlink").symlink_to(out)
    (root / "d").mkdir()
    (root / "d" / ".git").symlink_to(root / "real" / ".git")
    (root / ".gitmodules").write_text(
        '[submodule "a"]\n\tpath = a\n[submodule "c"]\n  PATH=c\n[submodule "x"]\n'
        f"\tpath = ../out\n\tpath = {out}\n\tpath = outlink\n\tpath = none\n\tpath = d\n"
    )
    assert sandbox.submodule_dot_gits(root) == [
        root / "a" / ".git", root / "c" / ".git", root / "real" / ".git"
    ]  # fmt: skip
    writable = sandbox.read_only_paths(root, git_writable=True)
    assert root / "a" / ".git" / "hooks" in writable and root / "c" / ".git" in writable


def _plant_repository(at: str, marker: Path) -> str:
    """Python for a sandboxed command: a git folder at ``at`` whose config runs ``marker``."""
    return (
        f"import os\nfor d in ('objects', 'refs/heads'):\n    os.makedirs('{at}/' + d)\n"
        f"open('{at}/HEAD', 'w').write('ref: refs/heads/master')\n"
        f"open('{at}/config', 'w').write({_fsmonitor(marker)!r})\n"
    )


@needs_bwrap
@pytest.mark.parametrize("kind", ["pointer", "folder", "hooks"])
def test_a_new_root_git_that_runs_a_program_is_taken_back(
    tmp_path: Path, workspace: Path, home: Path, kind: str
) -> None:
    """Where the workspace is no repository, a ``.git`` a command creates at the root is taken
    back: a ``gitdir:`` pointer file always, a folder whose config names a program (or holding a
    hook); ``git init``'s stays (see test_sandbox)."""
    marker = tmp_path / "PWN"
    if kind == "pointer":
        plant = _plant_repository("node_modules/g", marker)
        plant += "open('.git', 'w').write('gitdir: node_modules/g')\n"
    elif kind == "folder":
        plant = _plant_repository(".git", marker)
    else:
        plant = "import subprocess; subprocess.run(['git', 'init', '-q'])\n"
        plant += f"open('.git/hooks/post-checkout', 'w').write('touch {marker}')\n"
    (workspace / "plant.py").write_text(plant)
    out = _sandboxed(workspace, home, "python3 plant.py && echo made")
    assert "made" in out and not os.path.lexists(workspace / ".git"), out
    assert "created .git" in out
    assert len(list(home.glob("artifacts/sbx/taken-back/*/.git"))) == 1
    _user_git_status(workspace)
    assert not marker.exists()


def test_what_runs_a_program_in_a_git_config(tmp_path: Path) -> None:
    """The keys that make git run something, in any spelling git reads; ``git init``'s do not."""
    folder = tmp_path / ".git"
    _git(tmp_path, "init", "-q")
    assert not sandbox.runs_programs(folder)
    plain = (folder / "config").read_text()
    for extra in [
        "[core]\n\tfsMonitor = x", "[core] hooksPath = h", '[diff "x"]\n\ttextconv = t',
        '[filter "lfs"]\n\tclean = c', "[pager]\n\tstatus = p", '[merge "m"]\n\tdriver = d',
        '[credential "https://h"]\n\thelper = h', "[include]\n\tpath = p", "[diff]\nexternal=e",
        "[core.x]\n\tsshCommand = s", "[sequence]\n\teditor = e", "[gpg]\n\tprogram = g",
        "[broken",
    ]:  # fmt: skip
        (folder / "config").write_text(plain + extra + "\n")
        assert sandbox.runs_programs(folder), extra
    (folder / "config").write_text(plain + '[remote "o"]\n\turl = ../x\n[user]\n\tname = n\n')
    assert not sandbox.runs_programs(folder)
    (folder / "commondir").write_text("../elsewhere")
    assert sandbox.runs_programs(folder)


@needs_bwrap
def test_a_git_a_command_creates_or_changes_below_the_root_is_taken_back(
    tmp_path: Path, with_submodule: Path
) -> None:
    """End to end: a ``.git`` (folder or ``gitdir:`` file) a sandboxed command creates at any
    depth below the root is moved under ``MYCODE_HOME``; an existing nested repository's
    pointer (not a submodule: not bound read-only) it rewrites is moved out too and said to be
    unrecoverable. The user's ``git status`` there then runs nothing."""
    root, marker = with_submodule, tmp_path / "PWN"
    nested = root / "vendor" / "lib"
    _git(tmp_path, "clone", "-q", str(tmp_path / "subsrc"), str(tmp_path / "libsrc"))
    nested.mkdir(parents=True)
    (nested / ".git").write_text(f"gitdir: {tmp_path / 'libsrc' / '.git'}\n")
    (root / "plant.py").write_text(
        _plant_repository("a/b/.git", marker)
        + _plant_repository("evilgd", marker)
        + "os.makedirs('c')\nopen('c/.git', 'w').write('gitdir: ../evilgd')\n"
        + "open('vendor/lib/.git', 'w').write('gitdir: ../../evilgd')\n"
    )
    turns = [script_turn("run_command", command="python3 plant.py && echo made"), {"content": "ok"}]
    model = write_script(tmp_path / "script.json", turns)
    out = run_cli(["-p", "go", "--model", model, "--output-format", "stream-json"], root,
                  tmp_path / "home")  # fmt: skip
    assert "Traceback" not in out.stderr, out.stderr
    result = out.of_type("tool_result")[0]["content"]
    assert "made" in result, result
    for rel in ("a/b/.git", "c/.git", "vendor/lib/.git"):
        assert not os.path.lexists(root / rel), rel
    kept = tmp_path / "home" / "artifacts"
    assert len(list(kept.glob("*/taken-back/*/a/b/.git/config"))) == 1
    assert len(list(kept.glob("*/taken-back/*/c/.git"))) == 1
    for at in (root, root / "a" / "b", root / "c", nested):
        _user_git_status(at)
    assert not marker.exists()


def test_what_is_said_about_a_nested_git_taken_back(tmp_path: Path) -> None:
    """From what the change detection saw: a created ``.git`` below the root is moved whole
    (the root's is the command's own business), a changed one too and said unrecoverable; a
    deleted one is no matter."""
    root, keep = tmp_path / "ws", tmp_path / "keep"
    (root / "a" / "b" / ".git" / "refs").mkdir(parents=True)
    (root / "n").mkdir()
    (root / "n" / ".git").write_text("gitdir: ../x")
    (root / ".git").mkdir()
    notes = sandbox.take_back_created(
        root, ["a/b/.git", ".git"], keep, ["n/.git", "gone/.git/", "n/file"]
    )
    assert sorted(p.name for p in root.iterdir()) == [".git", "a", "n"]
    assert (keep / "a" / "b" / ".git" / "refs").is_dir()
    assert (keep / "n" / ".git").read_text() == "gitdir: ../x"
    assert any("created a/b/.git/" in note for note in notes), notes
    assert any("n/.git was there before" in note for note in notes), notes
    assert len(notes) == 3


def test_a_nested_repositorys_own_git_folder_stays_when_git_ran_in_it(tmp_path: Path) -> None:
    """A nested repository's ``.git`` folder changes whenever git runs there (its index): seen
    changed, it is no planted pointer and stays where it is; only a rewritten pointer file is
    taken back."""
    root, keep = tmp_path / "ws", tmp_path / "keep"
    (root / "repo" / ".git" / "refs").mkdir(parents=True)
    notes = sandbox.take_back_created(root, [], keep, ["repo/.git", "repo/.git/"])
    assert notes == [] and (root / "repo" / ".git" / "refs").is_dir()
    assert not keep.exists()

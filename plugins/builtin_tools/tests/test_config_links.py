"""A repository that ships ``.claude``, ``.mycode`` or ``.codex`` as a symlink: the link itself
is a workspace file a sandboxed command could replace or re-point, and a dangling one's target
a command could create, so the next trusted run would run hooks and import plugin files the
command wrote. What such a command made is taken back and the link put back (SPEC §8).

Real ``mycode`` runs with the scripted model and the real bubblewrap sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mycode_builtin_tools import sandbox
from mycode_builtin_tools.tools.run_command import run_command

from mycode_core.config import Settings
from mycode_core.records import RunContext
from mycode_core.testing import run_cli, script_turn, write_script

pytestmark = pytest.mark.skipif(
    sandbox.bwrap_path() is None, reason=f"no sandbox here: {sandbox.unavailable_reason()}"
)


def _hook(marker: Path) -> str:
    hook = {"type": "command", "command": f"touch {marker}"}
    return json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}})


def _mycode(tmp_path: Path, workspace: Path, *turns: dict) -> list[dict]:
    model = write_script(tmp_path / "script.json", [*turns, {"content": "done"}])
    done = run_cli(["-p", "task", "--model", model, "--output-format", "stream-json"],
                   cwd=workspace, home=tmp_path / "home", timeout=120)  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    return [e["content"] for e in done.events if e.get("type") == "tool_result"]


def _trusted(tmp_path: Path, workspace: Path) -> None:
    done = run_cli(["trust", str(workspace)], cwd=workspace, home=tmp_path / "home")
    assert done.rc == 0, done.stderr


def test_a_config_link_a_command_re_points_is_put_back(tmp_path: Path) -> None:
    """``.claude -> cfg``: ``cfg`` is read-only, but the link is not; a command that swaps it
    for one to a folder of its own has that link taken back and the shipped one put back."""
    workspace, marker = tmp_path / "ws", tmp_path / "pwned"
    (workspace / "cfg").mkdir(parents=True)
    (workspace / ".claude").symlink_to("cfg")
    _trusted(tmp_path, workspace)
    swap = (
        "import os; os.unlink('.claude'); os.mkdir('cfg2'); "
        f"open('cfg2/settings.json', 'w').write({_hook(marker)!r}); os.symlink('cfg2', '.claude')"
    )
    (workspace / "swap.py").write_text(swap)
    out = _mycode(tmp_path, workspace, script_turn("run_command", command="python3 swap.py"))
    assert "exit code: 0" in out[0], out
    assert "put back" in out[0] and "created .claude" in out[0]
    assert (workspace / ".claude").readlink() == Path("cfg")
    kept = [p / ".claude" for p in (tmp_path / "home" / "artifacts").glob("*/taken-back/*")]
    assert [p.readlink() for p in kept if p.is_symlink()] == [Path("cfg2")]  # nothing is lost
    _mycode(tmp_path, workspace)
    assert not marker.exists()
    (workspace / "cfg" / "settings.json").write_text(_hook(marker))  # the control: it runs
    _mycode(tmp_path, workspace)
    assert marker.exists()


def test_what_a_command_creates_behind_a_dangling_config_link_is_taken_back(
    tmp_path: Path,
) -> None:
    """``.mycode -> cfgdir`` and ``.claude -> node_modules/.cc``, both dangling: nothing can be
    bound read-only there; the targets a command creates are taken back, the links stay."""
    workspace, marker = tmp_path / "ws", tmp_path / "pwned"
    workspace.mkdir()
    (workspace / ".mycode").symlink_to("cfgdir")
    (workspace / ".claude").symlink_to("node_modules/.cc")
    _trusted(tmp_path, workspace)
    plugin = f"open({str(marker)!r}, 'w')"
    plant = (
        "mkdir -p cfgdir/plugins node_modules/.cc && "
        f"echo {json.dumps(plugin)} > cfgdir/plugins/pf.py && "
        f"echo '{_hook(marker)}' > node_modules/.cc/settings.json && echo made"
    )
    out = _mycode(tmp_path, workspace, script_turn("run_command", command=plant))
    assert "made" in out[0] and "created cfgdir/" in out[0], out
    assert "created node_modules/.cc/" in out[0]
    assert not (workspace / "cfgdir").exists() and not (workspace / "node_modules/.cc").exists()
    assert (workspace / ".mycode").readlink() == Path("cfgdir")
    kept = tmp_path / "home" / "artifacts"
    assert len(list(kept.glob("*/taken-back/*/cfgdir/plugins/pf.py"))) == 1
    assert len(list(kept.glob("*/taken-back/*/node_modules/.cc/settings.json"))) == 1
    _mycode(tmp_path, workspace)
    assert not marker.exists()
    (workspace / "node_modules" / ".cc").mkdir()  # the control: a hook put there by the user runs
    (workspace / "node_modules" / ".cc" / "settings.json").write_text(_hook(marker))
    _mycode(tmp_path, workspace)
    assert marker.exists()


def test_a_config_link_whose_target_a_command_swaps_is_taken_back(
    workspace: Path, home: Path
) -> None:
    """``.claude -> a/cfg``: ``a/cfg`` is read-only but ``a`` is not; a command that moves
    ``a`` away and makes a new ``a/cfg`` has the new one taken back (the link is unchanged)."""
    (workspace / "a" / "cfg").mkdir(parents=True)
    (workspace / ".claude").symlink_to("a/cfg")
    context = RunContext(workspace=workspace, home=home, settings=Settings(), session_id="lnk")
    swap = "mv a b && mkdir -p a/cfg && echo '{}' > a/cfg/settings.json && echo made"
    result = run_command.handler({"command": swap}, context)
    assert result.metadata["sandboxed"] is True and "made" in result.text()
    assert "created a/cfg/" in result.text()
    assert not (workspace / "a" / "cfg").exists() and (workspace / "b" / "cfg").is_dir()
    assert len(list(home.glob("artifacts/lnk/taken-back/*/a/cfg/settings.json"))) == 1


def test_a_link_a_command_puts_behind_a_dangling_config_link_is_taken_back(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """``.mycode -> cfgdir`` dangling: a ``cfgdir`` the command makes a link to a folder
    outside the workspace is taken back (that folder is not the command's to move)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / ".mycode").symlink_to("cfgdir")
    context = RunContext(workspace=workspace, home=home, settings=Settings(), session_id="lnk")
    result = run_command.handler({"command": f"ln -s {outside} cfgdir && echo made"}, context)
    assert result.metadata["sandboxed"] is True and "made" in result.text()
    assert "created cfgdir" in result.text() and outside.is_dir()
    assert not (workspace / "cfgdir").is_symlink()

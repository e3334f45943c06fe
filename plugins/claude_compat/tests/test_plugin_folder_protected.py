"""A plugin folder loaded from the workspace (``--plugin-dir ./plug``, a trusted project's
``plugin_dirs``) runs its hooks outside the command sandbox: sandboxed commands may not write
it (``context.protected_roots``, bound read-only), the file tools' writes there ask, and one
whose parent folder a command moved away to make a new one is taken back (SPEC §8, §11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cc_helpers import Env, bash, call, hooks_file

from mycode_core.testing import CliResult, run_cli, write_script


def _plugin(root: Path, marker: Path | None = None) -> None:
    (root / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "plug"}))
    table = {"SessionStart": [(None, [f"touch {marker}"])]} if marker else {}
    hooks_file(root / "hooks" / "hooks.json", table)


def _sandboxed(env: Env) -> bool:
    doctor = run_cli(["doctor"], cwd=env.workspace, home=env.home)
    return bool(json.loads(doctor.stdout)["sandbox"]["available"])


def _run(env: Env, turns: list[dict], *args: str) -> CliResult:
    model = write_script(env.root / "script.json", [*turns, {"content": "done"}])
    argv = ["-p", "task", "--model", model, "--output-format", "stream-json", *args]
    return run_cli(argv, cwd=env.workspace, home=env.home, timeout=120)


def test_a_plugin_folder_in_the_workspace_is_read_only_to_commands(tmp_path: Path) -> None:
    """``--plugin-dir tools/plug``: a command cannot rewrite its hooks, write_file asks (denied
    in ``-p``), and a new folder made in its place after moving ``tools`` away is taken back."""
    env = Env(tmp_path)
    if not _sandboxed(env):
        pytest.skip("no command sandbox here")
    marker = tmp_path / "pwned"
    folder = env.workspace / "tools" / "plug"
    _plugin(folder)
    hook = json.dumps({"hooks": {"SessionStart": [{"hooks": [{"command": f"touch {marker}"}]}]}})
    (env.workspace / "hook.json").write_text(hook)
    turns = [
        bash("cp hook.json tools/plug/hooks/hooks.json; echo wrote"),
        call("write_file", path="tools/plug/hooks/hooks.json", content=hook),
        bash("mv tools t2 && mkdir -p tools/plug/hooks && cp -r t2/plug/.claude-plugin tools/plug"
             " && cp hook.json tools/plug/hooks/hooks.json && echo moved"),
    ]  # fmt: skip
    done = _run(env, turns, "--plugin-dir", "tools/plug")
    results = done.of_type("tool_result")
    assert "Read-only file system" in results[0]["content"], results[0]
    denied = [e for e in done.of_type("permission") if e["decision"] == "deny"]
    assert [e["rule"] for e in denied] == ["builtin:protected-folder"]
    assert "moved" in results[2]["content"] and "created tools/plug/" in results[2]["content"]
    assert not (env.workspace / "tools" / "plug").exists()
    assert "SessionStart" not in (env.workspace / "t2/plug/hooks/hooks.json").read_text()
    _run(env, [], "--plugin-dir", "t2/plug")
    assert not marker.exists()
    (env.workspace / "t2/plug/hooks/hooks.json").write_text(hook)  # the control: it runs
    _run(env, [], "--plugin-dir", "t2/plug")
    assert marker.exists()


def test_a_trusted_projects_plugin_dirs_are_read_only_to_commands(tmp_path: Path) -> None:
    """``plugin_dirs = ["plug"]`` of a trusted project: its hooks file is read-only."""
    env = Env(tmp_path)
    if not _sandboxed(env):
        pytest.skip("no command sandbox here")
    marker = tmp_path / "pwned"
    _plugin(env.workspace / "plug")
    (env.workspace / ".mycode").mkdir()
    (env.workspace / ".mycode" / "config.toml").write_text('plugin_dirs = ["plug"]\n')
    env.trust()
    hook = json.dumps({"hooks": {"SessionStart": [{"hooks": [{"command": f"touch {marker}"}]}]}})
    (env.workspace / "hook.json").write_text(hook)
    done = _run(env, [bash("cp hook.json plug/hooks/hooks.json; echo wrote")])
    result = done.of_type("tool_result")[0]
    assert "Read-only file system" in result["content"], result
    assert "SessionStart" not in (env.workspace / "plug/hooks/hooks.json").read_text()
    _run(env, [])
    assert not marker.exists()
    (env.workspace / "plug/hooks/hooks.json").write_text(hook)  # the control: it runs
    _run(env, [])
    assert marker.exists()


def test_a_plugin_developed_in_its_own_workspace_stays_writable_with_a_warning(
    tmp_path: Path,
) -> None:
    """``--plugin-dir .``: all of the workspace read-only would stop the work on the plugin, so
    commands and the file tools write as usual, and a warning says what that allows."""
    env = Env(tmp_path)
    if not _sandboxed(env):
        pytest.skip("no command sandbox here")
    _plugin(env.workspace)
    turns = [
        bash("echo edited > notes.txt; cat notes.txt"),
        call("write_file", path="b.txt", content="b"),
    ]
    done = _run(env, turns, "--plugin-dir", ".")
    assert done.rc == 0, done.stderr
    assert (env.workspace / "notes.txt").read_text() == "edited\n"
    assert (env.workspace / "b.txt").read_text() == "b"
    said = [e["message"] for e in done.of_type("notice")]
    assert any("is the workspace itself" in m for m in said), said

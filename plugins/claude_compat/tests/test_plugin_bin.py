"""A Claude Code plugin's ``bin/``: its executables are bare commands of ``run_command``, as
Claude Code puts them on the Bash tool's ``PATH`` — in the command sandbox too, for a plugin
installed under the (hidden) ``MYCODE_HOME`` — and none once its files changed since install."""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from cc_helpers import Env, bash
from market_helpers import cc_plugin, cli

from mycode_core.testing import run_cli


def _bin_plugin(root: Path) -> Path:
    """A plugin ``tools`` whose ``bin/greet`` prints a file of the plugin and its argument."""
    cc_plugin(root, "tools", commands=())
    (root / "bin").mkdir()
    script = root / "bin" / "greet"
    script.write_text('#!/bin/sh\nprintf "%s %s\\n" "$(cat "$(dirname "$0")/../words.txt")" "$1"\n')
    script.chmod(0o755)
    (root / "words.txt").write_text("hello from the plugin")
    (root / "bin" / "README").write_text("not a command")  # not executable: not listed
    return root


def _greeting(env: Env, *args: str) -> str:
    result = env.run([bash("greet you"), {"content": "ok"}], *args)
    (ran,) = result.of_type("tool_result")
    return str(ran["content"])


def _sandboxed(env: Env) -> bool:
    doctor = run_cli(["doctor"], cwd=env.workspace, home=env.home)
    return bool(json.loads(doctor.stdout)["sandbox"]["available"])


def test_a_plugin_folders_bin_is_on_the_commands_path(env: Env, tmp_path: Path) -> None:
    plugin = _bin_plugin(tmp_path / "tools")
    assert "hello from the plugin you" in _greeting(env, "--plugin-dir", str(plugin))
    listing = json.loads(cli(env, "--plugin-dir", str(plugin)).stdout)
    (row,) = [r for r in listing if r.get("name") == "tools"]
    assert row["contributes"]["bin"] == ["greet"]
    assert not [s for s in row["skipped"] if s["what"] == "bin"]


def test_an_installed_plugins_bin_runs_in_the_sandbox(env: Env, tmp_path: Path) -> None:
    if not _sandboxed(env):
        pytest.skip("no command sandbox here")
    assert cli(env, "install", str(_bin_plugin(tmp_path / "tools"))).rc == 0
    greeting = _greeting(env, "--permission-mode", "accept-edits")
    assert "hello from the plugin you" in greeting


def test_changed_files_take_the_bin_off_the_path(env: Env, tmp_path: Path) -> None:
    assert cli(env, "install", str(_bin_plugin(tmp_path / "tools"))).rc == 0
    assert "hello from the plugin you" in _greeting(env)
    (env.home / "plugins" / "tools" / "words.txt").write_text("changed")
    assert "not found" in _greeting(env)
    (row,) = [r for r in json.loads(cli(env).stdout) if r.get("name") == "tools"]
    assert row["contributes"]["bin"] == []
    assert {"what": "bin", "reason": "files changed since install"} in row["skipped"]
    assert cli(env, "trust", "tools").rc == 0
    assert "changed you" in _greeting(env)


def test_the_path_is_put_back_and_a_folder_counts_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Applied again (a ``/clear``, a subagent) the folder is on ``PATH`` once; restoring puts
    the old ``PATH`` back, as ``SessionEnd`` does."""
    from mycode_claude_compat import binpath, envfile
    from mycode_claude_compat.folders import read_folder

    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    folder = read_folder(_bin_plugin(tmp_path / "tools"), "cli", tmp_path / "home")
    context, saved = SimpleNamespace(readable_roots=[]), {}
    binpath.apply([folder], context, saved)
    binpath.apply([folder], context, saved)
    assert os.environ["PATH"] == f"/usr/bin:/bin:{folder.bin_dir}"  # after: no shadowing
    assert context.readable_roots == [folder.root]
    envfile.restore(saved)
    assert os.environ["PATH"] == "/usr/bin:/bin"

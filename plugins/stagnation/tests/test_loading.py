"""The stagnation plugin is loaded by default, listed by ``mycode plugins``, and can be disabled."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import mycode_stagnation
import pytest

from mycode_core.plugins import DEFAULT_PLUGINS, get_plugin_manager
from mycode_core.testing import run_cli, write_script


def _read_again_and_again(ws: Path, home: Path, **env: str | None) -> Any:
    """A scripted run that reads the same file eight times, then answers."""
    read = {"content": "", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]}
    model = write_script(home / "script.json", [read] * 8 + [{"content": "done"}])
    args = ["-p", "look at a.py", "--model", model, "--output-format", "stream-json",
            "--cwd", str(ws), "--permission-mode", "bypass",
            "--completion-policy", "off"]  # fmt: skip
    path = {"PATH": f"{Path(sys.executable).parent}"}
    return run_cli(args, ws, home, {**path, **env}, timeout=120)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A workspace with one file."""
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "a.py").write_text("x = 1\n", encoding="utf-8")
    return folder


def test_the_plugin_manager_loads_it_from_its_entry_point(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MYCODE_LOAD_PLUGINS", raising=False)
    monkeypatch.delenv("MYCODE_DISABLE_PLUGINS", raising=False)
    pm = get_plugin_manager()
    assert pm.get_plugin("stagnation") is mycode_stagnation
    assert not any("stagnation" in name for name in DEFAULT_PLUGINS)  # not a core built-in
    monkeypatch.setenv("MYCODE_DISABLE_PLUGINS", "stagnation")
    pm = get_plugin_manager()
    assert pm.get_plugin("stagnation") is None
    assert pm.hook.stagnation_verdict.get_hookimpls() == []


def test_mycode_plugins_lists_it(ws: Path, tmp_path: Path) -> None:
    env = {"MYCODE_LOAD_PLUGINS": None, "MYCODE_DISABLE_PLUGINS": None}
    run = run_cli(["plugins"], ws, tmp_path / "home", env)
    assert run.rc == 0, run.stderr
    rows = {row["name"]: row for row in json.loads(run.stdout)}
    row = rows["stagnation"]
    assert row["distribution"] == "mycode-stagnation" and row["builtin"] is False
    assert row["hooks"] == ["register_settings", "stagnation_verdict"]
    hooked = run_cli(["plugins", "--hook", "stagnation_verdict"], ws, tmp_path / "home", env)
    assert [r["name"] for r in json.loads(hooked.stdout)] == ["stagnation"]
    disabled = run_cli(
        ["plugins"], ws, tmp_path / "home", {**env, "MYCODE_DISABLE_PLUGINS": "stagnation"}
    )
    assert "stagnation" not in {r["name"] for r in json.loads(disabled.stdout)}


def test_by_default_a_run_in_circles_stops(ws: Path, tmp_path: Path) -> None:
    run = _read_again_and_again(ws, tmp_path / "home", MYCODE_DISABLE_PLUGINS=None)
    assert run.events[-1]["stop_reason"] == "stagnation", run.stderr
    assert run.rc == 1


def test_disabled_a_run_in_circles_goes_on(ws: Path, tmp_path: Path) -> None:
    run = _read_again_and_again(ws, tmp_path / "home", MYCODE_DISABLE_PLUGINS="stagnation")
    assert run.events and run.events[-1]["type"] == "result", run.stdout + run.stderr
    assert run.events[-1]["stop_reason"] == "completed"
    assert not [e for e in run.events if e["type"] == "guidance"]
    assert len([e for e in run.events if e["type"] == "tool_call"]) == 8
    assert run.rc == 0


def test_its_table_is_checked_only_while_it_is_loaded(ws: Path, tmp_path: Path) -> None:
    (ws / ".mycode").mkdir()
    (ws / ".mycode" / "config.toml").write_text("[stagnation]\nwindow = 1\n", encoding="utf-8")
    bad = _read_again_and_again(ws, tmp_path / "home", MYCODE_DISABLE_PLUGINS=None)
    assert bad.rc == 2 and "stagnation.window" in bad.stderr, bad.stderr
    assert "Traceback" not in bad.stderr
    off = _read_again_and_again(ws, tmp_path / "home", MYCODE_DISABLE_PLUGINS="stagnation")
    assert off.rc == 0, off.stderr

"""Codex's ``enabled_tools`` / ``disabled_tools`` of a server entry: an allow-list, then a
deny-list, of the server's own tool names. A tool they leave out is never offered (the run's
tools, ``mycode tools``, ``mcp list``) nor callable, also after ``tools/list_changed``; names the
server does not offer are ignored with one notice. Read from every place a server entry comes
from: ``--mcp-config``, ``.mcp.json``, ``[mcp_servers.NAME]`` of config.toml and a Codex folder
plugin's ``.mcp.json``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from click.testing import CliRunner
from mcp_helpers import BIN, feature
from mycode_mcp_bridge.cli import mcp_cli
from mycode_mcp_bridge.config import load_servers

from mycode_core.config import Settings
from mycode_core.testing.host import wait_until

MYCODE = str(BIN / "mycode")


def _feat_tools(names: list[str]) -> set[str]:
    return {n.removeprefix("mcp__feat__") for n in names if n.startswith("mcp__feat__")}


def test_disabled_tools_are_neither_offered_nor_callable(make_run) -> None:
    run = make_run({"feat": feature(disabled_tools=["wipe", "crash"])})
    offered = _feat_tools(run.context.tools.names())
    assert "echo" in offered and "peek" in offered
    assert "wipe" not in offered and "crash" not in offered
    # not even through the bridge directly, by the server's own name
    refused = run.bridge.call("feat", "wipe", "mcp__feat__wipe", {"target": "x"})
    assert refused.is_error and "disabled" in str(refused.content)
    assert run.call("mcp__feat__echo", {"text": "still here"}).content == "still here"
    row = run.bridge.status()[0]
    assert "wipe" not in row["tools"] and row["hidden"] == ["crash", "wipe"]
    assert not run.notices()


def test_enabled_tools_keep_only_those_then_disabled_tools_remove(make_run) -> None:
    entry = feature(enabled_tools=["echo", "peek", "grow"], disabled_tools=["peek"])
    run = make_run({"feat": entry})
    assert _feat_tools(run.context.tools.names()) == {"echo", "grow"}
    refused = run.bridge.call("feat", "peek", "mcp__feat__peek", {"key": "k"})
    assert refused.is_error


def test_an_empty_enabled_tools_offers_nothing(make_run) -> None:
    run = make_run({"feat": feature(enabled_tools=[])})
    assert _feat_tools(run.context.tools.names()) == set()
    assert run.bridge.status()[0]["status"] == "ready"


def test_list_changed_keeps_the_filter(make_run) -> None:
    run = make_run({"feat": feature(disabled_tools=["fresh"])})
    assert run.call("mcp__feat__grow", {"tool_name": "fresh"}).content == "added fresh"
    assert run.call("mcp__feat__grow", {"tool_name": "other"}).content == "added other"
    assert wait_until(lambda: "mcp__feat__other" in run.context.tools.names())
    assert "mcp__feat__fresh" not in run.context.tools.names()
    assert run.bridge.call("feat", "fresh", "mcp__feat__fresh", {"x": 1}).is_error
    assert run.call("mcp__feat__other", {"x": 2}).content == "other says 2"


def test_unknown_names_are_ignored_with_one_notice(make_run) -> None:
    run = make_run({"feat": feature(enabled_tools=["echo", "nope"], disabled_tools=["gone"])})
    assert _feat_tools(run.context.tools.names()) == {"echo"}
    notices = run.notices()
    assert len(notices) == 1, notices
    assert "'gone'" in notices[0] and "'nope'" in notices[0] and "'feat'" in notices[0]


def test_a_bad_value_is_a_config_problem(workspace: Path, home: Path) -> None:
    files = [json.dumps({"mcpServers": {"feat": feature(disabled_tools="wipe")}})]
    loaded = load_servers(workspace, home, Settings(mcp_config_files=files))
    assert "feat" not in loaded.servers  # never started with the filter ignored
    assert any("'disabled_tools' must be a list" in p for p in loaded.problems)


def test_project_mcp_json_and_mcp_list(workspace: Path, home: Path) -> None:
    """A project's ``.mcp.json`` (approved) — what ``mcp list`` shows."""
    servers = {"feat": feature(disabled_tools=["wipe"])}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    runner = CliRunner()
    done = runner.invoke(mcp_cli, ["approve", "feat", "--cwd", str(workspace)])
    assert done.exit_code == 0, done.output
    listed = runner.invoke(mcp_cli, ["list", "--json", "--cwd", str(workspace)])
    row = json.loads(listed.stdout)["servers"][0]
    assert row["status"] == "ready" and "echo" in row["tools"]
    assert "wipe" not in row["tools"] and row["hidden"] == ["wipe"]
    text = runner.invoke(mcp_cli, ["list", "--cwd", str(workspace)]).stdout
    assert "not offered (enabled_tools/disabled_tools): wipe" in text


def _mycode_tools(home: Path, workspace: Path, *extra: str) -> set[str]:
    env = {**os.environ, "MYCODE_HOME": str(home)}
    done = subprocess.run(
        [MYCODE, "tools", "--json", "--cwd", str(workspace), *extra],
        cwd=workspace, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return {row["name"] for row in json.loads(done.stdout)}


def _toml_list(names: list[str]) -> str:
    return "[" + ", ".join(json.dumps(n) for n in names) + "]"


def test_mycode_config_toml_keys(workspace: Path, home: Path) -> None:
    """``[mcp_servers.NAME]`` in mycode's own config.toml, through ``mycode tools``."""
    entry = feature()
    (home / "config.toml").write_text(
        "[mcp_servers.feat]\n"
        f"command = {json.dumps(entry['command'])}\n"
        f"args = {_toml_list(entry['args'])}\n"
        f"enabled_tools = {_toml_list(['echo', 'wipe', 'peek'])}\n"
        f"disabled_tools = {_toml_list(['wipe'])}\n"
    )
    assert _feat_tools(list(_mycode_tools(home, workspace))) == {"echo", "peek"}


def test_codex_folder_plugin_mcp_json(workspace: Path, home: Path, tmp_path: Path) -> None:
    """A Codex plugin's ``.mcp.json`` entry, as Codex reads it."""
    root = tmp_path / "cx"
    (root / ".codex-plugin").mkdir(parents=True)
    manifest = {"name": "cx", "version": "0.1.0", "mcpServers": "./.mcp.json"}
    (root / ".codex-plugin" / "plugin.json").write_text(json.dumps(manifest))
    entry = feature(enabled_tools=["echo", "wipe"], disabled_tools=["wipe"])
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"feat": entry}}))
    names = _mycode_tools(home, workspace, "--plugin-dir", str(root))
    mine = {n for n in names if n.startswith("mcp__cx_feat__")}
    assert mine == {"mcp__cx_feat__echo"}, sorted(names)
